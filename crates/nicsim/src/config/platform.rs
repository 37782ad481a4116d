//! The platform preset: every cost and size of the modelled hardware and
//! software. Field docs are the user help; `presets/*.toml` say where each
//! value comes from.

use super::{check_f, check_u, toml_error, ConfigError, TxReap};
use crate::time::Duration;
use serde::{Deserialize, Serialize};

/// A whole platform preset (one TOML file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// Preset name.
    pub name: String,
    /// One-line description.
    pub description: String,
    pub topology: TopologyCfg,
    pub link: LinkCfg,
    pub nic: NicCfg,
    pub host: HostCfg,
    pub cache: CacheCfg,
    pub library: LibraryCfg,
    pub nas: NasCfg,
    /// EMO analytic-model inputs the simulator does not otherwise need
    /// (optional: presets without it use the defaults of [`EmoCfg`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emo: Option<EmoCfg>,
}

/// Inputs of the EMO model (`crate::model`) and of the NIC-firmware echo
/// (`workload.kind = "echo-nic"`): the NIC processor's clock and its
/// byte-copy cost, plus any extra layers a user declares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmoCfg {
    /// Clock of the NIC processor in MHz (EMO's R_N).
    pub nic_clock_mhz: f64,
    /// NIC processor cycles to copy one byte between its buffers (the
    /// firmware echo copies the payload from the receive to the send buffer).
    pub nic_copy_cycles_per_byte: f64,
    /// Extensible layers added to both EMO sums (`[[emo.layer]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layer: Vec<LayerCfg>,
}

impl Default for EmoCfg {
    /// Without an `[emo]` table: R_N = 1000 MHz (NIC cycles read as
    /// nanoseconds, so C_N/R_N is exact whatever the real clock) and a
    /// firmware echo that swaps buffers without copying bytes.
    fn default() -> Self {
        EmoCfg { nic_clock_mhz: 1000.0, nic_copy_cycles_per_byte: 0.0, layer: Vec::new() }
    }
}

/// One extra EMO layer (e.g. MPI matching offload: C_m, L_am, O_am).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerCfg {
    pub name: String,
    /// Protocol cycles of the layer (C_m), run on `on`'s clock.
    pub cycles: f64,
    /// Where the cycles run: nic | host.
    pub on: On,
    /// Extra latency of the layer's crossing (L_am), in nanoseconds.
    pub latency_ns: f64,
    /// Host cycles the layer's crossing costs (O_am).
    pub overhead_cycles: f64,
}

/// Where an EMO layer's protocol cycles run (`emo.layer.on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum On {
    /// `nic`: on the NIC processor's clock.
    Nic,
    /// `host`: on the host's clock.
    Host,
}

impl std::fmt::Display for On {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            On::Nic => "nic",
            On::Host => "host",
        })
    }
}

/// The host's compute rates the NAS skeletons run their documented work at
/// (the work itself, operations and memory traffic per iteration, is the
/// benchmark's: `workload::NasProblem::work`, `workload::nas_is_work`). A
/// rank's compute per iteration is the larger of its operations at the
/// core's rate and its bytes at its share of the host's memory bandwidth.
/// Presets describing the same CPU share these values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct NasCfg {
    /// CG, MG, FT: sustained double-precision floating-point operations per
    /// cycle of one core on compiled NPB code whose data is in cache.
    pub flops_per_cycle: f64,
    /// IS: sustained integer instructions per cycle of one core on IS's key loops.
    pub int_ipc: f64,
    /// Sustained memory bandwidth of one host with every core streaming
    /// (STREAM-like), in MB/s; the ranks of a host share it evenly.
    pub mem_MBps: f64,
}

/// Hosts and the core topology of each (sockets -> dies sharing an L2 -> cores).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyCfg {
    pub hosts: u32,
    pub sockets: u32,
    pub dies_per_socket: u32,
    pub cores_per_die: u32,
}

impl TopologyCfg {
    /// How cores `a` and `b` of one host relate: core `c` is on die
    /// `c / cores_per_die`, die `d` on socket `d / dies_per_socket`
    /// (`crate::host::Topology` answers the same from precomputed tables).
    pub fn core_relation(&self, a: u32, b: u32) -> Relation {
        let (da, db) = (a / self.cores_per_die, b / self.cores_per_die);
        if da == db {
            Relation::SameDie
        } else if da / self.dies_per_socket == db / self.dies_per_socket {
            Relation::SameSocket
        } else {
            Relation::OtherSocket
        }
    }
}

/// Relation between two cores or two dies of one host ([OMX-MQ] SC/S$/SP/OP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// Same die (same core or the core sharing its L2).
    SameDie,
    /// Same socket, other die.
    SameSocket,
    /// Other socket.
    OtherSocket,
}

/// Links and the switch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    /// Line rate in Gb/s.
    pub rate_gbps: f64,
    /// MTU in bytes (Ethernet payload).
    pub mtu: u32,
    /// Bytes on the wire per frame besides the frame itself (preamble, FCS, IFG).
    pub frame_overhead_bytes: u32,
    pub propagation_ns: f64,
    /// Switch forwarding latency; 0 with `cut_through` = direct cable.
    pub switch_latency_ns: f64,
    /// Cut-through forwarding (no store-and-forward of the whole frame).
    pub cut_through: bool,
}

/// NIC firmware, DMA and interrupt delivery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct NicCfg {
    pub fw_rx_ns: f64,
    pub fw_tx_ns: f64,
    /// Extra firmware time per received frame under the `stream` policy:
    /// tracking the DMAs in flight and deciding at each completion whether
    /// to defer ([OMX-COAL] §IV-C2: it "requires more work in the NIC").
    #[serde(default)]
    pub fw_rx_stream_ns: f64,
    /// Extra firmware time per received frame with `multiqueue` steering:
    /// the generic multiqueue support and the endpoint hash ([OMX-MQ] §4.2:
    /// it requires "more work in the NIC than the single interrupt firmware").
    #[serde(default)]
    pub fw_rx_multiqueue_ns: f64,
    pub rx_dma_engines: u32,
    pub dma_startup_ns: f64,
    pub dma_MBps: f64,
    pub tx_dma_startup_ns: f64,
    pub irq_delivery_ns: f64,
    pub doorbell_ns: f64,
    pub ring_slots: u32,
    /// Frames of at most this many bytes take a buffer of a second receive
    /// ring of their own, of `ring_slots` entries too (myri10ge's `rx_small`
    /// beside `rx_big`): a ring full of data does not drop them. 0: one ring.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub small_bytes: u32,
    /// The driver restocks a receive ring at the end of a poll only once
    /// fewer than this many of its buffers are posted and not yet processed
    /// (myri10ge's `myri10ge_fill_thresh`); then it posts the whole ring
    /// again. 0: every buffer is given back as its frame is processed.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub fill_thresh: u32,
    /// Whether transmit completions are reaped through the (coalesced) interrupt.
    pub tx_done_interrupts: bool,
    /// The NIC's default coalescing delay in microseconds.
    pub default_delay_us: f64,
    /// Where the driver reaps transmit completions unless a scenario says
    /// otherwise (`host.tx_reap`): napi (default; in the poll) | hard-irq (in
    /// the hard handler, under a claim of their own, as myri10ge does).
    #[serde(default)]
    pub tx_reap: TxReap,
    /// Receive and transmit DMA share one bus, each transfer holding it from
    /// its start-up to its last byte (a conventional PCI bus, as the AceNIC's
    /// 64-bit/33 MHz slot). Default false: the directions run side by side
    /// and a start-up overlaps the previous transfer (PCIe).
    #[serde(default, skip_serializing_if = "<&bool as std::ops::Not>::not")]
    pub dma_shared_bus: bool,
    /// \[LCI] NI-level multicast forwarding: the firmware keeps a
    /// forwarding table and sends a multicast frame on to the next hosts of
    /// its tree itself, besides delivering it (`crate::nic::multicast`).
    /// Default false; a scenario turns it on with `nic.multicast_forwarding`.
    #[serde(default)]
    pub multicast_forwarding: bool,
    /// Firmware time per forwarded copy on top of `fw_tx_ns` (table lookup
    /// and header rewrite).
    #[serde(default)]
    pub mcast_fwd_ns: f64,
    /// \[LCI] polling watchdog interval in microseconds (`crate::nic::watchdog`);
    /// 0 (the default): none. A scenario sets it with `nic.watchdog_us`.
    #[serde(default)]
    pub watchdog_us: f64,
}

/// Host OS costs and idle states.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct HostCfg {
    pub clock_ghz: f64,
    pub irq_entry_ns: f64,
    pub napi_poll_ns: f64,
    pub irq_rearm_ns: f64,
    pub driver_rx_ns: f64,
    /// The part of `driver_rx_ns` the core spends after the Open-MX handler
    /// has posted the frame's event: freeing the skb and refilling its
    /// receive-ring slot. A library polling on another core sees the event
    /// meanwhile; one polling on this core waits for it ([OMX-MQ] §4.2).
    #[serde(default)]
    pub driver_rx_tail_ns: f64,
    pub handler_drop_ns: f64,
    pub handler_ns: f64,
    pub tx_done_ns: f64,
    pub syscall_ns: f64,
    pub driver_tx_ns: f64,
    pub wakeup_ns: f64,
    pub block_ns: f64,
    pub sleep_enabled: bool,
    pub idle_before_sleep_ns: f64,
    pub sleep_exit_ns: f64,
    /// I/OAT-like copy engine: bandwidth, CPU cost to submit one copy, and
    /// the latency from the end of a copy to its completion being seen.
    pub ioat_MBps: f64,
    pub ioat_submit_ns: f64,
    pub ioat_completion_ns: f64,
}

/// The cache model: one L2 per die, its capacity, line transfers and the
/// lines the receive path touches (`host/cache.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct CacheCfg {
    pub line_bytes: u32,
    /// Capacity of the cache the cores of one die share, KiB.
    pub l2_kib: u32,
    /// Demand misses per 4 KB page of a sequential copy whose lines are not
    /// in the cache, before the hardware prefetcher runs ahead of it.
    pub prefetch_misses_per_page: u32,
    /// Cost of a line transfer between dies of one socket.
    pub same_socket_ns: f64,
    /// Cost of a line transfer between sockets.
    pub other_socket_ns: f64,
    /// Cost of a line fetched from memory (e.g. written by a DMA).
    pub memory_ns: f64,
    pub copy_hot_MBps: f64,
    pub copy_cold_MBps: f64,
    pub endpoint_lines: u32,
    pub event_lines: u32,
    pub napi_lines: u32,
    pub tx_lines: u32,
    /// Extra line transfers a touch of the send-path state pays when a
    /// core of another die is working on it at that moment (the send path
    /// and transmit-completion reaping running concurrently).
    #[serde(default)]
    pub tx_contention_lines: u32,
    /// Lines of a pull handle the handler updates per pull reply.
    pub pull_lines: u32,
    /// Lines the NIC wrote by DMA that the driver reads per received frame
    /// besides its payload (receive completion entry, frame headers).
    pub rx_dma_lines: u32,
    /// Lines of a die's private kernel state (skb, per-CPU driver and
    /// socket-buffer state) touched per frame received, sent or reaped.
    pub kernel_private_lines: u32,
    /// Lines of a process's private library and MPI state (requests,
    /// matching queues, partner state) touched per message sent or event
    /// consumed.
    pub user_private_lines: u32,
}

/// User-space library (Open-MX) and MPI layer costs, protocol timers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LibraryCfg {
    pub send_ns: f64,
    pub event_ns: f64,
    pub post_recv_ns: f64,
    /// Extra library cost of a small send (33..=128 B in Open-MX) over a
    /// tiny one: `omx_isend` mallocs a buffer and copies the data into it
    /// for retransmission, freed at the ack (libopen-mx `omx_send.c`); tiny
    /// data travels inside the ioctl argument. Not paid by native MX.
    #[serde(default)]
    pub small_send_ns: f64,
    pub mpi_send_ns: f64,
    pub mpi_recv_ns: f64,
    pub pull_setup_ns: f64,
    pub ack_after: u32,
    /// Unacknowledged frames allowed per peer before sends wait for acks.
    pub send_window_frames: u32,
    /// Large receives a process pulls at once; later ones wait for one to
    /// finish.
    pub max_pulls: u32,
    pub delayed_ack_us: f64,
    pub resend_us: f64,
    pub pull_timeout_us: f64,
    pub spin_ns: f64,
    /// How this Open-MX build cuts messages into frames: "open-mx-1.0"
    /// (the default), "open-mx-0.9" or "mx" ([`crate::wire::WireMode`]).
    #[serde(default)]
    pub wire: crate::wire::WireMode,
}

const NS_MAX: f64 = 1e9; // no single modelled cost exceeds one second

/// The preset's times and rates as the simulator charges them: converted
/// once, when the scenario is validated, each `*_ns` value by
/// [`Duration::from_ns_f64`] (nearest picosecond), each `*_us` value as
/// `from_ns_f64(us * 1e3)` and each `*_MBps` rate to whole bytes per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    pub irq_entry: Duration,
    pub napi_poll: Duration,
    pub irq_rearm: Duration,
    pub driver_rx: Duration,
    pub driver_rx_tail: Duration,
    pub handler_drop: Duration,
    pub handler: Duration,
    pub tx_done: Duration,
    pub syscall: Duration,
    pub driver_tx: Duration,
    pub doorbell: Duration,
    pub wakeup: Duration,
    pub block: Duration,
    pub idle_before_sleep: Duration,
    pub sleep_exit: Duration,
    pub ioat_submit: Duration,
    pub ioat_completion: Duration,
    pub send: Duration,
    pub event: Duration,
    pub post_recv: Duration,
    pub small_send: Duration,
    pub mpi_send: Duration,
    pub mpi_recv: Duration,
    pub pull_setup: Duration,
    pub delayed_ack: Duration,
    pub resend: Duration,
    pub pull_timeout: Duration,
    /// The I/OAT-like copy engine's rate, bytes per second.
    pub ioat_bytes_per_s: u64,
    pub nic: NicTimes,
    pub link: LinkTimes,
    pub cache: CacheTimes,
}

/// The NIC's firmware, DMA and interrupt-delivery times (`[nic]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NicTimes {
    pub fw_rx: Duration,
    pub fw_rx_stream: Duration,
    pub fw_rx_multiqueue: Duration,
    pub fw_tx: Duration,
    pub dma_startup: Duration,
    pub tx_dma_startup: Duration,
    pub irq_delivery: Duration,
    /// DMA rate, bytes per second (both directions).
    pub dma_bytes_per_s: u64,
    /// Firmware time per forwarded multicast copy (`nic.mcast_fwd_ns`).
    pub mcast_fwd: Duration,
}

/// The links' rate and delays (`[link]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkTimes {
    /// Line rate, bytes per second (`rate_gbps * 1e9 / 8`, rounded).
    pub bytes_per_s: u64,
    pub propagation: Duration,
    pub switch_latency: Duration,
}

/// Cache-line transfer costs, copy rates and line geometry (`[cache]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheTimes {
    pub same_socket: Duration,
    pub other_socket: Duration,
    pub memory: Duration,
    pub copy_hot_bytes_per_s: u64,
    pub copy_cold_bytes_per_s: u64,
    pub line_bytes: u32,
    pub prefetch_misses_per_page: u32,
}

impl LinkTimes {
    /// The times of a validated `[link]` table.
    pub fn of(l: &LinkCfg) -> Self {
        LinkTimes {
            bytes_per_s: (l.rate_gbps * 1e9 / 8.0).round() as u64,
            propagation: Duration::from_ns_f64(l.propagation_ns),
            switch_latency: Duration::from_ns_f64(l.switch_latency_ns),
        }
    }
}

impl Times {
    /// The times of a validated platform.
    pub fn of(p: &Platform) -> Self {
        let ns = Duration::from_ns_f64;
        let us = |v: f64| Duration::from_ns_f64(v * 1e3);
        let (h, b) = (&p.host, &p.library);
        Times {
            irq_entry: ns(h.irq_entry_ns),
            napi_poll: ns(h.napi_poll_ns),
            irq_rearm: ns(h.irq_rearm_ns),
            driver_rx: ns(h.driver_rx_ns),
            driver_rx_tail: ns(h.driver_rx_tail_ns),
            handler_drop: ns(h.handler_drop_ns),
            handler: ns(h.handler_ns),
            tx_done: ns(h.tx_done_ns),
            syscall: ns(h.syscall_ns),
            driver_tx: ns(h.driver_tx_ns),
            doorbell: ns(p.nic.doorbell_ns),
            wakeup: ns(h.wakeup_ns),
            block: ns(h.block_ns),
            idle_before_sleep: ns(h.idle_before_sleep_ns),
            sleep_exit: ns(h.sleep_exit_ns),
            ioat_submit: ns(h.ioat_submit_ns),
            ioat_completion: ns(h.ioat_completion_ns),
            send: ns(b.send_ns),
            event: ns(b.event_ns),
            post_recv: ns(b.post_recv_ns),
            small_send: ns(b.small_send_ns),
            mpi_send: ns(b.mpi_send_ns),
            mpi_recv: ns(b.mpi_recv_ns),
            pull_setup: ns(b.pull_setup_ns),
            delayed_ack: us(b.delayed_ack_us),
            resend: us(b.resend_us),
            pull_timeout: us(b.pull_timeout_us),
            ioat_bytes_per_s: (h.ioat_MBps * 1e6) as u64,
            nic: NicTimes {
                fw_rx: ns(p.nic.fw_rx_ns),
                fw_rx_stream: ns(p.nic.fw_rx_stream_ns),
                fw_rx_multiqueue: ns(p.nic.fw_rx_multiqueue_ns),
                fw_tx: ns(p.nic.fw_tx_ns),
                dma_startup: ns(p.nic.dma_startup_ns),
                tx_dma_startup: ns(p.nic.tx_dma_startup_ns),
                irq_delivery: ns(p.nic.irq_delivery_ns),
                dma_bytes_per_s: (p.nic.dma_MBps * 1e6) as u64,
                mcast_fwd: ns(p.nic.mcast_fwd_ns),
            },
            link: LinkTimes::of(&p.link),
            cache: CacheTimes {
                same_socket: ns(p.cache.same_socket_ns),
                other_socket: ns(p.cache.other_socket_ns),
                memory: ns(p.cache.memory_ns),
                copy_hot_bytes_per_s: (p.cache.copy_hot_MBps * 1e6) as u64,
                copy_cold_bytes_per_s: (p.cache.copy_cold_MBps * 1e6) as u64,
                line_bytes: p.cache.line_bytes,
                prefetch_misses_per_page: p.cache.prefetch_misses_per_page,
            },
        }
    }
}

/// The most hosts a platform may have (`topology.hosts`): the size the
/// simulator is tested and measured at (runs of a thousand ranks, one per
/// host; `nicsim bench`).
pub const MAX_HOSTS: u32 = 1024;

impl Platform {
    /// Parses a preset TOML text (no validation).
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| toml_error("preset", e))
    }

    /// Checks every value against its allowed range; errors name the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        check_u("topology.hosts", t.hosts as u64, 2, MAX_HOSTS as u64)?;
        check_u("topology.sockets", t.sockets as u64, 1, 16)?;
        check_u("topology.dies_per_socket", t.dies_per_socket as u64, 1, 16)?;
        check_u("topology.cores_per_die", t.cores_per_die as u64, 1, 64)?;
        let cores = t.sockets * t.dies_per_socket * t.cores_per_die;
        check_u("topology (sockets*dies_per_socket*cores_per_die)", cores as u64, 1, 256)?;
        let dies = t.sockets * t.dies_per_socket;
        check_u("topology (sockets*dies_per_socket)", dies as u64, 1, 64)?;
        let l = &self.link;
        check_f("link.rate_gbps", l.rate_gbps, 0.001, 10_000.0)?;
        check_u("link.mtu", l.mtu as u64, 576, 9000)?;
        check_u("link.frame_overhead_bytes", l.frame_overhead_bytes as u64, 0, 1000)?;
        check_f("link.propagation_ns", l.propagation_ns, 0.0, NS_MAX)?;
        check_f("link.switch_latency_ns", l.switch_latency_ns, 0.0, NS_MAX)?;
        let n = &self.nic;
        for (k, v) in [
            ("nic.fw_rx_ns", n.fw_rx_ns),
            ("nic.fw_tx_ns", n.fw_tx_ns),
            ("nic.fw_rx_stream_ns", n.fw_rx_stream_ns),
            ("nic.fw_rx_multiqueue_ns", n.fw_rx_multiqueue_ns),
            ("nic.dma_startup_ns", n.dma_startup_ns),
            ("nic.tx_dma_startup_ns", n.tx_dma_startup_ns),
            ("nic.irq_delivery_ns", n.irq_delivery_ns),
            ("nic.doorbell_ns", n.doorbell_ns),
            ("nic.mcast_fwd_ns", n.mcast_fwd_ns),
        ] {
            check_f(k, v, 0.0, NS_MAX)?;
        }
        check_f("nic.dma_MBps", n.dma_MBps, 1.0, 1e7)?;
        check_u("nic.rx_dma_engines", n.rx_dma_engines as u64, 1, 64)?;
        // A medium message's fragments and a pull block arrive back to back
        // and are resent whole: a ring that cannot hold them drops the same
        // tail on every try, and the run never ends.
        let min_ring = crate::wire::MEDIUM_MAX_FRAGS.max(crate::wire::PULL_BLOCK_REPLIES) as u64;
        check_u("nic.ring_slots", n.ring_slots as u64, min_ring, 1 << 20)?;
        check_u("nic.small_bytes", n.small_bytes as u64, 0, 65_535)?;
        check_u("nic.fill_thresh", n.fill_thresh as u64, 0, n.ring_slots as u64)?;
        check_f("nic.default_delay_us", n.default_delay_us, 0.0, 1e6)?;
        check_f("nic.watchdog_us", n.watchdog_us, 0.0, super::nic_features::WATCHDOG_US_MAX)?;
        let h = &self.host;
        check_f("host.clock_ghz", h.clock_ghz, 0.01, 100.0)?;
        for (k, v) in [
            ("host.irq_entry_ns", h.irq_entry_ns),
            ("host.napi_poll_ns", h.napi_poll_ns),
            ("host.irq_rearm_ns", h.irq_rearm_ns),
            ("host.driver_rx_ns", h.driver_rx_ns),
            ("host.handler_drop_ns", h.handler_drop_ns),
            ("host.handler_ns", h.handler_ns),
            ("host.tx_done_ns", h.tx_done_ns),
            ("host.syscall_ns", h.syscall_ns),
            ("host.driver_tx_ns", h.driver_tx_ns),
            ("host.wakeup_ns", h.wakeup_ns),
            ("host.block_ns", h.block_ns),
            ("host.idle_before_sleep_ns", h.idle_before_sleep_ns),
            ("host.sleep_exit_ns", h.sleep_exit_ns),
            ("host.ioat_submit_ns", h.ioat_submit_ns),
            ("host.ioat_completion_ns", h.ioat_completion_ns),
        ] {
            check_f(k, v, 0.0, NS_MAX)?;
        }
        check_f("host.ioat_MBps", h.ioat_MBps, 1.0, 1e7)?;
        check_f("host.driver_rx_tail_ns", h.driver_rx_tail_ns, 0.0, h.driver_rx_ns)?;
        let c = &self.cache;
        check_u("cache.line_bytes", c.line_bytes as u64, 8, 4096)?;
        // At least one line.
        check_u("cache.l2_kib", c.l2_kib as u64, (c.line_bytes as u64).div_ceil(1024), 1 << 20)?;
        for (k, v) in [
            ("cache.same_socket_ns", c.same_socket_ns),
            ("cache.other_socket_ns", c.other_socket_ns),
            ("cache.memory_ns", c.memory_ns),
        ] {
            check_f(k, v, 0.0, 1e6)?;
        }
        check_f("cache.copy_hot_MBps", c.copy_hot_MBps, 1.0, 1e7)?;
        check_f("cache.copy_cold_MBps", c.copy_cold_MBps, 1.0, 1e7)?;
        for (k, v) in [
            ("cache.endpoint_lines", c.endpoint_lines),
            ("cache.event_lines", c.event_lines),
            ("cache.napi_lines", c.napi_lines),
            ("cache.tx_lines", c.tx_lines),
            ("cache.tx_contention_lines", c.tx_contention_lines),
            ("cache.pull_lines", c.pull_lines),
            ("cache.prefetch_misses_per_page", c.prefetch_misses_per_page),
            ("cache.rx_dma_lines", c.rx_dma_lines),
            ("cache.kernel_private_lines", c.kernel_private_lines),
            ("cache.user_private_lines", c.user_private_lines),
        ] {
            check_u(k, v as u64, 0, 1024)?;
        }
        let b = &self.library;
        for (k, v) in [
            ("library.send_ns", b.send_ns),
            ("library.event_ns", b.event_ns),
            ("library.post_recv_ns", b.post_recv_ns),
            ("library.small_send_ns", b.small_send_ns),
            ("library.mpi_send_ns", b.mpi_send_ns),
            ("library.mpi_recv_ns", b.mpi_recv_ns),
            ("library.pull_setup_ns", b.pull_setup_ns),
            ("library.spin_ns", b.spin_ns),
        ] {
            check_f(k, v, 0.0, NS_MAX)?;
        }
        check_u("library.ack_after", b.ack_after as u64, 1, 1024)?;
        check_u("library.send_window_frames", b.send_window_frames as u64, 1, 1 << 20)?;
        check_u("library.max_pulls", b.max_pulls as u64, 1, 1 << 16)?;
        check_f("library.delayed_ack_us", b.delayed_ack_us, 1.0, 1e7)?;
        check_f("library.resend_us", b.resend_us, 10.0, 1e8)?;
        check_f("library.pull_timeout_us", b.pull_timeout_us, 10.0, 1e8)?;
        check_f("nas.flops_per_cycle", self.nas.flops_per_cycle, 0.01, 64.0)?;
        check_f("nas.int_ipc", self.nas.int_ipc, 0.01, 16.0)?;
        check_f("nas.mem_MBps", self.nas.mem_MBps, 1.0, 1e8)?;
        if let Some(e) = &self.emo {
            check_f("emo.nic_clock_mhz", e.nic_clock_mhz, 0.001, 1e6)?;
            check_f("emo.nic_copy_cycles_per_byte", e.nic_copy_cycles_per_byte, 0.0, 1e6)?;
            for (i, l) in e.layer.iter().enumerate() {
                check_f(&format!("emo.layer[{i}].cycles"), l.cycles, 0.0, 1e12)?;
                check_f(&format!("emo.layer[{i}].latency_ns"), l.latency_ns, 0.0, 1e12)?;
                check_f(&format!("emo.layer[{i}].overhead_cycles"), l.overhead_cycles, 0.0, 1e12)?;
            }
        }
        Ok(())
    }

    /// The EMO inputs: the preset's `[emo]` table or the defaults.
    pub fn emo_cfg(&self) -> EmoCfg {
        self.emo.clone().unwrap_or_default()
    }

    /// Cores per host.
    pub fn cores(&self) -> u32 {
        self.topology.sockets * self.topology.dies_per_socket * self.topology.cores_per_die
    }
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{preset_names, preset_text};

    #[test]
    fn embedded_presets_parse_and_validate() {
        for name in preset_names() {
            if crate::config::is_lci_table(&toml::from_str(preset_text(name).unwrap()).unwrap()) {
                continue; // LCI presets: see config::lci
            }
            let p = Platform::from_toml(preset_text(name).unwrap()).unwrap();
            p.validate().unwrap();
            assert_eq!(p.name, name);
        }
    }

    #[test]
    fn unknown_key_is_named() {
        let text = preset_text("omx2009").unwrap().replace("[nic]\n", "[nic]\nfw_rx_nsec = 3.0\n");
        let e = Platform::from_toml(&text).unwrap_err();
        assert!(e.0.contains("fw_rx_nsec"), "{e}");
    }

    #[test]
    fn out_of_range_is_named() {
        let mut p = Platform::from_toml(preset_text("omx2009").unwrap()).unwrap();
        p.link.mtu = 100;
        let e = p.validate().unwrap_err();
        assert!(e.0.contains("link.mtu") && e.0.contains("100") && e.0.contains("576"), "{e}");
    }
}
