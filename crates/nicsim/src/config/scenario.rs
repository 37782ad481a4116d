//! A scenario: one simulated run (preset + overrides + NIC policy + host
//! options + protocol options + workload). `ScenarioFile` mirrors the TOML the
//! user writes; [`Scenario::from_toml`] validates it into checked values.

use super::{check_f, check_u, preset_text, toml_error, ConfigError, Platform};
use crate::nic::coalesce::{AdaptiveFlavor, CoalesceSpec, TimeoutMode, TimeoutSpec, STRATEGY_NAMES};
use crate::time::Duration;
use crate::wire::MarkedClasses;
use serde::Deserialize;

/// The scenario file as written by the user (see README for an example).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Embedded preset name or a path to a preset TOML file (default "omx2009").
    pub preset: Option<String>,
    /// Seed of every random choice (loss, reordering, jitter).
    pub seed: Option<u64>,
    /// Write every simulated frame to this pcap file.
    pub pcap: Option<String>,
    /// Overrides of preset values: same tables and keys as the preset file.
    pub platform: Option<toml::Table>,
    #[serde(default)]
    pub nic: NicOpts,
    #[serde(default)]
    pub host: HostOpts,
    #[serde(default)]
    pub protocol: ProtocolOpts,
    pub workload: WorkloadOpts,
}

/// NIC policy options.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicOpts {
    /// Coalescing strategy: disabled|timeout|openmx|stream|adaptive|openmx-adaptive.
    pub coalescing: Option<String>,
    /// Coalescing delay in microseconds (default: the preset's NIC default).
    pub delay_us: Option<f64>,
    /// Frames threshold (0 = none).
    pub frames: Option<u32>,
    /// Timeout variant: absolute|packet|throttle.
    pub timeout_mode: Option<String>,
    /// Absolute cap of the packet timer in microseconds (0 = none).
    pub cap_us: Option<f64>,
    /// Adaptive flavour: dim|itr.
    pub adaptive: Option<String>,
    /// Receive steering: single-rr|single-core.
    pub steering: Option<String>,
    /// Core that receives the interrupt with `single-core`.
    pub irq_core: Option<u32>,
}

/// Host options.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostOpts {
    /// Idle cores may enter a sleep state (default: the preset's).
    pub sleep: Option<bool>,
    /// Core of the communicating process: an index, or "none" (OS placement).
    pub binding: Option<toml::Value>,
    /// How the library waits: poll|block.
    pub wait: Option<String>,
    /// Run a cycle soaker on every core (host overhead is measured as cycles it loses).
    pub soaker: Option<bool>,
    /// Linux napi_defer_hard_irqs: empty NAPI polls before the IRQ is re-enabled.
    pub napi_defer_hard_irqs: Option<u32>,
    /// Linux gro_flush_timeout (us): re-poll delay while hard IRQs are deferred.
    pub gro_flush_timeout_us: Option<f64>,
    /// Linux irq_suspend_timeout (us): IRQs stay suspended while the application busy-polls.
    pub irq_suspend_timeout_us: Option<f64>,
    /// The library busy-polls the NIC queue while it waits (SO_BUSY_POLL / prefer busy poll).
    pub busy_poll: Option<bool>,
    /// Offload the pull-reply copies to the I/OAT-like copy engine.
    pub ioat: Option<bool>,
    /// Direct Cache Access: NIC writes land in the cache of the core serving the queue.
    pub dca: Option<bool>,
    /// Where transmit completions are reaped: napi|hard-irq.
    pub tx_reap: Option<String>,
}

/// Protocol options.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtocolOpts {
    /// Marker classes turned off.
    pub unmarked: Option<Vec<String>>,
    pub rndv_threshold: Option<u32>,
    /// Probability that a frame is lost.
    pub loss: Option<f64>,
    /// Probability that a frame is delayed behind later ones.
    pub reorder: Option<f64>,
    /// Add the MPI layer's costs (Open MPI over Open-MX).
    pub mpi: Option<bool>,
    /// Message-passing stack: open-mx (kernel receive path) | native-mx (OS-bypass).
    pub stack: Option<String>,
    /// Send the last (marked) fragment of medium messages this many places early.
    pub misorder_degree: Option<u32>,
    /// Random extra delay (uniform, seeded) of each frame at the switch, in ns.
    pub jitter_ns: Option<f64>,
}

/// The workload.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadOpts {
    /// pingpong|stream|flood.
    pub kind: String,
    pub size_bytes: Option<u64>,
    pub iterations: Option<u64>,
    pub warmup: Option<u64>,
    pub messages: Option<u64>,
    /// Messages per window of the IMB Uniband stream.
    pub window: Option<u32>,
    pub packets: Option<u64>,
    pub gap_ns: Option<f64>,
    pub packet_bytes: Option<u32>,
    /// NAS class: B or C.
    pub class: Option<String>,
    /// NAS processes per host (one per core).
    pub procs_per_host: Option<u32>,
}

/// Receive steering of the single-queue NIC (multiqueue comes with [OMX-MQ]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteeringKind {
    /// One queue, interrupt spread round-robin over all cores.
    SingleRr,
    /// One queue, interrupt bound to one core.
    SingleCore(u32),
    /// [OMX-MQ]: one queue and vector per core, queue = endpoint mod cores.
    MultiQueue,
}

/// Today's Linux receive knobs (net/core/dev.c napi_complete_done,
/// Documentation/networking/napi.rst).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NapiKnobs {
    pub defer_hard_irqs: u32,
    pub gro_flush_timeout_us: f64,
    pub irq_suspend_timeout_us: f64,
    pub busy_poll: bool,
}

/// How the library waits for completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    Poll,
    Block,
}

/// Where the driver reaps transmit completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxReap {
    /// In the NAPI poll, after the received frames, under the one interrupt
    /// claim (mlx5; the `modern` preset's `nic.tx_reap`).
    Napi,
    /// In the hard handler, as myri10ge does (`myri10ge_intr` calls
    /// `myri10ge_tx_done`, then re-arms `irq_claim + 1`); the receive claim
    /// is re-armed only by `napi_complete` (`myri10ge_poll`). Transmit
    /// completions can then interrupt while the poll runs.
    HardIrq,
}

/// The workload of a scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Workload {
    /// omx_perf / IMB PingPong between host 0 and host 1.
    PingPong { size: u64, iterations: u64, warmup: u64 },
    /// Unidirectional stream from host 0 to host 1 (receiver-side rate).
    Stream { size: u64, messages: u64, warmup: u64 },
    /// IMB Uniband from host 0 to host 1: windows of `window` messages, each
    /// answered by a 1-byte ack (receiver-side rate).
    Uniband { size: u64, messages: u64, warmup: u64, window: u32 },
    /// Invalid-packet flood into host 1 (dropped by the receive handler).
    Flood { packets: u64, gap: Duration, packet_bytes: u32 },
    /// NAS IS skeleton: `keys` in total over all ranks, `iterations` timed
    /// (plus one untimed, as NPB does), `per_host` ranks on each host.
    NasIs { keys: u64, iterations: u64, per_host: u32 },
    /// NAS CG, MG or FT skeleton (class B or C), `per_host` ranks per host.
    NasKernel { kernel: crate::workload::NasKernel, class_c: bool, per_host: u32 },
    /// IMB Alltoall: `size` bytes to every other rank, `iterations` timed
    /// repetitions after `warmup`, `per_host` ranks on each host.
    Alltoall { size: u64, iterations: u64, warmup: u64, per_host: u32 },
    /// [EMO] echo: the application on host 0 ping-pongs with an echo server
    /// that runs in host 1's NIC firmware or in host 1's kernel (no copy to
    /// user space). Metrics as for `PingPong`.
    Echo { at: EchoAt, size: u64, iterations: u64, warmup: u64 },
}

/// Where the [EMO] echo server runs on host 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EchoAt {
    /// In the NIC firmware: no DMA to the host, no interrupt.
    Nic,
    /// In the kernel receive handler (bottom half): no copy to user space.
    Kernel,
}

impl Scenario {
    /// Receive queues in the whole simulated system (each has its own
    /// coalescing policy): one per host, or one per core with multiqueue.
    pub fn receive_queues(&self) -> usize {
        let per_host = match self.steering {
            SteeringKind::MultiQueue => self.platform.cores() as usize,
            _ => 1,
        };
        self.platform.topology.hosts as usize * per_host
    }
}

/// A validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub platform: Platform,
    pub seed: u64,
    pub pcap: Option<String>,
    pub coalesce: CoalesceSpec,
    pub steering: SteeringKind,
    pub sleep: bool,
    /// `None` = the OS places the process.
    pub binding: Option<u32>,
    pub wait: WaitMode,
    pub soaker: bool,
    pub ioat: bool,
    pub dca: bool,
    /// myri10ge's real interrupt structure (`hard-irq`) or the lumped one.
    pub tx_reap: TxReap,
    pub napi: NapiKnobs,
    pub marked: MarkedClasses,
    pub rndv_threshold: u32,
    pub loss: f64,
    pub reorder: f64,
    pub mpi: bool,
    /// The native MX stack (OS-bypass) instead of Open-MX.
    pub native_mx: bool,
    pub misorder_degree: u8,
    pub jitter_ns: f64,
    pub workload: Workload,
}

fn one_of<'a>(key: &str, v: &'a str, allowed: &[&str]) -> Result<&'a str, ConfigError> {
    if allowed.contains(&v) {
        Ok(v)
    } else {
        Err(ConfigError::range(key, format!("{v:?}"), &format!("one of {}", allowed.join(", "))))
    }
}

/// Merges `over` into `base` recursively (tables merge, values replace).
fn merge(base: &mut toml::Table, over: &toml::Table, path: &str) -> Result<(), ConfigError> {
    for (k, v) in over {
        let key = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o, &key)?,
            (Some(toml::Value::Table(_)), _) => {
                return Err(ConfigError::new(format!("`platform.{key}` is a table in the preset; give its keys")))
            }
            (Some(old), new) => {
                super::check_count_override(&key, old, new)?;
                if std::mem::discriminant(old) != std::mem::discriminant(new) && !(old.is_float() && new.is_integer()) {
                    return Err(ConfigError::new(format!(
                        "invalid value for `platform.{key}`: {new} (expected {} like the preset's {old})",
                        match old.type_str() {
                            "integer" => "an integer",
                            "float" => "a number",
                            "boolean" => "a boolean",
                            "string" => "a string",
                            other => other,
                        }
                    )));
                }
                *old = if old.is_float() {
                    toml::Value::Float(new.as_float().or(new.as_integer().map(|i| i as f64)).unwrap_or(0.0))
                } else {
                    new.clone()
                };
            }
            (None, _) => {
                let allowed: Vec<&str> = base.keys().map(|s| s.as_str()).collect();
                return Err(ConfigError::new(format!(
                    "unknown key `platform.{key}` (allowed here: {})",
                    allowed.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// Loads a preset by embedded name or file path, applying overrides.
pub fn load_platform(preset: &str, overrides: Option<&toml::Table>) -> Result<Platform, ConfigError> {
    let text: String = if preset.ends_with(".toml") || preset.contains('/') {
        std::fs::read_to_string(preset)
            .map_err(|e| ConfigError::new(format!("invalid value for `preset`: cannot read {preset:?}: {e}")))?
    } else {
        preset_text(preset)?.to_string()
    };
    let mut table: toml::Table = toml::from_str(&text).map_err(|e| toml_error("preset", e))?;
    if let Some(o) = overrides {
        merge(&mut table, o, "")?;
    }
    let p: Platform = toml::Value::Table(table).try_into().map_err(|e| toml_error("preset", e))?;
    p.validate()?;
    Ok(p)
}

impl Scenario {
    /// Parses and validates a scenario TOML text.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let file: ScenarioFile = toml::from_str(text).map_err(|e| toml_error("scenario", e))?;
        Self::from_file(file)
    }

    /// Validates a parsed scenario file.
    pub fn from_file(f: ScenarioFile) -> Result<Self, ConfigError> {
        let preset = f.preset.as_deref().unwrap_or("omx2009");
        let platform = load_platform(preset, f.platform.as_ref())?;
        let cores = platform.cores();

        // NIC
        let strategy = one_of("nic.coalescing", f.nic.coalescing.as_deref().unwrap_or("timeout"), STRATEGY_NAMES)?;
        let delay_us = f.nic.delay_us.unwrap_or(platform.nic.default_delay_us);
        check_f("nic.delay_us", delay_us, 0.0, 1e6)?;
        let frames = f.nic.frames.unwrap_or(0);
        check_u("nic.frames", frames as u64, 0, 1 << 20)?;
        let cap_us = f.nic.cap_us.unwrap_or(0.0);
        check_f("nic.cap_us", cap_us, 0.0, 1e6)?;
        let mode_name = one_of(
            "nic.timeout_mode",
            f.nic.timeout_mode.as_deref().unwrap_or("absolute"),
            &["absolute", "packet", "throttle"],
        )?;
        let mode = match mode_name {
            "packet" => TimeoutMode::PacketTimer,
            "throttle" => TimeoutMode::Throttle,
            _ => TimeoutMode::Absolute,
        };
        let ts = TimeoutSpec {
            mode,
            delay: Duration::from_ns_f64(delay_us * 1e3),
            frames,
            cap: Duration::from_ns_f64(cap_us * 1e3),
        };
        // The absolute timer with no delay raises only on the frames
        // threshold: the last frames of a run below it would never be
        // reported (ethtool rx-usecs = 0, rx-frames = N > 1).
        if mode == TimeoutMode::Absolute
            && ts.delay.is_zero()
            && frames > 1
            && matches!(strategy, "timeout" | "openmx" | "stream")
        {
            return Err(ConfigError::range(
                "nic.frames",
                frames,
                "0 or 1 when nic.delay_us = 0 with the absolute timeout (fewer frames would never be reported)",
            ));
        }
        let flavor = match one_of("nic.adaptive", f.nic.adaptive.as_deref().unwrap_or("dim"), &["dim", "itr"])? {
            "itr" => AdaptiveFlavor::Itr,
            _ => AdaptiveFlavor::Dim,
        };
        let coalesce = match strategy {
            "disabled" => CoalesceSpec::Disabled,
            "timeout" => CoalesceSpec::Timeout(ts),
            "openmx" => CoalesceSpec::OpenMx(ts),
            "stream" => CoalesceSpec::Stream(ts),
            "adaptive" => CoalesceSpec::Adaptive(flavor),
            _ => CoalesceSpec::OpenMxAdaptive,
        };
        let steering = match one_of(
            "nic.steering",
            f.nic.steering.as_deref().unwrap_or("single-rr"),
            &["single-rr", "single-core", "multiqueue"],
        )? {
            "multiqueue" => SteeringKind::MultiQueue,
            "single-core" => {
                let c = f.nic.irq_core.unwrap_or(0);
                check_u("nic.irq_core", c as u64, 0, cores as u64 - 1)?;
                SteeringKind::SingleCore(c)
            }
            _ => SteeringKind::SingleRr,
        };

        // Host
        let sleep = f.host.sleep.unwrap_or(platform.host.sleep_enabled);
        let topo = crate::host::Topology::new(&platform.topology);
        let irq_core = match steering {
            SteeringKind::SingleCore(c) => c as u16,
            _ => 0,
        };
        // [OMX-MQ] relations to the interrupt core: same core (SC), the core
        // sharing its L2 (S$), same socket other die (SP), other socket (OP).
        let related = |want: crate::host::Relation| {
            (0..topo.cores()).find(|&c| c != irq_core && topo.core_relation(c, irq_core) == want)
        };
        let binding = match &f.host.binding {
            None => Some(0),
            Some(toml::Value::String(s)) if s == "none" => None,
            // auto: the core that serves the process's endpoint (endpoint 0
            // for the two-process workloads; NAS ranks get their own below).
            Some(toml::Value::String(s)) if s == "auto" => Some(match steering {
                SteeringKind::SingleCore(c) => c,
                _ => 0,
            }),
            Some(toml::Value::String(s)) if ["SC", "S$", "SP", "OP"].contains(&s.as_str()) => {
                let core = match s.as_str() {
                    "SC" => Some(irq_core),
                    "S$" => related(crate::host::Relation::SameDie),
                    "SP" => related(crate::host::Relation::SameSocket),
                    _ => related(crate::host::Relation::OtherSocket),
                };
                match core {
                    Some(c) => Some(c as u32),
                    None => {
                        return Err(ConfigError::new(format!(
                            "invalid value for `host.binding`: {s:?} (this topology has no such core relative to the interrupt core {irq_core})"
                        )))
                    }
                }
            }
            Some(toml::Value::Integer(i)) => {
                check_u("host.binding", (*i).max(0) as u64, 0, cores as u64 - 1)?;
                if *i < 0 {
                    return Err(ConfigError::range("host.binding", i, "a core index or \"none\""));
                }
                Some(*i as u32)
            }
            Some(v) => {
                return Err(ConfigError::range(
                    "host.binding",
                    v,
                    &format!("a core index 0..={}, \"none\", \"auto\", \"SC\", \"S$\", \"SP\" or \"OP\"", cores - 1),
                ))
            }
        };
        let wait = match one_of("host.wait", f.host.wait.as_deref().unwrap_or("poll"), &["poll", "block"])? {
            "block" => WaitMode::Block,
            _ => WaitMode::Poll,
        };
        let soaker = f.host.soaker.unwrap_or(false);
        let (reap_key, reap) = match f.host.tx_reap.as_deref() {
            Some(v) => ("host.tx_reap", v),
            None => ("platform.nic.tx_reap", platform.nic.tx_reap.as_str()),
        };
        let tx_reap = match one_of(reap_key, reap, &["napi", "hard-irq"])? {
            "hard-irq" => TxReap::HardIrq,
            _ => TxReap::Napi,
        };
        let napi = NapiKnobs {
            defer_hard_irqs: f.host.napi_defer_hard_irqs.unwrap_or(0),
            gro_flush_timeout_us: f.host.gro_flush_timeout_us.unwrap_or(0.0),
            irq_suspend_timeout_us: f.host.irq_suspend_timeout_us.unwrap_or(0.0),
            busy_poll: f.host.busy_poll.unwrap_or(false),
        };
        check_u("host.napi_defer_hard_irqs", napi.defer_hard_irqs as u64, 0, i32::MAX as u64)?;
        check_f("host.gro_flush_timeout_us", napi.gro_flush_timeout_us, 0.0, 1e6)?;
        check_f("host.irq_suspend_timeout_us", napi.irq_suspend_timeout_us, 0.0, 1e6)?;
        if napi.irq_suspend_timeout_us > 0.0 && !napi.busy_poll {
            return Err(ConfigError::new(
                "invalid value for `host.irq_suspend_timeout_us`: it needs `host.busy_poll = true` (preferred busy polling)",
            ));
        }

        // Protocol
        let mut marked = MarkedClasses::default();
        for name in f.protocol.unmarked.iter().flatten() {
            marked = marked.with_unmarked(name).map_err(|m| ConfigError::new(format!("protocol.unmarked: {m}")))?;
        }
        // A message below the threshold travels as MEDIUM, in at most
        // MEDIUM_MAX_FRAGS fragments: the threshold cannot exceed what they
        // carry at this MTU (46464 B at 1500), and the default is lowered
        // to it on links whose MTU is too small for 32 KiB.
        let mtu = platform.link.mtu as usize;
        let medium_max = crate::wire::medium_max_size(mtu) as u32;
        let rndv_threshold =
            f.protocol.rndv_threshold.unwrap_or((crate::wire::DEFAULT_RNDV_THRESHOLD as u32).min(medium_max));
        if !(129..=medium_max.min(1 << 20)).contains(&rndv_threshold) {
            return Err(ConfigError::range(
                "protocol.rndv_threshold",
                rndv_threshold,
                &format!(
                    "129 ..= {}: a MEDIUM message travels in at most {} fragments of {} bytes at platform.link.mtu = {mtu}",
                    medium_max.min(1 << 20),
                    crate::wire::MEDIUM_MAX_FRAGS,
                    crate::wire::medium_frag_payload(mtu)
                ),
            ));
        }
        let loss = f.protocol.loss.unwrap_or(0.0);
        check_f("protocol.loss", loss, 0.0, 0.5)?;
        let reorder = f.protocol.reorder.unwrap_or(0.0);
        check_f("protocol.reorder", reorder, 0.0, 0.5)?;
        let mpi = f.protocol.mpi.unwrap_or(true);
        let native_mx =
            one_of("protocol.stack", f.protocol.stack.as_deref().unwrap_or("open-mx"), &["open-mx", "native-mx"])?
                == "native-mx";
        let misorder_degree = f.protocol.misorder_degree.unwrap_or(0);
        check_u("protocol.misorder_degree", misorder_degree as u64, 0, crate::wire::MEDIUM_MAX_FRAGS as u64 - 1)?;
        let jitter_ns = f.protocol.jitter_ns.unwrap_or(0.0);
        check_f("protocol.jitter_ns", jitter_ns, 0.0, 1e6)?;

        // Workload
        let w = &f.workload;
        let kind = one_of(
            "workload.kind",
            &w.kind,
            &[
                "pingpong",
                "stream",
                "uniband",
                "flood",
                "nas-is",
                "nas-cg",
                "nas-mg",
                "nas-ft",
                "alltoall",
                "echo-nic",
                "echo-kernel",
            ],
        )?;
        let size = w.size_bytes.unwrap_or(0);
        check_u("workload.size_bytes", size, 0, 1 << 30)?;
        let warmup = w.warmup.unwrap_or(if kind == "pingpong" || kind.starts_with("echo-") { 100 } else { 1000 });
        check_u("workload.warmup", warmup, 0, 1 << 32)?;
        let workload = match kind {
            "pingpong" => {
                let iterations = w.iterations.unwrap_or(1000);
                check_u("workload.iterations", iterations, 1, 1 << 32)?;
                Workload::PingPong { size, iterations, warmup }
            }
            "echo-nic" | "echo-kernel" => {
                let iterations = w.iterations.unwrap_or(1000);
                check_u("workload.iterations", iterations, 1, 1 << 32)?;
                // The echo servers turn frames around one by one: no pull protocol.
                check_u("workload.size_bytes", size, 0, rndv_threshold as u64)?;
                // Nor any resend: a lost frame would leave the client waiting forever.
                if loss > 0.0 {
                    return Err(ConfigError::range(
                        "protocol.loss",
                        loss,
                        &format!("0 with workload.kind = {kind:?} (the echo servers resend nothing)"),
                    ));
                }
                let at = if kind == "echo-nic" { EchoAt::Nic } else { EchoAt::Kernel };
                Workload::Echo { at, size, iterations, warmup }
            }
            "stream" => {
                let messages = w.messages.unwrap_or(20_000);
                check_u("workload.messages", messages, 1, 1 << 32)?;
                Workload::Stream { size, messages, warmup }
            }
            "uniband" => {
                let messages = w.messages.unwrap_or(20_000);
                check_u("workload.messages", messages, 1, 1 << 32)?;
                let window = w.window.unwrap_or(crate::workload::STREAM_WINDOW);
                check_u("workload.window", window as u64, 1, 1 << 16)?;
                Workload::Uniband { size, messages, warmup, window }
            }
            "nas-cg" | "nas-mg" | "nas-ft" => {
                let kernel = match kind {
                    "nas-cg" => crate::workload::NasKernel::Cg,
                    "nas-mg" => crate::workload::NasKernel::Mg,
                    _ => crate::workload::NasKernel::Ft,
                };
                let class_c = one_of("workload.class", w.class.as_deref().unwrap_or("B"), &["B", "C"])? == "C";
                let per_host = w.procs_per_host.unwrap_or(platform.cores());
                check_u("workload.procs_per_host", per_host as u64, 1, platform.cores() as u64)?;
                let n = per_host as u64 * platform.topology.hosts as u64;
                if !n.is_power_of_two() || n < 4 {
                    return Err(ConfigError::range(
                        "workload.procs_per_host",
                        per_host,
                        "a value giving a power-of-two rank count of at least 4 (the NPB CG/MG/FT decompositions)",
                    ));
                }
                Workload::NasKernel { kernel, class_c, per_host }
            }
            "alltoall" => {
                let iterations = w.iterations.unwrap_or(100);
                check_u("workload.iterations", iterations, 1, 1 << 24)?;
                let per_host = w.procs_per_host.unwrap_or(platform.cores());
                check_u("workload.procs_per_host", per_host as u64, 1, platform.cores() as u64)?;
                Workload::Alltoall { size, iterations, warmup: w.warmup.unwrap_or(10), per_host }
            }
            "nas-is" => {
                // NPB IS: TOTAL_KEYS = 2^25 (class B), 2^27 (class C); 10 iterations.
                let keys = match one_of("workload.class", w.class.as_deref().unwrap_or("B"), &["S", "A", "B", "C"])? {
                    "S" => 1 << 16,
                    "A" => 1 << 23,
                    "B" => 1 << 25,
                    _ => 1 << 27,
                };
                let iterations = w.iterations.unwrap_or(10);
                check_u("workload.iterations", iterations, 1, 1000)?;
                let per_host = w.procs_per_host.unwrap_or(platform.cores());
                check_u("workload.procs_per_host", per_host as u64, 1, platform.cores() as u64)?;
                Workload::NasIs { keys, iterations, per_host }
            }
            _ => {
                let packets = w.packets.unwrap_or(20_000);
                check_u("workload.packets", packets, 1, 1 << 32)?;
                let gap_ns = w.gap_ns.unwrap_or(2000.0);
                check_f("workload.gap_ns", gap_ns, 1.0, 1e9)?;
                let packet_bytes = w.packet_bytes.unwrap_or(128);
                check_u("workload.packet_bytes", packet_bytes as u64, 60, platform.link.mtu as u64 + 14)?;
                Workload::Flood { packets, gap: Duration::from_ns_f64(gap_ns), packet_bytes }
            }
        };
        Ok(Scenario {
            platform,
            seed: f.seed.unwrap_or(1),
            pcap: f.pcap,
            coalesce,
            steering,
            sleep,
            binding,
            wait,
            soaker,
            ioat: f.host.ioat.unwrap_or(false),
            dca: f.host.dca.unwrap_or(false),
            tx_reap,
            napi,
            marked,
            rndv_threshold,
            loss,
            reorder,
            mpi,
            native_mx,
            misorder_degree: misorder_degree as u8,
            jitter_ns,
            workload,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_scenario_uses_defaults() {
        let s = Scenario::from_toml("[workload]\nkind = \"pingpong\"\n").unwrap();
        assert_eq!(s.platform.name, "omx2009");
        assert!(matches!(s.coalesce, CoalesceSpec::Timeout(t) if t.delay == Duration::from_us(75)));
        assert_eq!(s.steering, SteeringKind::SingleRr);
    }

    #[test]
    fn errors_name_key_value_and_allowed() {
        let cases = [
            (
                "[nic]\ncoalescing = \"fast\"\n[workload]\nkind = \"pingpong\"\n",
                &["nic.coalescing", "fast", "openmx"][..],
            ),
            ("[nic]\ndelay_us = -3\n[workload]\nkind = \"pingpong\"\n", &["nic.delay_us", "-3"][..]),
            ("[workload]\nkind = \"pingpong\"\nsize = 3\n", &["size"][..]),
            ("[platform.link]\nmtu = 10\n[workload]\nkind = \"stream\"\n", &["link.mtu", "10"][..]),
            ("[platform.link]\nmtux = 10\n[workload]\nkind = \"stream\"\n", &["platform.link.mtux"][..]),
            ("[platform.link]\nmtu = \"big\"\n[workload]\nkind = \"stream\"\n", &["platform.link.mtu", "big"][..]),
            ("[host]\nbinding = 99\n[workload]\nkind = \"stream\"\n", &["host.binding", "99"][..]),
            ("[protocol]\nunmarked = [\"rdnv\"]\n[workload]\nkind = \"stream\"\n", &["rdnv"][..]),
            ("[host]\ntx_reap = \"irq\"\n[workload]\nkind = \"stream\"\n", &["host.tx_reap", "irq", "hard-irq"][..]),
            (
                "[platform.nic]\ntx_reap = \"soft\"\n[workload]\nkind = \"stream\"\n",
                &["platform.nic.tx_reap", "soft", "hard-irq"][..],
            ),
            (
                "[platform.cache]\ntx_contention_lines = -3\n[workload]\nkind = \"stream\"\n",
                &["platform.cache.tx_contention_lines", "-3", "0 or more"][..],
            ),
        ];
        for (text, needles) in cases {
            let e = Scenario::from_toml(text).unwrap_err().0;
            for n in needles {
                assert!(e.contains(n), "error {e:?} should mention {n:?}");
            }
            assert!(!e.contains('\n'), "one line: {e:?}");
        }
    }

    #[test]
    fn platform_overrides_apply() {
        let s = Scenario::from_toml(
            "[platform.link]\nmtu = 9000\n[platform.host]\nsyscall_ns = 1\n[workload]\nkind = \"stream\"\n",
        )
        .unwrap();
        assert_eq!(s.platform.link.mtu, 9000);
        assert_eq!(s.platform.host.syscall_ns, 1.0);
    }
}
