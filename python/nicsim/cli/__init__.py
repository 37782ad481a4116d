"""The ``nicsim`` command line (typer), one module per group of subcommands.

:mod:`~nicsim.cli.main` makes the app and owns the error contract every
subcommand follows (one ``error: ...`` line, exit status 2 on bad input;
128 + the signal when interrupted); the subcommands live beside it. The
console script ``nicsim`` and ``python -m nicsim`` run :data:`app`.
"""

from nicsim.cli.main import app

__all__ = ["app"]
