"""``gitmem.toml``: a client's settings, with defaults for every key."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem.errors import ConfigError

FILENAME = "gitmem.toml"  # at the top of every memory repo


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float


def _price(inp: float, out: float) -> Price:
    # Anthropic's published multipliers: 5-minute writes 1.25x, 1-hour writes 2x, reads 0.1x.
    return Price(inp, out, inp * 1.25, inp * 2, inp * 0.1)


# Published list prices, dollars per million tokens (input, output), late 2026.
DEFAULT_PRICES: dict[str, Price] = {
    "claude-fable-5-1": _price(10.0, 50.0),
    "claude-opus-5-5": _price(4.0, 20.0),
    "claude-opus-5": _price(5.0, 25.0),
    "claude-sonnet-5-5": _price(2.0, 10.0),
    "claude-sonnet-5": _price(2.0, 10.0),
    "claude-haiku-5-5": _price(0.10, 0.50),
    "claude-opus-4-8": _price(5.0, 25.0),
    "claude-opus-4-5": _price(5.0, 25.0),
    "claude-opus-4-1": _price(15.0, 75.0),
    "claude-sonnet-4-6": _price(3.0, 15.0),
    "claude-sonnet-4-5": _price(3.0, 15.0),
    "claude-haiku-4-5": _price(1.0, 5.0),
}


@dataclass(frozen=True)
class Config:
    client: str = "client"
    model: str = "claude-sonnet-5-5"
    max_tokens: int = 2048
    synthesis_every: int = 30
    review: str = "auto"
    cache_ttl: str = "5m"
    chat_budget_tokens: int = 20000
    max_edit_bytes: int = 65536
    max_card_bytes: int = 1048576
    chat_footer: bool = True  # [chat] footer: tokens and cost after each turn in a terminal
    prices: dict[str, Price] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    secrets_allow: tuple[str, ...] = ()  # [secrets] allow: regexes of deliberate exceptions
    index_tokens: int = 8000  # limits.index_tokens: the I block's budget
    untouched_days: int = 90  # hygiene.untouched_days: `gitmem stale` lists older sections
    signing: bool = True  # signing.enabled: every commit gitmem writes is signed (SSH)

    def price(self, model: str) -> Price | None:
        if model in self.prices:
            return self.prices[model]
        # "claude-sonnet-4-5-20250929" is priced as "claude-sonnet-4-5".
        best = max((k for k in self.prices if model.startswith(k)), key=len, default=None)
        return self.prices[best] if best else None

    @property
    def ttl_seconds(self) -> int:
        return 3600 if self.cache_ttl == "1h" else 300


def _get(data: dict[str, Any], table: str, key: str, kind: type, default: Any) -> Any:
    section = data.get(table, {})
    if not isinstance(section, dict):
        raise ConfigError(f"{FILENAME}: [{table}] must be a table")
    value = section.get(key, default)
    if kind is float and isinstance(value, int):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"{FILENAME}: {table}.{key} must be {kind.__name__}, not {value!r}")
    return value


def _secrets_allow(data: dict[str, Any]) -> tuple[str, ...]:
    table = data.get("secrets", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{FILENAME}: [secrets] must be a table")
    if "allow" not in table:
        return ()
    from gitmem.memory.secrets import allow_patterns

    return allow_patterns(table["allow"], FILENAME)


def load_file(root: Path) -> Config:
    """``gitmem.toml`` as it stands in the working tree (defaults when there is none)."""
    path = root / FILENAME
    try:
        return parse(path.read_text("utf-8") if path.exists() else "")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{FILENAME} is not valid TOML: {exc}") from None


def parse(text: str) -> Config:
    """The settings a ``gitmem.toml`` text gives; ConfigError naming the first problem."""
    import tomllib  # here, not on every command's import: few commands read the file

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{FILENAME} is not valid TOML: {exc}") from None
    d = Config()
    prices = dict(DEFAULT_PRICES)
    for model, table in (data.get("prices") or {}).items():
        if not isinstance(table, dict):
            raise ConfigError(f"{FILENAME}: prices.{model} must be a table")
        base = prices.get(model, _price(3.0, 15.0))
        vals = {
            k: _get(data["prices"], model, k, float, getattr(base, k))
            for k in Price.__annotations__
        }
        prices[model] = Price(**vals)
    cfg = Config(
        client=_get(data, "client", "name", str, d.client),
        model=_get(data, "model", "name", str, d.model),
        max_tokens=_get(data, "model", "max_tokens", int, d.max_tokens),
        synthesis_every=_get(data, "memory", "synthesis_every", int, d.synthesis_every),
        review=_get(data, "memory", "review", str, d.review),
        cache_ttl=_get(data, "memory", "cache_ttl", str, d.cache_ttl),
        chat_budget_tokens=_get(data, "memory", "chat_budget_tokens", int, d.chat_budget_tokens),
        max_edit_bytes=_get(data, "limits", "max_edit_bytes", int, d.max_edit_bytes),
        max_card_bytes=_get(data, "limits", "max_card_bytes", int, d.max_card_bytes),
        chat_footer=_get(data, "chat", "footer", bool, d.chat_footer),
        prices=prices,
        secrets_allow=_secrets_allow(data),
        index_tokens=_get(data, "limits", "index_tokens", int, d.index_tokens),
        untouched_days=_get(data, "hygiene", "untouched_days", int, d.untouched_days),
        signing=_get(data, "signing", "enabled", bool, d.signing),
    )
    if cfg.review not in ("auto", "review"):
        raise ConfigError(
            f"{FILENAME}: memory.review must be 'auto' or 'review', not {cfg.review!r}"
        )
    if cfg.cache_ttl not in ("5m", "1h"):
        raise ConfigError(f"{FILENAME}: memory.cache_ttl must be '5m' or '1h'")
    for key, value in (
        ("memory.synthesis_every", cfg.synthesis_every),
        ("limits.max_edit_bytes", cfg.max_edit_bytes),
        ("limits.max_card_bytes", cfg.max_card_bytes),
        ("limits.index_tokens", cfg.index_tokens),
        ("hygiene.untouched_days", cfg.untouched_days),
    ):
        if value < 1:
            raise ConfigError(f"{FILENAME}: {key} is {value}; it must be a positive number")
    return cfg
