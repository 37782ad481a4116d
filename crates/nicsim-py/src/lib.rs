//! PyO3 bindings of the nicsim core: thin wrappers, no simulation logic.
//!
//! Every error crosses into Python as `nicsim._core.NicsimError` (a
//! `ValueError`) carrying one line; a Rust panic is caught and turned into
//! the same error type so that Python never sees a Rust backtrace.
//!
//! Runs release the GIL. Their interrupt check (`Watch`) takes it back a
//! few times per second to run Python's signal handlers and report
//! progress, so Ctrl-C raises `KeyboardInterrupt` within a fraction of a
//! second of a long run. The same check stops a run that holds more
//! memory than its limit (`nicsim::memory::Guard`).

mod model;

use nicsim::nic::coalesce::{Coalescer, Decision, DmaCompletion, TimerCmd};
use nicsim::time::{Duration, Instant};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// mimalloc, for its transparent huge pages: a 1,024-rank run keeps some
/// 300 MiB of state that its events read in no particular order, and with
/// the system allocator's 4 KiB pages most of those reads missed the TLB
/// as well as the caches (`docs/performance.md`, "Huge pages"). Python's
/// own objects keep Python's allocator. `MIMALLOC_ALLOW_THP=0` in the
/// environment turns the huge pages off.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(_core, NicsimError, PyValueError, "Bad input or an impossible scenario (one line, names the key).");

fn guarded<T>(f: impl FnOnce() -> Result<T, String> + std::panic::UnwindSafe) -> PyResult<T> {
    match std::panic::catch_unwind(f) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(NicsimError::new_err(e)),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            Err(NicsimError::new_err(format!("internal error (please report): {msg}")))
        }
    }
}

/// Whether a metric is a count (returned to Python as `int`).
fn is_count(key: &str) -> bool {
    ["interrupts", "events", "frames", "dropped", "duplicates", "_hits", "_misses"].iter().any(|s| key.ends_with(s))
        || key.starts_with("dropped_")
}

/// Wall time between two looks at Python during a run. Python's own eval
/// loop looks for signals every 5 ms (`sys.getswitchinterval`); 50 ms keeps
/// Ctrl-C well under the half second a person notices while taking the GIL
/// only 20 times per second, which costs nothing measurable even when other
/// Python threads hold it.
const LOOK_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// The interrupt check of a run started from Python. Called by the core
/// every `nicsim::interrupt::CHECK_EVERY` events with the GIL released, it
/// has the run's memory guard compare the process's memory with the run's
/// limit, and takes the GIL, runs the pending signal handlers
/// (`Python::check_signals`) and calls the progress callback; both at its
/// first call and then at most every [`LOOK_EVERY`] of wall time. The first
/// error (the memory limit's, `KeyboardInterrupt` from the SIGINT handler,
/// or one raised by the callback) stops the run and is kept, to be raised
/// unchanged when the run returns.
struct Watch {
    progress: Option<Py<PyAny>>,
    /// A Python policy's first error (see [`PyPolicy`]): it stops the run too.
    policy_error: Option<Arc<Mutex<Option<PyErr>>>>,
    memory: Option<nicsim::memory::Guard>,
    next_look: std::time::Instant,
    error: Option<PyErr>,
}

impl Watch {
    /// A run's watch; an invalid memory limit in the environment is an
    /// error before the run starts.
    fn new(progress: Option<Py<PyAny>>) -> PyResult<Self> {
        let memory = nicsim::memory::Guard::from_env().map_err(NicsimError::new_err)?;
        Ok(Watch { progress, policy_error: None, memory, next_look: std::time::Instant::now(), error: None })
    }

    /// The same watch, its memory limit's error naming `task`.
    fn doing(mut self, task: nicsim::memory::Task) -> Self {
        self.memory = self.memory.map(|guard| guard.doing(task));
        self
    }

    fn check(&mut self, at: nicsim::interrupt::Progress) -> bool {
        if let Some(e) = &self.policy_error {
            if e.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
                return true;
            }
        }
        let t = std::time::Instant::now();
        if let Some(Err(e)) = self.memory.as_mut().map(|guard| guard.look(t)) {
            self.error = Some(NicsimError::new_err(e));
            return true;
        }
        if t < self.next_look {
            return false;
        }
        self.next_look = t + LOOK_EVERY;
        let progress = &self.progress;
        let looked = Python::with_gil(|py| {
            py.check_signals()?;
            if let Some(f) = progress {
                f.call1(py, (ps(at.now), at.events))?;
            }
            Ok(())
        });
        match looked {
            Ok(()) => false,
            Err(e) => {
                self.error = Some(e);
                true
            }
        }
    }

    /// The run's result in Python: the kept exception if the check stopped
    /// it, else its metrics or its one-line error.
    fn finish<T>(self, result: PyResult<T>) -> PyResult<T> {
        match self.error {
            Some(e) => Err(e),
            None => result,
        }
    }
}

/// Runs one scenario (TOML text) and returns its metrics; `progress(sim_time_ps,
/// events)` is called a few times per second while it runs.
#[pyfunction]
#[pyo3(signature = (scenario_toml, progress=None))]
fn run<'py>(py: Python<'py>, scenario_toml: String, progress: Option<Py<PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let scenario = nicsim::Scenario::from_toml(&scenario_toml).map_err(|e| NicsimError::new_err(e.to_string()))?;
    let mut watch = Watch::new(progress)?.doing(nicsim::memory::Task::of_scenario(&scenario));
    let m = py.allow_threads(|| {
        guarded(std::panic::AssertUnwindSafe(|| {
            nicsim::sim::run_checked(&scenario, None, &mut |at| watch.check(at)).map_err(|e| e.to_string())
        }))
    });
    metrics_dict(py, watch.finish(m)?)
}

/// A coalescing policy written in Python: each input calls the object's
/// method of the same name (times in integer picoseconds) and reads back a
/// decision. The first Python error is kept (it stops the run, see
/// [`Watch`]) and reported after it.
struct PyPolicy {
    obj: Py<PyAny>,
    error: Arc<Mutex<Option<PyErr>>>,
}

impl PyPolicy {
    fn call(&mut self, method: &str, args: impl for<'py> IntoPyObject<'py, Target = pyo3::types::PyTuple>) -> Decision {
        let mut error = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if error.is_some() {
            return Decision::NONE;
        }
        Python::with_gil(|py| {
            let out = self.obj.call_method1(py, method, args).and_then(|v| decision(py, &v));
            out.unwrap_or_else(|e| {
                // An `Exception` is the policy's bug: reported as a
                // NicsimError naming the method. Anything else
                // (KeyboardInterrupt, SystemExit) is raised as it is.
                *error = Some(if e.is_instance_of::<pyo3::exceptions::PyException>(py) {
                    NicsimError::new_err(format!("policy.{method}: {e}"))
                } else {
                    e
                });
                Decision::NONE
            })
        })
    }
}

/// Reads a Python decision: `None` (nothing to do) or an object with
/// `raise_irq: bool`, `timer_ps: int | None` and `cancel_timer: bool`.
fn decision(py: Python<'_>, v: &PyObject) -> PyResult<Decision> {
    if v.is_none(py) {
        return Ok(Decision::NONE);
    }
    let bad = |what: &str| {
        NicsimError::new_err(format!(
            "returned {what} (allowed: None or nicsim.policy.Decision(raise_irq=..., timer_ps=..., cancel_timer=...))"
        ))
    };
    let field = |name: &str| v.getattr(py, name).map_err(|_| bad(&format!("an object without `{name}`")));
    let raise = field("raise_irq")?.extract::<bool>(py).map_err(|_| bad("a non-bool `raise_irq`"))?;
    let cancel = field("cancel_timer")?.extract::<bool>(py).map_err(|_| bad("a non-bool `cancel_timer`"))?;
    let timer = field("timer_ps")?
        .extract::<Option<u64>>(py)
        .map_err(|_| bad("a `timer_ps` that is not None or a non-negative int"))?;
    let timer = match (timer, cancel) {
        (Some(ps), _) => TimerCmd::Arm(Instant::ZERO + Duration::from_ps(ps)),
        (None, true) => TimerCmd::Cancel,
        (None, false) => TimerCmd::Keep,
    };
    Ok(Decision { raise, timer })
}

fn ps(t: Instant) -> u64 {
    t.since(Instant::ZERO).as_ps()
}

impl Coalescer for PyPolicy {
    fn name(&self) -> &'static str {
        "python"
    }
    fn on_arrival(&mut self, now: Instant, marked: bool) -> Decision {
        self.call("on_arrival", (ps(now), marked))
    }
    fn on_dma_complete(&mut self, now: Instant, dma: DmaCompletion) -> Decision {
        self.call("on_dma_complete", (ps(now), dma.marked, dma.bytes, dma.other_pending))
    }
    /// A Python policy meets a transmit completion as `nicsim.policy`
    /// says: in `on_dma_complete`, unmarked, 0 B (how it tells one from a
    /// received frame).
    fn on_tx_complete(&mut self, now: Instant, _bytes: u32, other_pending: u32) -> Decision {
        self.on_dma_complete(now, DmaCompletion { marked: false, bytes: 0, other_pending })
    }
    fn on_timer(&mut self, now: Instant) -> Decision {
        self.call("on_timer", (ps(now),))
    }
    fn on_irq_raised(&mut self, now: Instant) -> Decision {
        self.call("on_irq_raised", (ps(now),))
    }
    fn on_rearm(&mut self, now: Instant, ring_pending: u32) -> Decision {
        self.call("on_rearm", (ps(now), ring_pending))
    }
}

/// Runs one scenario with a Python coalescing policy: `make_policy()` is
/// called once per receive queue and must return the policy object;
/// `progress` as for [`run`].
#[pyfunction]
#[pyo3(signature = (scenario_toml, make_policy, progress=None))]
fn run_policy<'py>(
    py: Python<'py>,
    scenario_toml: String,
    make_policy: Py<PyAny>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (m, _) = run_world(py, &scenario_toml, Some(make_policy), progress, None)?;
    metrics_dict(py, m)
}

/// Runs one scenario (with a Python policy if `make_policy` is given) and
/// records its timeline: the records in `[from_ps, until_ps]`, at most
/// `cap`. Returns the metrics and the timeline (`nicsim.trace` writes it).
#[pyfunction]
#[pyo3(signature = (scenario_toml, from_ps, until_ps, cap, make_policy=None, progress=None))]
fn run_trace<'py>(
    py: Python<'py>,
    scenario_toml: String,
    from_ps: u64,
    until_ps: u64,
    cap: u64,
    make_policy: Option<Py<PyAny>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, pyo3::types::PyDict>)> {
    let cfg = nicsim::sim::TraceCfg { from: Instant::from_ps(from_ps), until: Instant::from_ps(until_ps), cap };
    let (m, tracer) = run_world(py, &scenario_toml, make_policy, progress, Some(cfg))?;
    let tracer = tracer.ok_or_else(|| NicsimError::new_err("internal error (please report): no timeline"))?;
    Ok((metrics_dict(py, m)?, timeline_dict(py, tracer)?))
}

/// A recorded timeline as `nicsim.trace.write` reads it: the kinds of
/// record, the tracks, what the cap left out, and the records packed.
fn timeline_dict<'py>(py: Python<'py>, tracer: Box<nicsim::sim::Tracer>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let d = pyo3::types::PyDict::new(py);
    let kinds: Vec<_> = nicsim::sim::What::ALL.iter().map(|w| w.describe()).collect();
    d.set_item("kinds", kinds)?;
    d.set_item("tracks", tracer.tracks())?;
    d.set_item("over_cap", tracer.over_cap)?;
    d.set_item("spin_overlap_ps", tracer.spin_overlap.clone())?;
    let records = tracer.into_records();
    // Packed straight into the Python bytes object: the records and their
    // packed copy are the only two copies held (32 bytes a record each).
    let packed = pyo3::types::PyBytes::new_with(py, records.len() * 32, |buf| {
        for (r, out) in records.iter().zip(buf.chunks_exact_mut(32)) {
            out[0..8].copy_from_slice(&r.ts.to_le_bytes());
            out[8..16].copy_from_slice(&r.dur.to_le_bytes());
            out[16..20].copy_from_slice(&r.id.to_le_bytes());
            out[20..24].copy_from_slice(&r.arg.to_le_bytes());
            out[24..26].copy_from_slice(&r.host.to_le_bytes());
            out[26..28].copy_from_slice(&r.track.to_le_bytes());
            out[28] = r.what as u8;
        }
        Ok(())
    })?;
    drop(records);
    d.set_item("records", packed)?;
    Ok(d)
}

/// A run of a scenario, with a Python policy and a timeline if given (the
/// LCI stack's runs take neither: its NIs have no coalescing policy, and
/// the timeline records the Open-MX path's stages).
fn run_world(
    py: Python<'_>,
    scenario_toml: &str,
    make_policy: Option<Py<PyAny>>,
    progress: Option<Py<PyAny>>,
    trace: Option<nicsim::sim::TraceCfg>,
) -> PyResult<(nicsim::Metrics, Option<Box<nicsim::sim::Tracer>>)> {
    let scenario = nicsim::Scenario::from_toml(scenario_toml).map_err(|e| NicsimError::new_err(e.to_string()))?;
    if scenario.lci.is_some() {
        if trace.is_some() {
            return Err(NicsimError::new_err("trace: the LCI stack's runs have no timeline"));
        }
        if make_policy.is_some() {
            return Err(NicsimError::new_err(
                "policy: the LCI stack's NIs have no coalescing policy (their interrupts come from the polling \
                 watchdog, nic.watchdog_us)",
            ));
        }
    }
    let error = Arc::new(Mutex::new(None));
    let policies = match &make_policy {
        Some(make) => py_policies(py, &scenario, make, &error)?,
        None => Vec::new(),
    };
    let mut watch = Watch::new(progress)?.doing(nicsim::memory::Task::of_scenario(&scenario));
    watch.policy_error = Some(Arc::clone(&error));
    let with_policy = make_policy.is_some();
    let m = py.allow_threads(|| {
        guarded(std::panic::AssertUnwindSafe(|| {
            let mut policies = policies.into_iter();
            let mut make =
                || -> Box<dyn Coalescer> { Box::new(policies.next().expect("one policy per receive queue")) };
            let policy: Option<nicsim::sim::PolicyFactory<'_>> = if with_policy { Some(&mut make) } else { None };
            nicsim::sim::run_traced(&scenario, policy, &mut |at| watch.check(at), trace).map_err(|e| e.to_string())
        }))
    });
    let m = watch.finish(m);
    if let Some(e) = error.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(e);
    }
    m
}

/// Makes every receive queue's Python policy up front, with the GIL held.
fn py_policies(
    py: Python<'_>,
    scenario: &nicsim::Scenario,
    make_policy: &Py<PyAny>,
    error: &Arc<Mutex<Option<PyErr>>>,
) -> PyResult<Vec<PyPolicy>> {
    (0..scenario.receive_queues())
        .map(|_| {
            let obj = make_policy.call0(py).map_err(|e| NicsimError::new_err(format!("make_policy(): {e}")))?;
            Ok(PyPolicy { obj, error: Arc::clone(error) })
        })
        .collect()
}

/// The per-frame results of a replay: arrival (ps), delay (ps, -1 for a
/// frame dropped before the handler), the host's interrupts at arrival and
/// when its handler took the frame, each as the bytes of 64-bit integers in
/// the machine's order (Python's `array("Q")`, `array("q")`, `array("Q")`,
/// `array("Q")`): 8 bytes a value, where a list of Python integers takes
/// about 40; and the receive queue of each, a byte (255: none).
type Series<'py> = (
    Bound<'py, pyo3::types::PyBytes>,
    Bound<'py, pyo3::types::PyBytes>,
    Bound<'py, pyo3::types::PyBytes>,
    Bound<'py, pyo3::types::PyBytes>,
    Bound<'py, pyo3::types::PyBytes>,
);

/// The bytes of `values`, each 8 bytes in the machine's order.
fn ne_bytes<'py>(py: Python<'py>, values: impl ExactSizeIterator<Item = [u8; 8]>) -> Bound<'py, pyo3::types::PyBytes> {
    let mut out = Vec::with_capacity(values.len() * 8);
    for v in values {
        out.extend_from_slice(&v);
    }
    pyo3::types::PyBytes::new(py, &out)
}

/// One captured frame as `replay` takes it: `(time_ns, wire_length,
/// header_bytes, marked, flow, sent)`.
type CapturedFrame<'py> = (u64, u32, Bound<'py, pyo3::types::PyBytes>, bool, u32, bool);

/// Replays captured frames into and out of host 1 of a scenario (its
/// workload is replaced): `frames` is an iterable (read once, as it goes:
/// a generator keeps one frame at a time on the Python side) of frames
/// `(time_ns, wire_length, header_bytes, marked, flow, sent)`, `marked`
/// and `flow` read for frames that are not Open-MX, `sent` for a frame the
/// host sent. Returns the metrics and the per-frame series of the frames
/// to the host; `make_policy` and `progress` as for [`run_policy`]. The
/// memory limit holds while the frames are taken in as while they run.
/// `trace` (`from_ps`, `until_ps`, `cap`) records the replay's timeline as
/// [`run_trace`] records a run's, returned third (else `None`).
#[pyfunction]
#[pyo3(signature = (scenario_toml, frames, make_policy=None, progress=None, trace=None))]
fn replay<'py>(
    py: Python<'py>,
    scenario_toml: String,
    frames: Bound<'py, PyAny>,
    make_policy: Option<Py<PyAny>>,
    progress: Option<Py<PyAny>>,
    trace: Option<(u64, u64, u64)>,
) -> PyResult<(Bound<'py, PyAny>, Series<'py>, Option<Bound<'py, pyo3::types::PyDict>>)> {
    let trace = trace.map(|(from_ps, until_ps, cap)| nicsim::sim::TraceCfg {
        from: Instant::from_ps(from_ps),
        until: Instant::from_ps(until_ps),
        cap,
    });
    let scenario = nicsim::Scenario::from_toml(&scenario_toml).map_err(|e| NicsimError::new_err(e.to_string()))?;
    let mut guard = nicsim::memory::Guard::from_env().map_err(NicsimError::new_err)?;
    let mut taken: Vec<nicsim::sim::ReplayFrame> = Vec::new();
    for (i, item) in frames.try_iter()?.enumerate() {
        let (ns, len, head, mark, flow, sent): CapturedFrame<'py> = item?.extract()?;
        if i % 1024 == 0 {
            let now = std::time::Instant::now();
            if let Some(Err(e)) = guard.as_mut().map(|g| g.look_at(now, |_| nicsim::memory::Task::replay_taking(i))) {
                return Err(NicsimError::new_err(e));
            }
        }
        let at = nicsim::sim::frame_time_ns(i, ns).map_err(|e| NicsimError::new_err(e.0))?;
        taken.push(nicsim::sim::ReplayFrame::from_capture(at, len, head.as_bytes(), mark, flow, sent));
    }
    let frames = taken;
    let error = Arc::new(Mutex::new(None));
    let policies = match &make_policy {
        Some(make) => Some(py_policies(py, &scenario, make, &error)?),
        None => None,
    };
    let mut watch = Watch::new(progress)?.doing(nicsim::memory::Task::replay(Some(frames.len())));
    watch.policy_error = Some(Arc::clone(&error));
    let out = py.allow_threads(|| {
        guarded(std::panic::AssertUnwindSafe(|| {
            let mut policies = policies.map(|p| p.into_iter());
            let mut make = || -> Box<dyn Coalescer> {
                Box::new(policies.as_mut().and_then(|p| p.next()).expect("one policy per receive queue"))
            };
            let factory: Option<nicsim::sim::PolicyFactory<'_>> =
                if make_policy.is_some() { Some(&mut make) } else { None };
            nicsim::sim::run_replay_traced(&scenario, frames, 1, factory, &mut |at| watch.check(at), trace)
                .map_err(|e| e.to_string())
        }))
    });
    let out = watch.finish(out);
    if let Some(e) = error.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(e);
    }
    let (m, series, tracer) = out?;
    let arrival = ne_bytes(py, series.arrival.iter().map(|&t| ps(t).to_ne_bytes()));
    let delay = ne_bytes(py, series.delay.iter().map(|d| d.map_or(-1, |d| d.as_ps() as i64).to_ne_bytes()));
    let irq_before = ne_bytes(py, series.irq_before.iter().map(|n| n.to_ne_bytes()));
    let irq = ne_bytes(py, series.irq.iter().map(|n| n.to_ne_bytes()));
    let queue = pyo3::types::PyBytes::new(py, &series.queue);
    let timeline = tracer.map(|t| timeline_dict(py, t)).transpose()?;
    Ok((metrics_dict(py, m)?, (arrival, delay, irq_before, irq, queue), timeline))
}

/// The metrics as `nicsim.metrics.Metrics`: a dict of every metric in
/// name order, `None` for one the run could not measure, and its
/// `not_measured` mapping of those names to the reason.
fn metrics_dict(py: Python<'_>, m: nicsim::Metrics) -> PyResult<Bound<'_, PyAny>> {
    let values = pyo3::types::PyDict::new(py);
    let reasons = pyo3::types::PyDict::new(py);
    let mut measured = m.values.into_iter().peekable();
    let mut unmeasured = m.not_measured.into_iter().peekable();
    loop {
        let take_measured = match (measured.peek(), unmeasured.peek()) {
            (Some((a, _)), Some((b, _))) => a < b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if take_measured {
            let (k, v) = measured.next().expect("peeked");
            if is_count(&k) {
                values.set_item(k, v as i64)?;
            } else {
                values.set_item(k, v)?;
            }
        } else {
            let (k, why) = unmeasured.next().expect("peeked");
            values.set_item(&k, py.None())?;
            reasons.set_item(k, why)?;
        }
    }
    py.import("nicsim.metrics")?.getattr("Metrics")?.call1((values, reasons))
}

/// Checks a scenario (TOML text) as `run` would before it starts, without
/// running it; returns the stack family its hosts run ("open-mx" or "lci").
#[pyfunction]
fn check(scenario_toml: &str) -> PyResult<&'static str> {
    guarded(std::panic::AssertUnwindSafe(|| {
        nicsim::config::check_toml(scenario_toml).map(|s| s.catalogue()).map_err(|e| e.to_string())
    }))
}

/// The coalescing strategy a scenario's (Open-MX) hosts run, by the core's
/// name for it (`CoalesceSpec::strategy_name`: "timeout", "adaptive", ...),
/// after the checks `run` makes.
#[pyfunction]
fn coalescing(scenario_toml: &str) -> PyResult<&'static str> {
    guarded(std::panic::AssertUnwindSafe(|| {
        nicsim::Scenario::from_toml(scenario_toml).map(|s| s.coalesce.strategy_name()).map_err(|e| e.to_string())
    }))
}

/// Names of the embedded presets.
#[pyfunction]
fn presets() -> Vec<String> {
    nicsim::config::preset_names().into_iter().map(String::from).collect()
}

/// The TOML text of an embedded preset.
#[pyfunction]
fn preset_toml(name: &str) -> PyResult<String> {
    nicsim::config::preset_text(name).map(String::from).map_err(|e| NicsimError::new_err(e.to_string()))
}

/// Runs a benchmark: kind in {"engine", "pingpong", "stream"} (`count`
/// events or messages), or {"alltoall", "exchange", "nas-is"} (`count`
/// processes).
#[pyfunction]
#[pyo3(name = "bench")]
fn bench_fn(py: Python<'_>, kind: String, count: u64) -> PyResult<BTreeMap<String, f64>> {
    let task = if nicsim::bench::SCALE_KINDS.iter().any(|(k, _)| *k == kind) {
        nicsim::memory::Task::new(
            format!("the benchmark `{kind}` of {count} processes"),
            format!(
                "its state grows with the processes and what each keeps in flight, so give fewer (--procs), or \
                 raise {}",
                nicsim::memory::LIMIT_VAR
            ),
        )
    } else {
        nicsim::memory::Task::new(
            format!("the benchmark `{kind}`"),
            format!("give a smaller count (--count), or raise {}", nicsim::memory::LIMIT_VAR),
        )
    };
    let mut watch = Watch::new(None)?.doing(task);
    let figures = py.allow_threads(|| {
        guarded(std::panic::AssertUnwindSafe(|| nicsim::bench::run_checked(&kind, count, &mut |at| watch.check(at))))
    });
    watch.finish(figures)
}

/// The memory limit of this process in KiB (`nicsim::memory::Limit::from_env`:
/// `NICSIM_MEMORY_LIMIT_MIB`, else a share of the machine's or cgroup's);
/// `None` where none is known. An invalid value in the environment is an
/// error naming it.
#[pyfunction]
fn memory_limit_kib() -> PyResult<Option<u64>> {
    Ok(nicsim::memory::Limit::from_env().map_err(NicsimError::new_err)?.map(|l| l.kib))
}

/// The memory this process holds in KiB (resident, `VmRSS`); `None` where
/// it cannot be read.
#[pyfunction]
fn memory_held_kib() -> Option<u64> {
    nicsim::memory::resident_kib()
}

/// Looks at the process's memory now: a `NicsimError` if it holds more
/// than its limit, the one line of `nicsim::memory::Limit::exceeded`,
/// naming the work (`doing`, e.g. "reading capture x.pcap at frame 1,000")
/// and its `advice`. Nothing where there is no limit or no figure. A caller
/// looks every so often while it works (a look reads `/proc`, about 20 µs).
#[pyfunction]
fn memory_check(doing: String, advice: String) -> PyResult<()> {
    let Some(limit) = nicsim::memory::Limit::from_env().map_err(NicsimError::new_err)? else { return Ok(()) };
    match nicsim::memory::resident_kib() {
        Some(held) if held > limit.kib => {
            Err(NicsimError::new_err(limit.exceeded(held, &nicsim::memory::Task::new(doing, advice))))
        }
        _ => Ok(()),
    }
}

/// The nicsim version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NicsimError", m.py().get_type::<NicsimError>())?;
    m.add("DEFAULT_PRESET", nicsim::config::DEFAULT_PRESET)?;
    m.add("SEED_LIMIT", nicsim::config::SEED_LIMIT)?;
    m.add("MAX_TIME_NS", nicsim::sim::MAX_TIME_NS)?;
    m.add("MEMORY_LIMIT_VAR", nicsim::memory::LIMIT_VAR)?;
    m.add("MEMORY_SHARES_VAR", nicsim::memory::SHARES_VAR)?;
    let scale_max: BTreeMap<&str, u64> = nicsim::bench::SCALE_KINDS
        .iter()
        .map(|&(kind, per_host)| (kind, per_host * nicsim::config::MAX_HOSTS as u64))
        .collect();
    m.add("SCALE_MAX_PROCS", scale_max)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_policy, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(run_trace, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(coalescing, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(preset_toml, m)?)?;
    m.add_function(wrap_pyfunction!(bench_fn, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(memory_limit_kib, m)?)?;
    m.add_function(wrap_pyfunction!(memory_held_kib, m)?)?;
    m.add_function(wrap_pyfunction!(memory_check, m)?)?;
    m.add_function(wrap_pyfunction!(model::emo_echo, m)?)?;
    m.add_function(wrap_pyfunction!(model::emo_sums, m)?)?;
    Ok(())
}
