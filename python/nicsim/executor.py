"""Where jobs run: this machine's processes or a Dask cluster, behind one seam.

This module owns dispatching jobs and gathering their results: the order
jobs are submitted in (longest first, by :func:`estimate_cost`), taking
results as they complete, retrying jobs whose worker died, and refusing a
worker that runs another build of nicsim. It does not know what a job
means: :mod:`nicsim.runner` places every result by its row index, so a
table never depends on which executor ran it or in what order.

* :class:`LocalExecutor` (the default, no Dask needed): ``jobs`` worker
  processes (spawned; they ignore SIGINT so that only the parent decides,
  are killed when it is interrupted, and end themselves if it dies);
  ``jobs = 1`` runs in this process. If a worker process dies, the pool is
  rebuilt and the unfinished jobs resubmitted, up to
  :data:`ALLOWED_FAILURES` times.
* :class:`DaskExecutor`: a ``dask.distributed`` client of a running
  scheduler (``--scheduler tcp://HOST:8786`` or ``NICSIM_SCHEDULER``) or of
  a ``LocalCluster`` it starts (``--dask-local N``). Dask reschedules the
  tasks of a worker that dies (up to ``distributed.scheduler.allowed-failures``
  times, 3 by default). Nothing here defeats that: a task is a pure function
  of its scenario text with no side effect (the client, not the worker,
  writes the results store), tasks are not pinned to workers, and a lost
  worker's task is simply awaited again.

Worker processes import only :mod:`nicsim` (which is lean) and this module:
no pandas, pyarrow or matplotlib.
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import sys
import threading
import time
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nicsim._core import MEMORY_SHARES_VAR, NicsimError
from nicsim.store import Metrics, build_id

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = [
    "ALLOWED_FAILURES",
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "RunFn",
    "Task",
    "choose",
    "core_run",
    "default_jobs",
    "estimate_cost",
    "run_task",
]

#: Runs one scenario TOML text. Must be importable by name (it is pickled to workers).
RunFn = Callable[[str], Metrics]
#: A job's result as a worker sends it: (build id, metrics or error message).
Outcome = tuple[str, Metrics | str]
#: Times a local pool may lose a worker before the campaign fails (as Dask's
#: ``distributed.scheduler.allowed-failures`` default).
ALLOWED_FAILURES = 3
#: Environment variable naming the default Dask scheduler.
SCHEDULER_ENV = "NICSIM_SCHEDULER"
#: Seconds to wait for a Dask scheduler to answer.
CONNECT_TIMEOUT_S = 10
#: Loggers of the Dask client side (Dask's configuration gives the client its own level).
DASK_CLIENT_LOGGERS = ("distributed", "distributed.client")
#: Dask's address forms: ``tcp://host:port`` and friends, or a bare ``host:port``.
ADDRESS = re.compile(r"^((tcp|tls|ucx|ws|wss)://)?[\w.\-\[\]:]+:\d+/?$|^inproc://\S+$")


def core_run(scenario_toml: str) -> Metrics:
    """Default :data:`RunFn`: the compiled core."""
    from nicsim import _core

    return _core.run(scenario_toml)


def run_task(run_fn: RunFn, scenario_toml: str) -> Outcome:
    """Run one scenario where a worker picked it up.

    A bad-input error comes back as its message rather than raised, so it
    does not depend on how the extension's exception class pickles; the
    build id lets the client refuse a worker running other code.
    """
    _share_a_dask_workers_memory()
    try:
        return build_id(), run_fn(scenario_toml)
    except NicsimError as err:
        return build_id(), str(err)


def _share_a_dask_workers_memory() -> None:
    """In a Dask worker, divide the runs' default memory limit as Dask divides the machine.

    Dask gives each worker process a memory limit (``--memory-limit``; by
    default the machine's memory, or its cgroup's, in the proportion of
    the machine's cores that the worker's threads are), and its nanny ends
    a worker that goes past it, with every task the worker was running.
    A run's default limit is three quarters of what its process may use,
    divided among the runs that share the machine, so the worker tells its
    runs how many they are: the machine's memory over the worker's limit.
    A run that outgrows its share then stops with its size and its limit,
    before the nanny's kill. Nothing is changed where the environment sets
    the shares, outside a Dask worker, or for a worker without a memory
    limit.
    """
    distributed = sys.modules.get("distributed")
    if distributed is None or MEMORY_SHARES_ENV in os.environ:
        return
    try:
        worker = distributed.get_worker()
    except ValueError:  # not in a Dask worker's task
        return
    limit = worker.memory_manager.memory_limit
    if limit:
        from distributed.system import MEMORY_LIMIT  # loaded with the worker

        os.environ[MEMORY_SHARES_ENV] = str(max(1, round(MEMORY_LIMIT / limit)))


@dataclass(frozen=True)
class Task:
    """One distinct scenario of a campaign, as an executor sees it."""

    key: str
    toml: str
    label: str
    cost: float


# -- cost: longest jobs first ------------------------------------------------

#: Events of a NAS kernel run at class B ([OMX-MQ] skeletons on 2 hosts x 8
#: ranks, measured on the built-in experiments); class C is ~4x the keys or grid.
NAS_B_EVENTS = {
    "nas-is": 3.0e6,
    "nas-cg": 3.5e6,
    "nas-mg": 1.4e6,
    "nas-ft": 2.3e7,
    # A quarter of their class C runs' (coalescing-nas).
    "nas-bt": 7.6e6,
    "nas-ep": 5.4e4,
    "nas-lu": 5.1e6,
    "nas-sp": 1.4e7,
}
NAS_CLASS_SCALE = {"S": 1 / 512, "A": 1 / 4, "B": 1.0, "C": 4.0}
#: Default message counts per kind (the core's defaults, config/workload.rs).
DEFAULT_COUNT = {"pingpong": 1000, "stream": 20_000, "uniband": 20_000, "flood": 20_000}


def estimate_cost(scenario: Mapping[str, Any]) -> float:
    """Estimate the events a scenario will simulate, to run the longest first.

    The estimate is ``messages x frames per message x events per frame`` by
    workload kind: frames per message are ``1 + size_bytes / 1024`` (payload
    plus protocol frames), a ping-pong counts both directions, an all-to-all
    ``P x (P - 1)`` messages per iteration and an exchange ``2 P``, for
    ``P = hosts x procs_per_host`` ranks, a NAS kernel its measured class-B
    event count scaled by class.
    On the built-in experiments it is within about 3x of the events
    actually simulated, which is all the order needs; it never changes a
    result, only when a job starts.

    Examples
    --------
    >>> small = {"workload": {"kind": "pingpong", "iterations": 100}}
    >>> large = {"workload": {"kind": "stream", "size_bytes": 1 << 20, "messages": 256}}
    >>> estimate_cost(large) > estimate_cost(small)
    True
    """
    w = scenario.get("workload", {})
    if not isinstance(w, Mapping):
        return 0.0
    kind = str(w.get("kind", "pingpong"))

    def num(key: str, default: float) -> float:
        value = w.get(key, default)
        return float(value) if isinstance(value, int | float) else default

    frames = 1.0 + num("size_bytes", 0) / 1024
    if kind in NAS_B_EVENTS:
        scale = NAS_CLASS_SCALE.get(str(w.get("class", "B")), 1.0)
        return NAS_B_EVENTS[kind] * scale * (num("iterations", 10) + 1) / 11
    if kind == "pingpong" or kind.startswith("echo-"):
        return (num("iterations", 1000) + num("warmup", 100)) * 2 * frames * 5
    if kind in ("alltoall", "exchange"):
        topology = scenario.get("platform", {}).get("topology", {})
        hosts = topology.get("hosts", 2) if isinstance(topology, Mapping) else 2
        ranks = (hosts if isinstance(hosts, int) else 2) * num("procs_per_host", 8)
        per_iteration = ranks * (ranks - 1) if kind == "alltoall" else 2 * ranks
        return (num("iterations", 100) + num("warmup", 10)) * per_iteration * frames * 2
    if kind == "flood":
        return num("packets", 20_000) * 5
    if kind == "dsm":
        return num("procs", 16) * num("operations", 200) * 80
    if kind == "fft-alltoall":
        procs = num("procs", 16)
        return procs * (procs - 1) * num("iterations", 5) * (1 + num("size_bytes", 65536) / 1024)
    if kind == "bcast":
        return num("iterations", 20) * num("count", 100) * frames * 64
    if kind == "asp":
        return num("rows", 1024) * num("iterations", num("rows", 1024)) * 2
    if kind == "qr":
        return num("cols", 512) * num("iterations", num("cols", 512) / 4) * 5
    count = num("messages", DEFAULT_COUNT.get(kind, 1000)) + num("warmup", 1000)
    return count * frames * 5


def scenario_cost(scenario_toml: str) -> float:
    """:func:`estimate_cost` of scenario TOML text (0 if it does not parse)."""
    try:
        return estimate_cost(tomllib.loads(scenario_toml))
    except tomllib.TOMLDecodeError:
        return 0.0


# -- executors ---------------------------------------------------------------

#: Called in the client as each task finishes, with its outcome.
OnResult = Callable[[Task, Outcome], None]


class Executor(ABC):
    """Runs tasks somewhere and reports each outcome as it arrives.

    Constructing one is cheap and does not check the cluster; :meth:`start`
    connects (or starts processes), :meth:`close` lets go.
    """

    #: Human description, e.g. ``"2 local processes"``.
    description: str = ""
    #: Dashboard address of a Dask cluster (``None`` for local processes).
    dashboard: str | None = None

    def start(self) -> None:
        """Connect to or start the workers (by default there is nothing to start)."""
        return None

    def notes(self) -> list[str]:
        """Lines worth telling the user once started (dashboard, missing workers)."""
        return []

    @abstractmethod
    def run(self, tasks: Sequence[Task], run_fn: RunFn, on_result: OnResult) -> None:
        """Run ``tasks`` in the order given (longest first); call ``on_result`` as each ends."""

    def close(self) -> None:
        """Release the workers or the cluster connection (by default there is none)."""
        return None


def default_jobs() -> int:
    """Return the default number of worker processes: the cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


#: How often a pool worker checks that its parent is still alive (seconds).
PARENT_CHECK_S = 0.5


#: The environment variable that tells the core how many runs share the
#: machine's memory (``nicsim::memory``: each run's default limit is its
#: share of three quarters of the machine).
MEMORY_SHARES_ENV = MEMORY_SHARES_VAR


def _init_worker(parent: int, shares: int) -> None:
    """Pool worker initialiser: leave Ctrl-C to the parent, die with it, share the memory.

    The parent alone handles SIGINT (and kills its workers). If the parent is
    killed outright (SIGKILL), a pool worker would otherwise wait forever on
    its call queue: a watcher thread ends the worker once it is orphaned
    (the core releases the GIL, so this works mid-run too). The ``shares``
    workers run at once, so each run's default memory limit is a
    ``shares``-th of what one run alone may hold (unless the environment
    sets it).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.setdefault(MEMORY_SHARES_ENV, str(shares))

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(1)

    threading.Thread(target=watch, name="nicsim-parent-watch", daemon=True).start()


#: How long :func:`_stop` waits for the pool's manager thread to clean up.
MANAGER_JOIN_S = 2.0


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started, kill the workers, and await the pool's clean-up."""
    terminate = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        terminate()
        return
    # Before 3.14 the pool has no public way to stop running calls; its
    # processes are in ``_processes`` (what ``terminate_workers`` uses) and
    # its manager thread in ``_executor_manager_thread``, both of which
    # ``shutdown`` clears, so take them first.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    # The manager thread sees the workers die and closes its wake-up pipe.
    # Python's exit hook for pools writes to that pipe without a lock (until
    # CPython gh-125451, October 2024, never in 3.11): exiting while the
    # thread closes it printed ``OSError: [Errno 9] Bad file descriptor``
    # after our last line.
    # Once the thread has ended, the hook finds the pipe closed and skips it.
    if manager is not None:
        manager.join(MANAGER_JOIN_S)


class LocalExecutor(Executor):
    """Worker processes on this machine (``workers = 1``: this process)."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise NicsimError(f"jobs = {workers}: must be at least 1")
        self.workers = workers
        self.description = "this process" if workers == 1 else f"{workers} local processes"

    def run(self, tasks: Sequence[Task], run_fn: RunFn, on_result: OnResult) -> None:
        """Run the tasks; see :meth:`Executor.run`."""
        if self.workers == 1 or len(tasks) <= 1:
            for task in tasks:
                on_result(task, run_task(run_fn, task.toml))
            return
        pending = list(tasks)
        failures = 0
        while pending:
            pending = self._run_pool(pending, run_fn, on_result)
            if pending:
                failures += 1
                if failures > ALLOWED_FAILURES:
                    raise NicsimError(
                        f"a worker process died {failures} times; {len(pending)} job(s) "
                        f"unfinished, e.g. {pending[0].label} (workers are spawned and import "
                        f"the main script: a script calls nicsim.sweep under "
                        f'`if __name__ == "__main__":`)'
                    )

    def _run_pool(self, tasks: list[Task], run_fn: RunFn, on_result: OnResult) -> list[Task]:
        """Run ``tasks`` in one pool; return those left unfinished if a worker died."""
        # Imported here: `nicsim run` and Dask workers never need a pool.
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        rank = {task.key: i for i, task in enumerate(tasks)}
        workers = min(self.workers, len(tasks))
        # "spawn" (not fork): safe beside the progress bar's thread, the same on every OS.
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(os.getpid(), workers),
        )
        try:
            futures: dict[Future[Outcome], Task] = {
                pool.submit(run_task, run_fn, task.toml): task for task in tasks
            }
            waiting = set(futures)
            while waiting:
                finished, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                broken = [f for f in finished if isinstance(f.exception(), BrokenProcessPool)]
                for future in sorted(finished, key=lambda f: rank[futures[f].key]):
                    if future not in broken:
                        on_result(futures[future], future.result())
                if broken:
                    # Keep what made it back; the rest runs again in a new pool.
                    left = [*broken, *waiting]
                    for future in list(left):
                        if future.done() and future.exception() is None:
                            on_result(futures[future], future.result())
                            left.remove(future)
                    _stop(pool)
                    return sorted((futures[f] for f in left), key=lambda t: rank[t.key])
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown(wait=True)
        return []


def _reason(err: BaseException) -> str:
    """Return the first line of an exception's message, or its type name."""
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def _distributed() -> Any:
    """Import ``distributed`` (or fail with how to install it)."""
    try:
        import distributed
    except ImportError:
        raise NicsimError(
            "Dask is not installed: pip install 'nicsim[dask]' (dask[distributed])"
        ) from None
    return distributed


class DaskExecutor(Executor):
    """Tasks on a Dask cluster: a running scheduler, or a ``LocalCluster`` of ``n`` workers.

    Parameters
    ----------
    address
        Scheduler address, e.g. ``tcp://10.0.0.1:8786``.
    local_workers
        Start a ``LocalCluster`` with this many single-threaded worker
        processes instead.
    """

    def __init__(self, address: str | None = None, local_workers: int | None = None) -> None:
        if (address is None) == (local_workers is None):
            raise ValueError("give exactly one of address, local_workers")
        self.address = address
        self.local_workers = local_workers
        if address is not None:
            self.description = f"Dask scheduler {address}"
        else:
            self.description = f"Dask LocalCluster of {local_workers} workers"
        self._client: Any = None
        self._cluster: Any = None
        self._workers = 0
        self._log_levels: dict[str, int] = {}

    def start(self) -> None:
        """Connect to the scheduler (or start the LocalCluster).

        Until :meth:`close`, the client's own log lines are held back (a lost
        scheduler is logged with a traceback while it retries): the campaign
        reports what went wrong in one line.
        """
        import logging  # here: a local campaign or `nicsim run` never needs it

        distributed = _distributed()
        for name in DASK_CLIENT_LOGGERS:
            self._log_levels[name] = logging.getLogger(name).level
            logging.getLogger(name).setLevel(logging.CRITICAL)
        if self.address is not None:
            _reachable(self.address)
            try:
                self._client = distributed.Client(
                    self.address, timeout=CONNECT_TIMEOUT_S, set_as_default=False
                )
            except (OSError, TimeoutError) as err:
                raise NicsimError(
                    f"scheduler = {self.address!r}: cannot connect: {_reason(err)}"
                ) from None
            try:
                # The scheduler unpickles every task, so it needs nicsim too.
                self._client.run_on_scheduler(build_id)
            except Exception as err:
                self.close()
                raise NicsimError(
                    f"scheduler = {self.address!r}: the scheduler cannot load nicsim "
                    f"({_reason(err)}); install the same nicsim wheel where the scheduler "
                    "and the workers run"
                ) from None
        else:
            workers = self.local_workers or 1
            with warnings.catch_warnings():
                # "Port 8787 is already in use": another port is taken, and printed.
                warnings.simplefilter("ignore", UserWarning)
                self._cluster = distributed.LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    silence_logs=logging.ERROR,
                    # Each worker may hold its share of the machine, as a
                    # local pool's worker does (Dask's default share goes by
                    # the cores); its runs are told so by `run_task`.
                    memory_limit=1 / workers,
                )
            self._client = distributed.Client(self._cluster, set_as_default=False)
        try:
            self.dashboard = self._client.dashboard_link or None
        except (KeyError, AttributeError):  # a scheduler without a dashboard
            self.dashboard = None
        self._check_workers()

    def _check_workers(self) -> None:
        """Refuse, before any work, workers that cannot load nicsim or run another build.

        Workers that join later are checked by every result they send.
        """
        local = build_id()
        try:
            builds: dict[str, str] = self._client.run(build_id)
        except Exception as err:
            self.close()
            raise NicsimError(
                f"{self.description}: a worker cannot load nicsim ({_reason(err)}); install "
                "the same nicsim wheel on every worker"
            ) from None
        for worker, build in sorted(builds.items()):
            if build != local:
                self.close()
                raise NicsimError(
                    f"Dask worker {worker} runs nicsim {build}, this client {local}: install "
                    "the same nicsim wheel on every worker"
                )
        self._workers = len(builds)

    def notes(self) -> list[str]:
        """Dashboard address, and a word when no worker is connected yet."""
        lines = [f"{self.description}; dashboard: {self.dashboard or 'none'}"]
        if self._workers == 0:
            lines.append(
                f"no Dask worker connected yet; waiting (start one: dask worker {self.address})"
            )
        return lines

    def run(self, tasks: Sequence[Task], run_fn: RunFn, on_result: OnResult) -> None:
        """Run the tasks; see :meth:`Executor.run`."""
        distributed = _distributed()
        if self._client is None:
            raise RuntimeError("DaskExecutor.run before start")
        futures: dict[Any, Task] = {}
        for rank, task in enumerate(tasks):
            future = self._client.submit(
                run_task,
                run_fn,
                task.toml,
                key=f"nicsim-{task.key}",
                pure=False,
                # Higher runs first: the submission order, longest first.
                priority=len(tasks) - rank,
            )
            futures[future] = task
        local = build_id()
        try:
            for future in distributed.as_completed(list(futures), loop=self._client.loop):
                task = futures[future]
                outcome = self._result(future, task, distributed)
                if outcome[0] != local:
                    raise NicsimError(
                        f"a Dask worker runs nicsim {outcome[0]}, this client {local}: "
                        "install the same nicsim wheel on every worker"
                    )
                on_result(task, outcome)
                future.release()
        except BaseException:
            self._client.cancel([f for f in futures if not f.done()])
            raise

    @staticmethod
    def _result(future: Any, task: Task, distributed: Any) -> Outcome:
        try:
            outcome: Outcome = future.result()
        except distributed.KilledWorker:
            raise NicsimError(
                f"{task.label}: every worker that ran it died (Dask allowed-failures); "
                "the job may need more memory than a worker has"
            ) from None
        except ImportError as err:
            raise NicsimError(
                f"a Dask worker cannot run nicsim ({err}): install the nicsim wheel on every worker"
            ) from None
        except distributed.client.FutureCancelledError as err:
            # The scheduler went away (or someone cancelled the task).
            raise NicsimError(
                f"{task.label}: cancelled by Dask ({err.reason}); the finished runs are kept "
                "and the same command resumes"
            ) from None
        except OSError as err:
            # The scheduler went away while the result was being fetched
            # (Dask's CommClosedError is an OSError): the same outcome.
            raise NicsimError(
                f"{task.label}: cancelled by Dask (scheduler-connection-lost: {err}); the "
                "finished runs are kept and the same command resumes"
            ) from None
        return outcome

    def close(self) -> None:
        """Close the client (and the LocalCluster this executor started)."""
        try:
            if self._client is not None:
                self._client.close()
                self._client = None
            if self._cluster is not None:
                self._cluster.close()
                self._cluster = None
        finally:
            import logging

            for name, level in self._log_levels.items():
                logging.getLogger(name).setLevel(level)
            self._log_levels.clear()


def choose(
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    dask_local: int | None = None,
) -> Executor:
    """Pick the executor from the options (checked now, before any work).

    At most one of ``jobs`` (local processes), ``scheduler`` (a Dask
    scheduler address) and ``dask_local`` (workers of a Dask LocalCluster)
    may be given. With none, ``NICSIM_SCHEDULER`` names a scheduler if set,
    else all usable cores run local processes.

    Examples
    --------
    >>> choose(jobs=2).description
    '2 local processes'
    >>> choose(jobs=2, dask_local=2)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: jobs = 2 and dask_local = 2: give one of jobs (local processes), ...
    """
    given = [
        (name, value)
        for name, value in (("jobs", jobs), ("scheduler", scheduler), ("dask_local", dask_local))
        if value is not None
    ]
    if len(given) > 1:
        (a, va), (b, vb) = given[:2]
        raise NicsimError(
            f"{a} = {va!r} and {b} = {vb!r}: give one of jobs (local processes), "
            "scheduler (a Dask scheduler) or dask_local (a Dask LocalCluster)"
        )
    if jobs is not None:
        return LocalExecutor(jobs)
    if dask_local is not None:
        if dask_local < 1:
            raise NicsimError(f"dask_local = {dask_local}: must be at least 1")
        _need_dask(f"dask_local = {dask_local}")
        return DaskExecutor(local_workers=dask_local)
    address = scheduler if scheduler is not None else os.environ.get(SCHEDULER_ENV, "").strip()
    if address:
        source = "scheduler" if scheduler is not None else SCHEDULER_ENV
        if not ADDRESS.match(address):
            raise NicsimError(
                f"{source} = {address!r}: expected a Dask scheduler address, e.g. tcp://HOST:8786"
            )
        _need_dask(f"{source} = {address!r}")
        return DaskExecutor(address=address)
    return LocalExecutor(default_jobs())


def _reachable(address: str) -> None:
    """Fail at once if nothing listens at a TCP scheduler address.

    Dask itself would retry until its connect timeout.
    """
    import socket

    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp", "tls"):
        return
    host, _, port = rest.rstrip("/").rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except (OSError, ValueError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        raise NicsimError(f"scheduler = {address!r}: cannot connect: {reason}") from None


def _need_dask(what: str) -> None:
    if importlib.util.find_spec("distributed") is None:
        raise NicsimError(f"{what}: needs Dask; install it with pip install 'nicsim[dask]'")
