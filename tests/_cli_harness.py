"""The harness of ``test_cli_properties``: a sandbox, one command run in it, and its checks.

It owns what a drawn command is run against and judged by: the sandbox of
inputs and traps (a scenario file, a FIFO with a reader, a device node, a
directory, links), a snapshot of the tree before and after, running
``python -m nicsim`` with its memory watched (:func:`execute`), and the
rules a command must keep (:func:`violations`). The strategies that draw
the commands are in ``_cli_strategies``, the tests in ``test_cli_properties``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Examples of the property test in the suite.
DEFAULT_EXAMPLES = 25
EXAMPLES = int(os.environ.get("NICSIM_CLI_FUZZ_EXAMPLES", DEFAULT_EXAMPLES))
#: Where a campaign logs violations (and goes on); unset: the first one fails.
LOG = os.environ.get("NICSIM_CLI_FUZZ_LOG")
FUZZ_SEED = os.environ.get("NICSIM_CLI_FUZZ_SEED")

#: The memory limit every command runs under (``NICSIM_MEMORY_LIMIT_MIB``).
MEMORY_LIMIT_MIB = 384
#: The peak RSS a command may reach: the limit, plus what the core may
#: allocate between two of its looks at it (20 a second).
RSS_BOUND_MIB = 640
#: The watchdog kills a command's process group past this (any one process).
RSS_KILL_MIB = 2048
#: A command that takes longer is killed and counted as hung.
TIMEOUT_S = 120.0

#: What must never reach the terminal.
CRASH_TEXT = (
    "Traceback (most recent call last)",
    "panicked at",
    "PanicException",
    "stack backtrace:",
    "Fatal Python error",
    "Segmentation fault",
)
#: Named by the message of a command stopped by its memory limit.
MEMORY_STOP_TEXT = "NICSIM_MEMORY_LIMIT_MIB"

#: Stands for the sandbox's absolute path in a drawn argument.
SB = "@SB@"
#: The scenario file of the sandbox: a cheap ping-pong.
SCENARIO_TOML = """\
preset = "omx2009"
seed = 7
[workload]
kind = "pingpong"
size_bytes = 64
iterations = 5
warmup = 0
"""
OLD_TEXT = "an earlier file that is no input\n"
KEEP_TEXT = "a file of the user's in a directory\n"


# --------------------------------------------------------------------------
# The sandbox: fixed names, made fresh for every example.
# --------------------------------------------------------------------------


def _can_mknod() -> bool:
    """Whether a character device made here can be opened and written."""
    with tempfile.TemporaryDirectory() as scratch:
        node = Path(scratch, "null")
        try:
            os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            with node.open("wb") as handle:
                handle.write(b"probe")
        except OSError:
            return False
    return True


#: The device output: a sandbox copy of /dev/null where one can be made.
DEVICE = "null" if _can_mknod() else ("/dev/null" if os.geteuid() != 0 else "")


class FifoReader(threading.Thread):
    """Reads whatever a command writes into the sandbox FIFO, as ``cat fifo`` would."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.received = 0
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                continue
            if chunk:
                self.received += len(chunk)
            else:
                time.sleep(0.02)  # no writer now

    def stop(self) -> int:
        """Stop reading (after draining what is left); return the bytes read."""
        self.halt.set()
        self.join()
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self.fd, 1 << 16):
                self.received += len(chunk)
        os.close(self.fd)
        return self.received


@contextlib.contextmanager
def sandbox(root: Path, capture: bytes) -> Iterator[FifoReader]:
    """Fill ``root`` with the inputs and targets a drawn command may name.

    ``sc.toml`` (scenario), ``preset.toml`` (a preset file), ``in.pcap``
    (``capture``), ``old.txt`` (an existing file), ``adir/keep.txt`` (a
    directory with a file), ``link`` (a symlink to ``old.txt``), ``sc-link.toml``
    (a symlink to ``sc.toml``), ``fifo`` (a FIFO, read while the command runs)
    and ``null`` (a character device 1, 3, if one can be made). ``missing/``
    does not exist.
    """
    (root / "sc.toml").write_text(SCENARIO_TOML)
    shutil.copyfile(ROOT / "presets" / "omx2009.toml", root / "preset.toml")
    (root / "in.pcap").write_bytes(capture)
    (root / "old.txt").write_text(OLD_TEXT)
    (root / "adir").mkdir()
    (root / "adir" / "keep.txt").write_text(KEEP_TEXT)
    (root / "link").symlink_to("old.txt")
    (root / "sc-link.toml").symlink_to("sc.toml")
    os.mkfifo(root / "fifo")
    if DEVICE == "null":
        os.mknod(root / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    reader = FifoReader(root / "fifo")
    reader.start()
    try:
        yield reader
    finally:
        if reader.is_alive():
            reader.stop()


# --------------------------------------------------------------------------
# Tree snapshots.
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Entry:
    """What a path in the sandbox is: its type, identity and (for a file) content."""

    kind: str  # file, dir, fifo, chr, blk, sock, link
    inode: int
    rdev: int = 0
    size: int = 0
    mtime_ns: int = 0
    digest: str = ""  # sha256 of a regular file; a symlink's target

    def describe(self) -> str:
        return f"{self.kind} ({self.size} B)" if self.kind == "file" else self.kind


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISREG, "file"),
        (stat.S_ISDIR, "dir"),
        (stat.S_ISFIFO, "fifo"),
        (stat.S_ISCHR, "chr"),
        (stat.S_ISBLK, "blk"),
        (stat.S_ISSOCK, "sock"),
        (stat.S_ISLNK, "link"),
    ):
        if test(mode):
            return name
    return "other"


def snapshot(root: Path) -> dict[str, Entry]:
    """Every path under ``root`` (relative, ``/``-separated), without following links.

    A directory is its type and inode (what is in it has entries of its
    own); a regular file also its size, mtime and hash; a symlink its
    target; a device its numbers. FIFOs and devices are never opened.
    """
    entries: dict[str, Entry] = {}
    for top, dirs, files in os.walk(root, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(top, name)
            rel = path.relative_to(root).as_posix()
            st_ = path.lstat()
            kind = _kind(st_.st_mode)
            if kind == "dir":
                entries[rel] = Entry(kind, st_.st_ino)
            elif kind == "file":
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                entries[rel] = Entry(kind, st_.st_ino, 0, st_.st_size, st_.st_mtime_ns, digest)
            elif kind == "link":
                entries[rel] = Entry(kind, st_.st_ino, digest=os.readlink(path))
            else:
                entries[rel] = Entry(kind, st_.st_ino, st_.st_rdev)
    return entries


def changes(before: dict[str, Entry], after: dict[str, Entry]) -> dict[str, str]:
    """Paths added, removed or changed, each with what happened."""
    out: dict[str, str] = {}
    for rel in sorted(before.keys() | after.keys()):
        old, new = before.get(rel), after.get(rel)
        if old == new:
            continue
        if old is None:
            out[rel] = f"created ({new.describe() if new else '?'})"
        elif new is None:
            out[rel] = f"removed (was {old.describe()})"
        elif old.kind != new.kind:
            out[rel] = f"replaced: {old.describe()} -> {new.describe()}"
        elif old.inode != new.inode:
            out[rel] = f"replaced by another {new.kind}"
        else:
            what = [f for f in ("size", "mtime_ns", "digest") if getattr(old, f) != getattr(new, f)]
            out[rel] = f"changed in place: {', '.join(what)}"
    return out


# --------------------------------------------------------------------------
# Commands and their outcome.
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Command:
    """A drawn command line and what it names.

    ``outputs`` are ``(path, "file" | "dir")`` as spelled on the line;
    ``inputs`` the files it reads; ``per_point`` a name prefix of files a
    sweep writes per grid point (beside its ``pcap`` key's file);
    ``optional`` outputs need not exist after status 0 (one of two values
    given for one key, where a printed precedence may drop it);
    ``point_files`` is how many files named ``per_point...`` a sweep that
    ends with status 0 leaves at least (one per grid point).
    """

    argv: tuple[str, ...]
    outputs: tuple[tuple[str, str], ...] = ()
    inputs: tuple[str, ...] = ()
    per_point: str = ""
    capture: bytes = b""
    optional: tuple[str, ...] = ()
    point_files: int = 0

    def line(self, root: Path | None = None) -> list[str]:
        return [a.replace(SB, str(root) if root else "$SANDBOX") for a in self.argv]

    def shown(self) -> str:
        import shlex

        return "nicsim " + shlex.join(self.line())


@dataclasses.dataclass
class Outcome:
    """How a command ended."""

    status: int
    stdout: str
    stderr: str
    maxrss_mib: float
    wall_s: float
    killed: str = ""  # why the harness killed it, if it did
    sampled_mib: float = 0.0  # the largest RSS the watchdog saw in one of its processes


def _environment(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NICSIM_")}
    env.update(
        PYTHONPATH=str(ROOT / "python"),
        PYTHONDONTWRITEBYTECODE="1",
        NICSIM_MEMORY_LIMIT_MIB=str(MEMORY_LIMIT_MIB),
        MPLCONFIGDIR=str(scratch / "mpl"),
        COLUMNS="120",
    )
    return env


def _group_rss_mib(pid: int, field: str = "VmRSS") -> float:
    """The largest RSS among ``pid`` and its descendants (MiB), from /proc.

    ``field`` ``"VmHWM"``: the largest peak RSS instead, each process's
    high-water mark since its ``exec`` (a new address space starts it anew).
    """
    largest = 0.0
    todo = [pid]
    while todo:
        p = todo.pop()
        largest = max(largest, _status_mib(p, field))
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as handle:
                    todo += [int(c) for c in handle.read().split()]
        except (OSError, ValueError):
            continue
    return largest


def _status_mib(pid: int, field: str) -> float:
    """A ``kB`` field of ``/proc/PID/status`` (``VmRSS``, ``VmHWM``) in MiB, 0 if gone."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def execute(argv: Sequence[str], cwd: Path, scratch: Path) -> Outcome:
    """Run ``python -m nicsim ARGV`` in ``cwd``; watch its memory and time."""
    out_path, err_path = scratch / "stdout", scratch / "stderr"
    start = time.monotonic()
    at_fork_mib = _status_mib(os.getpid(), "VmHWM")
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nicsim", *argv],
            cwd=cwd,
            env=_environment(scratch),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
    killed: list[str] = []
    peak = [0.0]
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.05):
            rss = _group_rss_mib(proc.pid)
            peak[0] = max(peak[0], rss, _group_rss_mib(proc.pid, "VmHWM"))
            late = time.monotonic() - start > TIMEOUT_S
            if rss > RSS_KILL_MIB or late:
                why = f"still running at {TIMEOUT_S} s" if late else f"RSS {rss:.0f} MiB"
                killed.append(why)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    _, wait_status, usage = os.wait4(proc.pid, 0)
    done.set()
    watcher.join()
    proc.returncode = os.waitstatus_to_exitcode(wait_status)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # a worker it left behind
    maxrss_mib = usage.ru_maxrss / 1024
    if maxrss_mib <= at_fork_mib + 8:  # the fork's copy of this process: see the docstring
        maxrss_mib = peak[0]
    return Outcome(
        status=proc.returncode,
        stdout=out_path.read_text(errors="replace"),
        stderr=err_path.read_text(errors="replace"),
        maxrss_mib=maxrss_mib,
        wall_s=time.monotonic() - start,
        killed=killed[0] if killed else "",
        sampled_mib=peak[0],
    )


def sandbox_rel(root: Path, spelled: str) -> str | None:
    """The sandbox-relative path a spelled path names (its last part not followed)."""
    path = Path(spelled.replace(SB, str(root)))
    full = Path(os.path.normpath(root / path))
    try:
        return full.relative_to(root).as_posix()
    except ValueError:
        return None


def _real(root: Path, spelled: str) -> str:
    """The file a spelled path finally names (links followed), absolute."""
    return os.path.realpath(root / Path(spelled.replace(SB, str(root))))


def _state_dirs(rel: str, kind: str) -> list[str]:
    """The documented state directory of an output (sandbox-relative)."""
    if kind == "dir":
        return [f"{rel}/.nicsim" if rel != "." else ".nicsim"]
    head, _, name = rel.rpartition("/")
    return [f"{head}/.{name}.nicsim" if head else f".{name}.nicsim"]


def _under(rel: str, top: str) -> bool:
    return rel == top or rel.startswith(top + "/")


def _crash_summary(text: str, needle: str) -> str:
    """A traceback's exception and innermost frame, or a panic's first lines."""
    lines = [line.strip() for line in text[text.index(needle) :].splitlines() if line.strip()]
    if needle.startswith("Traceback"):
        frames = [line for line in lines if line.startswith("File ")]
        return f"{lines[-1][:300]} (innermost: {frames[-1] if frames else '?'})"
    return " / ".join(lines[:3])[:500]


def violations(
    cmd: Command,
    root: Path,
    before: dict[str, Entry],
    after: dict[str, Entry],
    outcome: Outcome,
    fifo_bytes: int,
) -> list[tuple[str, str]]:
    """Each property the command broke: ``(rule, detail)``."""
    found: list[tuple[str, str]] = []
    text = outcome.stdout + outcome.stderr
    if outcome.killed:
        found.append(("killed", outcome.killed))
    if outcome.status not in (0, 2):
        last = outcome.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        found.append(("status", f"exit status {outcome.status}; last line: {last[0][:300]}"))
    for needle in CRASH_TEXT:
        if needle in text:
            found.append(("crash", _crash_summary(text, needle)))
            break
    err_lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    help_shown = not err_lines and outcome.stdout.lstrip().startswith("Usage:")  # bare `nicsim`
    one_line = len(err_lines) == 1 and err_lines[0].startswith("error: ")
    if outcome.status == 2 and not one_line and not help_shown:
        found.append(("error-line", f"stderr is not one `error:` line: {outcome.stderr[-600:]!r}"))
    if MEMORY_STOP_TEXT in outcome.stderr:
        found.append(("memory-stop", err_lines[-1] if err_lines else outcome.stderr))
    if outcome.maxrss_mib > RSS_BOUND_MIB:
        found.append(("rss", f"peak RSS {outcome.maxrss_mib:.0f} MiB > {RSS_BOUND_MIB} MiB"))
    if DEVICE and not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        found.append(("dev-null", "/dev/null is no longer a character device"))

    # What the command names.
    inputs_real = {_real(root, p) for p in cmd.inputs}
    outputs = [(p, k, sandbox_rel(root, p), _real(root, p)) for p, k in cmd.outputs]
    inside = str(root) + "/"
    for named, _, _, real in outputs:
        if real in inputs_real and outcome.status != 2:
            found.append(("output-is-input", f"{named} names an input; not refused"))
    seen: dict[str, str] = {}
    for named, _, _, real in outputs:
        entry = before.get(os.path.relpath(real, root)) if real.startswith(inside) else None
        one_file = entry is None or entry.kind == "file"  # not a FIFO or device: two writers
        if real in seen and one_file and outcome.status != 2:
            found.append(("same-output", f"{seen[real]} and {named} name one file; not refused"))
        seen.setdefault(real, named)

    # What changed.
    changed = changes(before, after)
    allowed: list[str] = []  # a path and everything under it
    exact: set[str] = set()  # just this path
    new_only: list[str] = []  # new entries under it (a directory output)
    states: list[str] = []
    for _, kind, rel, real in outputs:
        if rel is None:
            continue
        real_rel = os.path.relpath(real, root) if real.startswith(inside) else None
        states += _state_dirs(rel, kind)
        if real_rel is not None and real_rel != rel:
            states += _state_dirs(real_rel, kind)  # named through a link
        if outcome.status == 2:
            continue  # a refused or failed command leaves its outputs as they were
        if kind == "dir":
            new_only.append(rel)
        else:
            exact.add(rel)
            if real_rel is not None and before.get(rel, Entry("", 0)).kind == "link":
                exact.add(real_rel)  # written through the link
    allowed += states
    inputs_rel = {os.path.relpath(r, root) for r in inputs_real if r.startswith(inside)}
    for rel, what in changed.items():
        was = before.get(rel)
        if rel in inputs_rel:
            found.append(("changed-input", f"{rel}: {what}"))
            continue
        if any(_under(rel, top) for top in allowed):
            continue
        if rel in exact and (was is None or was.kind in ("file", "link")):
            continue
        if was is None and any(_under(rel, top) and rel != top for top in new_only):
            continue
        if was is None and any(rel == top for top in new_only):
            continue
        if cmd.per_point and was is None and rel.startswith(cmd.per_point):
            continue
        found.append(("changed", f"{rel}: {what}"))

    # State directories: no lock kept, none left empty.
    for state in states:
        if state in after:
            if not any(r.startswith(state + "/") for r in after):
                found.append(("state-dir", f"{state} left empty"))
            if f"{state}/lock" in after:
                found.append(("state-dir", f"{state}/lock left behind"))

    # A successful sweep writes its captures one per point (not all into one file).
    if outcome.status == 0 and cmd.point_files:
        made = [r for r in changed if r.startswith(cmd.per_point) and r in after]
        made = [r for r in made if after[r].kind == "file"]
        if len(made) < cmd.point_files:
            found.append(("per-point", f"{len(made)} file(s) {made} for {cmd.point_files} points"))

    # A successful command leaves its outputs in place.
    if outcome.status == 0:
        for named, kind, rel, _ in outputs:
            if rel is None:
                continue
            now, was = after.get(rel), before.get(rel)
            want = "dir" if kind == "dir" else "file"
            if was is not None and was.kind in ("fifo", "chr"):
                want = was.kind
            if was is not None and was.kind == "link":
                continue
            if (cmd.per_point and rel.startswith(cmd.per_point)) or named in cmd.optional:
                continue
            if now is None or now.kind != want:
                if rel not in changed or now is None:  # else reported as changed above
                    got = now.kind if now else "nothing"
                    found.append(("no-output", f"{named}: {got} after status 0, not a {want}"))
            elif want == "fifo" and fifo_bytes == 0:
                found.append(("fifo-unread", f"{named}: status 0 but nothing written to it"))
    return found
