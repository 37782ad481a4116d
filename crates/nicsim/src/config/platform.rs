//! The platform preset: every cost and size of the modelled hardware and
//! software. Field docs are the user help; `presets/*.toml` say where each
//! value comes from.
//!
//! It also owns the types and bounds of the preset keys a scenario can override ([`RxDelivery`],
//! [`TxReap`], [`WATCHDOG_US_MAX`], [`CLOCK_PERIOD_US_MAX`]): the scenario's modules read the
//! platform, so the platform names nothing of theirs.

use super::units::cost_table;
use super::{check_f, check_u, toml_error, ConfigError, EmoCfg};
use serde::{Deserialize, Serialize};
use std::fmt;

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
    /// The network as a 3D grid of cut-through switches (the Myrinet of
    /// \[LCI], `crate::net::grid`) instead of one switch; absent: one switch.
    /// Its switches and cables take `link`'s rate, overhead, switch latency
    /// and propagation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<super::GridCfg>,
    /// A LANai NI (\[LCI]): its firmware and SRAM; with it the firmware's
    /// times and the bus's PIO words of `nic` and `host` are derived
    /// (`config::lanai_derive`). Absent: an Ethernet NIC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lanai: Option<super::LanaiCfg>,
    /// The programmed I/O of the host's bus to a LANai NI (with `lanai` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci: Option<super::PciCfg>,
    /// The \[LCI] library's own costs (with `lanai` only; read by
    /// `protocol.stack = "lci"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lci: Option<super::LciHostCfg>,
}

cost_table! {
    /// The host's compute rates the NAS skeletons run their documented work at
    /// (the work itself, operations and memory traffic per iteration, is the
    /// benchmark's: `workload::NasProblem::work`, `workload::nas_is_work`). A
    /// rank's compute per iteration is the larger of its operations at the
    /// core's rate and its bytes at its share of the host's memory bandwidth.
    /// Presets describing the same CPU share these values.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(non_snake_case)]
    pub struct NasCfg in "nas" as n {
        /// CG, MG, FT: sustained double-precision floating-point operations per
        /// cycle of one core on compiled NPB code whose data is in cache.
        pub flops_per_cycle: f64 [0.01, 64.0],
        /// IS: sustained integer instructions per cycle of one core on IS's key loops.
        pub int_ipc: f64 [0.01, 16.0],
        /// Sustained memory bandwidth of one host with every core streaming
        /// (STREAM-like), in MB/s; the ranks of a host share it evenly.
        pub mem_MBps: f64 [1.0, 1e8],
    }
}

cost_table! {
    /// Hosts and the core topology of each (sockets -> dies sharing an L2 -> cores).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct TopologyCfg in "topology" as t {
        pub hosts: u32 [2, MAX_HOSTS],
        pub sockets: u32 [1, 16],
        pub dies_per_socket: u32 [1, 16],
        pub cores_per_die: u32 [1, 64],
    }
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

/// No single modelled cost exceeds one second.
const NS_MAX: f64 = 1e9;

/// A medium message's fragments and a pull block arrive back to back and
/// are resent whole: a ring that cannot hold them drops the same tail on
/// every try, and the run never ends (`nic.ring_slots`' least value).
const MIN_RING: u32 = {
    let (m, p) = (crate::wire::MEDIUM_MAX_FRAGS, crate::wire::PULL_BLOCK_REPLIES);
    (if m > p { m } else { p }) as u32
};

cost_table! {
    /// Links and the switch.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct LinkCfg in "link" as l {
        /// Line rate in Gb/s.
        pub rate_gbps: f64 [0.001, 10_000.0] => gbps bytes_per_s,
        /// MTU in bytes (Ethernet payload).
        pub mtu: u32 [576, 9000],
        /// Bytes on the wire per frame besides the frame itself (preamble, FCS, IFG).
        pub frame_overhead_bytes: u32 [0, 1000],
        pub propagation_ns: f64 [0.0, NS_MAX] => ns propagation,
        /// Switch forwarding latency; 0 with `cut_through` = direct cable.
        pub switch_latency_ns: f64 [0.0, NS_MAX] => ns switch_latency,
        /// Cut-through forwarding (no store-and-forward of the whole frame).
        pub cut_through: bool,
    }
    /// The links' rate (bytes per second) and delays (`[link]`).
    pub struct LinkTimes;
}

cost_table! {
    /// NIC firmware, DMA and interrupt delivery.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(non_snake_case)]
    pub struct NicCfg in "nic" as n {
        pub fw_rx_ns: f64 [0.0, NS_MAX] => ns fw_rx,
        pub fw_tx_ns: f64 [0.0, NS_MAX] => ns fw_tx,
        /// Extra firmware time per received frame under the `stream` policy:
        /// tracking the DMAs in flight and deciding at each completion whether
        /// to defer ([OMX-COAL] §IV-C2: it "requires more work in the NIC").
        #[serde(default)]
        pub fw_rx_stream_ns: f64 [0.0, NS_MAX] => ns fw_rx_stream,
        /// Extra firmware time per received frame with `multiqueue` steering:
        /// the generic multiqueue support and the endpoint hash ([OMX-MQ] §4.2:
        /// it requires "more work in the NIC than the single interrupt firmware").
        #[serde(default)]
        pub fw_rx_multiqueue_ns: f64 [0.0, NS_MAX] => ns fw_rx_multiqueue,
        pub rx_dma_engines: u32 [1, 64],
        pub dma_startup_ns: f64 [0.0, NS_MAX] => ns dma_startup,
        /// DMA rate (both directions).
        pub dma_MBps: f64 [1.0, 1e7] => MBps dma_bytes_per_s,
        pub tx_dma_startup_ns: f64 [0.0, NS_MAX] => ns tx_dma_startup,
        pub irq_delivery_ns: f64 [0.0, NS_MAX] => ns irq_delivery,
        /// From the host's write of a claim (myri10ge's `irq_claim`, at the
        /// end of `myri10ge_poll`, and `irq_claim + 1`, at the end of
        /// `myri10ge_intr`: an uncached, posted PIO write into the NIC's SRAM)
        /// to the firmware acting on it: a latency, no CPU time. Until it
        /// lands the line stays masked and the NIC raises nothing. 0: at once.
        #[serde(default, skip_serializing_if = "is_zero_f64")]
        pub claim_latency_ns: f64 [0.0, NS_MAX] => ns claim_latency,
        pub doorbell_ns: f64 [0.0, NS_MAX] => ns doorbell,
        pub ring_slots: u32 [MIN_RING, 1 << 20],
        /// Frames of at most this many bytes take a buffer of a second receive
        /// ring of their own, of `ring_slots` entries too (myri10ge's `rx_small`
        /// beside `rx_big`): a ring full of data does not drop them. 0: one ring.
        #[serde(default, skip_serializing_if = "is_zero_u32")]
        pub small_bytes: u32 [0, 65_535],
        /// The driver restocks a receive ring at the end of a poll only once
        /// fewer than this many of its buffers are posted and not yet processed
        /// (myri10ge's `myri10ge_fill_thresh`); then it posts the whole ring
        /// again. 0: every buffer is given back as its frame is processed.
        #[serde(default, skip_serializing_if = "is_zero_u32")]
        pub fill_thresh: u32 [0, n.ring_slots],
        /// Whether transmit completions are reaped through the (coalesced) interrupt.
        pub tx_done_interrupts: bool,
        /// The NIC's default coalescing delay in microseconds.
        pub default_delay_us: f64 [0.0, 1e6],
        /// Where the driver reaps transmit completions unless a scenario says
        /// otherwise (`host.tx_reap`): napi (default; in the poll) | hard-irq (in
        /// the hard handler, under a claim of their own, as myri10ge does).
        #[serde(default)]
        pub tx_reap: TxReap,
        /// The coalescing policy a scenario gets when it names none
        /// (`nic.coalescing`): what the NIC's driver does by default.
        /// Default `timeout`.
        #[serde(default, skip_serializing_if = "is_default")]
        pub default_coalescing: super::Coalescing,
        /// The adaptive algorithm a scenario gets when it names none
        /// (`nic.adaptive`): dim (default) | itr | dim-irq.
        #[serde(default, skip_serializing_if = "is_default")]
        pub default_adaptive: super::AdaptiveFlavor,
        /// The timeout policies' timer when a scenario names none (`nic.timeout_mode`).
        #[serde(default, skip_serializing_if = "is_default")]
        pub default_timeout_mode: super::TimeoutMode,
        /// DIM's receive timer restarts at every completion (CQE mode) by
        /// default (ethtool cqe-mode-rx). Default false (EQE mode).
        #[serde(default, skip_serializing_if = "is_default")]
        pub cqe_mode_rx: bool,
        /// The same for TX DIM (ethtool cqe-mode-tx). Default false.
        #[serde(default, skip_serializing_if = "is_default")]
        pub cqe_mode_tx: bool,
        /// Under DIM the driver also runs TX DIM on the send completions by
        /// default (ethtool adaptive-tx). Default false: the transmit
        /// completions share the receive timer.
        #[serde(default, skip_serializing_if = "is_default")]
        pub adaptive_tx: bool,
        /// Receive and transmit DMA share one bus, each transfer holding it from
        /// its start-up (`dma_startup_ns`) to its last byte (a conventional PCI
        /// bus, as the AceNIC's 64-bit/33 MHz slot; `crate::host::bus`); a
        /// transmit start-up beyond `dma_startup_ns` is firmware set-up before
        /// the transfer, off the bus. Default false: the directions run side
        /// by side and a start-up overlaps the previous transfer (PCIe).
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
        pub mcast_fwd_ns: f64 [0.0, NS_MAX] => ns mcast_fwd,
        /// \[LCI] polling watchdog interval in microseconds (`crate::nic::watchdog`);
        /// 0 (the default): none. A scenario sets it with `nic.watchdog_us`.
        #[serde(default)]
        pub watchdog_us: f64 [0.0, WATCHDOG_US_MAX],
        /// \[LCI] NI clock period in microseconds for the library's fine-grain
        /// timers (`crate::nic::timers`); 0 (the default): none. A scenario
        /// sets it with `nic.clock_period_us`.
        #[serde(default)]
        pub clock_period_us: f64 [0.0, CLOCK_PERIOD_US_MAX],
        /// How the NIC lays a received frame into host memory: ring (default;
        /// myri10ge's receive-done ring) | shifted (\[LCI] packet shifting,
        /// `crate::nic::delivery`). A scenario sets it with `nic.rx_delivery`.
        #[serde(default)]
        pub rx_delivery: RxDelivery,
        /// Link-level back-pressure (Myrinet stop/go, 802.3x PAUSE honoured
        /// by the link partner): a frame that finds its receive ring full
        /// waits at the stopped link instead of being dropped
        /// (`crate::nic::flow`). Default false; a scenario sets it with
        /// `nic.flow_control`.
        #[serde(default, skip_serializing_if = "<&bool as std::ops::Not>::not")]
        pub flow_control: bool,
        /// Frames that can wait at a stopped link (the NIC's packet buffer
        /// and what the stopped upstream holds): the bound of the FIFO, past
        /// which a frame is dropped. Read only with `flow_control`, which
        /// needs it at least 1.
        #[serde(default, skip_serializing_if = "is_zero_u32")]
        pub flow_control_frames: u32 [0, 1 << 20],
        /// The stop reaches the sending host's transmitter (802.3x PAUSE on
        /// a cable between the two hosts' NICs, no switch): what the stopped
        /// link holds beyond `flow_control_frames` (then the receiving NIC's
        /// packet buffer alone) waits in the sender's send ring and qdisc,
        /// whose bound (`tx_queue_len` + `tx_ring_frames`, less what the
        /// sender already queues) drops the rest there (`crate::nic::flow`).
        /// Read only with `flow_control`. Default false.
        #[serde(default, skip_serializing_if = "<&bool as std::ops::Not>::not")]
        pub pause_to_sender: bool,
        /// Microseconds a stopped link waits on a host taking nothing before the NIC drops; 0: for ever.
        #[serde(default, skip_serializing_if = "is_zero_f64")]
        pub flow_control_hold_us: f64 [0.0, 10_000_000.0],
        /// Packets the sender's queueing discipline holds while the NIC's
        /// send ring is full (Linux's `tx_queue_len`, which `pfifo_fast`
        /// enforces by dropping): with `tx_ring_frames`, the bound of a
        /// host's frames handed to the driver and not yet on the wire
        /// (`crate::host::TxBacklog`). 0 (the default): no bound.
        #[serde(default, skip_serializing_if = "is_zero_u32")]
        pub tx_queue_len: u32 [0, 1 << 20],
        /// Frames the NIC's send ring holds before the driver stops the
        /// queue; read only with `tx_queue_len` > 0.
        #[serde(default, skip_serializing_if = "is_zero_u32")]
        pub tx_ring_frames: u32 [0, 1 << 20],
    }
    /// The NIC's firmware, DMA, doorbell and interrupt-delivery times (`[nic]`).
    pub struct NicTimes;
}

cost_table! {
    /// Host OS costs and idle states.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(non_snake_case)]
    pub struct HostCfg in "host" as h {
        pub clock_ghz: f64 [0.01, 100.0],
        pub irq_entry_ns: f64 [0.0, NS_MAX] => ns irq_entry,
        pub napi_poll_ns: f64 [0.0, NS_MAX] => ns napi_poll,
        pub irq_rearm_ns: f64 [0.0, NS_MAX] => ns irq_rearm,
        pub driver_rx_ns: f64 [0.0, NS_MAX] => ns driver_rx,
        /// The part of `driver_rx_ns` the core spends after the Open-MX handler
        /// has posted the frame's event: freeing the skb and refilling its
        /// receive-ring slot. A library polling on another core sees the event
        /// meanwhile; one polling on this core waits for it ([OMX-MQ] §4.2).
        #[serde(default)]
        pub driver_rx_tail_ns: f64 [0.0, h.driver_rx_ns] => ns driver_rx_tail,
        pub handler_drop_ns: f64 [0.0, NS_MAX] => ns handler_drop,
        pub handler_ns: f64 [0.0, NS_MAX] => ns handler,
        pub tx_done_ns: f64 [0.0, NS_MAX] => ns tx_done,
        /// Transmit completions as Linux 2.6.26 runs them for Open-MX: the
        /// hard IRQ only queues the reaped skbs (`dev_kfree_skb_irq`), and a
        /// NET_TX softirq on the same core, before the NAPI poll, frees them
        /// and runs their Open-MX destructors: a medium fragment's posts a
        /// FRAG_DONE event to its sender, a pull reply's puts its region's
        /// refcount (`crate::kernel::net_tx`). Default false: the reap frees
        /// them and posts nothing. A scenario overrides it with
        /// `host.tx_softirq`.
        #[serde(default, skip_serializing_if = "<&bool as std::ops::Not>::not")]
        pub tx_softirq: bool,
        /// Duplicate or stale pull replies dropped before their copy (`omx_recv_pull_reply`); default off.
        #[serde(default, skip_serializing_if = "<&bool as std::ops::Not>::not")]
        pub pull_dup_check: bool,
        /// CPU time of one Open-MX skb destructor in the NET_TX softirq (a FRAG_DONE event posted, or a
        /// region refcount put), read only with `tx_softirq`.
        #[serde(default)]
        pub tx_dtor_ns: f64 [0.0, NS_MAX] => ns tx_dtor,
        pub syscall_ns: f64 [0.0, NS_MAX] => ns syscall,
        pub driver_tx_ns: f64 [0.0, NS_MAX] => ns driver_tx,
        pub wakeup_ns: f64 [0.0, NS_MAX] => ns wakeup,
        /// What the core that posts an event pays to wake the process
        /// sleeping on it on another core (`try_to_wake_up` on that core's runqueue and the reschedule
        /// IPI), and how long after that the sleeper's core starts (the IPI's flight). Default 0:
        /// waking costs the waker nothing.
        #[serde(default)]
        pub wake_remote_ns: f64 [0.0, NS_MAX] => ns wake_remote,
        /// Threaded NAPI (`host.napi_threaded`): what the hard IRQ pays to
        /// wake the queue's NAPI kernel thread instead of polling after
        /// itself (`____napi_schedule` -> `wake_up_process`: the runqueue's
        /// lock and enqueue, and the reschedule IPI when the thread is
        /// placed on another core). Default 0, with `napi_thread_switch_ns`:
        /// the preset's kernel has no threaded NAPI (refused).
        #[serde(default, skip_serializing_if = "is_zero_f64")]
        pub napi_thread_wake_ns: f64 [0.0, NS_MAX] => ns napi_thread_wake,
        /// Threaded NAPI: the context switches into the NAPI kernel thread
        /// before its poll and out of it after (`__schedule` twice), paid
        /// by the core it runs on before the poll: the scheduling delay.
        #[serde(default, skip_serializing_if = "is_zero_f64")]
        pub napi_thread_switch_ns: f64 [0.0, NS_MAX] => ns napi_thread_switch,
        pub block_ns: f64 [0.0, NS_MAX] => ns block,
        /// Delivering a signal to a running process and returning from its
        /// handler (the NI clock's interrupt makes the library run in one:
        /// `nic.clock_period_us`), on top of `irq_entry_ns`.
        #[serde(default)]
        pub signal_ns: f64 [0.0, NS_MAX] => ns signal,
        pub sleep_enabled: bool,
        pub idle_before_sleep_ns: f64 [0.0, NS_MAX] => ns idle_before_sleep,
        pub sleep_exit_ns: f64 [0.0, NS_MAX] => ns sleep_exit,
        /// I/OAT-like copy engine: bandwidth, CPU cost to submit one copy, and
        /// the latency from the end of a copy to its completion being seen.
        pub ioat_MBps: f64 [1.0, 1e7] => MBps ioat_bytes_per_s,
        pub ioat_submit_ns: f64 [0.0, NS_MAX] => ns ioat_submit,
        pub ioat_completion_ns: f64 [0.0, NS_MAX] => ns ioat_completion,
        /// The kernel's periodic tick on each busy core (`[host.tick]`, [`super::TickCfg`]).
        #[serde(default)]
        pub tick: super::TickCfg,
    }
    /// The host's kernel, driver and copy-engine costs (`[host]`).
    pub struct HostTimes;
}

cost_table! {
    /// The cache model: one L2 per die, its capacity, line transfers and the
    /// lines the receive path touches (`host/cache.rs`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(non_snake_case)]
    pub struct CacheCfg in "cache" as c {
        pub line_bytes: u32 [8, 4096] => count line_bytes,
        /// Capacity of the cache the cores of one die share, KiB (at least
        /// one line).
        pub l2_kib: u32 [c.line_bytes.div_ceil(1024), 1 << 20],
        /// Capacity of one core's own L1 data cache, KiB (at least one
        /// line).
        pub l1d_kib: u32 [c.line_bytes.div_ceil(1024), 1 << 20],
        /// Capacity of one core's own L1 instruction cache, KiB; 0: the
        /// paths' code is taken to stay in it, not fetched
        /// (`host/cache/code.rs`, read only with `path_footprints`).
        #[serde(default, skip_serializing_if = "is_zero_u32")]
        pub l1i_kib: u32 [0, 1 << 20],
        /// Ways of the L1 instruction cache (its sets: `l1i_kib` over
        /// `line_bytes` over the ways).
        #[serde(default, skip_serializing_if = "is_zero_u32")]
        pub l1i_ways: u32 [0, 1024],
        /// Demand misses per 4 KB page of a sequential copy whose lines are not
        /// in the cache, before the hardware prefetcher runs ahead of it.
        pub prefetch_misses_per_page: u32 [0, 1024] => count prefetch_misses_per_page,
        /// Cost of a line transfer between dies of one socket.
        pub same_socket_ns: f64 [0.0, 1e6] => ns same_socket,
        /// Cost of a line transfer between sockets.
        pub other_socket_ns: f64 [0.0, 1e6] => ns other_socket,
        /// Cost of a line fetched from memory (e.g. written by a DMA).
        pub memory_ns: f64 [0.0, 1e6] => ns memory,
        pub copy_hot_MBps: f64 [1.0, 1e7] => MBps copy_hot_bytes_per_s,
        pub copy_cold_MBps: f64 [1.0, 1e7] => MBps copy_cold_bytes_per_s,
        pub endpoint_lines: u32 [0, 1024] => count endpoint_lines,
        pub event_lines: u32 [0, 1024] => count event_lines,
        pub napi_lines: u32 [0, 1024] => count napi_lines,
        pub tx_lines: u32 [0, 1024] => count tx_lines,
        /// Extra line transfers a touch of the send-path state pays when a
        /// core of another die is working on it at that moment (the send path
        /// and transmit-completion reaping running concurrently).
        #[serde(default)]
        pub tx_contention_lines: u32 [0, 1024] => count tx_contention_lines,
        /// Lines a medium fragment's send writes and its skb destructor, on
        /// the core that frees it, writes again (the deferred event, the
        /// send-queue page's `struct page`, the endpoint's refcount), read
        /// only with `host.tx_softirq`.
        #[serde(default)]
        pub frag_dtor_lines: u32 [0, 1024] => count frag_dtor_lines,
        /// Lines of a pull handle the handler updates per pull reply.
        pub pull_lines: u32 [0, 1024] => count pull_lines,
        /// Line misses one core keeps in flight at once (its L1 data
        /// cache's fill buffers): a path's independent lines, those of one
        /// step of its dependency chain (`host/cache/footprint.rs`),
        /// overlap up to this many; 0 or 1 prices every line after the
        /// one before.
        #[serde(default)]
        pub fill_buffers: u32 [0, 64] => count fill_buffers,
        /// Lines the NIC wrote by DMA that the driver reads per received frame
        /// besides its payload (receive completion entry, frame headers).
        pub rx_dma_lines: u32 [0, 1024] => count rx_dma_lines,
        /// Lines of a die's private kernel state (skb, per-CPU driver and
        /// socket-buffer state) touched per frame received, sent or reaped.
        pub kernel_private_lines: u32 [0, 1024] => count kernel_private_lines,
        /// Lines of a process's private library and MPI state (requests,
        /// matching queues, partner state) touched per message sent or event
        /// consumed.
        pub user_private_lines: u32 [0, 1024] => count user_private_lines,
        /// Whether the kernel's and the library's paths touch the lines of
        /// their footprint (written, DMA-written, the core's own: `host/cache/footprint.rs`).
        #[serde(default, skip_serializing_if = "<&bool as std::ops::Not>::not")]
        pub path_footprints: bool,
        /// Whether lines the NIC's transmit DMA read stay valid (Shared) for the next write (footprint.rs).
        #[serde(default, skip_serializing_if = "<&bool as std::ops::Not>::not")]
        pub tx_dma_read_shares: bool,
    }
    /// Cache-line transfer costs, copy rates, line geometry and the lines each stage touches (`[cache]`).
    pub struct CacheTimes;
}

cost_table! {
    /// User-space library (Open-MX) and MPI layer costs, protocol timers.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct LibraryCfg in "library" as b {
        pub send_ns: f64 [0.0, NS_MAX] => ns send,
        pub event_ns: f64 [0.0, NS_MAX] => ns event,
        /// The library's work per FRAG_DONE event it consumes (a medium
        /// fragment's send completed by the driver), read only with
        /// `host.tx_softirq`.
        #[serde(default)]
        pub frag_done_ns: f64 [0.0, NS_MAX] => ns frag_done,
        pub post_recv_ns: f64 [0.0, NS_MAX] => ns post_recv,
        /// Extra library cost of a small send (33..=128 B in Open-MX) over a
        /// tiny one: `omx_isend` mallocs a buffer and copies the data into it
        /// for retransmission, freed at the ack (libopen-mx `omx_send.c`); tiny
        /// data travels inside the ioctl argument. Not paid by native MX.
        #[serde(default)]
        pub small_send_ns: f64 [0.0, NS_MAX] => ns small_send,
        pub mpi_send_ns: f64 [0.0, NS_MAX] => ns mpi_send,
        pub mpi_recv_ns: f64 [0.0, NS_MAX] => ns mpi_recv,
        pub pull_setup_ns: f64 [0.0, NS_MAX] => ns pull_setup,
        pub ack_after: u32 [1, 1024] => count ack_after,
        /// Unacknowledged frames allowed per peer before sends wait for acks.
        pub send_window_frames: u32 [1, 1 << 20] => count send_window_frames,
        /// Large receives a process pulls at once; later ones wait for one to
        /// finish.
        pub max_pulls: u32 [1, 1 << 16] => count max_pulls,
        pub delayed_ack_us: f64 [1.0, 1e7] => us delayed_ack,
        pub resend_us: f64 [10.0, 1e8] => us resend,
        pub pull_timeout_us: f64 [10.0, 1e8] => us pull_timeout,
        /// How this Open-MX build cuts messages into frames: "open-mx-1.0"
        /// (the default), "open-mx-0.9" or "mx" ([`crate::wire::WireMode`]).
        #[serde(default)]
        pub wire: crate::wire::WireMode,
        /// What a pull asks for again after a loss (the timeout, or a later
        /// block completing first): "missing-tail" (the default) or
        /// "whole-block", Open-MX 1.0.901's ([`crate::config::PullRerequest`]).
        #[serde(default, skip_serializing_if = "is_default")]
        pub pull_rerequest: crate::config::PullRerequest,
        /// CPU time to pin (and later unpin) one 4 KiB page of a large
        /// message's region, paid by the sender before its rendezvous and by
        /// the receiver before its pull, on top of `pull_setup_ns` (Open-MX
        /// registers each region synchronously, with no registration cache
        /// natively). Default 0.
        #[serde(default)]
        pub pin_page_ns: f64 [0.0, NS_MAX] => ns pin_page,
        /// Which of Open MPI's MX paths carries an MPI message: "mtl" (the
        /// default: one MX message per MPI message) or "btl" (the `ob1`
        /// PML's eager send and RDMA rendezvous over the MX BTL,
        /// [`crate::config::MpiPath`]).
        #[serde(default, skip_serializing_if = "is_default")]
        pub mpi_path: crate::config::MpiPath,
        /// The MX BTL's eager limit in bytes, ob1's header included
        /// (`btl_eager_limit`): with `mpi_path = "btl"`, an MPI message
        /// whose data and the largest ob1 header (72 bytes) fit in it is
        /// sent eagerly, a larger one by rendezvous. Read only with "btl".
        #[serde(default)]
        pub btl_eager_limit: u32 [0, 1 << 24] => count btl_eager_limit,
    }
    /// The library's and the MPI layer's costs, its protocol timers and limits (`[library]`).
    pub struct LibraryTimes;
}

/// The preset's times and rates as the simulator charges them, table by
/// table: converted once, when the scenario is validated (each key's unit
/// is declared on its line of the table: `cost_table!`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    pub link: LinkTimes,
    pub nic: NicTimes,
    pub host: HostTimes,
    pub cache: CacheTimes,
    pub library: LibraryTimes,
}

impl Times {
    /// The times of a validated platform.
    pub fn of(p: &Platform) -> Self {
        Times {
            link: LinkTimes::of(&p.link),
            nic: NicTimes::of(&p.nic),
            host: HostTimes::of(&p.host),
            cache: CacheTimes::of(&p.cache),
            library: LibraryTimes::of(&p.library),
        }
    }
}

/// The most hosts a platform may have (`topology.hosts`): the size the
/// simulator is tested and measured at (runs of a thousand ranks, one per
/// host; `nicsim bench`).
pub const MAX_HOSTS: u32 = 1024;

impl Platform {
    /// Parses a preset TOML text (no validation).
    /// A LANai platform's derived keys are filled in by loading it
    /// (`load_platform`, `config::lanai_derive`), not here.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| toml_error("preset", e))
    }

    /// Checks every value against its allowed range; errors name the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        t.check()?;
        let cores = t.sockets * t.dies_per_socket * t.cores_per_die;
        check_u("topology (sockets*dies_per_socket*cores_per_die)", cores as u64, 1, 256)?;
        let dies = t.sockets * t.dies_per_socket;
        check_u("topology (sockets*dies_per_socket)", dies as u64, 1, 64)?;
        self.link.check()?;
        if let Some(g) = &self.grid {
            g.validate()?;
            if g.hosts != t.hosts {
                return Err(ConfigError::range("topology.hosts", t.hosts, &format!("grid.hosts = {}", g.hosts)));
            }
            if !self.link.cut_through {
                // The grid routes cut-through only (`crate::net::grid`).
                return Err(ConfigError::range("link.cut_through", false, "true with a grid"));
            }
        }
        self.nic.check()?;
        self.host.check().and_then(|()| self.host.tick.check())?;
        self.cache.check()?;
        self.library.check()?;
        self.nas.check()?;
        if let Some(e) = &self.emo {
            e.check()?;
            for (i, l) in e.layer.iter().enumerate() {
                check_f(&format!("emo.layer[{i}].cycles"), l.cycles, 0.0, 1e12)?;
                check_f(&format!("emo.layer[{i}].latency_ns"), l.latency_ns, 0.0, 1e12)?;
                check_f(&format!("emo.layer[{i}].overhead_cycles"), l.overhead_cycles, 0.0, 1e12)?;
            }
        }
        // The other optional tables' own ranges (the bus's `[pci]`, a LANai
        // NI's `[lanai]` and `[lci]`); which platforms have them and how they
        // fit the other tables: `config::lanai_derive::validate`.
        self.pci.as_ref().map_or(Ok(()), |b| b.validate())?;
        self.lanai.as_ref().map_or(Ok(()), |n| n.check())?;
        self.lci.as_ref().map_or(Ok(()), |h| h.check())?;
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

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// The longest watchdog interval, µs: a second, far beyond the study's
/// useful range ("a large range of delays works well", \[LCI] §5.1, Figure 7).
pub const WATCHDOG_US_MAX: f64 = 1e6;

/// The longest NI clock period, µs: a second, beyond the study's range
/// (\[LCI] §5.2, Figure 8: "performance degrades when the clock period is
/// larger than" a number of milliseconds).
pub const CLOCK_PERIOD_US_MAX: f64 = 1e6;

/// `nic.rx_delivery`: how the NIC lays a received frame into host memory
/// and where the driver (or a busy-polling process) looks for it
/// (`crate::nic::delivery`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RxDelivery {
    /// `ring` (default): myri10ge's: the frame into a posted buffer, then a
    /// completion entry into the receive-done ring, the flag the poller
    /// reads (two DMA writes; the entry's line and the header's line).
    #[default]
    Ring,
    /// `shifted`: \[LCI] §3.2 packet shifting: payload, headers and a
    /// status word flush against the end of the buffer in one DMA write;
    /// the poller reads one line at a fixed offset.
    Shifted,
}

impl fmt::Display for RxDelivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RxDelivery::Ring => "ring",
            RxDelivery::Shifted => "shifted",
        })
    }
}

/// Where the driver reaps transmit completions (`host.tx_reap`,
/// `platform.nic.tx_reap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TxReap {
    /// `napi`: in the NAPI poll, after the received frames, under the one interrupt
    /// claim (mlx5; the `modern` preset's `nic.tx_reap`). The default.
    #[default]
    Napi,
    /// `hard-irq`: in the hard handler, as myri10ge does (`myri10ge_intr` calls
    /// `myri10ge_tx_done`, then re-arms `irq_claim + 1`); the receive claim
    /// is re-armed only by `napi_complete` (`myri10ge_poll`). Transmit
    /// completions can then interrupt while the poll runs.
    HardIrq,
}

#[cfg(test)]
mod tests;
