"""What a bug report shows of the command line: the subcommands and option names, never
a value (a value may carry memory text)."""

from __future__ import annotations

import click

VALUE = "…"  # what a bug report shows of a value: it may carry memory text


def _option(command: click.Command, name: str) -> click.Parameter | None:
    for param in command.params:
        if isinstance(param, click.Option) and name in (*param.opts, *param.secondary_opts):
            return param
    return None


def command_words(root: click.Command, args: list[str]) -> list[str]:
    """``args`` with every value replaced by ``…``: subcommands and option names stay.

    ``-C /path write acme --text 'secret'`` becomes ``-C … write … --text …``.
    """
    words: list[str] = []
    command = root
    it = iter(args)
    for arg in it:
        if arg == "--":
            words.append(arg)
            words += [VALUE for _ in it]
            break
        if arg.startswith("-") and arg != "-":
            name, eq, _value = arg.partition("=")
            param = _option(command, name)
            if param is None and not arg.startswith("--") and len(arg) > 2:
                name = arg[:2]  # -Cpath: an option glued to its value
                param = _option(command, name)
                eq = "=" if param is not None and not getattr(param, "is_flag", False) else eq
            if param is None and not name.startswith("--"):
                name = "-?"  # an unknown short option may be a value that looks like one
            words.append(name + ("=" + VALUE if eq else ""))
            takes_value = param is not None and not getattr(param, "is_flag", False) and not eq
            if takes_value and param is not None and param.nargs > 0:
                words += [VALUE for _ in range(param.nargs) if next(it, None) is not None]
            continue
        sub = (
            command.get_command(click.Context(command), arg)
            if isinstance(command, click.Group)
            else None
        )
        if sub is not None:
            command = sub
            words.append(arg)
        else:
            words.append(VALUE)
    return words
