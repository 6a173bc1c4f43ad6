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
    from gitmem.agent.chat import ChatResult as ChatResult
    from gitmem.agent.chat import run_chat as run_chat
    from gitmem.agent.chat_report import first_turn as first_turn
    from gitmem.agent.chat_report import report as chat_report
    from gitmem.agent.consolidate import ConsolidateResult as ConsolidateResult
    from gitmem.agent.consolidate import consolidate as consolidate
    from gitmem.agent.consolidate import is_consolidation as is_consolidation
    from gitmem.agent.session import make_client as make_client
    from gitmem.agent.usage import load as load_usage
    from gitmem.agent.usage_report import SessionReport as SessionReport
    from gitmem.agent.usage_report import Totals as UsageTotals
    from gitmem.agent.usage_report import report as usage_by_session
    from gitmem.agent.usage_report import totals as usage_totals
    from gitmem.api import find_repo as find_repo
    from gitmem.api import open_repo as open_repo
    from gitmem.api import read_index as read_index
    from gitmem.api import render_index as render_index
    from gitmem.bridges.export import ExportResult as ExportResult
    from gitmem.bridges.export import export_cards as export_cards
    from gitmem.bridges.import_notes import ImportResult as ImportResult
    from gitmem.bridges.import_notes import import_notes as import_notes
    from gitmem.bridges.mcp_server import serve as serve_mcp
    from gitmem.demo import run_demo as run_demo
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
    from gitmem.hooks import HookAction as HookAction
    from gitmem.hooks import install as install_hooks
    from gitmem.index.build import CardEntry as CardEntry
    from gitmem.index.build import Index as Index
    from gitmem.index.build import SectionEntry as SectionEntry
    from gitmem.index.card_list import CardInfo as CardInfo
    from gitmem.index.card_list import list_cards as list_cards
    from gitmem.index.card_usage import CardsReport as CardsReport
    from gitmem.index.card_usage import cards_report as card_usage
    from gitmem.index.stale import StaleReport as StaleReport
    from gitmem.index.stale import report as stale_report
    from gitmem.memory.audit import LogEntry as LogEntry
    from gitmem.memory.audit import audit_log as audit_log
    from gitmem.memory.audit import read_card as read_card
    from gitmem.memory.cards import sections as card_sections
    from gitmem.memory.edit import EditResult as EditResult
    from gitmem.memory.edit import write_card as write_card
    from gitmem.memory.editor import Buffer as EditBuffer
    from gitmem.memory.editor import EditOutcome as EditOutcome
    from gitmem.memory.editor import changed_section as changed_section
    from gitmem.memory.editor import editor_command as editor_command
    from gitmem.memory.editor import load as edit_buffer
    from gitmem.memory.editor import run_editor as run_editor
    from gitmem.memory.editor import save as save_edit
    from gitmem.memory.remote import RemoteError as RemoteError
    from gitmem.memory.repo import MemoryRepo as MemoryRepo
    from gitmem.memory.revert import RevertResult as RevertResult
    from gitmem.memory.revert import revert_commit as revert_commit
    from gitmem.memory.scan import ScanResult as ScanResult
    from gitmem.memory.scan import scan as scan_secrets
    from gitmem.memory.secrets import SecretFound as SecretFound
    from gitmem.memory.session_branches import FinishResult as FinishResult
    from gitmem.memory.session_branches import Session as Session
    from gitmem.memory.session_branches import finish as finish_session
    from gitmem.memory.session_branches import start as start_session
    from gitmem.memory.trailers import IndexEntry as IndexEntry
    from gitmem.memory.workspace import ClientInfo as ClientInfo
    from gitmem.memory.workspace import client_path as client_path
    from gitmem.memory.workspace import home as workspace_home
    from gitmem.memory.workspace import list_clients as list_clients
    from gitmem.memory.worktree import recover as recover
    from gitmem.rebuild import ReindexResult as ReindexResult
    from gitmem.rebuild import reindex as reindex
    from gitmem.review.decision import Decision as Decision
    from gitmem.review.decision import accept as accept_session
    from gitmem.review.decision import pending as pending_session
    from gitmem.review.decision import reject as reject_session
    from gitmem.review.markdown import markdown as session_markdown
    from gitmem.review.pending import SessionSummary as SessionSummary
    from gitmem.review.pending import SessionView as SessionView
    from gitmem.review.pending import TokenSizes as TokenSizes
    from gitmem.review.pending import list_sessions as list_sessions
    from gitmem.review.pending import load as load_session
    from gitmem.review.pending import token_sizes as token_sizes
    from gitmem.review.revert_session import SessionRevertResult as SessionRevertResult
    from gitmem.review.revert_session import is_session as is_session
    from gitmem.review.revert_session import revert_session as revert_session
    from gitmem.review.team import PushedSession as PushedSession
    from gitmem.review.team import push_session as push_session
    from gitmem.search.snippets import SearchHit as SearchHit
    from gitmem.search.snippets import search_history as search_history
    from gitmem.setup.clone import CloneResult as CloneResult
    from gitmem.setup.clone import clone as clone_repo
    from gitmem.setup.clone import default_path as default_clone_path
    from gitmem.setup.init import InitResult as InitResult
    from gitmem.setup.init import init_repo as init_repo
    from gitmem.status import Status as RepoStatus
    from gitmem.status import status as repo_status
    from gitmem.sync.exchange import RemoteRewritten as RemoteRewritten
    from gitmem.sync.exchange import SyncResult as SyncResult
    from gitmem.sync.exchange import abort_sync as abort_sync
    from gitmem.sync.exchange import continue_sync as continue_sync
    from gitmem.sync.exchange import sync as sync_repo
    from gitmem.sync.redact import Redaction as Redaction
    from gitmem.sync.redact import redact as redact_secrets

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
    # cards, the index's hygiene, search and status
    "list_cards": ("gitmem.index.card_list", "list_cards"),
    "CardInfo": ("gitmem.index.card_list", "CardInfo"),
    "stale_report": ("gitmem.index.stale", "report"),
    "StaleReport": ("gitmem.index.stale", "StaleReport"),
    "search_history": ("gitmem.search.snippets", "search_history"),
    "SearchHit": ("gitmem.search.snippets", "SearchHit"),
    "repo_status": ("gitmem.status", "status"),
    "RepoStatus": ("gitmem.status", "Status"),
    # editing in an editor
    "edit_buffer": ("gitmem.memory.editor", "load"),
    "EditBuffer": ("gitmem.memory.editor", "Buffer"),
    "editor_command": ("gitmem.memory.editor", "editor_command"),
    "run_editor": ("gitmem.memory.editor", "run_editor"),
    "changed_section": ("gitmem.memory.editor", "changed_section"),
    "card_sections": ("gitmem.memory.cards", "sections"),
    "save_edit": ("gitmem.memory.editor", "save"),
    "EditOutcome": ("gitmem.memory.editor", "EditOutcome"),
    # notes in and out, secrets
    "import_notes": ("gitmem.bridges.import_notes", "import_notes"),
    "ImportResult": ("gitmem.bridges.import_notes", "ImportResult"),
    "export_cards": ("gitmem.bridges.export", "export_cards"),
    "ExportResult": ("gitmem.bridges.export", "ExportResult"),
    "scan_secrets": ("gitmem.memory.scan", "scan"),
    "ScanResult": ("gitmem.memory.scan", "ScanResult"),
    "redact_secrets": ("gitmem.sync.redact", "redact"),
    "Redaction": ("gitmem.sync.redact", "Redaction"),
    # clones, the workspace, hooks
    "clone_repo": ("gitmem.setup.clone", "clone"),
    "default_clone_path": ("gitmem.setup.clone", "default_path"),
    "CloneResult": ("gitmem.setup.clone", "CloneResult"),
    "workspace_home": ("gitmem.memory.workspace", "home"),
    "client_path": ("gitmem.memory.workspace", "client_path"),
    "list_clients": ("gitmem.memory.workspace", "list_clients"),
    "ClientInfo": ("gitmem.memory.workspace", "ClientInfo"),
    "install_hooks": ("gitmem.hooks", "install"),
    "HookAction": ("gitmem.hooks", "HookAction"),
    # more of review
    "pending_session": ("gitmem.review.decision", "pending"),
    "token_sizes": ("gitmem.review.pending", "token_sizes"),
    "TokenSizes": ("gitmem.review.pending", "TokenSizes"),
    "session_markdown": ("gitmem.review.markdown", "markdown"),
    "push_session": ("gitmem.review.team", "push_session"),
    "PushedSession": ("gitmem.review.team", "PushedSession"),
    # the agent
    "make_client": ("gitmem.agent.session", "make_client"),
    "run_chat": ("gitmem.agent.chat", "run_chat"),
    "ChatResult": ("gitmem.agent.chat", "ChatResult"),
    "first_turn": ("gitmem.agent.chat_report", "first_turn"),
    "chat_report": ("gitmem.agent.chat_report", "report"),
    "consolidate": ("gitmem.agent.consolidate", "consolidate"),
    "is_consolidation": ("gitmem.agent.consolidate", "is_consolidation"),
    "ConsolidateResult": ("gitmem.agent.consolidate", "ConsolidateResult"),
    "load_usage": ("gitmem.agent.usage", "load"),
    "usage_by_session": ("gitmem.agent.usage_report", "report"),
    "usage_totals": ("gitmem.agent.usage_report", "totals"),
    "SessionReport": ("gitmem.agent.usage_report", "SessionReport"),
    "UsageTotals": ("gitmem.agent.usage_report", "Totals"),
    "card_usage": ("gitmem.index.card_usage", "cards_report"),
    "CardsReport": ("gitmem.index.card_usage", "CardsReport"),
    "serve_mcp": ("gitmem.bridges.mcp_server", "serve"),
    "run_demo": ("gitmem.demo", "run_demo"),
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
    "CardInfo",
    "CardsReport",
    "ChatResult",
    "ClientInfo",
    "CloneResult",
    "ConfigError",
    "Conflict",
    "ConsolidateResult",
    "CorruptObject",
    "Decision",
    "DirtyCard",
    "EditBuffer",
    "EditError",
    "EditOutcome",
    "EditResult",
    "ExportResult",
    "FinishResult",
    "GitError",
    "GitMissing",
    "GitmemError",
    "HookAction",
    "ImportResult",
    "Index",
    "IndexEntry",
    "InitResult",
    "InvalidInput",
    "LogEntry",
    "MemoryRepo",
    "ModelError",
    "NotARepo",
    "NotFound",
    "PushedSession",
    "Redaction",
    "ReindexResult",
    "RemoteError",
    "RemoteRewritten",
    "RepoStatus",
    "RevertResult",
    "ScanResult",
    "SearchHit",
    "SecretFound",
    "SectionEntry",
    "Session",
    "SessionReport",
    "SessionRevertResult",
    "SessionSummary",
    "SessionView",
    "StaleLock",
    "StaleReport",
    "StorageError",
    "SyncResult",
    "TokenSizes",
    "UnsafePath",
    "UsageTotals",
    "abort_sync",
    "accept_session",
    "audit_log",
    "card_sections",
    "card_usage",
    "changed_section",
    "chat_report",
    "client_path",
    "clone_repo",
    "consolidate",
    "continue_sync",
    "default_clone_path",
    "edit_buffer",
    "editor_command",
    "export_cards",
    "find_repo",
    "finish_session",
    "first_turn",
    "import_notes",
    "init_repo",
    "install_hooks",
    "is_consolidation",
    "is_session",
    "list_cards",
    "list_clients",
    "list_sessions",
    "load_session",
    "load_usage",
    "make_client",
    "open_repo",
    "pending_session",
    "push_session",
    "read_card",
    "read_index",
    "recover",
    "redact_secrets",
    "reindex",
    "reject_session",
    "render_index",
    "repo_status",
    "revert_commit",
    "revert_session",
    "run_chat",
    "run_demo",
    "run_editor",
    "save_edit",
    "scan_secrets",
    "search_history",
    "serve_mcp",
    "session_markdown",
    "stale_report",
    "start_session",
    "sync_repo",
    "token_sizes",
    "usage_by_session",
    "usage_totals",
    "workspace_home",
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
