//! `[workload]`: what the simulated processes run. `WorkloadOpts` mirrors
//! the TOML table, one for every stack (the LCI stack's own keys beside
//! the shared ones); [`workload`] validates it into a [`Workload`] (called
//! by [`super::Scenario::from_toml`], which knows the platform it runs
//! on), and `super::lci_workload` into the LCI stack's programs.

use super::{check_f, check_read, check_u, int_or, missing, one_of_names, ConfigError, Int, Platform};
use crate::time::Duration;
use crate::tree::Tree;
use serde::{Deserialize, Serialize};

/// The most ranks a run may have: frames, events, the protocol and the
/// multicast tag name a rank in 16 bits, and the last value means "no rank".
pub const MAX_RANKS: u32 = u16::MAX as u32;

/// The workload.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadOpts {
    /// Required: pingpong | stream | uniband | flood | nas-is | nas-cg |
    /// nas-mg | nas-ft | alltoall | exchange | bcast | asp | qr |
    /// fft-alltoall | echo-nic | echo-kernel | dsm (each stack runs the
    /// kinds it offers, `config::Stack::offers`).
    pub kind: Option<WorkloadKind>,
    /// Message size in bytes (0 ..= 2^30; default 0).
    pub size_bytes: Option<Int>,
    /// pingpong, echo-*: timed round trips (default 1000); alltoall,
    /// exchange, bcast: timed repetitions (default 100); nas-is: timed
    /// iterations (default 10). On the LCI stack: pingpong 1000, bcast
    /// the broadcasts sent one at a time (default 20), asp and qr the
    /// matrix's first iterations (default all, a quarter), fft-alltoall 5.
    pub iterations: Option<Int>,
    /// Untimed messages or round trips first (default 100 for pingpong and
    /// echo-*, 10 for alltoall and exchange, 1000 otherwise; 10 on the LCI
    /// stack).
    pub warmup: Option<Int>,
    /// stream, uniband: timed messages (default 20000; the LCI stack's
    /// stream 1000).
    pub messages: Option<Int>,
    /// stream: requests the sender and the receiver keep outstanding;
    /// uniband: messages per window, each window answered by a 1-byte ack
    /// (IMB Uniband). Default 64 for both.
    pub window: Option<Int>,
    /// flood: invalid packets sent (default 20000).
    pub packets: Option<Int>,
    /// flood: gap between packets in ns (default 2000).
    pub gap_ns: Option<f64>,
    /// flood: bytes per packet (default 128).
    pub packet_bytes: Option<Int>,
    /// NAS class: S | A | B (default) | C; nas-cg, nas-mg and nas-ft have B and C only.
    pub class: Option<NasClass>,
    /// nas-*, alltoall, exchange, bcast: processes per host (default: one
    /// per core).
    pub procs_per_host: Option<Int>,
    /// bcast, asp, qr: the spanning tree of each root: binary (default,
    /// \[LCI]'s) | binomial | chain.
    pub tree: Option<Tree>,
    /// bcast, asp, qr: who forwards down the tree: host (default;
    /// point-to-point sends) | ni (the NIC firmware, \[LCI] §4.2; needs
    /// `nic.multicast_forwarding = true`, eager messages of at most
    /// `protocol.rndv_threshold` bytes, forwarded frame by frame, and
    /// `protocol.loss = 0`).
    pub forwarding: Option<BcastForwarding>,
    /// asp: matrix rows = columns, a multiple of the ranks (default 1024:
    /// 4 KB rows of 32-bit distances).
    pub rows: Option<Int>,
    /// qr: matrix columns = rows, a multiple of the ranks (default 512).
    pub cols: Option<Int>,
    /// asp: host cycles per element update of the Floyd-Warshall inner
    /// loop, at `host.clock_ghz` (default 6, \[LCI]'s Pentium Pro estimate
    /// of `presets/lci2000.toml` `lci.asp_elem_cycles`).
    pub elem_cycles: Option<f64>,
    /// qr: host cycles per element of a column norm (default 4, as
    /// `lci.qr_norm_cycles` of `lci2000`).
    pub norm_cycles: Option<f64>,
    /// qr: host cycles per element of the Householder update (default 8,
    /// as `lci.qr_update_cycles` of `lci2000`).
    pub update_cycles: Option<f64>,
    /// fft-alltoall: compute per iteration and rank, us (default: the
    /// FFT's 5 N log2 N / ranks flops at the `nas` table's rate, N the
    /// complex points whose transpose sends `size_bytes` to each rank; on
    /// the LCI stack 65000).
    pub compute_us: Option<f64>,
    /// LCI stack, stream and pingpong: the sending host (default 0).
    pub src: Option<Int>,
    /// LCI stack, stream and pingpong: the receiving host (default 1).
    pub dst: Option<Int>,
    /// LCI stack, bcast: the broadcasting host (default 0).
    pub root: Option<Int>,
    /// LCI stack, bcast: broadcasts sent back to back for the throughput,
    /// after the `iterations` sent one at a time (default 100).
    pub count: Option<Int>,
    /// LCI stack, dsm: the application mix, barnes (default) | fft | radix.
    pub mix: Option<Mix>,
    /// LCI stack, dsm and fft-alltoall: processes, one per host on hosts
    /// 0 .. procs - 1 (default 16).
    pub procs: Option<Int>,
    /// LCI stack, dsm: shared-region operations per process (default 200).
    pub operations: Option<Int>,
}

/// `workload.mix`: the DSM application mixes of the LCI stack (`crate::lci::dsm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mix {
    /// Barnes-Hut: fine-grained, read-mostly (default).
    #[default]
    Barnes,
    /// FFT: coarse-grained transposes.
    Fft,
    /// Radix: all-to-all permutation with write sharing.
    Radix,
}

impl std::fmt::Display for Mix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mix::Barnes => "barnes",
            Mix::Fft => "fft",
            Mix::Radix => "radix",
        })
    }
}

/// `workload.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// omx_perf / IMB PingPong between host 0 and host 1.
    Pingpong,
    /// Unidirectional stream from host 0 to host 1.
    Stream,
    /// IMB Uniband: windows of messages, each answered by a 1-byte ack.
    Uniband,
    /// Invalid-packet flood into host 1.
    Flood,
    /// NAS IS skeleton.
    NasIs,
    /// NAS CG skeleton.
    NasCg,
    /// NAS MG skeleton.
    NasMg,
    /// NAS FT skeleton.
    NasFt,
    /// IMB Alltoall.
    Alltoall,
    /// IMB Exchange: each rank with its two neighbours of a periodic chain.
    Exchange,
    /// A broadcast from rank 0 down a spanning tree, forwarded by the hosts
    /// or by the NICs (\[LCI] §4), each followed by an ack up the tree.
    Bcast,
    /// \[LCI] §4.3 ASP: all-pairs shortest paths, each iteration's row
    /// broadcast by its owner down its own tree.
    Asp,
    /// \[LCI] §4.3 QR factorisation: per iteration a reduce-to-all of the
    /// column norms and the pivot column's broadcast.
    Qr,
    /// \[LCI] §5.2's FFT all-to-all: a transpose overlapped with the
    /// compute, one block sent after each compute chunk.
    FftAlltoall,
    /// \[EMO] echo server in host 1's NIC firmware.
    EchoNic,
    /// \[EMO] echo server in host 1's kernel.
    EchoKernel,
    /// \[LCI] CRL-like DSM request/reply mix: a program of the LCI stack
    /// only, whose requests are answered from its upcalls (`config::stack`).
    Dsm,
}

/// `workload.class`: the NPB problem class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
pub enum NasClass {
    S,
    A,
    #[default]
    B,
    C,
}

/// The workload of a scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Workload {
    /// omx_perf / IMB PingPong between host 0 and host 1.
    PingPong { size: u64, iterations: u64, warmup: u64 },
    /// Unidirectional stream from host 0 to host 1 (receiver-side rate),
    /// `window` sends and receives outstanding on each side.
    Stream { size: u64, messages: u64, warmup: u64, window: u32 },
    /// IMB Uniband from host 0 to host 1: windows of `window` messages, each
    /// answered by a 1-byte ack (receiver-side rate).
    Uniband { size: u64, messages: u64, warmup: u64, window: u32 },
    /// Invalid-packet flood into host 1 (dropped by the receive handler).
    Flood { packets: u64, gap: Duration, packet_bytes: u32 },
    /// NAS IS skeleton: `keys` in total over all ranks, `iterations` timed
    /// (plus one untimed, as NPB does), `per_host` ranks on each host;
    /// compute per iteration and rank `before` and `after` the key exchange
    /// (NPB's work at the rates of `platform.nas`).
    NasIs { keys: u64, iterations: u64, per_host: u32, before: Duration, after: Duration },
    /// NAS CG, MG or FT skeleton (class B or C), `per_host` ranks per host;
    /// `compute` per iteration and rank (NPB's work at the rates of
    /// `platform.nas`).
    NasKernel { kernel: crate::workload::NasKernel, class_c: bool, per_host: u32, compute: Duration },
    /// IMB Alltoall: `size` bytes to every other rank, `iterations` timed
    /// repetitions after `warmup`, `per_host` ranks on each host.
    Alltoall { size: u64, iterations: u64, warmup: u64, per_host: u32 },
    /// IMB Exchange: `size` bytes to each neighbour of a periodic chain of
    /// ranks (rank - 1 and rank + 1, mod the rank count) and from each,
    /// `iterations` timed repetitions after `warmup`, `per_host` ranks on
    /// each host.
    Exchange { size: u64, iterations: u64, warmup: u64, per_host: u32 },
    /// A broadcast of `size` bytes from rank 0 down `tree`, forwarded by
    /// the hosts or the NICs (`forwarding`), then a 0-byte ack from every
    /// rank up the same tree (which paces the repetitions); `iterations`
    /// timed after `warmup`, `per_host` ranks on each host.
    Bcast { size: u64, iterations: u64, warmup: u64, per_host: u32, tree: Tree, forwarding: BcastForwarding },
    /// \[LCI] ASP over a `rows` x `rows` matrix of `rows / ranks` rows per
    /// rank, the first `iterations` iterations: iteration `k` needs row `k`,
    /// which its owner broadcasts down its own `tree` once it has updated
    /// it; every rank then updates its rows (`elem_ps` per element).
    Asp { rows: u32, iterations: u32, per_host: u32, elem_ps: u64, tree: Tree, forwarding: BcastForwarding },
    /// \[LCI] QR of a `cols` x `cols` matrix, columns cyclic over the ranks,
    /// the first `iterations` iterations: column norms (`norm_ps` per
    /// element), a reduce of the maximum up rank 0's tree and its
    /// broadcast back, the Householder vector at the pivot column's owner
    /// and its broadcast down the owner's tree, the update (`update_ps`).
    Qr {
        cols: u32,
        iterations: u32,
        per_host: u32,
        norm_ps: u64,
        update_ps: u64,
        tree: Tree,
        forwarding: BcastForwarding,
    },
    /// \[LCI] FFT all-to-all, `per_host` ranks on each host: per iteration
    /// each rank posts a receive from every other, computes `compute` in
    /// `ranks - 1` chunks (each within +-20 % of its share, seeded) and
    /// sends one `block` after each to the next rank in rotation, then waits
    /// for all; `iterations` timed.
    FftAlltoall { block: u64, iterations: u64, per_host: u32, compute: Duration },
    /// \[EMO] echo: the application on host 0 ping-pongs with an echo server
    /// that runs in host 1's NIC firmware or in host 1's kernel (no copy to
    /// user space). Metrics as for `PingPong`.
    Echo { at: EchoAt, size: u64, iterations: u64, warmup: u64 },
    /// A captured trace replayed into one host's NIC (`sim::run_replay`,
    /// which gives the frames; no scenario file names this kind).
    Replay,
    /// The hosts run the \[LCI] stack and its program, `Scenario::lci`
    /// (`protocol.stack = "lci"`, named or the default of the \[LCI]
    /// study's programs on its hardware, `config::stack`; the scenario's
    /// `workload` table is the stack's).
    LciStack,
}

/// Where the \[EMO] echo server runs on host 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EchoAt {
    /// In the NIC firmware: no DMA to the host, no interrupt.
    Nic,
    /// In the kernel receive handler (bottom half): no copy to user space.
    Kernel,
}

/// The NAS skeletons' rates on `platform`: floating-point operations per
/// second of one core, and the memory bandwidth (bytes per second) of one of
/// `per_host` ranks sharing their host's.
/// Bytes of L2 each of `per_host` ranks has, one rank a core filling the
/// dies in turn: a die's L2 (`cache.l2_kib`) over the ranks on it.
fn l2_share(platform: &Platform, per_host: u32) -> f64 {
    let t = &platform.topology;
    let dies = t.sockets * t.dies_per_socket;
    let on_die = per_host.div_ceil(dies).clamp(1, t.cores_per_die);
    platform.cache.l2_kib as f64 * 1024.0 / on_die as f64
}

fn nas_rates(platform: &Platform, per_host: u32) -> (f64, f64) {
    let nas = &platform.nas;
    (nas.flops_per_cycle * platform.host.clock_ghz * 1e9, nas.mem_MBps * 1e6 / per_host as f64)
}

/// The `[workload]` keys besides `kind` that `kind` reads (`size_bytes` is
/// the message size; the NAS skeletons size their own messages).
fn keys_of(kind: WorkloadKind) -> (&'static str, &'static [&'static str]) {
    use WorkloadKind::*;
    const ROUND_TRIPS: &[&str] = &["size_bytes", "iterations", "warmup"];
    const WINDOWED: &[&str] = &["size_bytes", "messages", "warmup", "window"];
    const COLLECTIVE: &[&str] = &["size_bytes", "iterations", "warmup", "procs_per_host"];
    match kind {
        Pingpong => ("pingpong", ROUND_TRIPS),
        EchoNic => ("echo-nic", ROUND_TRIPS),
        EchoKernel => ("echo-kernel", ROUND_TRIPS),
        Stream | Uniband => (if kind == Stream { "stream" } else { "uniband" }, WINDOWED),
        Flood => ("flood", &["packets", "gap_ns", "packet_bytes"]),
        NasIs => ("nas-is", &["class", "iterations", "procs_per_host"]),
        NasCg => ("nas-cg", &["class", "procs_per_host"]),
        NasMg => ("nas-mg", &["class", "procs_per_host"]),
        NasFt => ("nas-ft", &["class", "procs_per_host"]),
        Alltoall => ("alltoall", COLLECTIVE),
        Exchange => ("exchange", COLLECTIVE),
        Bcast => ("bcast", &["size_bytes", "iterations", "warmup", "procs_per_host", "tree", "forwarding"]),
        Asp => ("asp", &["rows", "iterations", "procs_per_host", "tree", "forwarding", "elem_cycles"]),
        Qr => ("qr", &["cols", "iterations", "procs_per_host", "tree", "forwarding", "norm_cycles", "update_cycles"]),
        FftAlltoall => ("fft-alltoall", &["size_bytes", "iterations", "procs_per_host", "compute_us"]),
        // Refused before (`config::stack`): Open-MX has no DSM program.
        Dsm => ("dsm", &[]),
    }
}

/// The values allowed with `workload.forwarding = "ni"` for a key whose
/// largest multicast is `unit` bytes per unit of the value: the NIC
/// firmware forwards the frames of an eager message, up to the rendezvous
/// threshold `rndv_threshold`.
/// Refuses a per-element cost `key` (`cycles`, `cycle_ps` picoseconds
/// each, at most `hi`) whose compute step of `elems` elements would be
/// longer than the simulated clock's limit ([`Duration::LIMIT`]); the
/// error gives the largest value that fits, and `at` the keys it depends on.
pub(crate) fn step_within_clock(
    key: &str,
    cycles: f64,
    cycle_ps: f64,
    elems: u64,
    hi: f64,
    at: &str,
) -> Result<(), ConfigError> {
    let ps = (cycles * cycle_ps).round() * elems as f64;
    if ps <= Duration::LIMIT.as_ps() as f64 {
        return Ok(());
    }
    let most = (Duration::LIMIT.as_ps() as f64 / elems as f64 / cycle_ps).floor().min(hi);
    Err(ConfigError::range(
        key,
        cycles,
        &format!(
            "0 ..= {most} at {at}: a compute step of {elems} elements must end within the simulated clock's \
             limit of 100 days"
        ),
    ))
}

fn ni_limit(rndv_threshold: u32, unit: u32) -> String {
    format!(
        "at most {} with workload.forwarding = \"ni\" (the NIC firmware forwards eager messages, up to \
         protocol.rndv_threshold = {rndv_threshold} B)",
        rndv_threshold / unit
    )
}

/// Validates `[workload]`.
pub(super) fn workload(
    w: &WorkloadOpts,
    platform: &Platform,
    rndv_threshold: u32,
    loss: f64,
) -> Result<Workload, ConfigError> {
    let kind = w.kind.ok_or_else(|| missing("workload.kind", &one_of_names::<WorkloadKind>()))?;
    let (name, keys) = keys_of(kind);
    check_read(w, name, keys)?;
    let size = int_or("workload.size_bytes", &w.size_bytes, 0, 0, 1 << 30)?;
    let default_warmup = match kind {
        WorkloadKind::Pingpong | WorkloadKind::EchoNic | WorkloadKind::EchoKernel => 100,
        _ => 1000,
    };
    let warmup = int_or("workload.warmup", &w.warmup, default_warmup, 0, 1 << 32)?;
    let per_host = || {
        let cores = platform.cores() as u64;
        let per_host = int_or("workload.procs_per_host", &w.procs_per_host, cores, 1, cores)? as u32;
        let hosts = platform.topology.hosts;
        if per_host as u64 * hosts as u64 > MAX_RANKS as u64 {
            return Err(ConfigError::range(
                "workload.procs_per_host",
                per_host,
                &format!(
                    "at most {} with platform.topology.hosts = {hosts}: a run has at most {MAX_RANKS} ranks",
                    MAX_RANKS / hosts
                ),
            ));
        }
        Ok(per_host)
    };
    Ok(match kind {
        WorkloadKind::Pingpong => {
            let iterations = int_or("workload.iterations", &w.iterations, 1000, 1, 1 << 32)?;
            Workload::PingPong { size, iterations, warmup }
        }
        WorkloadKind::EchoNic | WorkloadKind::EchoKernel => {
            let iterations = int_or("workload.iterations", &w.iterations, 1000, 1, 1 << 32)?;
            // The echo servers turn frames around one by one: no pull protocol.
            check_u("workload.size_bytes", size, 0, rndv_threshold as u64)?;
            // Nor any resend: a lost frame would leave the client waiting forever.
            if loss > 0.0 {
                return Err(ConfigError::range(
                    "protocol.loss",
                    loss,
                    &format!(
                        "0 with workload.kind = \"{}\" (the echo servers resend nothing)",
                        if kind == WorkloadKind::EchoNic { "echo-nic" } else { "echo-kernel" }
                    ),
                ));
            }
            let at = if kind == WorkloadKind::EchoNic { EchoAt::Nic } else { EchoAt::Kernel };
            Workload::Echo { at, size, iterations, warmup }
        }
        WorkloadKind::Stream | WorkloadKind::Uniband => {
            let messages = int_or("workload.messages", &w.messages, 20_000, 1, 1 << 32)?;
            let window =
                int_or("workload.window", &w.window, crate::workload::STREAM_WINDOW as u64, 1, 1 << 16)? as u32;
            if kind == WorkloadKind::Stream {
                Workload::Stream { size, messages, warmup, window }
            } else {
                Workload::Uniband { size, messages, warmup, window }
            }
        }
        WorkloadKind::NasCg | WorkloadKind::NasMg | WorkloadKind::NasFt => {
            let kernel = match kind {
                WorkloadKind::NasCg => crate::workload::NasKernel::Cg,
                WorkloadKind::NasMg => crate::workload::NasKernel::Mg,
                _ => crate::workload::NasKernel::Ft,
            };
            let class_c = match w.class.unwrap_or_default() {
                NasClass::B => false,
                NasClass::C => true,
                other => {
                    return Err(ConfigError::range(
                        "workload.class",
                        format!("\"{other:?}\""),
                        "B or C (the NPB classes of the CG, MG and FT skeletons)",
                    ))
                }
            };
            let per_host = per_host()?;
            let n = per_host as u64 * platform.topology.hosts as u64;
            if !n.is_power_of_two() || n < 4 {
                return Err(ConfigError::range(
                    "workload.procs_per_host",
                    per_host,
                    "a value giving a power-of-two rank count of at least 4 (the NPB CG/MG/FT decompositions)",
                ));
            }
            let prob = crate::workload::NasProblem::new(kernel, class_c);
            let (flops_per_s, bytes_per_s) = nas_rates(platform, per_host);
            let compute = prob.work(n as u32, l2_share(platform, per_host)).time(flops_per_s, bytes_per_s);
            Workload::NasKernel { kernel, class_c, per_host, compute }
        }
        WorkloadKind::Alltoall | WorkloadKind::Exchange => {
            let iterations = int_or("workload.iterations", &w.iterations, 100, 1, 1 << 24)?;
            let per_host = per_host()?;
            let warmup = int_or("workload.warmup", &w.warmup, 10, 0, 1 << 32)?;
            if kind == WorkloadKind::Alltoall {
                Workload::Alltoall { size, iterations, warmup, per_host }
            } else {
                Workload::Exchange { size, iterations, warmup, per_host }
            }
        }
        WorkloadKind::Bcast => {
            let iterations = int_or("workload.iterations", &w.iterations, 100, 1, 1 << 24)?;
            let per_host = per_host()?;
            let warmup = int_or("workload.warmup", &w.warmup, 10, 0, 1 << 32)?;
            let forwarding = w.forwarding.unwrap_or_default();
            let tree = w.tree.unwrap_or_default();
            if forwarding == BcastForwarding::Ni {
                // The firmware forwards the frames of an eager message one by
                // one (a rendezvous one would be pulled from the root by
                // every rank), and nobody resends a forwarded copy ([LCI]
                // leaves reliability to its own protocol, "described
                // elsewhere").
                if size > rndv_threshold as u64 {
                    return Err(ConfigError::range("workload.size_bytes", size, &ni_limit(rndv_threshold, 1)));
                }
                if loss > 0.0 {
                    return Err(ConfigError::range(
                        "protocol.loss",
                        loss,
                        "0 with workload.forwarding = \"ni\" (a forwarded multicast copy is never resent)",
                    ));
                }
            }
            Workload::Bcast { size, iterations, warmup, per_host, tree, forwarding }
        }
        WorkloadKind::Dsm => {
            return Err(ConfigError::range(
                "protocol.stack",
                "\"open-mx\" with workload.kind = \"dsm\"",
                "\"lci\": only the LCI stack runs it (its requests are answered from upcalls)",
            ))
        }
        WorkloadKind::FftAlltoall => {
            let per_host = per_host()?;
            let ranks = (per_host * platform.topology.hosts) as f64;
            let iterations = int_or("workload.iterations", &w.iterations, 5, 1, 1 << 20)?;
            let block = int_or("workload.size_bytes", &w.size_bytes, 65536, 0, 1 << 30)?;
            // The points whose transpose sends `block` bytes of complex
            // doubles to each rank, and the radix-2 FFT's flops on them.
            let points = (block as f64 * ranks * ranks / 16.0).max(2.0);
            let flops = 5.0 * points * points.log2() / ranks;
            let (flop_rate, _) = nas_rates(platform, per_host);
            let compute_us = w.compute_us.unwrap_or(flops / flop_rate * 1e6);
            check_f("workload.compute_us", compute_us, 0.0, 1e9)?;
            Workload::FftAlltoall { block, iterations, per_host, compute: Duration::from_ns_f64(compute_us * 1e3) }
        }
        WorkloadKind::Asp | WorkloadKind::Qr => {
            let per_host = per_host()?;
            let ranks = per_host * platform.topology.hosts;
            let forwarding = w.forwarding.unwrap_or_default();
            let tree = w.tree.unwrap_or_default();
            // The cost of `elems` elements per step, checked to fit the clock.
            let ps = |key: &str, v: &Option<f64>, default: f64, elems: u64| -> Result<u64, ConfigError> {
                let cycles = v.unwrap_or(default);
                check_f(key, cycles, 0.0, 1e6)?;
                let ghz = platform.host.clock_ghz;
                let at = format!("{elems} elements per step and platform.host.clock_ghz = {ghz}");
                step_within_clock(key, cycles, 1e3 / ghz, elems, 1e6, &at)?;
                Ok((cycles * 1e3 / ghz).round() as u64)
            };
            let asp = kind == WorkloadKind::Asp;
            let (key, v, default) =
                if asp { ("workload.rows", &w.rows, 1024) } else { ("workload.cols", &w.cols, 512) };
            let dim = int_or(key, v, default, ranks as u64, 1 << 16)? as u32;
            if !dim.is_multiple_of(ranks) {
                let allowed = format!("a multiple of the {ranks} ranks (hosts x procs_per_host)");
                return Err(ConfigError::range(key, dim, &allowed));
            }
            // The largest message: a row of 32-bit distances, or the first
            // pivot column of doubles.
            let largest = if asp { 4 * dim as u64 } else { 8 * dim as u64 };
            if forwarding == BcastForwarding::Ni {
                // The firmware forwards the frames of an eager message ([LCI]
                // leaves reliability to its own protocol: nobody resends a
                // forwarded copy).
                if largest > rndv_threshold as u64 {
                    return Err(ConfigError::range(key, dim, &ni_limit(rndv_threshold, if asp { 4 } else { 8 })));
                }
                if loss > 0.0 {
                    return Err(ConfigError::range(
                        "protocol.loss",
                        loss,
                        "0 with workload.forwarding = \"ni\" (a forwarded multicast copy is never resent)",
                    ));
                }
            }
            if asp {
                let iterations = int_or("workload.iterations", &w.iterations, dim as u64, 1, dim as u64)? as u32;
                // A rank's update of its rows per iteration (`asp_ops`).
                let elems = (dim / ranks) as u64 * dim as u64;
                let elem_ps = ps("workload.elem_cycles", &w.elem_cycles, 6.0, elems)?;
                Workload::Asp { rows: dim, iterations, per_host, elem_ps, tree, forwarding }
            } else {
                let iterations =
                    int_or("workload.iterations", &w.iterations, dim as u64 / 4, 1, dim as u64 - 1)? as u32;
                // The largest steps of `qr_ops`: the first iteration's
                // norms and update of a rank's columns, the owner's two
                // passes over a column.
                let local = (dim / ranks) as u64;
                let norm_ps = ps("workload.norm_cycles", &w.norm_cycles, 4.0, local * dim as u64)?;
                let update_ps = ps("workload.update_cycles", &w.update_cycles, 8.0, local.max(2) * dim as u64)?;
                Workload::Qr { cols: dim, iterations, per_host, norm_ps, update_ps, tree, forwarding }
            }
        }
        WorkloadKind::NasIs => {
            // NPB IS: TOTAL_KEYS = 2^16 (S), 2^23 (A), 2^25 (B), 2^27 (C);
            // MAX_KEY = 2^11, 2^19, 2^21, 2^23.
            let (keys, max_key) = match w.class.unwrap_or_default() {
                NasClass::S => (1 << 16, 1 << 11),
                NasClass::A => (1 << 23, 1 << 19),
                NasClass::B => (1 << 25, 1 << 21),
                NasClass::C => (1 << 27, 1 << 23),
            };
            let iterations = int_or("workload.iterations", &w.iterations, 10, 1, 1000)?;
            let per_host = per_host()?;
            let n = platform.topology.hosts * per_host;
            let (before, after) = crate::workload::nas_is_work(keys / n as u64, max_key, n);
            let (_, bytes_per_s) = nas_rates(platform, per_host);
            let insns_per_s = platform.nas.int_ipc * platform.host.clock_ghz * 1e9;
            let before = before.time(insns_per_s, bytes_per_s);
            let after = after.time(insns_per_s, bytes_per_s);
            Workload::NasIs { keys, iterations, per_host, before, after }
        }
        WorkloadKind::Flood => {
            let packets = int_or("workload.packets", &w.packets, 20_000, 1, 1 << 32)?;
            let gap_ns = w.gap_ns.unwrap_or(2000.0);
            check_f("workload.gap_ns", gap_ns, 1.0, 1e9)?;
            let packet_bytes =
                int_or("workload.packet_bytes", &w.packet_bytes, 128, 60, platform.link.mtu as u64 + 14)? as u32;
            Workload::Flood { packets, gap: Duration::from_ns_f64(gap_ns), packet_bytes }
        }
    })
}

/// `workload.forwarding`: who forwards a broadcast down its tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BcastForwarding {
    /// `host` (default): each rank receives the message and sends it on to
    /// its children with point-to-point sends (\[LCI] §4.1, MPICH's way).
    #[default]
    Host,
    /// `ni`: the root hands one multicast frame to its NIC; every NIC on
    /// the tree forwards it from its receive buffer and delivers it
    /// (\[LCI] §4.2). Needs `nic.multicast_forwarding = true`.
    Ni,
}

#[cfg(test)]
mod tests {
    use crate::Scenario;

    #[test]
    fn one_table_for_every_stack_refuses_the_other_stacks_keys_by_kind() {
        // Every stack reads the one `[workload]` table; a key of the other
        // stack is refused in one line naming the kind's own keys.
        let err = |text: &str| Scenario::from_toml(text).unwrap_err().0;
        let omx = err("preset = \"omx2009\"\n[workload]\nkind = \"bcast\"\nroot = 3\n");
        assert!(omx.starts_with("`workload.root` = 3 is not read by workload.kind = \"bcast\" (its keys: "), "{omx}");
        assert!(!omx.contains('\n'), "{omx}");
        let lci = err(
            "preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n[workload]\nkind = \"bcast\"\nprocs_per_host = 2\n",
        );
        assert_eq!(
            lci,
            "`workload.procs_per_host` = 2 is not read by workload.kind = \"bcast\" (its keys: size_bytes, root, \
             iterations, count)"
        );
        // A shared key means the same on both: the broadcast's payload.
        for text in [
            "preset = \"omx2009\"\n[workload]\nkind = \"bcast\"\nsize_bytes = 64\n",
            "preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n[workload]\nkind = \"bcast\"\nsize_bytes = 64\n",
        ] {
            assert!(Scenario::from_toml(text).is_ok(), "{text}");
        }
    }
}
