"""Which sections' current text is unverified: it comes from a commit that no key this
clone trusts signed, or from an uncommitted change in the working tree.

It is asked on every read the agent makes, so it costs next to nothing when nothing
changed:

- a section whose index entry is fresh holds the text of the entry's commit; a stale or
  unindexed one the text of its card's last change (the replay's) when that change
  wrote it, else of the commit its card's history names (``last_writes``, walked once
  per card blob while the repo is open);
- commits this clone signed (``MemoryRepo.signed_own``, each sealed with its key) are its
  own by construction and are never checked; the others' signatures are checked at once (``verdicts``: in-process,
  git for what it must decide), each verdict kept while the repo is open and trusts the
  same keys;
- the working tree: one ``git diff-index`` of ``cards/``, only the cards it names read;
- a card whose last change (the replay's, ``build.last_changes``) is such a commit and
  removed sections, reordered them or changed the text before them is ``Reshaped``: one
  line for the whole card, as no section's text shows it (the words: ``marks.py``).

The same holds for ``persona.md`` (layer A, read from the working tree): ``persona_note``.

A repo that does not sign (no ``allowed_signers`` at the tip) marks nothing, and commits
older than the first signer's commit (history from before signing) are not marked.
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

from gitmem.git import safe_files
from gitmem.git.runner import Sha
from gitmem.git.signing import Signature
from gitmem.index import build
from gitmem.index.freshness import digest_of, digests, last_writes
from gitmem.index.marks import Key, Reshaped, Unverified, persona_line
from gitmem.index.marks import index_note as index_note
from gitmem.index.marks import marked as marked
from gitmem.memory import refs
from gitmem.memory import trailers as T
from gitmem.memory.cards import card_of, card_path, reshaping
from gitmem.memory.repo import ALLOWED_SIGNERS, MAIN, MemoryRepo

PERSONA = "persona.md"  # layer A's own part (``setup.workspace.persona``)
TRUSTED_FILE = "allowed_signers"  # under .git/gitmem/: the keys git verifies against


def unverified(repo: MemoryRepo, branch: str = MAIN) -> dict[Key, Unverified]:
    """Each section of ``branch``'s tip whose text is unverified, by (card, section id):
    written by a commit not signed by a trusted key (nor by this clone), or changed in
    the working tree and not committed."""
    tip = repo.tip(branch)
    if tip is None or repo.store.read(f"{tip}:{ALLOWED_SIGNERS}") is None:
        return {}
    found = dict(_committed(repo, branch, tip)[0])
    for key, got in _uncommitted(repo).items():
        found.setdefault(key, got)
    return found


def reshaped(repo: MemoryRepo, branch: str = MAIN) -> dict[str, Reshaped]:
    """Each card of ``branch``'s tip whose last change is an unverified commit that removed
    or reordered sections, or changed the text before them."""
    tip = repo.tip(branch)
    if tip is None or repo.store.read(f"{tip}:{ALLOWED_SIGNERS}") is None:
        return {}
    return _committed(repo, branch, tip)[1]


def _stamp(repo: MemoryRepo) -> str:
    """What a verdict depends on besides the commit: the keys this clone trusts."""
    try:
        st = os.stat(repo.gitmem_dir / TRUSTED_FILE)
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}:{st.st_size}"


def _committed(
    repo: MemoryRepo, branch: str, tip: Sha
) -> tuple[dict[Key, Unverified], dict[str, Reshaped]]:
    own = repo.signed_own()  # (sealed: a line planted in the record is not trusted)
    memo_key = ("unverified", f"{tip}\0{_stamp(repo)}\0{len(own)}")
    memo = repo.memo.get(memo_key)
    if isinstance(memo, tuple):
        return memo
    changed = _since_signing(repo, tip)
    others = {sha for sha in changed if sha not in own}
    cards = {card for sha in others for card in changed[sha].cards}
    changes = build.last_changes(repo, branch) if others else {}  # (no index load without)
    writers = _writers(repo, branch, tip, cards, changes) if others else {}
    last = {c: got[0] for c, got in changes.items() if got[0] in others}
    named = sorted({*(sha for sha in writers.values() if sha in others), *last.values()})
    verdicts = _verdicts(repo, named)
    facts = {sha: changed[sha].who for sha in named}  # named: commits of ``others``
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
    shapes = {
        card: _reshaped(repo, card, sha, facts[sha][:2], state[sha])
        for card, sha in sorted(last.items())
        if state.get(sha, "trusted") != "trusted"
    }
    got = found, {card: r for card, r in shapes.items() if r is not None}
    repo.memo[memo_key] = got
    return got


def _reshaped(
    repo: MemoryRepo, card: str, sha: str, who: tuple[str, str], state: str
) -> Reshaped | None:
    """``Reshaped`` for what ``sha`` did to ``card`` against its first parent, or None."""
    old, new = (repo.store.read_blob(f"{rev}:{card_path(card)}") for rev in (f"{sha}^", sha))
    if old is None or new is None:
        return None  # a card it created: each of its sections is marked
    removed, reordered, lead = reshaping(
        old.decode("utf-8", "replace"), new.decode("utf-8", "replace")
    )
    if not (removed or reordered or lead):
        return None
    return Reshaped(card, sha, *who, state, tuple(removed), reordered, lead)


class Change(NamedTuple):
    cards: frozenset[str]  # the cards a commit changed (against any parent)
    who: tuple[str, str, str]  # its author's name, the date (YYYY-MM-DD), its client trailer


Changed = dict[str, Change]  # by commit


def _since_signing(repo: MemoryRepo, tip: Sha) -> Changed:
    """The commits since signing began (the first commit adding ``allowed_signers``, its
    parents excluded) that changed a card, with the cards each changed. Kept per tip; a
    tip that grew from the last one asked reads only the new commits."""
    last = repo.memo.get(("unverified-since", "last"))
    if isinstance(last, tuple) and last[0] == tip:
        return dict(last[1])
    if isinstance(last, tuple) and _is_ancestor(repo, last[0], tip):
        since = {**last[1], **_card_changes(repo, tip, f"^{last[0]}")}
    else:
        parents = _signing_began(repo, tip)
        since = {} if parents is None else _card_changes(repo, tip, *(f"^{p}" for p in parents))
    repo.memo[("unverified-since", "last")] = (tip, since)
    return since


def _signing_began(repo: MemoryRepo, tip: Sha) -> list[str] | None:
    """The parents of the first commit adding ``allowed_signers`` (where history from
    before signing ends), None when no commit of ``tip`` adds it."""
    # --remove-empty: the walk stops where the file is not there yet (3 ms at 100k)
    adds = repo.git.out(
        "log", "--format=%H %P", "--diff-filter=A", "--remove-empty", tip, "--",
        ALLOWED_SIGNERS,
    ).splitlines()  # fmt: skip
    return adds[-1].split()[1:] if adds else None


def persona_note(repo: MemoryRepo) -> str:
    """The line layer A carries when ``persona.md``'s text, as the agent reads it from the
    working tree, is unverified: not committed, or last changed by a commit no trusted
    key signed for this client (nor this clone). "" when it is not; no date of the
    working tree's, so the same state gives the same bytes."""
    branch = repo.head_branch() or MAIN
    tip = repo.tip(branch)
    if tip is None or repo.store.read(f"{tip}:{ALLOWED_SIGNERS}") is None:
        return ""
    proc = repo.git.run("diff-index", "--name-only", tip, "--", PERSONA, check=False)
    if proc.stdout.strip() and _present(repo, PERSONA):
        return persona_line(None)
    parents = _signing_began(repo, tip) or []
    fmt = f"--format=%H%x1f%an%x1f%as%x1f%(trailers:key={T.CLIENT},valueonly,separator=%x2c)"
    got = repo.git.out("log", "-1", fmt, tip, *(f"^{p}" for p in parents), "--", PERSONA)
    sha, name, date, client = [*got.strip().split("\x1f"), "", "", "", ""][:4]
    if not sha or sha in repo.signed_own():
        return ""
    verdict = _verdicts(repo, [sha])[sha]
    state = (
        "other" if verdict.state == "trusted" and client != repo.config.client else verdict.state
    )
    if state == "trusted":
        return ""
    return persona_line(Unverified(PERSONA, "", sha, name, date, state))


def _present(repo: MemoryRepo, path: str) -> bool:
    try:
        return safe_files.stat(repo.root, path) is not None
    except OSError:  # a symlink there: nothing is read from it
        return False


def _card_changes(repo: MemoryRepo, *revs: str) -> Changed:
    """The commits of ``revs`` that changed a card, with the cards each changed and who
    made it: one git log of every parent's diff (``--full-history -m``: a merge's against
    each parent)."""
    fmt = f"--format=%H%x1f%an%x1f%as%x1f%(trailers:key={T.CLIENT},valueonly,separator=%x2c)"
    raw = repo.git.run(
        "log", "-z", fmt, "--name-only", "--no-renames", "--full-history", "-m",
        *revs, "--", "cards",
    ).stdout.decode("utf-8", "surrogateescape")  # fmt: skip
    found: dict[str, set[str]] = {}
    who: dict[str, tuple[str, str, str]] = {}
    sha = ""
    for item in raw.split("\0"):
        name = item.lstrip("\n")
        if name.startswith("cards/"):
            if (card := card_of(name)) is not None:
                found[sha].add(card)
        elif name:
            sha, author, date, client = name.split("\x1f", 3)
            found.setdefault(sha, set())
            who[sha] = (author, date, client.strip())
    return {sha: Change(frozenset(cards), who[sha]) for sha, cards in found.items()}


def _is_ancestor(repo: MemoryRepo, old: str, new: str) -> bool:
    return repo.git.run("merge-base", "--is-ancestor", old, new, check=False).returncode == 0


def _writers(
    repo: MemoryRepo, branch: str, tip: Sha, cards: set[str], changes: dict[str, list[str]]
) -> dict[Key, str]:
    """Each section of ``cards`` at ``tip`` -> the commit its current text comes from."""
    out: dict[Key, str] = {}
    todo: dict[str, list[str]] = {}
    for c in build.card_entries(repo, branch, cards):
        for s in c.sections:
            if s.indexed and not s.stale and s.commit:
                out[(c.project, s.id)] = s.commit
            else:
                todo.setdefault(c.project, []).append(s.id)
    for card, sids in todo.items():
        out.update(_by_last_change(repo, tip, card, sids, changes.get(card)))
    walk = [card for card, sids in todo.items() if any((card, sid) not in out for sid in sids)]
    written = _walked(repo, tip, walk) if walk else {}
    for card in walk:
        out.update({(card, s): written[(card, s)] for s in todo[card] if (card, s) in written})
    return out


def _by_last_change(
    repo: MemoryRepo, tip: Sha, card: str, sids: list[str], last: list[str] | None
) -> dict[Key, str]:
    """The sections of ``sids`` that the card's last change (the replay's) wrote: their
    text as at the tip there, another before it. No history walked (3 blob reads)."""
    if last is None:
        return {}
    path = card_path(card)
    now, there, before = (digest_of(repo, f"{rev}:{path}") for rev in (tip, last[0], f"{last[0]}^"))
    return {
        (card, sid): last[0]
        for sid in sids
        if sid in now and there.get(sid) == now[sid] != before.get(sid)
    }


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
        fresh = repo.verdicts(todo)
        for sha in todo:
            got = fresh.get(Sha(sha), Signature("unsigned", "", ""))
            known[sha] = repo.memo[("signature", f"{sha}\0{stamp}")] = got
    return {sha: got for sha, got in known.items() if isinstance(got, Signature)}


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
        then = digest_of(repo, f"{tip}:{path}")
        saved = time.strftime("%Y-%m-%d", time.gmtime(st.st_mtime))
        for sid, digest in now.items():
            if then.get(sid) != digest:
                out[(card, sid)] = Unverified(card, sid, "", "", saved, "uncommitted")
    return out


def rolled_back(repo: MemoryRepo) -> str | None:
    """The commit gitmem last left main at, when main no longer contains it (history
    rolled back or rewritten outside gitmem), else None. One git process per state, none
    when the marks' walk of main (``unverified``) passed it."""
    seen, tip = repo.store.resolve(refs.SEEN), repo.tip(MAIN)
    if seen is None or tip is None or seen == tip:
        return None
    if repo.store.read(f"{tip}:{ALLOWED_SIGNERS}") is None:
        return None  # as for ``unverified``: nothing is marked in a repo that does not sign
    key = ("rolled-back", f"{seen}\0{tip}")
    since = repo.memo.get(("unverified-since", "last"))
    if isinstance(since, tuple) and since[0] == tip and seen in since[1]:
        repo.memo[key] = None  # the marks' own walk of main's history passed it
    if key not in repo.memo:
        repo.memo[key] = None if _is_ancestor(repo, seen, tip) else seen
    got = repo.memo[key]
    return got if isinstance(got, str) else None
