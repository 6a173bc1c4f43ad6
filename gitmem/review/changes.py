"""Every file a session's commits change, once each, as review shows them: a symlink or a
submodule is not a line of text, whatever its diff shows."""

from __future__ import annotations

from gitmem.features.session_scope import PLAIN, Change


def by_path(found: tuple[Change, ...]) -> list[tuple[str, str, bool]]:
    """Each file once, in the order first changed: (path, what the session did to it, whether
    it stays a plain file), e.g. ("cards/notes.md", "added, a symlink", False)."""
    seen: dict[str, list[Change]] = {}
    for ch in found:
        seen.setdefault(ch.path, []).append(ch)
    out = []
    for path, chs in seen.items():
        first, last = chs[0], chs[-1]
        kind = next((c.kind for c in reversed(chs) if c.status != "D"), "a file")
        plain = all(c.status == "D" or c.mode == PLAIN for c in chs)
        if last.status == "D":
            done = "added and removed" if first.status == "A" else "removed"
        else:
            done = f"{'added' if first.status == 'A' else 'changed'}, {kind}"
        out.append((path, done, plain))
    return out
