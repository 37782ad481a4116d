//! A scenario: one simulated run (preset + overrides + NIC policy + host
//! options + protocol options + workload). `ScenarioFile` mirrors the TOML the
//! user writes; [`Scenario::from_toml`] validates it into checked values.
//! The file is read once for every stack: when the hosts run the LCI
//! stack, the keys only it reads beside the shared ones go into
//! [`Scenario::lci`] (`scenario/lci.rs`), and its program is the one
//! `[workload]`, read for that stack; each stack refuses by name a key only
//! the others read.

use super::nic_features::{ni_features, NiFeatureOpts, NiFeatures};
use super::nic_opts::{NicOpts, Steering};
use super::workload::{Workload, WorkloadOpts};
use super::workload_check::workload;
use super::{
    check_f, check_u, int_or, toml_error_in, CoalesceSpec, ConfigError, Int, Platform, Relation, Stack, TimeoutMode,
    TimeoutSpec, Times, TxReap, DEFAULT_PRESET, SEED_LIMIT,
};
use crate::time::Duration;
use crate::wire::{MarkedClasses, MarkerClass};
use serde::Deserialize;

/// The scenario file as written by the user (see README for an example).
/// Only `workload.kind` is required.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Embedded preset name or a path to a preset TOML file (default
    /// [`DEFAULT_PRESET`], "omx2009").
    pub preset: Option<String>,
    /// Seed of every random choice (loss, reordering, jitter); 0 ..= 2^63 - 1.
    pub seed: Option<Int>,
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
    #[serde(default)]
    pub workload: WorkloadOpts,
}

/// Host options.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostOpts {
    /// Idle cores may enter a sleep state (default: the preset's).
    pub sleep: Option<bool>,
    /// Core of the communicating process: a core index (default 0), "none"
    /// (OS placement), "auto" (the core serving its queue), or one of SC |
    /// S$ | SP | OP (relative to the interrupt core, [OMX-MQ]).
    pub binding: Option<BindingOpt>,
    /// How the library waits: poll (default) | block.
    pub wait: Option<WaitMode>,
    /// Run a cycle soaker on every core (host overhead is measured as cycles it loses).
    pub soaker: Option<bool>,
    /// Linux napi_defer_hard_irqs: empty NAPI polls before the IRQ is re-enabled.
    pub napi_defer_hard_irqs: Option<Int>,
    /// Linux gro_flush_timeout in ns, as the kernel takes it
    /// (/sys/class/net/DEV/gro_flush_timeout): re-poll delay while hard
    /// IRQs are deferred.
    pub gro_flush_timeout_ns: Option<Int>,
    /// The same in microseconds (give one of the two).
    pub gro_flush_timeout_us: Option<f64>,
    /// Linux irq_suspend_timeout in ns, as the kernel takes it (netdev-genl
    /// napi-set / per netdev): IRQs stay suspended while the application
    /// busy-polls.
    pub irq_suspend_timeout_ns: Option<Int>,
    /// The same in microseconds (give one of the two).
    pub irq_suspend_timeout_us: Option<f64>,
    /// The library busy-polls the NIC queue while it waits (SO_BUSY_POLL / prefer busy poll).
    pub busy_poll: Option<bool>,
    /// The socket's SO_BUSY_POLL_BUDGET: the entries one busy poll takes
    /// (0 ..= 65535; 0, the default: the kernel's BUSY_POLL_BUDGET, 8).
    pub busy_poll_budget: Option<Int>,
    /// Threaded NAPI (/sys/class/net/DEV/threaded, Linux 5.12+): each
    /// queue's NAPI poll runs in a kernel thread the scheduler places,
    /// woken by the hard IRQ, instead of in softirq context on the
    /// interrupted core.
    pub napi_threaded: Option<bool>,
    /// Per-NAPI settings of receive queues (`[[host.napi]]`, netdev-genl
    /// `napi-set`): each names a queue and overrides the host-wide knobs above.
    pub napi: Option<Vec<NapiSetOpts>>,
    /// Offload the pull-reply copies to the I/OAT-like copy engine.
    pub ioat: Option<bool>,
    /// Direct Cache Access: NIC writes land in the cache of the core serving the queue.
    pub dca: Option<bool>,
    /// Where transmit completions are reaped: napi | hard-irq (default: the
    /// preset's `nic.tx_reap`).
    pub tx_reap: Option<TxReap>,
    /// Transmit completions freed by a NET_TX softirq that runs Open-MX's
    /// skb destructors (default: the preset's `host.tx_softirq`).
    pub tx_softirq: Option<bool>,
}

/// The settings of one NAPI instance (`[[host.napi]]`): netdev-genl
/// `napi-set` (Documentation/netlink/specs/netdev.yaml, Linux 6.13+) sets
/// defer-hard-irqs, gro-flush-timeout and irq-suspend-timeout of one NAPI
/// instance, over the device-wide values. Here the instance is receive
/// queue `queue` of each host; a key not given keeps the host-wide value
/// (`host.napi_defer_hard_irqs`, `host.gro_flush_timeout_ns`,
/// `host.irq_suspend_timeout_ns`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NapiSetOpts {
    /// The receive queue (0 ..= queues per host - 1).
    pub queue: Option<Int>,
    /// napi-set defer-hard-irqs.
    pub defer_hard_irqs: Option<Int>,
    /// napi-set gro-flush-timeout, in ns as the kernel takes it.
    pub gro_flush_timeout_ns: Option<Int>,
    /// The same in microseconds (give one of the two).
    pub gro_flush_timeout_us: Option<f64>,
    /// napi-set irq-suspend-timeout, in ns as the kernel takes it.
    pub irq_suspend_timeout_ns: Option<Int>,
    /// The same in microseconds (give one of the two).
    pub irq_suspend_timeout_us: Option<f64>,
    /// napi-set threaded: this NAPI instance's poll runs in its kernel thread.
    pub threaded: Option<bool>,
}

/// `host.binding`: a core index or a named placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingOpt {
    Core(u32),
    Named(BindingName),
}

/// The named placements of `host.binding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum BindingName {
    /// `none`: the OS places the process.
    #[serde(rename = "none")]
    Os,
    /// `auto`: the core that serves the process's queue.
    #[serde(rename = "auto")]
    Auto,
    /// `SC`: the interrupt core itself.
    SC,
    /// `S$`: the core sharing the interrupt core's L2.
    #[serde(rename = "S$")]
    SameCache,
    /// `SP`: a core of the interrupt core's socket, other die.
    SP,
    /// `OP`: a core of the other socket.
    OP,
}

impl<'de> Deserialize<'de> for BindingOpt {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = BindingOpt;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let names: Vec<String> =
                    super::variant_names::<BindingName>().iter().map(|n| format!("{n:?}")).collect();
                write!(f, "a core index or one of {}", names.join(", "))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<BindingOpt, E> {
                u32::try_from(v)
                    .map(BindingOpt::Core)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<BindingOpt, E> {
                u32::try_from(v)
                    .map(BindingOpt::Core)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<BindingOpt, E> {
                use serde::de::IntoDeserializer;
                BindingName::deserialize(v.into_deserializer())
                    .map(BindingOpt::Named)
                    .map_err(|_: E| E::invalid_value(serde::de::Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

/// Protocol options.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtocolOpts {
    /// Marker classes turned off: any of tiny_small, medium_last, rndv, pull,
    /// last_pull_reply, notify.
    pub unmarked: Option<Vec<MarkerClass>>,
    /// Message size from which the rendezvous (pull) protocol is used, bytes.
    pub rndv_threshold: Option<Int>,
    /// Probability that a frame is lost.
    pub loss: Option<f64>,
    /// Probability that a frame is delayed behind later ones.
    pub reorder: Option<f64>,
    /// Add the MPI layer's costs (Open MPI over Open-MX; default true).
    pub mpi: Option<bool>,
    /// Message-passing stack: open-mx (kernel receive path) | native-mx
    /// (OS-bypass) | lci (\[LCI] user-level library, LCI-family presets);
    /// default: lci for the \[LCI] study's programs on its hardware, else
    /// open-mx (`config::stack`).
    pub stack: Option<Stack>,
    /// Mis-ordering degree X of medium messages: fragment N - X carries the
    /// marker instead of the last one N ([OMX-COAL] IV-C4's method).
    pub misorder_degree: Option<Int>,
    /// Random extra delay (uniform, seeded) of each frame at the switch, in ns.
    pub jitter_ns: Option<f64>,
    /// LCI only: NI send buffers a sender may hold unacknowledged under the
    /// reliable protocol (default: the preset's lanai.send_buffers, 64).
    pub send_buffers: Option<Int>,
    /// LCI only: delay of the reliable protocol's explicit ack after the
    /// first unacknowledged packet, us (default 50).
    pub ack_delay_us: Option<f64>,
}

/// Validated receive steering (`nic.steering`, `nic.irq_core`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteeringKind {
    /// One queue, interrupt spread round-robin over all cores.
    SingleRr,
    /// One queue, interrupt bound to one core.
    SingleCore(u32),
    /// [OMX-MQ]: one queue and vector per core, queue = endpoint mod cores.
    MultiQueue,
}

/// The Linux receive knobs (net/core/dev.c napi_complete_done,
/// Documentation/networking/napi.rst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NapiKnobs {
    pub defer_hard_irqs: u32,
    pub gro_flush_timeout: Duration,
    pub irq_suspend_timeout: Duration,
    pub busy_poll: bool,
    /// The entries one busy poll takes: `host.busy_poll_budget`, else
    /// `BUSY_POLL_BUDGET`.
    pub busy_poll_budget: u16,
    /// Threaded NAPI (`host.napi_threaded`, napi-set `threaded`).
    pub threaded: bool,
}

/// How the library waits for completions (`host.wait`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitMode {
    /// `poll` (default): spin on the event ring.
    #[default]
    Poll,
    /// `block`: sleep in the kernel until an event wakes the process.
    Block,
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

    /// The message library its hosts run (`protocol.stack`).
    pub fn stack(&self) -> Stack {
        match (&self.lci, self.native_mx) {
            (Some(_), _) => Stack::Lci,
            (None, true) => Stack::NativeMx,
            (None, false) => Stack::OpenMx,
        }
    }

    /// The receive queues' watchdog timer (`ni.watchdog`) when the world's
    /// NIC runs it (the Open-MX and native MX stacks,
    /// `crate::nic::RxQueue`); on the LCI stack the LANai firmware runs
    /// `ni.watchdog` (`crate::nic::lanai::Ni`).
    pub fn queue_watchdog(&self) -> Option<Duration> {
        self.ni.watchdog.timer().filter(|_| self.lci.is_none())
    }

    /// The NI clock's period (`ni.clock`) when its interrupts reach the
    /// Open-MX library's processes (`sim/clock.rs` `Clock`); on the LCI
    /// stack the same clock signals the LCI library.
    pub fn process_clock(&self) -> Option<Duration> {
        self.ni.clock.filter(|_| self.lci.is_none())
    }
}

/// A validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub platform: Platform,
    /// The platform's times, converted once.
    pub times: Times,
    pub seed: u64,
    pub pcap: Option<String>,
    pub coalesce: CoalesceSpec,
    /// Host 0's coalescing when `nic.host0` sets it apart (else `coalesce`).
    pub host0_coalesce: Option<CoalesceSpec>,
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
    /// Transmit completions freed by a NET_TX softirq that runs Open-MX's
    /// skb destructors (`host.tx_softirq`).
    pub tx_softirq: bool,
    pub napi: NapiKnobs,
    /// The queues whose NAPI settings differ from `napi` (`[[host.napi]]`),
    /// with their settings in full: queue index on each host, knobs.
    pub napi_queues: Vec<(u32, NapiKnobs)>,
    pub marked: MarkedClasses,
    /// How the Open-MX build cuts messages at the link's MTU
    /// (`library.wire`, `link.mtu`).
    pub layout: crate::wire::Layout,
    pub rndv_threshold: u32,
    pub loss: f64,
    pub reorder: f64,
    pub mpi: bool,
    /// The native MX stack (OS-bypass) instead of Open-MX.
    pub native_mx: bool,
    pub misorder_degree: u8,
    /// Random extra delay of each frame at the switch (uniform, seeded).
    pub jitter: Duration,
    /// The \[LCI] NIC features: polling watchdog and NI clock (every
    /// stack's), multicast forwarding, packet-shifting delivery, flow
    /// control.
    pub ni: NiFeatures,
    pub workload: Workload,
    /// The \[LCI] stack's scenario when the hosts run it: its library
    /// options and program (`workload` is that program).
    pub lci: Option<Box<LciScenario>>,
}

/// Loads a preset by embedded name or file path, applying overrides.
/// Errors name a key as the user wrote it: `platform.KEY` for a value of
/// the scenario or of an embedded preset, the key of the file for a value
/// read from a preset file.
pub fn load_platform(preset: &str, overrides: Option<&toml::Table>) -> Result<Platform, ConfigError> {
    super::overrides::load_preset(preset, overrides, |p: &Platform| {
        p.validate()?;
        super::lanai_derive::validate(p)
    })
}

impl Scenario {
    /// Parses and validates a scenario TOML text, for the stack it runs
    /// (`protocol.stack` or its default, `config::stack`): the one reading
    /// of the file for every stack, the LCI stack's keys beside the shared
    /// ones (`scenario/lci.rs`).
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| toml_error_in("scenario", text, e))?;
        let stack = super::stack::of_table(&table)?;
        lci::refuse_other_stacks_keys(&table, stack)?;
        let reliable = stack == Stack::Lci && lci::reliable_asked(&table);
        let read = |f| Self::of_stack(f, stack, reliable);
        let root = toml::Value::Table(table);
        match super::try_from_value::<ScenarioFile>("", root.clone()) {
            Ok(f) => read(f),
            Err(e) => Err(super::overrides::number_limits(&root, e, |f| read(f).err())),
        }
    }

    /// Validates a parsed scenario file.
    pub fn from_file(f: ScenarioFile) -> Result<Self, ConfigError> {
        let preset = f.preset.as_deref().unwrap_or(DEFAULT_PRESET);
        let hw = super::stack::hardware(preset);
        let stack = super::stack::resolve(f.protocol.stack, hw, f.workload.kind, preset)?;
        if stack == Stack::Lci {
            // The LCI stack's part is read from the scenario's table (`scenario/lci.rs`).
            return Err(ConfigError::range(
                "protocol.stack",
                "\"lci\"",
                "\"open-mx\" or \"native-mx\" in a parsed Open-MX scenario; Scenario::from_toml reads the LCI stack's",
            ));
        }
        // The LCI stack's keys beside the shared ones (`from_toml` refuses
        // them with their values, `scenario/lci.rs`).
        let (n, p) = (&f.nic, &f.protocol);
        let lci_only = [
            ("nic.polling", n.polling.is_some()),
            ("nic.split_bytes", n.split_bytes.is_some()),
            ("nic.forwarding", n.forwarding.is_some()),
            ("nic.fanout", n.fanout.is_some()),
            ("protocol.send_buffers", p.send_buffers.is_some()),
            ("protocol.ack_delay_us", p.ack_delay_us.is_some()),
        ];
        if let Some((key, _)) = lci_only.iter().find(|(_, set)| *set) {
            return Err(ConfigError(format!(
                "`{key}` is read by protocol.stack = \"lci\" only; leave it out, or run the workload on the LCI stack"
            )));
        }
        Self::of_stack(f, stack, false)
    }

    /// Validates a parsed scenario file whose hosts run `stack` (the LCI
    /// stack's reliable protocol on where `reliable`), on its preset with
    /// the `[platform]` overrides.
    fn of_stack(f: ScenarioFile, stack: Stack, reliable: bool) -> Result<Self, ConfigError> {
        let preset = f.preset.as_deref().unwrap_or(DEFAULT_PRESET);
        let platform = load_platform(preset, f.platform.as_ref())?;
        let lci = match stack {
            Stack::Lci => Some(Box::new(LciScenario::read(&f, &platform, reliable)?)),
            Stack::OpenMx | Stack::NativeMx => None,
        };
        Self::on_platform(f, platform, lci)
    }

    /// Validates a parsed scenario file on its loaded platform, with the
    /// LCI stack's part when its hosts run that stack.
    fn on_platform(f: ScenarioFile, platform: Platform, lci: Option<Box<LciScenario>>) -> Result<Self, ConfigError> {
        let preset = f.preset.as_deref().unwrap_or(DEFAULT_PRESET);
        let lci_hw = platform.lanai.is_some();
        let cores = platform.cores();
        let seed = int_or("seed", &f.seed, 1, 0, SEED_LIMIT - 1)?;

        // NIC
        let coalesce = super::coalesce_spec(&f.nic, &platform)?;
        let host0_coalesce = match &f.nic.host0 {
            None => None,
            Some(h) => {
                let delay_us = h.delay_us.unwrap_or(platform.nic.default_delay_us);
                check_f("nic.host0.delay_us", delay_us, 0.0, 1e6)?;
                let frames = int_or("nic.host0.frames", &h.frames, 0, 0, 1 << 20)? as u32;
                if delay_us == 0.0 && frames > 1 {
                    return Err(ConfigError::range(
                        "nic.host0.frames",
                        frames,
                        "0 or 1 when nic.host0.delay_us = 0 (fewer frames would never be reported)",
                    ));
                }
                Some(CoalesceSpec::Timeout(TimeoutSpec {
                    mode: TimeoutMode::Absolute,
                    delay: Duration::from_ns_f64(delay_us * 1e3),
                    frames,
                    cap: Duration::ZERO,
                }))
            }
        };
        let steering = match f.nic.steering.unwrap_or_default() {
            Steering::SingleRr => SteeringKind::SingleRr,
            Steering::Multiqueue => SteeringKind::MultiQueue,
            Steering::SingleCore => {
                let c = int_or("nic.irq_core", &f.nic.irq_core, 0, 0, cores as u64 - 1)? as u32;
                SteeringKind::SingleCore(c)
            }
        };

        // Host
        let sleep = f.host.sleep.unwrap_or(platform.host.sleep_enabled);
        let irq_core = match steering {
            SteeringKind::SingleCore(c) => c,
            _ => 0,
        };
        // [OMX-MQ] relations to the interrupt core: same core (SC), the core
        // sharing its L2 (S$), same socket other die (SP), other socket (OP).
        let related = |want: Relation| {
            (0..cores).find(|&c| c != irq_core && platform.topology.core_relation(c, irq_core) == want)
        };
        let binding = match f.host.binding {
            None => Some(0),
            Some(BindingOpt::Core(c)) => {
                check_u("host.binding", c as u64, 0, cores as u64 - 1)?;
                Some(c)
            }
            Some(BindingOpt::Named(BindingName::Os)) => None,
            // auto: the core that serves the process's endpoint (endpoint 0
            // for the two-process workloads; NAS ranks get their own).
            Some(BindingOpt::Named(BindingName::Auto)) => Some(irq_core),
            Some(BindingOpt::Named(BindingName::SC)) => Some(irq_core),
            Some(BindingOpt::Named(name)) => {
                let (want, s) = match name {
                    BindingName::SameCache => (Relation::SameDie, "S$"),
                    BindingName::SP => (Relation::SameSocket, "SP"),
                    _ => (Relation::OtherSocket, "OP"),
                };
                Some(related(want).ok_or_else(|| {
                    ConfigError::new(format!(
                        "invalid value for `host.binding`: {s:?} (this topology has no such core relative to the interrupt core {irq_core})"
                    ))
                })?)
            }
        };
        let wait = f.host.wait.unwrap_or_default();
        let soaker = f.host.soaker.unwrap_or(false);
        let tx_reap = f.host.tx_reap.unwrap_or(platform.nic.tx_reap);
        let tx_softirq = f.host.tx_softirq.unwrap_or(platform.host.tx_softirq);
        let defer_hard_irqs =
            int_or("host.napi_defer_hard_irqs", &f.host.napi_defer_hard_irqs, 0, 0, i32::MAX as u64)? as u32;
        let gro_flush_timeout =
            ns_or_us("host.gro_flush_timeout", &f.host.gro_flush_timeout_ns, f.host.gro_flush_timeout_us)?;
        let irq_suspend_timeout =
            ns_or_us("host.irq_suspend_timeout", &f.host.irq_suspend_timeout_ns, f.host.irq_suspend_timeout_us)?;
        let busy_poll = f.host.busy_poll.unwrap_or(false);
        let napi = NapiKnobs {
            defer_hard_irqs,
            gro_flush_timeout,
            irq_suspend_timeout,
            busy_poll,
            busy_poll_budget: busy_poll_budget(&f.host.busy_poll_budget, busy_poll)?,
            threaded: f.host.napi_threaded.unwrap_or(false),
        };
        if !irq_suspend_timeout.is_zero() && !napi.busy_poll {
            let key = if f.host.irq_suspend_timeout_ns.is_some() { "ns" } else { "us" };
            return Err(ConfigError::new(format!(
                "invalid value for `host.irq_suspend_timeout_{key}`: it needs `host.busy_poll = true` (preferred busy polling)"
            )));
        }
        let queues_per_host = match steering {
            SteeringKind::MultiQueue => platform.cores() as usize,
            _ => 1,
        };
        let napi_queues = napi_per_queue(f.host.napi.as_deref().unwrap_or_default(), napi, queues_per_host)?;
        if let Some(key) = threaded_key(&f.host) {
            napi_threads(key, &platform, preset, tx_reap)?;
        }

        // Protocol
        let marked = f.protocol.unmarked.iter().flatten().fold(MarkedClasses::default(), |m, &c| m.with_unmarked(c));
        // A message below the threshold travels as MEDIUM, in at most
        // MEDIUM_MAX_FRAGS fragments: the threshold cannot exceed what they
        // carry at this MTU (46464 B at 1500), and the default is lowered
        // to it on links whose MTU is too small for 32 KiB.
        let mtu = platform.link.mtu as usize;
        let wire = platform.library.wire;
        let layout = crate::wire::Layout::new(wire, mtu).map_err(|why| {
            ConfigError(format!(
                "invalid value for `library.wire`: \"{}\" at `link.mtu` = {mtu}: {why} (allowed: \"open-mx-1.0\" \
                 at any MTU, \"open-mx-0.9\", \"mx\" from MTU 4144)",
                wire.name()
            ))
        })?;
        let medium_max = layout.medium_max_size() as u32;
        let rndv_max = medium_max.min(1 << 20);
        let rndv_threshold = match &f.protocol.rndv_threshold {
            None => (crate::wire::DEFAULT_RNDV_THRESHOLD as u32).min(medium_max),
            Some(v) => v.range("protocol.rndv_threshold", 129, rndv_max as u64).map_err(|e| {
                ConfigError(format!(
                    "{}: a MEDIUM message travels in at most {} fragments of {} bytes at platform.link.mtu = {mtu})",
                    e.0.trim_end_matches(')'),
                    crate::wire::MEDIUM_MAX_FRAGS,
                    layout.medium_frag
                ))
            })? as u32,
        };
        let loss = f.protocol.loss.unwrap_or(0.0);
        check_f("protocol.loss", loss, 0.0, 0.5)?;
        let reorder = f.protocol.reorder.unwrap_or(0.0);
        check_f("protocol.reorder", reorder, 0.0, 0.5)?;
        let mpi = f.protocol.mpi.unwrap_or(true);
        let native_mx = f.protocol.stack.unwrap_or_default() == Stack::NativeMx;
        let misorder_degree = int_or(
            "protocol.misorder_degree",
            &f.protocol.misorder_degree,
            0,
            0,
            crate::wire::MEDIUM_MAX_FRAGS as u64 - 1,
        )?;
        let jitter_ns = f.protocol.jitter_ns.unwrap_or(0.0);
        check_f("protocol.jitter_ns", jitter_ns, 0.0, 1e6)?;

        if platform.grid.is_some() {
            // The grid books a frame's whole path when it leaves its NIC
            // (`crate::net::grid`): nothing happens to it at a switch.
            for (key, v) in [("protocol.loss", loss), ("protocol.reorder", reorder), ("protocol.jitter_ns", jitter_ns)]
            {
                if v != 0.0 {
                    return Err(ConfigError::range(key, v, "0 on a platform whose network is a grid"));
                }
            }
        }
        let (ioat, dca) = (f.host.ioat.unwrap_or(false), f.host.dca.unwrap_or(false));
        if lci_hw {
            for (key, on) in [("host.ioat", ioat), ("host.dca", dca)] {
                if on {
                    let allowed = format!("false on preset {preset:?}: its hosts have no copy engine nor DCA");
                    return Err(ConfigError::range(key, on, &allowed));
                }
            }
        }
        let runs_on = match &lci {
            Some(l) => super::RunsOn::Lci { fanout: l.fanout },
            None => super::RunsOn::OpenMx { rndv_threshold, loss },
        };
        let workload = workload(&f.workload, &platform, runs_on)?;
        // The NIC's watchdog and clock are read once for every stack; on
        // the LCI stack its firmware runs them, and the other NI features
        // of `[nic]` are the platform's (`refuse_other_stacks_keys`).
        if let Some(l) = &lci {
            l.check_workload(&workload)?;
        }
        let ni_opts = NiFeatureOpts {
            watchdog_us: f.nic.watchdog_us,
            multicast_forwarding: f.nic.multicast_forwarding,
            clock_period_us: f.nic.clock_period_us,
            rx_delivery: f.nic.rx_delivery,
            flow_control: f.nic.flow_control,
        };
        let stack = match (&lci, native_mx) {
            (Some(_), _) => Stack::Lci,
            (None, true) => Stack::NativeMx,
            (None, false) => Stack::OpenMx,
        };
        let ni = ni_features(&ni_opts, &platform, &workload, stack)?;
        Ok(Scenario {
            times: Times::of(&platform),
            platform,
            seed,
            pcap: f.pcap,
            coalesce,
            host0_coalesce,
            steering,
            sleep,
            binding,
            wait,
            soaker,
            ioat,
            dca,
            tx_reap,
            tx_softirq,
            napi,
            napi_queues,
            marked,
            layout,
            rndv_threshold,
            loss,
            reorder,
            mpi,
            native_mx,
            misorder_degree: misorder_degree as u8,
            jitter: Duration::from_ns_f64(jitter_ns),
            ni,
            workload,
            lci,
        })
    }
}

/// A Linux time given in ns (`{key}_ns`, the kernel's unit, an integer up
/// to 10^9) or in µs (`{key}_us`), at most one of them; zero when neither.
fn ns_or_us(key: &str, ns: &Option<Int>, us: Option<f64>) -> Result<Duration, ConfigError> {
    match (ns, us) {
        (Some(_), Some(_)) => Err(ConfigError::new(format!(
            "`{key}_ns` and `{key}_us` are the same setting: give one (`{key}_ns` in the kernel's unit)"
        ))),
        (Some(v), None) => Ok(Duration::from_ns(v.range(&format!("{key}_ns"), 0, 1_000_000_000)?)),
        (None, Some(v)) => {
            check_f(&format!("{key}_us"), v, 0.0, 1e6)?;
            Ok(Duration::from_ns_f64(v * 1e3))
        }
        (None, None) => Ok(Duration::ZERO),
    }
}

mod lci;
pub use lci::{LciProtocol, LciScenario, DEFAULT_ACK_DELAY_US};
mod napi;
pub use napi::BUSY_POLL_BUDGET;
use napi::{busy_poll_budget, napi_per_queue, napi_threads, threaded_key};

#[cfg(test)]
mod tests;
