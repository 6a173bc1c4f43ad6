"""The standard baseline every quality benchmark reports gitmem beside: BM25 as a search
engine ships it, with nothing of gitmem's.

``bm25s`` (Lucene's BM25 variant, k1 = 1.2, b = 0.75: Elasticsearch's defaults) over the
same documents gitmem searches, words split by bm25s's own tokenizer (lower-cased,
``\\w\\w+``), its standard English stop list (``stopwords="en"``) dropped and the rest
stemmed with PyStemmer's Snowball English stemmer. No neighbours, no dates, no fields.
"""

from __future__ import annotations

from collections.abc import Sequence

K1, B = 1.2, 0.75


class StandardBM25:
    """The documents ``texts`` indexed once; ``rank`` gives document numbers, best first."""

    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s
        import Stemmer

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self._n = len(texts)
        self._index = bm25s.BM25(k1=K1, b=B, method="lucene")
        self._index.index(self._tokens(list(texts)), show_progress=False)

    def _tokens(self, texts: list[str]) -> object:
        return self._bm25s.tokenize(
            texts, stopwords="en", stemmer=self._stemmer, show_progress=False
        )

    def rank(self, query: str, k: int = 10) -> list[int]:
        """The first ``k`` documents for ``query`` that share a term with it."""
        words = self._bm25s.tokenize(
            [query], stopwords="en", stemmer=self._stemmer, return_ids=False, show_progress=False
        )
        known = [w for w in words[0] if w in self._index.vocab_dict]
        if not known or not self._n:
            return []
        docs, scores = self._index.retrieve([known], k=min(k, self._n), show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
