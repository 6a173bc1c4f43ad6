"""gitmem: long-term agent memory in git.

The public Python API, for programs that embed gitmem (the ``gitmem`` command is built
on it); see docs/api.md::

    from gitmem import IndexEntry, open_repo, write_card

    with open_repo("~/clients/acme") as repo:
        write_card(repo, "acme-website", "Budget: 30k", "Budget: 40k",
                   IndexEntry.make("budget", ["budget"], "Q3 budget raised to 40k"))

Every name in ``__all__`` is looked up in its module on use (PEP 562), so ``import gitmem`` stays
cheap and a command pays only for what it calls. Errors are ``GitmemError`` subclasses,
each with a one-line message and the ``exit_code`` the command exits with.
"""

__version__ = "0.1.0"

# Type checkers treat any name TYPE_CHECKING as true; at run time this one is False and
# ``typing`` is not imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitmem.agent.budget import Budget as Budget
    from gitmem.api import find_repo as find_repo
    from gitmem.api import open_repo as open_repo
    from gitmem.api import read_index as read_index
    from gitmem.api import render_index as render_index
    from gitmem.errors import ConfigError as ConfigError
    from gitmem.errors import Conflict as Conflict
    from gitmem.errors import CorruptObject as CorruptObject
    from gitmem.errors import DirtyCard as DirtyCard
    from gitmem.errors import EditError as EditError
    from gitmem.errors import GitError as GitError
    from gitmem.errors import GitmemError as GitmemError
    from gitmem.errors import GitMissing as GitMissing
    from gitmem.errors import InvalidInput as InvalidInput
    from gitmem.errors import ModelError as ModelError
    from gitmem.errors import NotARepo as NotARepo
    from gitmem.errors import NotFound as NotFound
    from gitmem.errors import StaleLock as StaleLock
    from gitmem.errors import StorageError as StorageError
    from gitmem.errors import UnsafePath as UnsafePath
    from gitmem.index.build import CardEntry as CardEntry
    from gitmem.index.build import Index as Index
    from gitmem.index.build import SectionEntry as SectionEntry
    from gitmem.memory.audit import LogEntry as LogEntry
    from gitmem.memory.audit import audit_log as audit_log
    from gitmem.memory.audit import read_card as read_card
    from gitmem.memory.edit import EditResult as EditResult
    from gitmem.memory.edit import write_card as write_card
    from gitmem.memory.remote import RemoteError as RemoteError
    from gitmem.memory.repo import MemoryRepo as MemoryRepo
    from gitmem.memory.revert import RevertResult as RevertResult
    from gitmem.memory.revert import revert_commit as revert_commit
    from gitmem.memory.secrets import SecretFound as SecretFound
    from gitmem.memory.session_branches import FinishResult as FinishResult
    from gitmem.memory.session_branches import Session as Session
    from gitmem.memory.session_branches import finish as finish_session
    from gitmem.memory.session_branches import start as start_session
    from gitmem.memory.trailers import IndexEntry as IndexEntry
    from gitmem.memory.worktree import recover as recover
    from gitmem.rebuild import ReindexResult as ReindexResult
    from gitmem.rebuild import reindex as reindex
    from gitmem.review.decision import Decision as Decision
    from gitmem.review.decision import accept as accept_session
    from gitmem.review.decision import reject as reject_session
    from gitmem.review.pending import SessionSummary as SessionSummary
    from gitmem.review.pending import SessionView as SessionView
    from gitmem.review.pending import list_sessions as list_sessions
    from gitmem.review.pending import load as load_session
    from gitmem.review.revert_session import SessionRevertResult as SessionRevertResult
    from gitmem.review.revert_session import is_session as is_session
    from gitmem.review.revert_session import revert_session as revert_session
    from gitmem.setup.init import InitResult as InitResult
    from gitmem.setup.init import init_repo as init_repo
    from gitmem.sync.exchange import RemoteRewritten as RemoteRewritten
    from gitmem.sync.exchange import SyncResult as SyncResult
    from gitmem.sync.exchange import abort_sync as abort_sync
    from gitmem.sync.exchange import continue_sync as continue_sync
    from gitmem.sync.exchange import sync as sync_repo

# Public name -> (module, name there). The module is imported on first use of the name.
_EXPORTS = {
    # the repo
    "find_repo": ("gitmem.api", "find_repo"),
    "open_repo": ("gitmem.api", "open_repo"),
    "init_repo": ("gitmem.setup.init", "init_repo"),
    "recover": ("gitmem.memory.worktree", "recover"),
    "MemoryRepo": ("gitmem.memory.repo", "MemoryRepo"),
    "InitResult": ("gitmem.setup.init", "InitResult"),
    # edits and reading
    "write_card": ("gitmem.memory.edit", "write_card"),
    "IndexEntry": ("gitmem.memory.trailers", "IndexEntry"),
    "EditResult": ("gitmem.memory.edit", "EditResult"),
    "read_card": ("gitmem.memory.audit", "read_card"),
    # the index
    "read_index": ("gitmem.api", "read_index"),
    "render_index": ("gitmem.api", "render_index"),
    "reindex": ("gitmem.rebuild", "reindex"),
    "Index": ("gitmem.index.build", "Index"),
    "CardEntry": ("gitmem.index.build", "CardEntry"),
    "SectionEntry": ("gitmem.index.build", "SectionEntry"),
    "Budget": ("gitmem.agent.budget", "Budget"),
    "ReindexResult": ("gitmem.rebuild", "ReindexResult"),
    # the log and reverts
    "audit_log": ("gitmem.memory.audit", "audit_log"),
    "LogEntry": ("gitmem.memory.audit", "LogEntry"),
    "revert_commit": ("gitmem.memory.revert", "revert_commit"),
    "RevertResult": ("gitmem.memory.revert", "RevertResult"),
    "revert_session": ("gitmem.review.revert_session", "revert_session"),
    "is_session": ("gitmem.review.revert_session", "is_session"),
    "SessionRevertResult": ("gitmem.review.revert_session", "SessionRevertResult"),
    # sessions and review
    "start_session": ("gitmem.memory.session_branches", "start"),
    "finish_session": ("gitmem.memory.session_branches", "finish"),
    "Session": ("gitmem.memory.session_branches", "Session"),
    "FinishResult": ("gitmem.memory.session_branches", "FinishResult"),
    "list_sessions": ("gitmem.review.pending", "list_sessions"),
    "load_session": ("gitmem.review.pending", "load"),
    "accept_session": ("gitmem.review.decision", "accept"),
    "reject_session": ("gitmem.review.decision", "reject"),
    "SessionSummary": ("gitmem.review.pending", "SessionSummary"),
    "SessionView": ("gitmem.review.pending", "SessionView"),
    "Decision": ("gitmem.review.decision", "Decision"),
    # sync
    "sync_repo": ("gitmem.sync.exchange", "sync"),
    "continue_sync": ("gitmem.sync.exchange", "continue_sync"),
    "abort_sync": ("gitmem.sync.exchange", "abort_sync"),
    "SyncResult": ("gitmem.sync.exchange", "SyncResult"),
    "RemoteRewritten": ("gitmem.sync.exchange", "RemoteRewritten"),
    # errors
    "GitmemError": ("gitmem.errors", "GitmemError"),
    "InvalidInput": ("gitmem.errors", "InvalidInput"),
    "EditError": ("gitmem.errors", "EditError"),
    "NotFound": ("gitmem.errors", "NotFound"),
    "NotARepo": ("gitmem.errors", "NotARepo"),
    "Conflict": ("gitmem.errors", "Conflict"),
    "DirtyCard": ("gitmem.errors", "DirtyCard"),
    "UnsafePath": ("gitmem.errors", "UnsafePath"),
    "StaleLock": ("gitmem.errors", "StaleLock"),
    "ConfigError": ("gitmem.errors", "ConfigError"),
    "GitError": ("gitmem.errors", "GitError"),
    "CorruptObject": ("gitmem.errors", "CorruptObject"),
    "StorageError": ("gitmem.errors", "StorageError"),
    "GitMissing": ("gitmem.errors", "GitMissing"),
    "ModelError": ("gitmem.errors", "ModelError"),
    "SecretFound": ("gitmem.memory.secrets", "SecretFound"),
    "RemoteError": ("gitmem.memory.remote", "RemoteError"),
}

__all__ = [
    "Budget",
    "CardEntry",
    "ConfigError",
    "Conflict",
    "CorruptObject",
    "Decision",
    "DirtyCard",
    "EditError",
    "EditResult",
    "FinishResult",
    "GitError",
    "GitMissing",
    "GitmemError",
    "Index",
    "IndexEntry",
    "InitResult",
    "InvalidInput",
    "LogEntry",
    "MemoryRepo",
    "ModelError",
    "NotARepo",
    "NotFound",
    "ReindexResult",
    "RemoteError",
    "RemoteRewritten",
    "RevertResult",
    "SecretFound",
    "SectionEntry",
    "Session",
    "SessionRevertResult",
    "SessionSummary",
    "SessionView",
    "StaleLock",
    "StorageError",
    "SyncResult",
    "UnsafePath",
    "abort_sync",
    "accept_session",
    "audit_log",
    "continue_sync",
    "find_repo",
    "finish_session",
    "init_repo",
    "is_session",
    "list_sessions",
    "load_session",
    "open_repo",
    "read_card",
    "read_index",
    "recover",
    "reindex",
    "reject_session",
    "render_index",
    "revert_commit",
    "revert_session",
    "start_session",
    "sync_repo",
    "write_card",
]


def __getattr__(name: str) -> object:
    """A public name, from its module (imported on first use). Not kept here: the name
    is always what its module holds now (a test that patches the module patches it)."""
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'gitmem' has no attribute {name!r}") from None
    import sys

    __import__(module)  # an import statement's path: `python -X importtime` shows it
    return getattr(sys.modules[module], attr)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
