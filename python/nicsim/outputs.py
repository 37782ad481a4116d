"""Output paths: checked before any work, written whole, one writer at a time.

This module owns the rules every verb follows for the files and directories
it writes (``reproduce --out``, ``sweep --out``, ``run --pcap``,
``model --plot``, ``presets copy``). It does not know what goes into them
(:mod:`nicsim.report` writes the tables, plots and report).

* **Checked first.** :func:`check_file` and :func:`check_dir` run before
  anything is simulated and fail with a one-line :class:`NicsimError`
  naming the option, the path and the reason.
* **Directories.** A verb creates the file or directory its option names,
  never a missing parent: ``--out a/b`` needs ``a`` to exist.
* **Whole or not at all.** A file is written under a temporary name in its
  own directory and renamed into place (:func:`atomic_file`). A
  reproduction's files are written into a staging directory and moved in
  together, ``report.md`` last, with SIGINT and SIGTERM held off while they
  move (:func:`replace_set`); a journal lets the next run finish a move that
  SIGKILL cut short. Files of the previous set that the new one lacks are
  removed, so the directory always holds one reproduction.
* **One writer.** :class:`OutputLock` takes ``<state>/lock`` with ``flock``
  and writes its pid there; the kernel drops the lock when its holder dies,
  so a lock file left by a killed run is recognised as stale and taken over.

Each output has a state directory beside its files (``<out>/.nicsim`` for a
directory, ``.<name>.nicsim`` next to a file) holding the lock, the results
store (:mod:`nicsim.store`), the manifest of the current set and staging.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from nicsim._core import NicsimError

__all__ = [
    "OutputLock",
    "atomic_file",
    "check_dir",
    "check_file",
    "recover",
    "replace_set",
    "state_dir",
]

#: Name of the state directory inside a directory output.
STATE = ".nicsim"
#: Written last when a set is replaced, so its presence means the set is whole.
REPORT = "report.md"
MANIFEST = "manifest.json"
JOURNAL = "commit.json"


def _probe(directory: Path, what: str) -> None:
    """Fail unless a file can be created in ``directory``.

    Permission bits alone do not tell: root ignores them, and a read-only
    mount does not show in them.
    """
    try:
        handle, name = tempfile.mkstemp(prefix=".nicsim-probe-", dir=directory)
    except OSError as err:
        raise NicsimError(f"{what}: cannot write in {directory}: {err.strerror}") from None
    os.close(handle)
    os.unlink(name)


def check_file(path: str | os.PathLike[str], option: str) -> Path:
    """Check that ``path`` can be written as a file, before any work; return it.

    Its directory must exist and be writable; an existing ``path`` must not
    be a directory (an existing file is replaced).

    Examples
    --------
    >>> check_file("/no/such/dir/t.csv", "--out")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: --out /no/such/dir/t.csv: directory /no/such/dir does not exist
    """
    target = Path(path)
    what = f"{option} {target}"
    if target.is_dir():
        raise NicsimError(f"{what}: is a directory; give a file name")
    parent = target.parent
    if not parent.exists():
        raise NicsimError(f"{what}: directory {parent} does not exist (create it first)")
    if not parent.is_dir():
        raise NicsimError(f"{what}: {parent} is not a directory")
    _probe(parent, what)
    return target


def check_dir(path: str | os.PathLike[str], option: str) -> Path:
    """Check that ``path`` can be used as an output directory, before any work.

    An existing ``path`` must be a writable directory; a missing one needs
    an existing, writable parent (it is created by :class:`OutputLock`).
    """
    target = Path(path)
    what = f"{option} {target}"
    if target.exists():
        if not target.is_dir():
            raise NicsimError(f"{what}: exists and is not a directory")
        _probe(target, what)
        return target
    parent = target.parent
    if not parent.is_dir():
        raise NicsimError(f"{what}: directory {parent} does not exist (create it first)")
    _probe(parent, what)
    return target


def state_dir(output: Path, *, is_dir: bool) -> Path:
    """Return the state directory of an output: ``<dir>/.nicsim``, or ``.<file>.nicsim`` by it."""
    return output / STATE if is_dir else output.parent / f".{output.name}{STATE}"


def _temp_name(final: Path) -> Path:
    # Same directory (rename stays atomic) and same suffix (writers pick the
    # format from it, e.g. matplotlib's PNG or SVG).
    return final.with_name(f".{final.name}.{secrets.token_hex(4)}.tmp{final.suffix}")


@contextmanager
def atomic_file(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` if the block succeeds.

    On any exception (an interrupt included) the temporary file is removed
    and ``path`` keeps its previous content.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "t.txt"
    >>> with atomic_file(target) as temp:
    ...     _ = temp.write_text("whole")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('whole', ['t.txt'])
    """
    final = Path(path)
    temp = _temp_name(final)
    try:
        yield temp
        os.replace(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


class OutputLock:
    """Exclusive use of an output: ``flock`` on ``<state>/lock``, holding our pid.

    Parameters
    ----------
    state
        The output's state directory (created, with at most one missing
        parent: the output directory itself).
    output
        The output as the user named it, for messages.
    option
        The option that named it, for messages.

    Attributes
    ----------
    stale_pid
        The pid written by a previous holder that ended without releasing
        (killed), or ``None``.
    """

    def __init__(self, state: Path, output: Path, option: str) -> None:
        self.state = state
        self.output = output
        self.option = option
        self.stale_pid: str | None = None
        self._handle: int | None = None

    def __enter__(self) -> OutputLock:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock or fail with a one-line error naming the holder."""
        what = f"{self.option} {self.output}"
        try:
            # Only the leaf: check_dir / check_file made sure its parent exists.
            self.state.parent.mkdir(exist_ok=True)
            self.state.mkdir(exist_ok=True)
            handle = os.open(self.state / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise NicsimError(f"{what}: cannot create {self.state}: {err.strerror}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(handle) or "unknown"
            os.close(handle)
            raise NicsimError(
                f"{what}: in use by another nicsim (pid {holder}); wait for it to finish "
                "or choose another output"
            ) from None
        previous = _read(handle)
        self.stale_pid = previous.split()[0] if previous else None
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
        self._handle = handle

    def release(self) -> None:
        """Empty the lock file (a clean exit) and drop the lock."""
        if self._handle is not None:
            os.ftruncate(self._handle, 0)
            os.close(self._handle)
            self._handle = None


def _read(handle: int) -> str:
    return os.pread(handle, 256, 0).decode(errors="replace").strip()


@contextmanager
def _signals_held() -> Iterator[None]:
    """Defer SIGINT and SIGTERM until the block ends (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[signal.Signals] = []

    def hold(signum: int, frame: object) -> None:
        received.append(signal.Signals(signum))

    held = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, hold) for signum in held}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(received):
            signal.raise_signal(signum)


def _write_json(path: Path, data: object) -> None:
    with atomic_file(path) as temp:
        temp.write_text(json.dumps(data, indent=1), encoding="utf-8")


def _complete(out: Path, state: Path) -> None:
    """Carry out the journal: move staged files in, drop the old set's leftovers."""
    journal = json.loads((state / JOURNAL).read_text(encoding="utf-8"))
    staging = state / journal["staging"]
    for name in journal["files"]:
        if (staging / name).exists():  # else moved before an interrupted run stopped
            os.replace(staging / name, out / name)
    for name in journal["remove"]:
        (out / name).unlink(missing_ok=True)
    _write_json(state / MANIFEST, journal["files"])
    (state / JOURNAL).unlink()
    shutil.rmtree(staging, ignore_errors=True)


def recover(out: Path, state: Path) -> None:
    """Finish a replacement that was cut short and drop abandoned staging directories.

    Call while holding the output's lock.
    """
    if (state / JOURNAL).exists():
        try:
            _complete(out, state)
        except (OSError, ValueError, KeyError):
            (state / JOURNAL).unlink(missing_ok=True)
    for staging in state.glob("staging-*"):
        shutil.rmtree(staging, ignore_errors=True)


def replace_set(out: Path, state: Path, write: Callable[[Path], object]) -> list[str]:
    """Replace the set of files in ``out`` as a whole; return the new file names.

    ``write(staging)`` writes every file of the new set into a staging
    directory; if it fails or is interrupted, ``out`` is untouched. Then the
    files are moved into ``out`` (``report.md`` last) under a journal, with
    SIGINT and SIGTERM held off. Call while holding the output's lock.
    """
    recover(out, state)
    staging = state / f"staging-{os.getpid()}"
    staging.mkdir()
    try:
        write(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    names = sorted(p.name for p in staging.iterdir() if p.is_file())
    names.sort(key=lambda name: name == REPORT)
    previous = _manifest(state)
    journal = {
        "staging": staging.name,
        "files": names,
        "remove": [name for name in previous if name not in names],
    }
    with _signals_held():
        _write_json(state / JOURNAL, journal)
        _complete(out, state)
    return names


def _manifest(state: Path) -> Sequence[str]:
    try:
        names = json.loads((state / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    # Only plain names: the manifest never reaches outside the directory.
    return [n for n in names if isinstance(n, str) and n == Path(n).name and n != STATE]
