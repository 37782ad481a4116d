"""Output paths: checked before any work, written whole, one writer at a time.

This module owns the rules every verb follows for the files and directories
it writes (``reproduce --out``, ``replay --out``, ``sweep --out``,
``run --pcap``, ``model --plot``, ``presets copy``). It does not know what
goes into them (:mod:`nicsim.studies.report` writes the tables, plots and report).

* **Checked first.** :func:`check_file` and :func:`check_dir` run before
  anything is simulated and fail with a one-line :class:`NicsimError`
  naming the option, the path and the reason.
* **Apart from the inputs and from each other.** :func:`check_apart`
  refuses, before any work, an output that is the same file (after
  symbolic links; the same device and inode when it exists) as an input
  of the command or as another of its outputs, naming both options. A
  directory output is refused when an input is the directory, lies in its
  state directory, or is one of the files its set writes or replaces.
* **Directories.** A verb creates the file or directory its option names,
  never a missing parent: ``--out a/b`` needs ``a`` to exist. A command
  that ends having written nothing there removes the directory it created
  (:class:`OutputLock`); a directory that was there before is left as it was.
* **Devices and FIFOs in place.** An output that names (through symbolic
  links) a character or block device or a FIFO is opened and written where
  it is, never renamed over or removed: ``--trace /dev/null`` discards the
  timeline and ``--pcap fifo`` streams the capture to the FIFO's reader
  (:func:`atomic_file` yields the path itself; :func:`in_place` tells).
  A FIFO is opened by :func:`atomic_file` first, so that waiting for its
  reader is where Ctrl-C stops it, whoever writes it then (the core).
* **Whole or not at all.** A regular file is written under a temporary name
  in its own directory and renamed into place (:func:`atomic_file`); a
  symbolic link to a regular file keeps its link, and the file it names is
  replaced. The files of
  a reproduction or a replay are written into a staging directory and moved
  in together, ``report.md`` last, with SIGINT, SIGTERM and SIGHUP held off
  while they move (:func:`replace_set`); a journal lets the next run finish
  a move that SIGKILL cut short. Files of the previous set that the new one
  lacks are removed, so the directory always holds one set.
* **One writer.** :class:`OutputLock` takes ``<state>/lock`` with ``flock``
  and writes its pid there; the kernel drops the lock when its holder dies,
  so a lock file left by a killed run is recognised as stale and taken over.
  A run that ends, finished or failed, removes its lock file (and the state
  directory, if that leaves it empty).
* **Like any file.** Every file written gets the mode a new file gets
  (``0o666`` less the umask), whatever made it.
* **A full disk** (or any failed write) is one :class:`NicsimError` naming
  the file that could not be written; what was there before stays whole.

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
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType

from nicsim._core import NicsimError

__all__ = [
    "Named",
    "OutputLock",
    "atomic_file",
    "check_apart",
    "check_dir",
    "check_file",
    "check_set_apart",
    "in_place",
    "naming",
    "new_file_mode",
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


def _kind(path: Path) -> str | None:
    """Name what ``path`` is (after symbolic links) if it is no regular file nor directory."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return None


def in_place(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is written where it is: it names a device or a FIFO.

    Such an output is opened for writing, never renamed over nor removed.

    Examples
    --------
    >>> in_place("/dev/null"), in_place("/no/such/file")
    (True, False)
    """
    return _kind(Path(path)) in ("character device", "block device", "FIFO")


def _resolved(target: Path) -> Path:
    """Return the file a symbolic link names (so the link stays a link), else ``target``."""
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def check_file(path: str | os.PathLike[str], option: str) -> Path:
    """Check that ``path`` can be written as a file, before any work; return it.

    A device or a FIFO must be writable (it is written in place). Otherwise
    the directory of the file (of the file a symbolic link names) must exist
    and be writable; an existing ``path`` must not be a directory nor a
    socket (an existing file is replaced).

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
    kind = _kind(target)
    if kind == "socket":
        raise NicsimError(f"{what}: is a socket; give a file, a device or a FIFO")
    if kind is not None:
        if not os.access(target, os.W_OK):
            raise NicsimError(f"{what}: cannot write to this {kind}: permission denied")
        return target
    parent = _resolved(target).parent
    if not parent.exists():
        raise NicsimError(f"{what}: directory {parent} does not exist (create it first)")
    if not parent.is_dir():
        raise NicsimError(f"{what}: {parent} is not a directory")
    _probe(parent, what)
    return target


#: An option and the path it names (``None``: not given).
Named = tuple[str, str | os.PathLike[str] | None]


def _identity(path: Path) -> tuple[object, ...]:
    """Return what makes two paths one file: device and inode if it exists, else real path."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))
    return ("file", found.st_dev, found.st_ino)


def check_apart(outputs: Sequence[Named], inputs: Sequence[Named] = ()) -> None:
    """Refuse an output that is an input or another output of the same command, before any work.

    Two paths are the same file if they name the same device and inode (so
    symbolic and hard links count), or, for a file not there yet, the same
    real path. The error is one line naming both options.

    Examples
    --------
    >>> check_apart([("--trace", "x.json"), ("--pcap", "x.pcap")], [("--scenario", "x.toml")])
    >>> check_apart([("--trace", "sc.toml")], [("--scenario", "sc.toml")])
    ... # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: --trace sc.toml and --scenario sc.toml: the same file; ...
    """
    sources = [(name, Path(p), _identity(Path(p))) for name, p in inputs if p is not None]
    earlier: list[tuple[str, Path, tuple[object, ...]]] = []
    for option, path in outputs:
        if path is None:
            continue
        target = Path(path)
        same = _identity(target)
        for name, source, identity in sources:
            if identity == same:
                raise NicsimError(
                    f"{option} {target} and {name} {source}: the same file; an output never "
                    f"replaces an input of the command (choose another {option})"
                )
        for name, other, identity in earlier:
            if identity == same:
                raise NicsimError(
                    f"{option} {target} and {name} {other}: the same file; each output of the "
                    f"command needs its own (choose another {option})"
                )
        earlier.append((option, target, same))


def check_set_apart(
    out: Path, option: str, inputs: Sequence[Named], names: Iterable[str] = ()
) -> None:
    """Refuse an input that a directory output's set would replace, before any work.

    The input is refused if it is the directory ``out``, lies in its state
    directory, or sits in ``out`` under one of ``names`` (the files the new
    set writes) or of the files of the set there now (which the new one
    replaces or removes). The error is one line naming both options.
    """
    home = os.path.realpath(out)
    state = os.path.join(home, STATE)
    doomed = {*names, *_manifest(state_dir(out, is_dir=True))}
    for name, path in inputs:
        if path is None:
            continue
        source = Path(path)
        # The directory the input's name is in, resolved; the name itself is
        # not: a set replaces a link in ``out``, not the file it names.
        where = os.path.join(os.path.realpath(source.parent), source.name)
        inside = os.path.realpath(source) == home or where.startswith(state + os.sep)
        if inside or (os.path.dirname(where) == home and source.name in doomed):
            raise NicsimError(
                f"{option} {out} and {name} {source}: the output holds the input, and its set "
                f"replaces what it holds; an output never replaces an input of the command "
                f"(move the input, or choose another {option})"
            )


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


def _cannot_write(path: object, err: OSError) -> NicsimError:
    """Return the one-line error of a write that failed (a full disk, say)."""
    return NicsimError(f"cannot write {path}: {err.strerror or err}")


@contextmanager
def naming(path: Path) -> Iterator[None]:
    """Give an :class:`OSError` raised in the block ``path`` as its file name, if it has none.

    Writers such as pandas and matplotlib raise a write's error (``ENOSPC``)
    without the name of the file they were writing.
    """
    try:
        yield
    except OSError as err:
        if err.filename is None:
            err.filename = str(path)
        raise


def new_file_mode(directory: Path) -> int:
    """Return the mode a new file gets in ``directory``: ``0o666`` less the umask.

    Read from a file made for the purpose, so that it is what ``open``
    gives (the umask cannot be read without changing it, which would race
    with other threads).
    """
    handle, name = tempfile.mkstemp(prefix=".nicsim-mode-", dir=directory)
    try:
        os.close(handle)
        os.unlink(name)
        handle = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            return os.fstat(handle).st_mode & 0o777
        finally:
            os.close(handle)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(name)


@contextmanager
def atomic_file(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield the path to write ``path`` through; a regular file is renamed into place at the end.

    For a regular file (or a symbolic link to one, which stays a link) the
    path yielded is a temporary one beside it, renamed to it if the block
    succeeds. On any exception (an interrupt included) the temporary file is
    removed and ``path`` keeps its previous content. A device or a FIFO
    (:func:`in_place`) is yielded as it is, to be opened and written in
    place: never renamed over, never removed; a FIFO is first opened here
    (waiting for its reader) and held open until the block ends. An
    :class:`OSError` (a full disk, say) becomes a :class:`NicsimError`
    naming ``path``.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "t.txt"
    >>> with atomic_file(target) as temp:
    ...     _ = temp.write_text("whole")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('whole', ['t.txt'])
    >>> with atomic_file("/dev/null") as temp:
    ...     _ = temp.write_text("gone")
    >>> temp
    PosixPath('/dev/null')
    """
    final = Path(path)
    if in_place(final):
        try:
            # A FIFO is held open for writing while the block runs: waiting
            # for its reader happens here, where Ctrl-C stops it, and the
            # writer's own open (the core's, say) then returns at once.
            held = os.open(final, os.O_WRONLY) if _kind(final) == "FIFO" else None
            try:
                yield final
            finally:
                if held is not None:
                    os.close(held)
        except OSError as err:
            raise _cannot_write(final, err) from None
        return
    given, final = final, _resolved(final)
    temp = _temp_name(final)
    try:
        yield temp
        os.replace(temp, final)
    except OSError as err:
        temp.unlink(missing_ok=True)
        kept = "; its previous content is kept" if final.exists() else ""
        raise NicsimError(f"{_cannot_write(given, err)}{kept}") from None
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

    The lock creates the output directory if it is missing (``state`` is
    in it); :meth:`release` removes it again if it is empty then, so a
    command that wrote nothing leaves nothing behind.
    """

    def __init__(self, state: Path, output: Path, option: str) -> None:
        self.state = state
        self.output = output
        self.option = option
        self.stale_pid: str | None = None
        self._handle: int | None = None
        self._created: Path | None = None

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

    @property
    def path(self) -> Path:
        """The lock file."""
        return self.state / "lock"

    def acquire(self) -> None:
        """Take the lock or fail with a one-line error naming the holder."""
        what = f"{self.option} {self.output}"
        # A holder that ends removes the lock file (and an empty state
        # directory) while it holds the lock: a lock taken on a file that
        # is no longer the one at the path is let go and taken again.
        for _ in range(100):
            handle = self._open(what)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read(handle) or "unknown"
                os.close(handle)
                raise NicsimError(
                    f"{what}: in use by another nicsim (pid {holder}); wait for it to finish "
                    "or choose another output"
                ) from None
            if _same_file(handle, self.path):
                break
            os.close(handle)
        else:  # pragma: no cover - a hundred holders ending in turn under our feet
            raise NicsimError(f"{what}: cannot take the lock {self.path}: it keeps being removed")
        previous = _read(handle)
        self.stale_pid = previous.split()[0] if previous else None
        try:
            os.ftruncate(handle, 0)
            os.pwrite(handle, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
        except OSError as err:
            self._handle = handle
            self.release()
            raise NicsimError(f"{what}: {_cannot_write(self.path, err)}") from None
        self._handle = handle

    def _open(self, what: str) -> int:
        """Open (creating) the lock file and the state directory it lives in."""
        for _ in range(100):
            try:
                # Only the leaf: check_dir / check_file made sure its parent exists.
                with suppress(FileExistsError):
                    self.state.parent.mkdir()
                    self._created = self.state.parent
                self.state.mkdir(exist_ok=True)
                return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            except FileNotFoundError as err:
                # A holder that ended removed the state directory in between.
                missing = err
            except OSError as err:
                raise NicsimError(f"{what}: cannot create {self.state}: {err.strerror}") from None
        raise NicsimError(f"{what}: cannot create {self.state}: {missing.strerror}")

    def release(self) -> None:
        """Remove the lock file, and the directories it leaves empty; drop the lock.

        The state directory goes if empty (a store or a manifest stays), and
        so does the output directory if the lock created it and nothing was
        written there.
        """
        if self._handle is not None:
            with suppress(OSError):
                self.path.unlink()
            with suppress(OSError):
                self.state.rmdir()
            if self._created is not None:
                with suppress(OSError):
                    self._created.rmdir()
            os.close(self._handle)
            self._handle = None


def _same_file(handle: int, path: Path) -> bool:
    """Whether the open file ``handle`` is the one at ``path`` now."""
    try:
        there = os.stat(path)
    except FileNotFoundError:
        return False
    here = os.fstat(handle)
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _read(handle: int) -> str:
    return os.pread(handle, 256, 0).decode(errors="replace").strip()


@contextmanager
def _signals_held() -> Iterator[None]:
    """Defer SIGINT, SIGTERM and SIGHUP until the block ends (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[signal.Signals] = []

    def hold(signum: int, frame: object) -> None:
        received.append(signal.Signals(signum))

    held = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {signum: signal.signal(signum, hold) for signum in held}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(received):
            signal.raise_signal(signum)


def _write_json(path: Path, data: object) -> None:
    temp = _temp_name(path)
    try:
        temp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


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


def replace_set(
    out: Path, state: Path, write: Callable[[Path], object], what: str | None = None
) -> list[str]:
    """Replace the set of files in ``out`` as a whole; return the new file names.

    ``write(staging)`` writes every file of the new set into a staging
    directory; if it fails or is interrupted, ``out`` is untouched (a write
    that fails, on a full disk say, is a :class:`NicsimError` naming the
    file, prefixed with ``what``). Then the files get the mode of a new file
    and are moved into ``out`` (``report.md`` last) under a journal, with
    SIGINT, SIGTERM and SIGHUP held off. Call while holding the output's lock.
    """
    recover(out, state)
    staging = state / f"staging-{os.getpid()}"
    try:
        staging.mkdir()
        write(staging)
        names = sorted(p.name for p in staging.iterdir() if p.is_file())
        # mkstemp makes its files 0o600: every file reads as one open() made.
        mode = new_file_mode(staging)
        for name in names:
            os.chmod(staging / name, mode)
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
    except OSError as err:
        shutil.rmtree(staging, ignore_errors=True)
        (state / JOURNAL).unlink(missing_ok=True)
        raise _failed_set(out, staging, err, what) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return names


def _failed_set(out: Path, staging: Path, err: OSError, what: str | None) -> NicsimError:
    """Return the error of a set not written: the file, why, and that ``out`` is whole."""
    failed = Path(err.filename) if err.filename is not None else staging
    if failed.parent == staging:
        failed = out / failed.name
    prefix = f"{what}: " if what else ""
    return NicsimError(
        f"{prefix}{_cannot_write(failed, err)}; the files {out} held before are kept"
    )


def _manifest(state: Path) -> Sequence[str]:
    try:
        names = json.loads((state / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    # Only plain names: the manifest never reaches outside the directory.
    return [n for n in names if isinstance(n, str) and n == Path(n).name and n != STATE]
