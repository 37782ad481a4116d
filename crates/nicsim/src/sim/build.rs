//! Building the world of a validated scenario: the scenario's costs
//! gathered for the hot path ([`Costs`]), the hosts with their cores, NIC
//! queues and steering, and the processes of the workload.
//!
//! This module owns construction only. It does not run anything: the first
//! dispatch of every core is the only work it starts, and what the stages do
//! afterwards lives in their own files.

use super::clock::Signals;
use super::echo::ECHO_HOST;
use super::NO_RANK;
use super::{Core, Costs, Echo, Ev, Flood, Frames, HostState, PolicyFactory, ProcSet, Pulls, Ranks, Run, Wire, World};
use crate::config::{BcastForwarding, Forwarding, LibraryTimes, Scenario, Workload};
use crate::config::{RxDelivery, FLAG_BYTES};
use crate::engine::{EventQueue, SimRng};
use crate::host::cache::code::CodeLines;
use crate::host::{CacheCosts, CacheStats, HostLines, Sleep, Topology, TxBacklog, TxPath};
use crate::kernel::{NetTx, RxPath};
use crate::lci::{Deliveries, Dsm};
use crate::library::driver::{Drive, Driver};
use crate::library::lci::Hosted;
use crate::library::Proc;
use crate::net::Network;
use crate::nic::delivery::Strategy;
use crate::nic::multicast::{ForwardTable, Tree};
use crate::nic::steering::Steering;
use crate::nic::watchdog::{Raises, Watchdog};
use crate::nic::{Nic, QueueNapi, RxQueue};
use crate::proto::{Endpoint, Params};
use crate::time::{Duration, Instant};
use crate::wire::ENDPOINTS;
use crate::workload::Program;

/// Header bytes of the longest Open-MX frame header (Ethernet + Open-MX,
/// a MEDIUM fragment's): what the driver reads besides the payload.
const RX_HEADER_BYTES: u32 = crate::wire::frag::MEDIUM_HEADER_LEN as u32;

/// The per-frame plans of `nic.rx_delivery` (`crate::nic::delivery`) for an
/// Open-MX frame in a page buffer (its status word the page's last bytes)
/// with `line`-byte cache lines: the DMA writes per frame and the lines the
/// poller reads to see a frame, under myri10ge's ring and under `delivery`.
pub(crate) fn rx_delivery_plan(delivery: RxDelivery, line: u32) -> [(u32, u32); 2] {
    let buffer = crate::nic::BIG_BUFFER_BYTES as u32;
    [RxDelivery::Ring, delivery].map(|d| {
        let plan = Strategy::of_delivery(d).plan(RX_HEADER_BYTES, 0, buffer);
        (plan.dma_count(), plan.poll_lines(RX_HEADER_BYTES, line))
    })
}

/// Linux NAPI weight: 64 packets per poll (net/core/dev.c, NAPI_POLL_WEIGHT).
pub const NAPI_BUDGET: u16 = 64;

/// The NAPI settings of receive queue `q` of a host when `[[host.napi]]`
/// sets any queue apart (every queue then carries its own, so that the
/// host-wide `Costs` values serve none of them); `None` otherwise.
fn queue_napi(s: &Scenario, q: usize) -> Option<QueueNapi> {
    (!s.napi_queues.is_empty()).then(|| {
        let k = s.napi_of(q);
        QueueNapi {
            defer_hard_irqs: k.defer_hard_irqs,
            gro_flush: k.gro_flush_timeout,
            irq_suspend: k.irq_suspend_timeout,
            threaded: k.threaded,
        }
    })
}

impl World {
    /// Builds the world of a validated scenario.
    pub fn new(s: &Scenario) -> Self {
        Self::with_policy(s, None)
    }

    /// Builds the world of a validated scenario; `policy`, if given, makes
    /// the coalescing policy of every receive queue instead of the
    /// scenario's strategy (a user-defined policy, e.g. from Python). The
    /// scenario's capture (`pcap`) is not written: [`World::build`] opens
    /// it.
    pub fn with_policy(s: &Scenario, policy: Option<PolicyFactory<'_>>) -> Self {
        Self::assemble(s, policy, None)
    }

    /// Builds the world as [`World::with_policy`] does, recording its
    /// timeline from the start if `trace` is given (`sim::trace`), and
    /// opens the scenario's capture file if it names one (`pcap_sink`:
    /// the frames are written as the run goes). Fails, before the world is
    /// made, if that file cannot be created (the error names it).
    pub fn build(
        s: &Scenario,
        policy: Option<PolicyFactory<'_>>,
        trace: Option<super::TraceCfg>,
    ) -> Result<Self, crate::SimError> {
        let pcap = s.pcap.as_deref().map(super::pcap_sink::PcapSink::create).transpose()?;
        let mut w = Self::assemble(s, policy, trace);
        w.wire.pcap = pcap.map(Box::new);
        Ok(w)
    }

    /// The world of `s`, with its timeline if `trace` is given and no
    /// capture.
    fn assemble(s: &Scenario, mut policy: Option<PolicyFactory<'_>>, trace: Option<super::TraceCfg>) -> Self {
        let p = &s.platform;
        let topo = Topology::new(&p.topology);
        let hosts_n = p.topology.hosts as usize;
        let cores = topo.cores();
        let t = &s.times;
        let lib = if s.mpi {
            t.library
        } else {
            LibraryTimes { mpi_send: Duration::ZERO, mpi_recv: Duration::ZERO, ..t.library }
        };
        let c = Costs {
            host: t.host,
            lib,
            nic: t.nic,
            cache: t.cache,
            cc: CacheCosts::new(&s.times.cache).for_topology(&topo),
            sleep: Sleep { on: s.sleep && !s.soaker, after: t.host.idle_before_sleep, exit: t.host.sleep_exit },
            proto: Params {
                ack_after: lib.ack_after,
                delayed_ack: lib.delayed_ack,
                resend: lib.resend,
                send_window_frames: lib.send_window_frames,
            },
            napi_budget: NAPI_BUDGET,
            tx_done_irq: p.nic.tx_done_interrupts,
            tx_softirq: s.tx_softirq && p.nic.tx_done_interrupts && !s.native_mx,
            pull_dup_check: p.host.pull_dup_check,
            wait: s.wait,
            layout: s.layout,
            rndv_threshold: s.rndv_threshold as u64,
            marked: s.marked,
            misorder: s.misorder_degree,
            defer_hard_irqs: s.napi.defer_hard_irqs,
            gro_flush: s.napi.gro_flush_timeout,
            // Read as the host's where a queue has no setting of its own,
            // and (non-zero) as "some queue suspends its interrupt".
            irq_suspend: s
                .napi_queues
                .iter()
                .map(|(_, k)| k.irq_suspend_timeout)
                .fold(s.napi.irq_suspend_timeout, Duration::max),
            busy_poll: s.napi.busy_poll,
            busy_poll_budget: s.napi.busy_poll_budget,
            napi_threaded: s.napi.threaded,
            ioat: s.ioat,
            dca: s.dca,
            native: s.native_mx,
            rx_lines_saved: {
                let [(_, ring), (_, ours)] = rx_delivery_plan(s.ni.rx_delivery, p.cache.line_bytes);
                ring - ours
            },
            pull_rerequest: p.library.pull_rerequest,
            // Native Open-MX programs (`s.mpi` false) call the MX API
            // themselves: no PML.
            mpi_path: if s.mpi { p.library.mpi_path } else { crate::config::MpiPath::Mtl },
        };
        // The firmware's per-frame work for the policy and the steering (a
        // policy given from outside runs on the host: no firmware work).
        let stream = policy.is_none() && matches!(s.coalesce, crate::config::CoalesceSpec::Stream(_));
        let multiqueue = s.steering == crate::config::SteeringKind::MultiQueue;
        let fw_rx_extra = if stream { t.nic.fw_rx_stream } else { Duration::ZERO }
            + if multiqueue { t.nic.fw_rx_multiqueue } else { Duration::ZERO };
        // One L2 per die, `cache.l2_kib` each.
        let dies = (p.topology.sockets * p.topology.dies_per_socket) as usize;
        let l2_lines = p.cache.l2_kib as u64 * 1024 / p.cache.line_bytes as u64;
        // And one L1 data cache per core, `cache.l1d_kib` each.
        let l1_lines = p.cache.l1d_kib * 1024 / p.cache.line_bytes;
        // And, with the paths' footprints, one L1 instruction cache per core
        // through which their code is fetched (`cache.l1i_kib`; 0: none).
        let l1i = |cores: usize, dies: usize| {
            let lines = if p.cache.path_footprints { p.cache.l1i_kib * 1024 / p.cache.line_bytes } else { 0 };
            CodeLines::new(cores, dies, lines, p.cache.l1i_ways)
        };
        // On the \[LCI] stack each host holds its library and its NIC the
        // LANai firmware (on the NIC's bus, the host's PCI bus), and the run
        // the stack's part of the program (`crate::lci::build`).
        let (lci_run, lci_parts) = match s.lci.as_deref().map(|l| crate::lci::build(s, l)) {
            Some((run, parts)) => (Some(Box::new(run)), parts),
            None => (None, Vec::new()),
        };
        let mut lci_parts = lci_parts.into_iter();
        let mut hosts = Vec::with_capacity(hosts_n);
        for h in 0..hosts_n {
            let (lci, lanai) = lci_parts.next().unzip();
            let steering = Steering::new(s.steering, cores);
            let steering_queues = steering.queues();
            // `nic.host0` sets host 0's coalescing apart (an absolute timeout:
            // no stream firmware work).
            let (spec, fw_rx_extra) = match (&s.host0_coalesce, h) {
                (Some(spec), 0) => (spec, if multiqueue { t.nic.fw_rx_multiqueue } else { Duration::ZERO }),
                _ => (&s.coalesce, fw_rx_extra),
            };
            let queues = (0..steering.queues())
                .map(|qi| {
                    let policy = match policy.as_mut() {
                        Some(make) => make(),
                        None => spec.build(),
                    };
                    // Its fetch of the host's counter is the NIC's (`Nic::fetch_host_words`).
                    let watchdog = s.queue_watchdog().map(|d| Box::new(Watchdog::new(d, Raises::Held)));
                    RxQueue::new(policy, p.nic.ring_slots as usize, p.nic.fill_thresh)
                        .with_split_claims(s.tx_reap == crate::config::TxReap::HardIrq)
                        .with_watchdog(watchdog)
                        .with_napi(queue_napi(s, qi))
                })
                .collect();
            hosts.push(HostState {
                cores: (0..cores).map(|_| Core::new(16)).collect(),
                nic: {
                    let mut nic = Nic::new(&p.nic, &s.times.nic, queues, fw_rx_extra, p.pci.as_ref());
                    // Packet shifting writes the status word with the frame.
                    nic.rx_extra_bytes = if s.ni.rx_delivery == RxDelivery::Shifted { FLAG_BYTES } else { 0 };
                    // Flow control: the FIFO of the stopped link, allocated to its bound.
                    nic.flow = s.ni.flow_control.map(|n| {
                        let f = crate::nic::flow::FlowControl::new(n, s.ni.pause_to_sender, hosts_n);
                        Box::new(f.with_hold_limit(s.ni.flow_control_hold))
                    });
                    nic.origin = h as u32;
                    if let Some(ni) = lanai {
                        nic.run_lanai(ni);
                        nic.origin = super::lci_stack::ni_origin(h as u32);
                    }
                    nic
                },
                steering,
                procs: Vec::new(),
                eps: vec![None; ENDPOINTS],
                // Native MX's NIC serves its own send queue: no qdisc.
                txq: TxBacklog::new(if p.nic.tx_queue_len == 0 || s.native_mx {
                    0
                } else {
                    (p.nic.tx_queue_len + p.nic.tx_ring_frames) as usize
                }),
                wakes_remote: 0,
                mem: super::HostMem {
                    cache: CacheStats::new(dies, l2_lines, l1_lines),
                    tx: TxPath::default(),
                    lines: HostLines::new(cores as usize, steering_queues, p.cache.path_footprints)
                        .sharing_tx_reads(p.cache.tx_dma_read_shares)
                        .with_code(l1i(cores as usize, dies)),
                },
                rx: RxPath::new(steering_queues),
                net_tx: NetTx::default(),
                kernel_time: Duration::ZERO,
                app_time: Duration::ZERO,
                spin_time: Duration::ZERO,
                ioat_free: Instant::ZERO,
                pollers: vec![ProcSet::default(); steering_queues],
                echo: None,
                lci: lci.map(Box::new),
            });
        }
        let trace = trace.map(|cfg| {
            let shape = hosts.iter().map(|h| (h.cores.len() as u16, h.nic.queues.len() as u16)).collect();
            Box::new(super::Tracer::new(cfg, shape, topo.cores_per_die, t.host.idle_before_sleep))
        });
        let mut w = World {
            q: EventQueue::new(),
            hosts,
            env: super::Env { c, topo, ranks: Ranks::new(hosts_n), clock: s.process_clock().is_some() },
            wire: Wire {
                net: Network::new(&p.link, &s.times.link, hosts_n, p.grid.as_ref()),
                rng: SimRng::new(s.seed),
                loss: s.loss,
                reorder: s.reorder,
                jitter: s.jitter,
                direct_switch: hosts_n <= 2 && s.loss == 0.0 && s.reorder == 0.0 && s.jitter.is_zero(),
                pcap: None,
            },
            frames: Frames::with_capacity(1024),
            pulls: Pulls::default(),
            run: Run::new(s.workload),
            programs_left: 0,
            replay: None,
            trace,
            clock: s.ni.clock.map(|period| Box::new(super::clock::Clock::new(period, hosts_n, clock_signals(s)))),
            lib_out: Vec::new(),
            ticks: None,
        };
        w.run.lci = lci_run;
        let core = s.binding.unwrap_or(0) as u16;
        // The program of rank `r` of `n` (`config::program`).
        let program = |r: u32, n: u32| s.workload.program(r, n, s.seed).expect("a workload of programs");
        match s.workload {
            // The hosts run the LCI stack's library and its program, not
            // processes of this world's library (`lci_stack`). Its NIs send
            // on the world's network, the platform's grid (every
            // LCI-family platform has one).
            _ if s.lci.is_some() => {
                debug_assert!(w.wire.net.grid.is_some());
                w.set_forwarding(forward_table(s, p.topology.hosts));
                w.spawn_lci(&s.workload, s.seed);
                w.start_lci();
            }
            Workload::PingPong { .. } | Workload::Stream { .. } | Workload::Uniband { .. } => {
                for r in 0..2 {
                    w.spawn(r as u16, core, 0, program(r, 2));
                }
            }
            Workload::Echo { at, .. } => {
                // The client is rank 0 of a ping-pong; rank 1 is the echo
                // server on host 1, which has no process.
                w.spawn(0, core, 0, program(0, 2));
                let e = p.emo_cfg();
                let copy_ns_per_byte = e.nic_copy_cycles_per_byte * 1e3 / e.nic_clock_mhz;
                w.hosts[ECHO_HOST].echo = Some(Echo::new(at, copy_ns_per_byte));
                w.env.ranks.add(ECHO_HOST as u16, 0);
            }
            Workload::NasIs { per_host, .. }
            | Workload::NasKernel { per_host, .. }
            | Workload::Alltoall { per_host, .. }
            | Workload::Exchange { per_host, .. }
            | Workload::Bcast { per_host, .. }
            | Workload::FftAlltoall { per_host, .. }
            | Workload::Asp { per_host, .. }
            | Workload::Qr { per_host, .. } => {
                // Block placement: ranks 0..per_host on host 0, one per core.
                let n = w.hosts.len() as u32 * per_host;
                for r in 0..n {
                    let local = (r % per_host) as u16;
                    w.spawn((r / per_host) as u16, local, local as u8, program(r, n));
                }
                w.set_forwarding(forward_table(s, n));
            }
            Workload::Flood { packets, gap, packet_bytes } => {
                w.run.flood = Some(Flood::new(packets, gap, packet_bytes));
                w.q.push(Instant::ZERO, Flood::origin(), Ev::FloodTick);
            }
            // The frames come with `World::start_replay` (`replay::run_replay`).
            Workload::Replay => {}
            // Programs of the LCI stack only (`config::stack`): the first arm.
            Workload::BcastBench { .. } | Workload::Dsm { .. } => {}
        }
        // Every NIC's clock runs from the start (\[LCI] §5.2: periodic).
        w.start_clocks();
        let n = w.env.ranks.len();
        for hs in &mut w.hosts {
            for pr in &mut hs.procs {
                pr.set_protocol(Endpoint::new(w.env.c.proto, n));
            }
            if w.env.c.tx_softirq {
                hs.net_tx = NetTx::new(hs.nic.queues.len(), hs.cores.len(), hs.procs.len());
            }
        }
        for h in 0..w.hosts.len() {
            for core in 0..w.hosts[h].cores.len() {
                w.dispatch(h, core);
            }
        }
        // The cores whose processes are placed tick from the start.
        w.start_ticks(&p.host.tick, s.seed);
        w
    }

    /// Every NIC holds the forwarding table of the run's tree, if its
    /// firmware forwards (`forward_table`).
    fn set_forwarding(&mut self, table: Option<ForwardTable>) {
        for hs in &mut self.hosts {
            hs.nic.forwarding = table;
        }
    }

    /// Places the \[LCI] stack's program, whose hosts hold their parts
    /// (`assemble`): its ranks in the world's rank map and
    /// each host's process in its library ([`lci_processes`], with how the
    /// libraries run them and, for the broadcast benchmark, its wait
    /// across hosts in the run), or the whole-job DSM in the run. Each
    /// process not finished from the start is a program left until it
    /// finishes; the DSM is one until it is done (`lci_stack`'s
    /// `lci_settle`).
    fn spawn_lci(&mut self, workload: &Workload, seed: u64) {
        let hosts = self.hosts.len() as u32;
        let run = self.run.lci.as_deref_mut().expect("the hosts hold the LCI stack's parts");
        match lci_processes(workload, hosts, seed, &mut self.env.ranks) {
            Some((drive, procs)) => {
                let counted = matches!(workload, Workload::BcastBench { .. });
                (run.drive, run.deliveries) = (Some(drive), counted.then(Deliveries::default));
                for (hs, p) in self.hosts.iter_mut().zip(procs) {
                    self.programs_left += u32::from(!p.finished());
                    hs.lib().host_process(Hosted::new(p, drive, counted));
                }
            }
            None => {
                let Workload::Dsm { mix, procs, operations } = *workload else { unreachable!("{workload:?}") };
                run.whole = Some(Box::new(Dsm::new(mix, procs, operations, seed)));
                self.programs_left = 1;
            }
        }
    }

    pub(super) fn spawn(&mut self, host: u16, core: u16, ep: u8, program: Program) {
        let hosts = self.hosts.len();
        let rank = self.env.ranks.add(host, ep);
        let hs = &mut self.hosts[host as usize];
        let idx = hs.procs.len() as u16;
        // The protocol state is resized to the rank count by `new`.
        hs.procs.push(Proc::new(rank, core, ep, program, Endpoint::new(self.env.c.proto, hosts)));
        hs.eps[ep as usize] = Some(idx);
        hs.cores[core as usize].bind(idx);
        if idx == 0 {
            // The host's first process is the one its thread counts measure.
            hs.mem.cache.watch(core);
        }
        self.programs_left += 1;
    }
}

/// The \[LCI] stack's ranks of workload `w` on `hosts` hosts, given their
/// places in the world's rank map `ranks` as [`World::spawn`] gives a
/// process its place (one rank per host, endpoint 0: the ping-pong's and
/// the stream's two on the workload's `pair`, the FFT's on hosts
/// `0..ranks`, the DSM's on hosts `0..procs`, the others on every host),
/// and, for a program of one process per host, each host's process
/// (rank `r`'s program, `Workload::program`; a host without a rank holds
/// an idle one) for its library to hold, with how the library runs them;
/// `None` for the whole-job DSM (`crate::lci::dsm`).
pub(crate) fn lci_processes(w: &Workload, hosts: u32, seed: u64, ranks: &mut Ranks) -> Option<(Drive, Vec<Driver>)> {
    let (n, drive) = match *w {
        Workload::Asp { .. } | Workload::Qr { .. } | Workload::BcastBench { .. } => (hosts, Some(Drive::Upcall)),
        Workload::FftAlltoall { ranks, .. } => (ranks, Some(Drive::Idle)),
        Workload::Stream { .. } | Workload::PingPong { .. } => (2, Some(Drive::Upcall)),
        Workload::Dsm { procs, .. } => (procs, None),
        // `config::workload` validates no other for the LCI stack.
        _ => unreachable!("not a program of the LCI stack: {w:?}"),
    };
    let on = match *w {
        Workload::Stream { pair, .. } | Workload::PingPong { pair, .. } => pair.to_vec(),
        _ => (0..n).collect(),
    };
    for h in on {
        ranks.add(h as u16, 0);
    }
    let procs = (0..hosts as usize).map(|h| match ranks.at(h, 0) {
        NO_RANK => Driver::new(Program::Idle),
        // ASP's and QR's broadcasts are the library's multicasts
        // (`Op::Mcast`), whatever forwards them (`nic.forwarding`).
        r => Driver::new(w.program(r as u32, n, seed).expect("a program of crate::workload")),
    });
    drive.map(|d| (d, procs.collect()))
}

/// Whom the NI clock's interrupt signals (`nic.clock_period_us`,
/// `Scenario::ni`'s for both stacks): the \[LCI] library on its stack,
/// else the Open-MX library's processes.
fn clock_signals(s: &Scenario) -> Signals {
    if s.lci.is_some() {
        Signals::Library
    } else {
        Signals::Processes
    }
}

/// The NICs' multicast forwarding table of a scenario whose tree spans
/// `ranks`, when their firmware forwards (`ni` forwarding): the Open-MX
/// NIC's for a multicast workload's tree (`sim/mcast.rs`), the LANai
/// firmware's for the LCI stack's fan-out tree (`nic.forwarding`,
/// `nic.fanout`; its ranks are the hosts).
fn forward_table(s: &Scenario, ranks: u32) -> Option<ForwardTable> {
    let tree = match (&s.lci, s.workload) {
        (Some(l), _) => (l.forwarding == Forwarding::Ni).then_some(Tree::Kary(l.fanout)),
        (
            None,
            Workload::Bcast { tree, forwarding: BcastForwarding::Ni, .. }
            | Workload::Asp { tree, forwarding: BcastForwarding::Ni, .. }
            | Workload::Qr { tree, forwarding: BcastForwarding::Ni, .. },
        ) => Some(tree),
        _ => None,
    };
    tree.map(|tree| ForwardTable { tree, ranks })
}
