"""A fake Anthropic Messages API server for tests, demos and cache benchmarks.

Real HTTP on 127.0.0.1 (stdlib only) that the official ``anthropic`` SDK talks
to via ``anthropic.Anthropic(api_key="test", base_url=server.base_url)``.
Its replies come from scripted models, never from Claude.
"""

from .cache import CacheUsage, PromptCache
from .clock import Clock, ManualClock
from .errors import ApiError
from .faults import Fault, FaultQueue
from .model import Model, ModelExhausted, QueueModel
from .reply import Reply, TextBlock, ToolUseBlock
from .rules import RuleModel
from .server import FakeAnthropicServer, RequestRecord

__all__ = [
    "ApiError",
    "CacheUsage",
    "Clock",
    "FakeAnthropicServer",
    "Fault",
    "FaultQueue",
    "ManualClock",
    "Model",
    "ModelExhausted",
    "PromptCache",
    "QueueModel",
    "Reply",
    "RequestRecord",
    "RuleModel",
    "TextBlock",
    "ToolUseBlock",
]
