"""Which sections' current text is unverified: it comes from a commit that no key this
clone trusts signed, or from an uncommitted change in the working tree.

It is asked on every read the agent makes, so it costs next to nothing when nothing
changed:

- a section whose index entry is fresh holds the text of the entry's commit; a stale or
  unindexed one the text of the commit its card's history names (``last_writes``, walked
  once per card blob while the repo is open);
- commits this clone wrote (``MemoryRepo.own_commits``) are its own by construction and
  are never checked; the others' signatures are asked of git in one process
  (``signatures``), each verdict kept while the repo is open and trusts the same keys;
- the working tree: one ``git diff-index`` of ``cards/``, only the cards it names read.

A repo that does not sign (no ``allowed_signers`` at the tip) marks nothing, and commits
older than the first signer's commit (history from before signing) are not marked.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass

from gitmem.git import safe_files
from gitmem.git.runner import Sha
from gitmem.git.signing import Signature, signatures
from gitmem.index import build
from gitmem.index.framing import one_line
from gitmem.index.freshness import digests
from gitmem.memory import refs
from gitmem.memory import trailers as T
from gitmem.memory.cards import card_of, card_path, sections
from gitmem.memory.repo import ALLOWED_SIGNERS, MAIN, MemoryRepo

MAX_COMMITS_PER_CARD = 500  # how far back a card's history is walked for a section's writer
NAMED_IN_INDEX = 20  # unverified sections the I block names (it counts them all)
TRUSTED_FILE = "allowed_signers"  # under .git/gitmem/: the keys git verifies against

_WHY = {
    "unsigned": "not signed",
    "unknown": "signed by a key this clone does not trust",
    "bad": "its signature does not hold",
    "unchecked": "its signature cannot be checked here",
    "other": "signed for another client's memory",
}

Key = tuple[str, str]  # (card, section id)


@dataclass(frozen=True)
class Unverified:
    """A section whose current text gitmem cannot vouch for."""

    card: str
    section: str
    commit: str  # the commit that wrote the text ("" for an uncommitted change)
    author: str  # its git author's name ("" for an uncommitted change)
    date: str  # YYYY-MM-DD: the commit's author date, or when the file was saved
    state: str  # the signature's state (signing.py), or "uncommitted"

    def line(self) -> str:
        """The one line the agent sees beside the section."""
        if self.state == "uncommitted":
            return (
                f"[unverified: changed outside gitmem in the working tree on {self.date}, "
                "not committed; the text here is the last commit's]"
            )
        why = _WHY.get(self.state, self.state)
        who = one_line(self.author) or "someone"
        return (
            f"[unverified: changed outside gitmem by {who} on {self.date} "
            f"(commit {self.commit[:7]}, {why})]"
        )

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def unverified(repo: MemoryRepo, branch: str = MAIN) -> dict[Key, Unverified]:
    """Each section of ``branch``'s tip whose text is unverified, by (card, section id):
    written by a commit not signed by a trusted key (nor by this clone), or changed in
    the working tree and not committed."""
    tip = repo.tip(branch)
    if tip is None or repo.store.read(f"{tip}:{ALLOWED_SIGNERS}") is None:
        return {}
    found = dict(_committed(repo, branch, tip))
    for key, got in _uncommitted(repo).items():
        found.setdefault(key, got)
    return found


def _stamp(repo: MemoryRepo) -> str:
    """What a verdict depends on besides the commit: the keys this clone trusts."""
    try:
        st = os.stat(repo.gitmem_dir / TRUSTED_FILE)
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}:{st.st_size}"


def _committed(repo: MemoryRepo, branch: str, tip: Sha) -> dict[Key, Unverified]:
    own = repo.own_commits()
    memo_key = ("unverified", f"{tip}\0{_stamp(repo)}\0{len(own)}")
    memo = repo.memo.get(memo_key)
    if isinstance(memo, dict):
        return memo
    others = _others(repo, tip, own)
    writers = _writers(repo, branch, tip, _cards_of(repo, others)) if others else {}
    named = sorted({sha for sha in writers.values() if sha in others})
    verdicts = _verdicts(repo, named)
    facts = _authors(repo, named)
    client = repo.config.client
    state = {  # one machine key signs every client's memory: a trusted key binds a client too
        sha: verdict.state if verdict.state != "trusted" or facts[sha][2] == client else "other"
        for sha, verdict in verdicts.items()
        if sha in facts
    }
    found = {
        key: Unverified(*key, sha, *facts[sha][:2], state[sha])
        for key, sha in sorted(writers.items())
        if state.get(sha, "trusted") != "trusted"
    }
    repo.memo[memo_key] = found
    return found


def _others(repo: MemoryRepo, tip: Sha, own: frozenset[str]) -> set[str]:
    """The commits since signing began (the first commit adding ``allowed_signers``, its
    parents excluded) that this clone did not write. Kept per tip; a tip that grew from
    the last one asked lists only the new commits."""
    last = repo.memo.get(("unverified-since", "last"))
    if isinstance(last, tuple) and last[0] == tip:
        return {sha for sha in last[1] if sha not in own}
    if isinstance(last, tuple) and _is_ancestor(repo, last[0], tip):
        since = last[1] | set(repo.git.out("rev-list", tip, f"^{last[0]}", "--").split())
    else:
        since = _since_signing(repo, tip)
    repo.memo[("unverified-since", "last")] = (tip, since)
    return {sha for sha in since if sha not in own}


def _is_ancestor(repo: MemoryRepo, old: str, new: str) -> bool:
    return repo.git.run("merge-base", "--is-ancestor", old, new, check=False).returncode == 0


def _since_signing(repo: MemoryRepo, tip: Sha) -> set[str]:
    """Every commit of ``tip``'s history from the first that added ``allowed_signers``."""
    # --remove-empty: the walk stops where the file is not there yet (3 ms at 100k, not 0.5 s)
    adds = repo.git.out(
        "log", "--format=%H", "--diff-filter=A", "--remove-empty", tip, "--", ALLOWED_SIGNERS
    )
    first = adds.split()[-1] if adds.split() else None
    if first is None:
        return set()
    parents = repo.git.out("rev-list", "--parents", "-n", "1", first).split()[1:]
    return set(repo.git.out("rev-list", tip, *(f"^{p}" for p in parents), "--").split())


def _cards_of(repo: MemoryRepo, shas: set[str]) -> set[str]:
    """The cards ``shas`` changed (one git process; merges against each parent)."""
    data = "".join(f"{sha}\n" for sha in sorted(shas)).encode()
    raw = repo.git.run(
        "diff-tree", "--stdin", "--root", "-r", "-m", "--name-only", "-z", "--", "cards", input=data
    ).stdout.decode("utf-8", "surrogateescape")
    return {card for name in raw.split("\0") if (card := card_of(name)) is not None}


def _writers(repo: MemoryRepo, branch: str, tip: Sha, cards: set[str]) -> dict[Key, str]:
    """Each section of ``cards`` at ``tip`` -> the commit its current text comes from."""
    out: dict[Key, str] = {}
    walk: list[str] = []
    index = [c for c in build.refresh(repo, branch).cards if c.project in cards]
    for c in index:
        for s in c.sections:
            if s.indexed and not s.stale and s.commit:
                out[(c.project, s.id)] = s.commit
            elif c.project not in walk:
                walk.append(c.project)
    written = _walked(repo, tip, walk) if walk else {}
    for c in index:
        for s in c.sections:
            if (c.project, s.id) not in out and (c.project, s.id) in written:
                out[(c.project, s.id)] = written[(c.project, s.id)]
    return out


def _walked(repo: MemoryRepo, tip: Sha, cards: list[str]) -> dict[Key, str]:
    """``last_writes`` of ``cards``, each card's kept by its blob while the repo is open
    (an edit elsewhere, the agent's own on its branch, walks nothing again)."""
    blobs = {e.name.decode("utf-8", "replace"): e.sha for e in repo.store.read_tree(f"{tip}:cards")}
    keys = {card: ("writers", f"{card}\0{blobs.get(f'{card}.md')}") for card in cards}
    todo = [card for card in cards if not isinstance(repo.memo.get(keys[card]), dict)]
    got = last_writes(repo, tip, todo)
    for card in todo:
        repo.memo[keys[card]] = {sid: sha for (c, sid), (sha, _) in got.items() if c == card}
    out: dict[Key, str] = {}
    for card in cards:
        kept = repo.memo[keys[card]]
        assert isinstance(kept, dict)
        out.update({(card, sid): sha for sid, sha in kept.items()})
    return out


def _verdicts(repo: MemoryRepo, shas: list[str]) -> dict[str, Signature]:
    """git's verdict on each of ``shas``, asked only for those not known yet."""
    stamp = _stamp(repo)
    known = {sha: repo.memo.get(("signature", f"{sha}\0{stamp}")) for sha in shas}
    todo = [sha for sha, got in known.items() if not isinstance(got, Signature)]
    if todo:
        fresh = signatures(repo.git, "--no-walk", stdin=todo)
        for sha in todo:
            got = fresh.get(Sha(sha), Signature("unsigned", "", ""))
            known[sha] = repo.memo[("signature", f"{sha}\0{stamp}")] = got
    return {sha: got for sha, got in known.items() if isinstance(got, Signature)}


def _authors(repo: MemoryRepo, shas: list[str]) -> dict[str, tuple[str, str, str]]:
    """Each commit's author name, date (YYYY-MM-DD) and client, in one git process."""
    if not shas:
        return {}
    fmt = f"--format=%H%x1f%an%x1f%as%x1f%(trailers:key={T.CLIENT},valueonly,separator=%x2c)"
    stdin = "".join(f"{sha}\n" for sha in shas).encode()
    raw = repo.git.run("log", "--no-walk", "-z", fmt, "--stdin", "--", input=stdin)
    out: dict[str, tuple[str, str, str]] = {}
    for record in raw.stdout.decode("utf-8", "replace").split("\0"):
        if record.strip():
            sha, name, date, client = record.strip("\n").split("\x1f", 3)
            out[sha] = (name, date, client.strip())
    return out


def last_writes(repo: MemoryRepo, tip: str, cards: list[str]) -> dict[Key, tuple[str, int]]:
    """(card, section) -> (the commit, its commit time) from which the section's text is
    what it is at ``tip``: one git log of the cards, their blobs read back until each
    section's text differs (at most ``MAX_COMMITS_PER_CARD`` per card)."""
    if not cards:
        return {}
    paths = sorted({card_path(c) for c in cards})
    raw = repo.git.out("log", "--format=%x00%H %ct", "--name-only", tip, "--", *paths)
    history: dict[str, list[tuple[str, int]]] = {}
    for record in raw.split("\0"):
        head, _, names = record.strip("\n").partition("\n")
        if not head:
            continue
        sha, _, date = head.partition(" ")
        for name in names.split("\n"):
            card = card_of(name)
            if card is not None:
                history.setdefault(card, []).append((sha, int(date)))
    out: dict[Key, tuple[str, int]] = {}
    for card in cards:
        now = _digests(repo, f"{tip}:{card_path(card)}")
        todo = set(now)
        for rev, stamp in history.get(card, [])[:MAX_COMMITS_PER_CARD]:
            if not todo:
                break
            then = _digests(repo, f"{rev}:{card_path(card)}")
            for sid in list(todo):
                if then.get(sid) == now[sid]:
                    out[(card, sid)] = (rev, stamp)  # still the same text this far back
                else:
                    todo.discard(sid)
    return out


def _digests(repo: MemoryRepo, rev_path: str) -> dict[str, str]:
    raw = repo.store.read_blob(rev_path)
    return digests(raw.decode("utf-8", "replace")) if raw is not None else {}


def _uncommitted(repo: MemoryRepo) -> dict[Key, Unverified]:
    """Sections a working-tree card holds differently from the checked-out branch's tip."""
    branch = repo.head_branch()
    tip = repo.tip(branch) if branch else None
    if tip is None:
        return {}
    proc = repo.git.run("diff-index", "--name-only", "-z", tip, "--", "cards", check=False)
    out: dict[Key, Unverified] = {}
    for path in filter(None, proc.stdout.decode("utf-8", "surrogateescape").split("\0")):
        card = card_of(path)
        try:
            data = safe_files.read(repo.root, path) if card else None
            st = safe_files.stat(repo.root, path) if data is not None else None
        except OSError:  # a symlink or a folder there: verify names it, nothing to read
            continue
        if card is None or data is None or st is None:
            continue
        now = digests(data.decode("utf-8", "replace"))
        then = _digests(repo, f"{tip}:{path}")
        saved = time.strftime("%Y-%m-%d", time.gmtime(st.st_mtime))
        for sid, digest in now.items():
            if then.get(sid) != digest:
                out[(card, sid)] = Unverified(card, sid, "", "", saved, "uncommitted")
    return out


def marked(text: str, card: str, found: dict[Key, Unverified]) -> str:
    """A card's text (or one section's) with each unverified section's line put right
    under its heading."""
    if not found:
        return text
    lines = text.split("\n")
    for s in reversed(sections(text)):
        got = found.get((card, s.id))
        if got is not None:
            lines.insert(s.start + 1, got.line())
    return "\n".join(lines)


def rolled_back(repo: MemoryRepo) -> str | None:
    """The commit gitmem last left main at, when main no longer contains it (history
    rolled back or rewritten outside gitmem), else None. One git process per state."""
    seen, tip = repo.store.resolve(refs.SEEN), repo.tip(MAIN)
    if seen is None or tip is None or seen == tip:
        return None
    if repo.store.read(f"{tip}:{ALLOWED_SIGNERS}") is None:
        return None  # as for ``unverified``: nothing is marked in a repo that does not sign
    key = ("rolled-back", f"{seen}\0{tip}")
    if key not in repo.memo:
        repo.memo[key] = None if _is_ancestor(repo, seen, tip) else seen
    got = repo.memo[key]
    return got if isinstance(got, str) else None


def index_note(found: dict[Key, Unverified], lost: str | None = None) -> str:
    """The I block's lines naming the unverified sections and a main that lost what gitmem
    last wrote (``lost``): sorted, no dates, so that the same state gives the same bytes
    ("" when there is none)."""
    rollback = (
        f"Unverified: main no longer holds {lost[:7]}, where gitmem last left it (memory "
        "rolled back or rewritten outside gitmem): what you remember may be old"
        if lost
        else ""
    )
    if not found:
        return rollback
    keys = sorted(found)
    names = ", ".join(f"{card} § {sid}" for card, sid in keys[:NAMED_IN_INDEX])
    more = len(keys) - NAMED_IN_INDEX
    rest = f", and {more} more (read a section to see its line)" if more > 0 else ""
    line = (
        f"Unverified ({len(found)}; changed outside gitmem, not signed by a trusted key, "
        f"or not committed): {one_line(names)}{rest}"
    )
    return f"{rollback}\n{line}" if rollback else line
