"""The error contract of the studies' command-line tools (``python -m nicsim.studies.*``).

As on ``nicsim``: a bad option is one ``error: ...`` line and exit status 2,
Ctrl-C one ``error: interrupted`` line and status 130.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import NoReturn

from nicsim._core import NicsimError

__all__ = ["CommandLine", "at_least_one", "interruptible"]


class CommandLine(argparse.ArgumentParser):
    """argparse with the error contract of ``nicsim``: one line, exit status 2.

    argparse prints its usage before an error; here the error is the one
    line (``--help`` gives the usage).
    """

    def error(self, message: str) -> NoReturn:
        """Print ``error: message`` and exit with status 2."""
        self.exit(2, f"error: {message}\n")


def at_least_one(text: str) -> int:
    """Parse a count of ``--starts`` or ``--max-evals``: a whole number, at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} (allowed: a whole number, at least 1)")
    return value


def interruptible(main: Callable[[list[str] | None], int]) -> Callable[..., int]:
    """Wrap a command's ``main``: Ctrl-C ends it in one line, status 130, as on ``nicsim``."""
    from nicsim._launch import EXIT_INTERRUPTED

    def wrapped(argv: list[str] | None = None) -> int:
        try:
            return main(argv)
        except KeyboardInterrupt:
            print("error: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except NicsimError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2

    wrapped.__doc__ = main.__doc__
    return wrapped
