"""How a ``nicsim`` command ends when it cannot go on: one line on stderr and a status.

Bad input prints one ``error: ...`` line and exits with status 2, never a
traceback, before any work starts; Ctrl-C prints ``error: interrupted`` and
exits with status 130 (SIGTERM and SIGHUP ``error: interrupted by SIGTERM``
(``SIGHUP``) and 143 (129)), after the command has removed its lock and
partial outputs (:mod:`nicsim._launch` covers the time before a command
starts and after it ends).
"""

import sys
from typing import NoReturn

from nicsim import _launch

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "fail", "stopped"]

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = _launch.EXIT_INTERRUPTED


def fail(message: str) -> NoReturn:
    """Print one ``error:`` line on stderr and exit with status 2."""
    _launch.command_ended()  # Ctrl-C from now on exits at once
    line = " ".join(message.split())
    print(f"error: {line}", file=sys.stderr)
    raise SystemExit(EXIT_BAD_INPUT)


def stopped() -> NoReturn:
    """Print ``error: interrupted`` (naming SIGTERM or SIGHUP) on stderr; exit 128 + signal."""
    words, status = _launch.stopped_by()
    _launch.command_ended()  # a second Ctrl-C now exits at once
    print(f"error: {words}", file=sys.stderr)
    raise SystemExit(status)
