"""Words near in meaning: a query word also looks for the few terms a general English model
puts nearest it (``danger`` -> ``risk``, ``talk`` -> ``conversation``), at a fraction of
its weight.

The table (``neighbours.txt.gz``, made by ``benchmarks/make_neighbours.py`` from the
sentence-transformers model all-MiniLM-L6-v2 and Debian's word list) holds, for each
search term, its nearest terms and their cosine similarity. It knows no domain: nothing
in it was chosen by hand. Only neighbours the memory holds count, so a query gains at
most ``PER_WORD`` terms a word, and the query's own words always weigh more.
"""

from __future__ import annotations

import gzip
from bisect import bisect_left
from collections.abc import Callable
from functools import cache
from pathlib import Path

from gitmem.errors import ConfigError

TABLE = Path(__file__).with_name("neighbours.txt.gz")
SHARE = 0.7  # a neighbour's weight against the query word's, times its similarity
FLOOR = 0.55  # the least similarity that counts
PER_WORD = 3  # neighbours a query word may add


@cache
def table() -> list[str]:
    """The table's lines (``term near:sim ...``, sorted as ``make_neighbours.py`` writes
    them), read once a process; a line is found by bisection and parsed when a query asks
    for its term (parsing all of it took 260 ms, past search's 30 ms budget; a dict of
    its 30k terms 70 ms of a ``gitmem search``)."""
    try:
        return gzip.decompress(TABLE.read_bytes()).decode("utf-8").splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as err:
        raise ConfigError(
            f"gitmem's {TABLE.name} cannot be read ({err}); reinstall gitmem"
        ) from None


def near(term: str) -> list[tuple[str, float]]:
    """``term``'s neighbours and their similarity, most similar first."""
    lines, key = table(), f"{term} "
    at = bisect_left(lines, key)
    line = lines[at] if at < len(lines) and lines[at].startswith(key) else key
    try:
        return [
            (word, int(sim) / 100)
            for word, _, sim in (r.partition(":") for r in line[len(key) :].split())
        ]
    except ValueError:
        raise ConfigError(
            f"gitmem's {TABLE.name} is damaged at {term!r}; reinstall gitmem"
        ) from None


def expand(
    weighted: dict[str, float], held: Callable[[str], bool]
) -> tuple[dict[str, float], dict[str, str]]:
    """``weighted`` with each term's nearest neighbours that ``held`` says memory holds,
    and for each neighbour the query term it stands for."""
    out, of = dict(weighted), {}
    for term, weight in weighted.items():
        added = 0
        for word, sim in near(term):
            if added == PER_WORD or sim < FLOOR:
                break
            if word in weighted or not held(word):
                continue
            if weight * SHARE * sim > out.get(word, 0.0):
                out[word], of[word] = weight * SHARE * sim, term
            added += 1
    return out, of
