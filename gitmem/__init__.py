"""gitmem: long-term agent memory in git.

The public Python API, for programs that embed gitmem (the ``gitmem`` command is built
on it); see docs/api.md::

    from gitmem import IndexEntry, open_repo, write_card

    with open_repo("~/clients/acme") as repo:
        write_card(repo, "acme-website", "Budget: 30k", "Budget: 40k",
                   IndexEntry.make("budget", ["budget"], "Q3 budget raised to 40k"))

The names are listed once, in ``__init__.pyi``, which gives type checkers their types;
each is looked up in its module on first use (PEP 562), so ``import gitmem`` loads
neither click nor the model's SDK. Errors are ``GitmemError`` subclasses, each with a
one-line message and the ``exit_code`` the command exits with.
"""

import os

__version__ = "0.1.0"


def _exports() -> dict[str, str]:
    """Public name -> the module that defines it, from the stub's import lines, as
    SciPy's ``lazy_loader.attach_stub`` does."""
    table = {}
    with open(os.path.join(os.path.dirname(__file__), "__init__.pyi"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("from gitmem."):
                _from, module, _import, name, _as, _name = line.split()
                table[name] = module
    return table


_EXPORTS = _exports()
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    """A public name, from its module (imported on first use). Not kept here: the name
    is always what its module holds now (a test that patches the module patches it)."""
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'gitmem' has no attribute {name!r}") from None
    import sys

    __import__(module)  # an import statement's path: `python -X importtime` shows it
    return getattr(sys.modules[module], name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
