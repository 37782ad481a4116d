"""The ``nicsim`` command line (typer), one module per group of subcommands.

:mod:`~nicsim.cli.main` makes the app and owns the error contract every
subcommand follows (one ``error: ...`` line, exit status 2 on bad input;
128 + the signal when interrupted); the subcommands live beside it. The
console script ``nicsim`` and ``python -m nicsim`` run :data:`app`.

A command module evaluates its annotations when it defines its functions
(no ``from __future__ import annotations``): typer reads every command's
annotations each time the command line is parsed, and as strings it
compiled them again on every run (14 ms of a small ``nicsim run``), where
evaluated ones are part of the cached bytecode.
"""

from nicsim.cli.main import app

__all__ = ["app"]
