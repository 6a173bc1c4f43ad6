"""The public API: each name, the module it is defined in, and (for type checkers) its
type. ``__init__.py`` reads these import lines to serve the names lazily; ``__all__``
below is what PEP 484 asks of a stub to export a renamed import (a test keeps the two
the same)."""

__version__: str

from gitmem.agent.budget import Budget as Budget
from gitmem.agent.chat import ChatResult as ChatResult
from gitmem.agent.chat import run_chat as run_chat
from gitmem.agent.client import make_client as make_client
from gitmem.agent.consolidate import ConsolidateResult as ConsolidateResult
from gitmem.agent.consolidate import consolidate as consolidate
from gitmem.agent.consolidate import is_consolidation as is_consolidation
from gitmem.agent.usage import load_usage as load_usage
from gitmem.agent.usage_report import SessionReport as SessionReport
from gitmem.agent.usage_report import UsageTotals as UsageTotals
from gitmem.agent.usage_report import usage_by_session as usage_by_session
from gitmem.agent.usage_report import usage_totals as usage_totals
from gitmem.api import find_repo as find_repo
from gitmem.api import open_repo as open_repo
from gitmem.api import read_index as read_index
from gitmem.api import render_index as render_index
from gitmem.bridges.export import ExportResult as ExportResult
from gitmem.bridges.export import export_cards as export_cards
from gitmem.bridges.import_notes import ImportResult as ImportResult
from gitmem.bridges.import_notes import import_notes as import_notes
from gitmem.bridges.mcp_http import serve_mcp_http as serve_mcp_http
from gitmem.bridges.mcp_server import serve_mcp as serve_mcp
from gitmem.bridges.memory_tool import GitMemoryTool as GitMemoryTool
from gitmem.bridges.memory_tool_async import AsyncGitMemoryTool as AsyncGitMemoryTool
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
from gitmem.features.audit import LogEntry as LogEntry
from gitmem.features.audit import audit_log as audit_log
from gitmem.features.audit import read_card as read_card
from gitmem.features.edit import EditResult as EditResult
from gitmem.features.edit import write_card as write_card
from gitmem.features.refused_paths import refused_paths as refused_paths
from gitmem.features.refused_paths import remove_refused_path as remove_refused_path
from gitmem.features.revert import RevertResult as RevertResult
from gitmem.features.revert import revert_commit as revert_commit
from gitmem.features.scan import ScanResult as ScanResult
from gitmem.features.scan import scan_secrets as scan_secrets
from gitmem.features.session_branches import FinishResult as FinishResult
from gitmem.features.session_branches import Session as Session
from gitmem.features.session_branches import finish_session as finish_session
from gitmem.features.session_branches import start_session as start_session
from gitmem.features.verify import Finding as VerifyFinding
from gitmem.features.verify import Verification as Verification
from gitmem.features.verify import verify as verify_memory
from gitmem.hooks import HookAction as HookAction
from gitmem.hooks import install_hooks as install_hooks
from gitmem.index.build import CardEntry as CardEntry
from gitmem.index.build import Index as Index
from gitmem.index.build import SectionEntry as SectionEntry
from gitmem.index.card_list import CardInfo as CardInfo
from gitmem.index.card_list import list_cards as list_cards
from gitmem.index.card_usage import CardsReport as CardsReport
from gitmem.index.card_usage import card_usage as card_usage
from gitmem.index.stale import StaleReport as StaleReport
from gitmem.index.stale import stale_report as stale_report
from gitmem.memory.repo import MemoryRepo as MemoryRepo
from gitmem.memory.secrets import SecretFound as SecretFound
from gitmem.memory.trailers import IndexEntry as IndexEntry
from gitmem.memory.trust import HeldSetting as HeldSetting
from gitmem.memory.trust import accept_settings as accept_settings
from gitmem.ops.linked_worktrees import recover as recover
from gitmem.ops.remote import RemoteError as RemoteError
from gitmem.rebuild import ReindexResult as ReindexResult
from gitmem.rebuild import reindex as reindex
from gitmem.review.decision import Decision as Decision
from gitmem.review.decision import accept_session as accept_session
from gitmem.review.decision import pending_session as pending_session
from gitmem.review.decision import reject_session as reject_session
from gitmem.review.interrupted import finish_decisions as finish_decisions
from gitmem.review.markdown import session_markdown as session_markdown
from gitmem.review.pending import SessionSummary as SessionSummary
from gitmem.review.pending import SessionView as SessionView
from gitmem.review.pending import TokenSizes as TokenSizes
from gitmem.review.pending import list_sessions as list_sessions
from gitmem.review.pending import load_session as load_session
from gitmem.review.pending import token_sizes as token_sizes
from gitmem.review.revert_session import SessionRevertResult as SessionRevertResult
from gitmem.review.revert_session import revert_session as revert_session
from gitmem.review.team import PushedSession as PushedSession
from gitmem.review.team import push_session as push_session
from gitmem.search.cache import prepare as build_search_index
from gitmem.search.cache import ready as search_index_ready
from gitmem.search.passage import Passage as Passage
from gitmem.search.passage import open_ref as open_hit
from gitmem.search.snippets import SearchHit as SearchHit
from gitmem.search.snippets import search_history as search_history
from gitmem.setup.clone import CloneResult as CloneResult
from gitmem.setup.clone import clone_repo as clone_repo
from gitmem.setup.init import InitResult as InitResult
from gitmem.setup.init import init_repo as init_repo
from gitmem.setup.workspace import ClientInfo as ClientInfo
from gitmem.setup.workspace import client_path as client_path
from gitmem.setup.workspace import list_clients as list_clients
from gitmem.setup.workspace import workspace_home as workspace_home
from gitmem.status import Status as RepoStatus
from gitmem.status import status as repo_status
from gitmem.sync.exchange import RemoteRewritten as RemoteRewritten
from gitmem.sync.exchange import SyncResult as SyncResult
from gitmem.sync.exchange import abort_sync as abort_sync
from gitmem.sync.exchange import continue_sync as continue_sync
from gitmem.sync.exchange import sync as sync_repo
from gitmem.sync.redact import Redaction as Redaction
from gitmem.sync.redact import redact_secrets as redact_secrets
from gitmem.sync.redact_journal import finish_redact as finish_redact
from gitmem.ui.app import serve as serve_ui

__all__ = [
    "AsyncGitMemoryTool",
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
    "EditError",
    "EditResult",
    "ExportResult",
    "FinishResult",
    "GitError",
    "GitMemoryTool",
    "GitMissing",
    "GitmemError",
    "HeldSetting",
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
    "Passage",
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
    "Verification",
    "VerifyFinding",
    "abort_sync",
    "accept_session",
    "accept_settings",
    "audit_log",
    "build_search_index",
    "card_usage",
    "client_path",
    "clone_repo",
    "consolidate",
    "continue_sync",
    "export_cards",
    "find_repo",
    "finish_decisions",
    "finish_redact",
    "finish_session",
    "import_notes",
    "init_repo",
    "install_hooks",
    "is_consolidation",
    "list_cards",
    "list_clients",
    "list_sessions",
    "load_session",
    "load_usage",
    "make_client",
    "open_hit",
    "open_repo",
    "pending_session",
    "push_session",
    "read_card",
    "read_index",
    "recover",
    "redact_secrets",
    "refused_paths",
    "reindex",
    "reject_session",
    "remove_refused_path",
    "render_index",
    "repo_status",
    "revert_commit",
    "revert_session",
    "run_chat",
    "run_demo",
    "scan_secrets",
    "search_history",
    "search_index_ready",
    "serve_mcp",
    "serve_mcp_http",
    "serve_ui",
    "session_markdown",
    "stale_report",
    "start_session",
    "sync_repo",
    "token_sizes",
    "usage_by_session",
    "usage_totals",
    "verify_memory",
    "workspace_home",
    "write_card",
]
