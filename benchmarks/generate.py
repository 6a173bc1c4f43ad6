"""Build a large client memory repo for the benchmarks, fast, with ``git fast-import``.

The repo starts as ``gitmem.init_repo`` makes it; then one fast-import stream adds the
history an agent and a person would have made over months:

* card creations and section edits with the message ``gitmem.write_card`` writes (agent
  edits in sessions, some ``gitmem write`` edits by a person),
* hand edits committed with plain git (no trailers; some add a section),
* reverts in ``gitmem.revert_commit``'s format (``Gitmem-Reverts: <sha>``),
* session transcripts as a finished session commits them.

Every commit changes one file; every edit commit changes one section of one card.
Before the repo is cached, a sample of the generated commits is re-made with
``gitmem.write_card`` / ``gitmem.revert_commit`` on their parents and must come out with
the very same commit ids. Only gitmem's public API is used. Repos are cached by
parameters under ``$GITMEM_BENCH_CACHE`` (default ``/tmp/gitmem-bench``)::

    .venv/bin/python benchmarks/generate.py --cards 1000 --commits 10000
    .venv/bin/python benchmarks/generate.py --cards 1000 --commits 100000 --sections 75
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

import gitmem
from gitmem import IndexEntry, MemoryRepo, init_repo, open_repo, revert_commit, write_card

GENERATOR_VERSION = 3  # bump when what this file generates changes
MAIN = "main"
CARD, SECTION, KEYWORDS = "Gitmem-Card", "Gitmem-Section", "Gitmem-Keywords"
SUMMARY, SESSION, ACTOR = "Gitmem-Summary", "Gitmem-Session", "Gitmem-Actor"
REVERTS, LAYER, DIGEST = "Gitmem-Reverts", "Gitmem-Layer", "Gitmem-Digest"
NAME, EMAIL = "Dana Reyes", "dana@example.com"
START_EPOCH = 1735722000  # 2025-01-01 09:00 UTC
CLIENT = "bench"

COMPANIES = [
    "acme",
    "globex",
    "initech",
    "umbrella",
    "hooli",
    "vandelay",
    "stark",
    "wayne",
    "wonka",
    "tyrell",
    "cyberdyne",
    "soylent",
    "massive",
    "aperture",
    "oscorp",
    "pied-piper",
    "dunder",
    "gringotts",
    "monarch",
    "nakatomi",
    "weyland",
    "virtucon",
    "zorg",
    "prestige",
    "blue-sun",
    "oceanic",
    "black-mesa",
    "kerb",
    "sirius",
    "nimbus",
    "contoso",
    "fabrikam",
    "northwind",
    "tailspin",
    "litware",
    "adatum",
    "woodgrove",
    "proseware",
    "alpine",
]
THINGS = [
    "website",
    "billing",
    "onboarding",
    "mobile-app",
    "data-platform",
    "crm-migration",
    "brand-refresh",
    "support-desk",
    "analytics",
    "api-gateway",
    "payroll",
    "warehouse",
    "seo",
    "newsletter",
    "intranet",
    "security-audit",
    "cloud-move",
    "pricing",
    "hiring",
    "events",
    "partner-portal",
    "docs",
    "search",
    "checkout",
    "loyalty",
    "reporting",
    "compliance",
    "sso",
    "chatbot",
]
HEADINGS = (
    "Overview",
    "Contacts",
    "Budget",
    "Timeline",
    "Decisions",
    "Risks",
    "Next Steps",
    "Open Questions",
    "Deliverables",
    "Tech Stack",
    "Meetings",
    "Preferences",
)
HAND_HEADINGS = ("Review Notes", "Lessons Learned", "Links")
TOPICS = [
    "budget",
    "invoice",
    "scope",
    "deadline",
    "contract",
    "design",
    "launch",
    "migration",
    "staging",
    "review",
    "approval",
    "vendor",
    "hosting",
    "analytics",
    "copy",
    "pricing",
    "roadmap",
    "security",
    "testing",
    "training",
]
VERBS = (
    "agreed",
    "moved",
    "confirmed",
    "raised",
    "cut",
    "postponed",
    "signed off",
    "reopened",
    "clarified",
    "handed over",
)


@dataclass(frozen=True)
class Params:
    cards: int = 1000
    commits: int = 10_000
    seed: int = 1
    sections: int = 0  # sections per new card; 0: 4 to 7

    def key(self) -> str:
        """A cache key that changes with the parameters, ``GENERATOR_VERSION`` and what gitmem
        makes of an empty repo and of one edit (its template and its commit format)."""
        digest = hashlib.sha1(_probe()).hexdigest()[:10]
        shape = f"-x{self.sections}" if self.sections else ""
        return f"v{GENERATOR_VERSION}-c{self.cards}-n{self.commits}{shape}-s{self.seed}-{digest}"


def _probe() -> bytes:
    """gitmem's template tree and the message of one edit, made in a scratch repo."""
    with tempfile.TemporaryDirectory(prefix="gitmem-probe-") as tmp, identity(START_EPOCH):
        root = Path(tmp) / "r"
        init_repo(root, CLIENT)
        with open_repo(root) as repo:
            write_card(repo, "a-b", "", "## C\n\nd\n", IndexEntry.make("c", ["d"], "e"))
        return git(root, "log", "--format=%T%n%B", "-2").encode()


def clean_env() -> dict[str, str]:
    """The environment without inherited ``GIT_*`` variables, for git's own processes."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def slugify(text: str) -> str:
    """A heading's section id, as gitmem derives it."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].rstrip("-")


def edit_message(
    card: str, entry: IndexEntry, section: Section, *, session: str | None, actor: str
) -> str:
    """The commit message ``gitmem.write_card`` writes (checked by ``verify``), ``section``
    as the edit leaves it."""
    head = f"{card}: {entry.summary}"
    if len(head) > 72:
        head = head[:71].rstrip() + "…"
    lines = [f"{CARD}: {card}", f"{SECTION}: {entry.section_id}"]
    lines += [f"{KEYWORDS}: {', '.join(entry.keywords)}", f"{SUMMARY}: {entry.summary}"]
    lines.append(f"{DIGEST}: {section.digest()}")
    if session:
        lines.append(f"{SESSION}: {session}")
    lines.append(f"{ACTOR}: {actor}")
    return f"{head}\n\n" + "\n".join(lines) + "\n"


# -- the cards ---------------------------------------------------------------------
@dataclass
class Section:
    heading: str
    bullets: list[str]

    @property
    def id(self) -> str:
        return slugify(self.heading)

    def digest(self) -> str:
        """The section's digest as gitmem keeps it with an entry: its lines as ``render``
        writes them, trailing blank lines left out."""
        text = "\n".join([f"## {self.heading}", "", *self.bullets]).rstrip("\n")
        return hashlib.sha1(text.encode()).hexdigest()[:16]


@dataclass
class Card:
    project: str
    title: str
    sections: list[Section]

    def render(self) -> str:
        out = [f"# {self.title}", "", f"Working notes on {self.title}."]
        for s in self.sections:
            out += ["", f"## {s.heading}", "", *s.bullets]
        return "\n".join(out) + "\n"

    def copy(self) -> Card:
        return Card(
            self.project, self.title, [Section(s.heading, list(s.bullets)) for s in self.sections]
        )


def project_names(n: int) -> list[str]:
    combos = [f"{c}-{t}" for c in COMPANIES for t in THINGS]
    random.Random(0).shuffle(combos)
    return [
        combos[i % len(combos)] + (f"-{i // len(combos) + 1}" if i >= len(combos) else "")
        for i in range(n)
    ]


def title_of(project: str) -> str:
    return " ".join(w.capitalize() for w in project.split("-"))


# -- commits -----------------------------------------------------------------------
@dataclass
class Commit:
    mark: int
    epoch: int
    message: str
    path: str
    content: str
    kind: str


@dataclass
class EditRecord:
    """A gitmem edit that a later commit may revert: the card's text before it."""

    mark: int
    subject: str
    section: str
    before: Card


@dataclass
class Sample:
    """What gitmem was asked to do for one generated commit (re-made when verifying)."""

    kind: str
    mark: int
    parent: int
    epoch: int
    project: str = ""
    old: str = ""
    new: str = ""
    section: str = ""
    keywords: list[str] = field(default_factory=list)
    summary: str = ""
    session: str | None = None
    actor: str = "agent"
    target: int = 0


class History:
    """Decides, commit by commit, what an agent and a person did to the cards."""

    def __init__(self, params: Params, mark_sha: Callable[[int], str]) -> None:
        self.p = params
        self.rng = random.Random(params.seed)
        self.mark_sha = mark_sha  # (mark) -> sha, asks fast-import
        self.names = project_names(params.cards)
        self.cards: dict[str, Card] = {}
        self.created: list[str] = []
        self.revertable: dict[str, EditRecord] = {}
        self.epoch = START_EPOCH
        self.mark = 0
        self.counter = 0
        self.session: str | None = None
        self.session_left = 0
        self.samples: list[Sample] = []
        self.kinds: dict[str, int] = {}

    # -- scheduling ------------------------------------------------------------
    def commits(self) -> Iterator[Commit]:
        n = self.p.commits
        creations = set(self.rng.sample(range(1, n), min(self.p.cards, n) - 1)) | {0}
        for step in range(n):
            self.mark += 1
            self.epoch += self.rng.randint(60, 1800)
            commit = self._step(step in creations and len(self.created) < len(self.names))
            self.kinds[commit.kind] = self.kinds.get(commit.kind, 0) + 1
            yield commit

    def _step(self, create: bool) -> Commit:
        if create:
            return self._create()
        if self.session is not None and self.session_left <= 0:
            return self._transcript()
        roll = self.rng.random()
        if roll < 0.05:
            return self._hand_edit()
        if roll < 0.08 and self.revertable:
            return self._revert()
        return self._edit(agent=roll >= 0.15)

    def _start_session_if_needed(self) -> str:
        if self.session is None:
            when = time.strftime("%Y%m%d-%H%M%S", time.gmtime(self.epoch))
            self.session = f"{when}-{self.rng.getrandbits(16):04x}"
            self.session_left = self.rng.randint(3, 30)
        self.session_left -= 1
        return self.session

    def _who(self, agent: bool) -> tuple[str | None, str]:
        return (self._start_session_if_needed(), "agent") if agent else (None, "cli")

    # -- text ------------------------------------------------------------------
    def _bullet(self, topic: str) -> str:
        self.counter += 1
        day = time.strftime("%Y-%m-%d", time.gmtime(self.epoch))
        verb = self.rng.choice(VERBS)
        other = self.rng.choice(TOPICS)
        return f"- {day}: {topic} {verb} with the client; {other} follows (ref {self.counter})"

    def _summary(self, topic: str) -> tuple[list[str], str]:
        words = self.rng.sample(TOPICS, 2)
        keywords = list(dict.fromkeys([topic, *words]))
        return keywords, f"{topic} {self.rng.choice(VERBS)}, {words[0]} next (ref {self.counter})"

    # -- commit kinds ----------------------------------------------------------
    def _create(self) -> Commit:
        project = self.names[len(self.created)]
        if self.p.sections:
            headings = [HEADINGS[i % len(HEADINGS)] + f" {i + 1}" for i in range(self.p.sections)]
        else:
            headings = self.rng.sample(HEADINGS, self.rng.randint(4, 7))
        card = Card(project, title_of(project), [])
        for h in headings:
            card.sections.append(Section(h, [self._bullet(h.lower()) for _ in range(2)]))
        self.cards[project] = card
        self.created.append(project)
        section = card.sections[0]
        keywords, summary = self._summary(section.heading.lower())
        session, actor = self._who(self.rng.random() < 0.85)
        text = card.render()
        self._sample("create", project, "", text, section.id, keywords, summary, session, actor)
        message = edit_message(
            project,
            IndexEntry.make(section.id, keywords, summary),
            section,
            session=session,
            actor=actor,
        )
        return Commit(self.mark, self.epoch, message, f"cards/{project}.md", text, "create")

    def _edit(self, *, agent: bool) -> Commit:
        project = self.rng.choice(self.created)
        card = self.cards[project]
        before = card.copy()
        section = self.rng.choice(card.sections)
        old, new = self._change_section(section)
        keywords, summary = self._summary(section.heading.lower())
        session, actor = self._who(agent)
        self._sample("edit", project, old, new, section.id, keywords, summary, session, actor)
        message = edit_message(
            project,
            IndexEntry.make(section.id, keywords, summary),
            section,
            session=session,
            actor=actor,
        )
        subject = message.split("\n", 1)[0]
        self.revertable[project] = EditRecord(self.mark, subject, section.id, before)
        return Commit(self.mark, self.epoch, message, f"cards/{project}.md", card.render(), "edit")

    def _change_section(self, section: Section) -> tuple[str, str]:
        """Append a bullet (after the last one) or replace one; returns (old_text, new_text)."""
        bullet = self._bullet(section.heading.lower())
        if len(section.bullets) < 4 and section.bullets:
            old = section.bullets[-1]
            section.bullets.append(bullet)
            return old, f"{old}\n{bullet}"
        i = self.rng.randrange(len(section.bullets))
        old, section.bullets[i] = section.bullets[i], bullet
        return old, bullet

    def _hand_edit(self) -> Commit:
        project = self.rng.choice(self.created)
        card = self.cards[project]
        self.revertable.pop(project, None)
        have = {s.heading for s in card.sections}
        missing = [h for h in HAND_HEADINGS if h not in have]
        if missing and self.rng.random() < 0.3:
            card.sections.append(Section(missing[0], [self._bullet("note")]))
            message = f"{project}: add {missing[0].lower()} by hand\n"
        else:
            section = self.rng.choice(card.sections)
            i = self.rng.randrange(len(section.bullets))
            section.bullets[i] = self._bullet("note").replace("with the client", "by phone")
            message = f"Tidy wording in {project} {section.id}\n"
        return Commit(self.mark, self.epoch, message, f"cards/{project}.md", card.render(), "hand")

    def _revert(self) -> Commit:
        project = self.rng.choice(sorted(self.revertable))
        record = self.revertable.pop(project)
        target = self.mark_sha(record.mark)
        self.cards[project] = record.before
        if not any(s.kind == "revert" for s in self.samples) or self.rng.random() < 0.05:
            self.samples.append(
                Sample("revert", self.mark, self.mark - 1, self.epoch, project, target=record.mark)
            )
        lines = [
            f"{CARD}: {project}",
            f"{SECTION}: {record.section}",
            f"{REVERTS}: {target}",
            f"{ACTOR}: cli",
        ]
        message = (
            f'Revert "{record.subject}"\n\nThis reverts commit {target}.\n\n'
            + "\n".join(lines)
            + "\n"
        )
        text = record.before.render()
        return Commit(self.mark, self.epoch, message, f"cards/{project}.md", text, "revert")

    def _transcript(self) -> Commit:
        sid = self.session
        assert sid is not None
        self.session = None
        lines = []
        for role, text in (("user", "Please update the notes."), ("assistant", "Done.")):
            block = [{"type": "text", "text": text}]
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.epoch))
            lines.append(json.dumps({"at": when, "role": role, "text": text, "content": block}))
        message = f"session {sid}: transcript\n\n{SESSION}: {sid}\n{LAYER}: chat\n{ACTOR}: agent\n"
        content = "\n".join(lines) + "\n"
        return Commit(
            self.mark, self.epoch, message, f"sessions/{sid}.jsonl", content, "transcript"
        )

    def _sample(
        self,
        kind: str,
        project: str,
        old: str,
        new: str,
        section: str,
        keywords: list[str],
        summary: str,
        session: str | None,
        actor: str,
    ) -> None:
        if self.mark <= 3 or self.rng.random() < 0.004:
            self.samples.append(
                Sample(
                    kind,
                    self.mark,
                    self.mark - 1,
                    self.epoch,
                    project,
                    old,
                    new,
                    section,
                    keywords,
                    summary,
                    session,
                    actor,
                )
            )


# -- fast-import ---------------------------------------------------------------------
class FastImport:
    """A ``git fast-import`` process; ``sha(mark)`` asks it for a commit id mid-stream."""

    def __init__(self, root: Path, marks: Path) -> None:
        self._r, w = os.pipe()
        self.proc = subprocess.Popen(
            [
                "git",
                "fast-import",
                "--quiet",
                "--done",
                f"--cat-blob-fd={w}",
                f"--export-marks={marks}",
            ],
            cwd=root,
            stdin=subprocess.PIPE,
            pass_fds=(w,),
            env=clean_env(),
        )
        os.close(w)
        self._answers: IO[bytes] = os.fdopen(self._r, "rb")
        assert self.proc.stdin is not None
        self.stdin: IO[bytes] = self.proc.stdin

    def sha(self, mark: int) -> str:
        self.stdin.write(f"get-mark :{mark}\n".encode())
        self.stdin.flush()
        return self._answers.readline().decode().strip()

    def commit(self, c: Commit, parent: str | None) -> None:
        sig = f"{NAME} <{EMAIL}> {c.epoch} +0000"
        message, content = c.message.encode(), c.content.encode()
        head = f"commit refs/heads/{MAIN}\nmark :{c.mark}\nauthor {sig}\ncommitter {sig}\n"
        out = [head.encode(), f"data {len(message)}\n".encode(), message, b"\n"]
        if parent:
            out.append(f"from {parent}\n".encode())
        out += [f"M 100644 inline {c.path}\n".encode(), f"data {len(content)}\n".encode()]
        out += [content, b"\n\n"]
        self.stdin.write(b"".join(out))

    def finish(self) -> None:
        self.stdin.write(b"done\n")
        self.stdin.close()
        code = self.proc.wait()
        self._answers.close()
        if code:
            raise RuntimeError(f"git fast-import failed with exit code {code}")


# -- building, verifying, caching ------------------------------------------------------
@contextlib.contextmanager
def identity(epoch: int) -> Iterator[None]:
    """GIT_AUTHOR_*/GIT_COMMITTER_* set as the generated commits have them (unsigned:
    fast-import writes no signature, so gitmem's re-made samples must not sign either)."""
    values: dict[str, str] = {"GITMEM_SIGNING": "off"}
    for role in ("AUTHOR", "COMMITTER"):
        values |= {
            f"GIT_{role}_NAME": NAME,
            f"GIT_{role}_EMAIL": EMAIL,
            f"GIT_{role}_DATE": f"{epoch} +0000",
        }
    values["GITMEM_SIGNING"] = "off"  # a generated history is unsigned, as gitmem's was
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def git(root: Path, *args: str) -> str:
    return (
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=clean_env())
        .stdout.decode()
        .strip()
    )


def build(root: Path, params: Params) -> dict[str, Any]:
    """Create the repo at ``root`` (must not exist); returns what was generated."""
    with identity(START_EPOCH):
        init_repo(root, CLIENT)
    git(root, "config", "user.name", NAME)
    git(root, "config", "user.email", EMAIL)
    marks = root.parent / f"{root.name}.marks"
    fi = FastImport(root, marks)
    history = History(params, fi.sha)
    parent: str | None = git(root, "rev-parse", MAIN)
    for c in history.commits():
        fi.commit(c, parent)
        parent = None
    fi.finish()
    git(root, "reset", "-q", "--hard", MAIN)
    mark_shas = dict(line.split() for line in marks.read_text().splitlines())
    marks.unlink()
    verify(root, history.samples, {int(k[1:]): v for k, v in mark_shas.items()})
    git(root, "gc", "-q", "--prune=now")
    with open_repo(root) as repo:
        gitmem.read_index(repo)  # the index cached, as after any command
    return {
        "params": asdict(params),
        "kinds": history.kinds,
        "projects": history.created,
        "verified": len(history.samples),
    }


def verify(root: Path, samples: list[Sample], shas: dict[int, str]) -> None:
    """Re-make sampled commits with gitmem itself on their parents: ids must match."""
    branch = "bench-verify"
    with open_repo(root) as repo:
        for s in samples:
            parent = shas.get(s.parent) or git(root, "rev-parse", f"{shas[s.mark]}^")
            git(root, "update-ref", f"refs/heads/{branch}", parent)
            with identity(s.epoch):
                got = _remake(repo, s, shas, branch)
            if got != shas[s.mark]:
                raise RuntimeError(f"generated commit :{s.mark} ({s.kind}) differs from gitmem's")
    git(root, "update-ref", "-d", f"refs/heads/{branch}")
    git(root, "reflog", "expire", "--expire=now", "--all")


def _remake(repo: MemoryRepo, s: Sample, shas: dict[int, str], branch: str) -> str:
    if s.kind == "revert":
        return revert_commit(repo, shas[s.target], branch=branch, actor="cli").commit
    entry = IndexEntry.make(s.section, s.keywords, s.summary)
    return write_card(
        repo, s.project, s.old, s.new, entry, session=s.session, actor=s.actor, branch=branch
    ).commit


def cache_root(given: str | None = None) -> Path:
    base = given or os.environ.get("GITMEM_BENCH_CACHE")
    return Path(base) if base else Path(tempfile.gettempdir()) / "gitmem-bench"


def cached_repo(params: Params, cache: Path | None = None, log: IO[str] = sys.stderr) -> Path:
    """The generated repo for ``params``, built once and reused (path of a cached copy)."""
    cache = cache or cache_root()
    final = cache / params.key()
    if (final / "repo" / ".git").is_dir() and (final / "meta.json").is_file():
        return final / "repo"
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{params.key()}.", dir=cache))
    try:
        began = time.perf_counter()
        print(f"generating {params.cards} cards, {params.commits} commits ...", file=log)
        meta = build(work / "repo", params)
        meta["seconds"] = round(time.perf_counter() - began, 1)
        (work / "meta.json").write_text(json.dumps(meta, indent=1))
        print(f"generated in {meta['seconds']} s: {meta['kinds']}", file=log)
        with contextlib.suppress(OSError):  # a concurrent run may have won; keep theirs
            os.rename(work, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final / "repo"


def meta_of(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo.parent / "meta.json").read_text())
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cards", type=int, default=Params.cards)
    ap.add_argument("--commits", type=int, default=Params.commits)
    ap.add_argument("--seed", type=int, default=Params.seed)
    ap.add_argument("--sections", type=int, default=0, help="sections per card (default 4-7)")
    ap.add_argument(
        "--cache-dir", default=None, help="default: $GITMEM_BENCH_CACHE or TMP/gitmem-bench"
    )
    args = ap.parse_args(argv)
    if args.cards < 1 or args.commits < args.cards:
        ap.error("need --cards >= 1 and --commits >= --cards (each card is created by a commit)")
    repo = cached_repo(
        Params(args.cards, args.commits, args.seed, args.sections), cache_root(args.cache_dir)
    )
    print(repo)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
