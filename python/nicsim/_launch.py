"""Signals to the ``nicsim`` program: one line, status 128 + the signal.

This module owns what SIGINT does while the ``nicsim`` command loads (about
0.2 s of imports: the package, typer, rich) and after its command has ended
(interpreter shutdown). Python's own handler raises ``KeyboardInterrupt``
wherever the import or the shutdown has got to, which ends in a traceback
that no code of the command can catch. ``import nicsim`` runs this module
first; when the process is the ``nicsim`` command (its console script, or
``python -m nicsim``) it installs a handler that prints
``error: interrupted`` and exits with status 130 at once. Nothing has been
read or written before a command starts, and everything has been written
(and flushed) after it ends, so there is nothing to clean up. While a
command runs, :mod:`nicsim.cli` gives SIGINT back to ``KeyboardInterrupt``
(:func:`command_started`), which the commands turn into the same line after
removing partial outputs.

SIGTERM and SIGHUP end the command the same way: outside a command they
print ``error: interrupted by SIGTERM`` (or ``SIGHUP``) and exit at once;
while it runs they raise ``KeyboardInterrupt`` too, so the command removes
its lock and partial outputs as after Ctrl-C, and
:func:`stopped_by` tells it which signal to name and the status to exit
with (143 for SIGTERM, 129 for SIGHUP). A signal the caller set to be
ignored (``nohup``) stays ignored.

Imported as a library (a script, a notebook, pytest, a worker process of a
campaign) the module changes nothing. Out of its reach: the interpreter's
own start-up and the search for the package (the first 10 to 25 ms on the
2-core test machine, before any of nicsim runs), where Python either dies
of the signal silently or raises in the importer.
"""

# Only built-in modules: this runs before anything else of nicsim, and each
# millisecond of import here is a millisecond where Ctrl-C gives a traceback.
# ``_signal`` is the C module that ``signal`` wraps (``signal`` imports enum).
import _signal  # type: ignore[import-not-found]  # typeshed has no stub for it
import itertools
import os
import sys

__all__ = ["EXIT_INTERRUPTED", "LAUNCHED", "command_ended", "command_started", "stopped_by"]

#: 128 + SIGINT, as a shell reports a command ended by Ctrl-C.
EXIT_INTERRUPTED = 130
#: Signals that end the command as Ctrl-C does, with the names its error line gives.
_ENDING = {_signal.SIGTERM: "SIGTERM", _signal.SIGHUP: "SIGHUP"}
#: The signals of :data:`_ENDING` received while the command ran, in order.
_received: list[int] = []
#: The console script's file name (``bin/nicsim``; ``nicsim-script.py`` beside a launcher).
_SCRIPT = "nicsim"


def _launched_as_command() -> bool:
    """Whether this process is the ``nicsim`` command, not a program importing nicsim."""
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    if isinstance(script, str):
        return os.path.basename(script) in (_SCRIPT, f"{_SCRIPT}-script.py")
    # ``python -m nicsim``: runpy imports the package (this module with it)
    # while ``sys.argv[0]`` is still "-m"; the module name is in orig_argv.
    argv: list[str] = getattr(sys, "orig_argv", [])
    if sys.argv[:1] != ["-m"]:
        return False
    pairs = itertools.pairwise(argv)
    return f"-m{_SCRIPT}" in argv or any(a == "-m" and b == _SCRIPT for a, b in pairs)


def _exit_interrupted(signum: int, frame: object) -> None:
    """SIGINT handler outside a command: the error line, then exit 130 at once."""
    os.write(2, b"error: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


def _exit_signalled(signum: int, frame: object) -> None:
    """SIGTERM or SIGHUP handler outside a command: the error line, then exit at once."""
    os.write(2, f"error: interrupted by {_ENDING[signum]}\n".encode())
    os._exit(128 + signum)


def _stop(signum: int, frame: object) -> None:
    """SIGTERM or SIGHUP handler while a command runs: stop it as Ctrl-C does."""
    _received.append(signum)
    raise KeyboardInterrupt


def _set_ending(handler: object) -> None:
    """Give SIGTERM and SIGHUP ``handler``, unless ignored or handled by someone else."""
    for signum in _ENDING:
        if _signal.getsignal(signum) in (_signal.SIG_DFL, _exit_signalled, _stop):
            _signal.signal(signum, handler)


def _hold() -> None:
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _exit_interrupted)
    _set_ending(_exit_signalled)


#: Whether this process is the ``nicsim`` command (the handler is installed).
LAUNCHED: bool = _launched_as_command()
if LAUNCHED:
    _hold()


def command_started() -> None:
    """Let SIGINT (SIGTERM, SIGHUP) raise ``KeyboardInterrupt``: a command cleans up after it."""
    if _signal.getsignal(_signal.SIGINT) is _exit_interrupted:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)
    if LAUNCHED:
        _received.clear()
        _set_ending(_stop)


def stopped_by() -> tuple[str, int]:
    """Return how the error line names the signal that stopped the command, and the status.

    ``("interrupted", 130)`` after Ctrl-C; ``("interrupted by SIGTERM", 143)``
    after SIGTERM (the first such signal received while the command ran).
    """
    if _received:
        signum = _received[0]
        return f"interrupted by {_ENDING[signum]}", 128 + signum
    return "interrupted", EXIT_INTERRUPTED


def command_ended() -> None:
    """Flush the terminal streams; from now on Ctrl-C exits at once (the command only)."""
    if not LAUNCHED:
        return
    import contextlib  # here: the module loads nothing it does not need at start-up

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to keep
            stream.flush()
    _hold()
