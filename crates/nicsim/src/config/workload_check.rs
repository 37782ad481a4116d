//! The validation of the one `[workload]` table ([`WorkloadOpts`],
//! `config::workload`) into a [`Workload`], once, for the stack the hosts
//! run ([`RunsOn`]): which keys each kind reads there, their defaults and
//! ranges, and the program costs at the host clock. Whether the stack
//! offers the kind at all is decided before (`config::stack`); a kind it
//! has no program of is refused here too, in one line naming what it
//! needs, for a part of a scenario read on its own.

use super::{
    check_f, check_read, check_u, int_or, missing, one_of_names, BcastForwarding, ConfigError, EchoAt, Hardware,
    NasClass, Need, Platform, Stack, Workload, WorkloadKind, WorkloadOpts, MAX_RANKS,
};
use crate::time::Duration;
use crate::tree::Tree;

/// The stack a `[workload]` is validated for, with what its validation
/// reads of the stack's other options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RunsOn {
    /// Open-MX or native MX: the rendezvous threshold and the loss rate,
    /// which bound what the NIC firmware forwards and the echo servers.
    OpenMx { rndv_threshold: u32, loss: f64 },
    /// The LCI stack: one process per host, its multicast trees of
    /// fan-out `nic.fanout`.
    Lci { fanout: u32 },
}

/// Bytes of L2 each of `per_host` ranks has, one rank a core filling the
/// dies in turn: a die's L2 (`cache.l2_kib`) over the ranks on it.
fn l2_share(platform: &Platform, per_host: u32) -> f64 {
    let t = &platform.topology;
    let dies = t.sockets * t.dies_per_socket;
    let on_die = per_host.div_ceil(dies).clamp(1, t.cores_per_die);
    platform.cache.l2_kib as f64 * 1024.0 / on_die as f64
}

/// The NAS skeletons' rates on `platform`: floating-point operations per
/// second of one core, and the memory bandwidth (bytes per second) of one of
/// `per_host` ranks sharing their host's.
fn nas_rates(platform: &Platform, per_host: u32) -> (f64, f64) {
    let nas = &platform.nas;
    (nas.flops_per_cycle * platform.host.clock_ghz * 1e9, nas.mem_MBps * 1e6 / per_host as f64)
}

/// [`nas_rates`] with the core's clock and the rank's L2 share.
fn nas_rank_rates(platform: &Platform, per_host: u32) -> crate::workload::NasRates {
    let (ops_per_s, bytes_per_s) = nas_rates(platform, per_host);
    let (cycles_per_s, l2_share) = (platform.host.clock_ghz * 1e9, l2_share(platform, per_host));
    crate::workload::NasRates { ops_per_s, bytes_per_s, cycles_per_s, l2_share }
}

/// The `[workload]` keys besides `kind` that `kind` reads on the stack
/// `on` (`size_bytes` is the message size; the NAS skeletons size their
/// own messages), after its name; `None`: the LCI stack has no program of
/// that kind.
fn keys_of(kind: WorkloadKind, on: RunsOn) -> Option<(&'static str, &'static [&'static str])> {
    use WorkloadKind::*;
    const ROUND_TRIPS: &[&str] = &["size_bytes", "iterations", "warmup"];
    const WINDOWED: &[&str] = &["size_bytes", "messages", "warmup", "window"];
    const COLLECTIVE: &[&str] = &["size_bytes", "iterations", "warmup", "procs_per_host"];
    let lci = matches!(on, RunsOn::Lci { .. });
    Some(match kind {
        Pingpong if lci => ("pingpong", &["size_bytes", "iterations", "warmup", "src", "dst"]),
        Stream if lci => ("stream", &["size_bytes", "messages", "warmup", "src", "dst"]),
        Bcast if lci => ("bcast", &["size_bytes", "root", "iterations", "count"]),
        Asp if lci => ("asp", &["rows", "iterations", "elem_cycles"]),
        Qr if lci => ("qr", &["cols", "iterations", "norm_cycles", "update_cycles"]),
        FftAlltoall if lci => ("fft-alltoall", &["procs", "iterations", "compute_us", "size_bytes"]),
        Dsm if lci => ("dsm", &["mix", "procs", "operations"]),
        _ if lci => return None,
        Pingpong => ("pingpong", ROUND_TRIPS),
        EchoNic => ("echo-nic", ROUND_TRIPS),
        EchoKernel => ("echo-kernel", ROUND_TRIPS),
        Stream | Uniband => (if kind == Stream { "stream" } else { "uniband" }, WINDOWED),
        Flood => ("flood", &["packets", "gap_ns", "packet_bytes"]),
        NasIs => ("nas-is", &["class", "iterations", "procs_per_host"]),
        NasCg => ("nas-cg", &["class", "procs_per_host"]),
        NasMg => ("nas-mg", &["class", "procs_per_host"]),
        NasFt => ("nas-ft", &["class", "procs_per_host"]),
        NasBt => ("nas-bt", &["class", "procs_per_host"]),
        NasEp => ("nas-ep", &["class", "procs_per_host"]),
        NasLu => ("nas-lu", &["class", "procs_per_host"]),
        NasSp => ("nas-sp", &["class", "procs_per_host"]),
        Alltoall => ("alltoall", &["size_bytes", "iterations", "warmup", "procs_per_host", "alltoall_algorithm"]),
        Exchange => ("exchange", COLLECTIVE),
        Bcast => ("bcast", &["size_bytes", "iterations", "warmup", "procs_per_host", "tree", "forwarding"]),
        Asp => ("asp", &["rows", "iterations", "procs_per_host", "tree", "forwarding", "elem_cycles"]),
        Qr => ("qr", &["cols", "iterations", "procs_per_host", "tree", "forwarding", "norm_cycles", "update_cycles"]),
        FftAlltoall => ("fft-alltoall", &["size_bytes", "iterations", "procs_per_host", "compute_us"]),
        // Refused below (and before, `config::stack`): its requests are
        // answered from upcalls, which only the LCI library has.
        Dsm => ("dsm", &[]),
    })
}

/// Refuses a per-element cost `key` (`cycles`, `cycle_ps` picoseconds
/// each, at most `hi`) whose compute step of `elems` elements would be
/// longer than the simulated clock's limit ([`Duration::LIMIT`]); the
/// error gives the largest value that fits, and `at` the keys it depends on.
fn step_within_clock(key: &str, cycles: f64, cycle_ps: f64, elems: u64, hi: f64, at: &str) -> Result<(), ConfigError> {
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

/// The values allowed with `workload.forwarding = "ni"` for a key whose
/// largest multicast is `unit` bytes per unit of the value: the NIC
/// firmware forwards the frames of an eager message, up to the rendezvous
/// threshold `rndv_threshold`.
fn ni_limit(rndv_threshold: u32, unit: u32) -> String {
    format!(
        "at most {} with workload.forwarding = \"ni\" (the NIC firmware forwards eager messages, up to \
         protocol.rndv_threshold = {rndv_threshold} B)",
        rndv_threshold / unit
    )
}

/// Refuses `protocol.loss` above 0 with NIC forwarding: nobody resends a
/// forwarded multicast copy (\[LCI] leaves reliability to its own
/// protocol, "described elsewhere").
fn no_loss_with_ni(loss: f64) -> Result<(), ConfigError> {
    if loss > 0.0 {
        return Err(ConfigError::range(
            "protocol.loss",
            loss,
            "0 with workload.forwarding = \"ni\" (a forwarded multicast copy is never resent)",
        ));
    }
    Ok(())
}

/// The name of `kind` as a scenario gives it.
fn name_of(kind: WorkloadKind) -> String {
    toml::Value::try_from(kind).map(|v| v.to_string()).unwrap_or_default()
}

/// Validates `[workload]` for the stack `on`.
pub(crate) fn workload(w: &WorkloadOpts, platform: &Platform, on: RunsOn) -> Result<Workload, ConfigError> {
    let lci_programs = || Stack::Lci.programs(Hardware::Lci).join(", ");
    let kind = w.kind.ok_or_else(|| {
        let allowed = match on {
            RunsOn::Lci { .. } => format!("one of {}", lci_programs()),
            RunsOn::OpenMx { .. } => one_of_names::<WorkloadKind>(),
        };
        missing("workload.kind", &allowed)
    })?;
    let Some((name, keys)) = keys_of(kind, on) else {
        let why = Stack::Lci.lacks(kind, Hardware::Lci).map_or("", Need::why);
        return Err(ConfigError::range(
            "workload.kind",
            format!("{} with protocol.stack = \"lci\"", name_of(kind)),
            &format!("one of {} (the LCI stack's programs; {why})", lci_programs()),
        ));
    };
    check_read(w, name, keys)?;
    let hosts = platform.topology.hosts;
    let size = int_or("workload.size_bytes", &w.size_bytes, 0, 0, 1 << 30)?;
    let default_warmup = match (on, kind) {
        (RunsOn::Lci { .. }, _) => 10,
        (_, WorkloadKind::Pingpong | WorkloadKind::EchoNic | WorkloadKind::EchoKernel) => 100,
        _ => 1000,
    };
    let warmup = int_or("workload.warmup", &w.warmup, default_warmup, 0, 1 << 32)?;
    let per_host = || {
        if let RunsOn::Lci { .. } = on {
            return Ok(1);
        }
        let cores = platform.cores() as u64;
        let per_host = int_or("workload.procs_per_host", &w.procs_per_host, cores, 1, cores)? as u32;
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
    // The LCI stack's hosts of a two-host program, `src` and `dst`.
    let pair = || -> Result<[u32; 2], ConfigError> {
        let src = int_or("workload.src", &w.src, 0, 0, hosts as u64 - 1)? as u32;
        let dst = int_or("workload.dst", &w.dst, 1, 0, hosts as u64 - 1)? as u32;
        if src == dst {
            return Err(ConfigError::range("workload.dst", dst, "a host other than workload.src"));
        }
        Ok([src, dst])
    };
    // The LCI stack's processes of a program on hosts 0 .. procs.
    let procs = || Ok::<u32, ConfigError>(int_or("workload.procs", &w.procs, 16, 2, hosts as u64)? as u32);
    Ok(match kind {
        WorkloadKind::Pingpong => {
            let iterations = int_or("workload.iterations", &w.iterations, 1000, 1, 1 << 32)?;
            let pair = if let RunsOn::Lci { .. } = on { pair()? } else { [0, 1] };
            Workload::PingPong { size, iterations, warmup, pair }
        }
        WorkloadKind::EchoNic | WorkloadKind::EchoKernel => {
            let RunsOn::OpenMx { rndv_threshold, loss } = on else {
                unreachable!("keys_of refuses it on the LCI stack")
            };
            let iterations = int_or("workload.iterations", &w.iterations, 1000, 1, 1 << 32)?;
            // The echo servers turn frames around one by one: no pull protocol.
            check_u("workload.size_bytes", size, 0, rndv_threshold as u64)?;
            // Nor any resend: a lost frame would leave the client waiting forever.
            if loss > 0.0 {
                return Err(ConfigError::range(
                    "protocol.loss",
                    loss,
                    &format!("0 with workload.kind = {} (the echo servers resend nothing)", name_of(kind)),
                ));
            }
            let at = if kind == WorkloadKind::EchoNic { EchoAt::Nic } else { EchoAt::Kernel };
            Workload::Echo { at, size, iterations, warmup }
        }
        WorkloadKind::Stream | WorkloadKind::Uniband => {
            let (default_messages, pair) = match on {
                RunsOn::Lci { .. } => (1000, pair()?),
                RunsOn::OpenMx { .. } => (20_000, [0, 1]),
            };
            let messages = int_or("workload.messages", &w.messages, default_messages, 1, 1 << 32)?;
            let window = match on {
                // Every message is in the library once sent: no window to keep.
                RunsOn::Lci { .. } => 1,
                RunsOn::OpenMx { .. } => {
                    let most = 1 << 16;
                    int_or("workload.window", &w.window, crate::workload::STREAM_WINDOW as u64, 1, most)? as u32
                }
            };
            if kind == WorkloadKind::Stream {
                Workload::Stream { size, messages, warmup, window, pair }
            } else {
                Workload::Uniband { size, messages, warmup, window }
            }
        }
        WorkloadKind::NasCg
        | WorkloadKind::NasMg
        | WorkloadKind::NasFt
        | WorkloadKind::NasBt
        | WorkloadKind::NasEp
        | WorkloadKind::NasLu
        | WorkloadKind::NasSp => {
            use crate::workload::NasKernel;
            let kernel = match kind {
                WorkloadKind::NasCg => NasKernel::Cg,
                WorkloadKind::NasMg => NasKernel::Mg,
                WorkloadKind::NasFt => NasKernel::Ft,
                WorkloadKind::NasBt => NasKernel::Bt,
                WorkloadKind::NasEp => NasKernel::Ep,
                WorkloadKind::NasLu => NasKernel::Lu,
                _ => NasKernel::Sp,
            };
            let class_c = match w.class.unwrap_or_default() {
                NasClass::B => false,
                NasClass::C => true,
                other => {
                    return Err(ConfigError::range(
                        "workload.class",
                        format!("\"{other:?}\""),
                        "B or C (the NPB classes of the CG, MG, FT, BT, EP, LU and SP skeletons)",
                    ))
                }
            };
            let per_host = per_host()?;
            let n = per_host as u64 * hosts as u64;
            if !n.is_power_of_two() || n < 4 {
                return Err(ConfigError::range(
                    "workload.procs_per_host",
                    per_host,
                    "a value giving a power-of-two rank count of at least 4 (the NPB CG/MG/FT/EP/LU decompositions)",
                ));
            }
            // BT and SP's multi-partition needs a square count (`make_set`:
            // ncells = sqrt(no_nodes)).
            let square = (n as f64).sqrt().round() as u64;
            if matches!(kernel, NasKernel::Bt | NasKernel::Sp) && square * square != n {
                return Err(ConfigError::range(
                    "workload.procs_per_host",
                    per_host,
                    "a value giving a square rank count (NPB BT and SP's multi-partition: 4, 16, 64, ...)",
                ));
            }
            let prob = crate::workload::NasProblem::new(kernel, class_c);
            let rates = nas_rank_rates(platform, per_host);
            let compute = prob.compute(n as u32, &rates);
            Workload::NasKernel { kernel, class_c, per_host, compute, rates }
        }
        WorkloadKind::Alltoall | WorkloadKind::Exchange => {
            let iterations = int_or("workload.iterations", &w.iterations, 100, 1, 1 << 24)?;
            let per_host = per_host()?;
            let warmup = int_or("workload.warmup", &w.warmup, 10, 0, 1 << 32)?;
            if kind == WorkloadKind::Alltoall {
                let ranks = per_host * hosts;
                let algorithm = w.alltoall_algorithm.unwrap_or_default().resolve(size, ranks);
                Workload::Alltoall { size, iterations, warmup, per_host, algorithm }
            } else {
                Workload::Exchange { size, iterations, warmup, per_host }
            }
        }
        WorkloadKind::Bcast => match on {
            RunsOn::Lci { fanout } => {
                let root = int_or("workload.root", &w.root, 0, 0, hosts as u64 - 1)? as u32;
                let iterations = int_or("workload.iterations", &w.iterations, 20, 0, 1 << 20)?;
                let count = int_or("workload.count", &w.count, 100, 0, 1 << 20)?;
                if iterations + count == 0 {
                    return Err(ConfigError::range("workload.count", count, "at least 1 when workload.iterations = 0"));
                }
                let (iterations, count) = (iterations as u32, count as u32);
                Workload::BcastBench { root, size, iterations, count, tree: Tree::Kary(fanout) }
            }
            RunsOn::OpenMx { rndv_threshold, loss } => {
                let iterations = int_or("workload.iterations", &w.iterations, 100, 1, 1 << 24)?;
                let per_host = per_host()?;
                let warmup = int_or("workload.warmup", &w.warmup, 10, 0, 1 << 32)?;
                let forwarding = w.forwarding.unwrap_or_default();
                let tree = w.tree.unwrap_or_default();
                if forwarding == BcastForwarding::Ni {
                    // The firmware forwards the frames of an eager message one by
                    // one (a rendezvous one would be pulled from the root by
                    // every rank).
                    if size > rndv_threshold as u64 {
                        return Err(ConfigError::range("workload.size_bytes", size, &ni_limit(rndv_threshold, 1)));
                    }
                    no_loss_with_ni(loss)?;
                }
                Workload::Bcast { size, iterations, warmup, per_host, tree, forwarding }
            }
        },
        WorkloadKind::Dsm => match on {
            RunsOn::Lci { .. } => {
                let mix = w.mix.unwrap_or_default();
                let operations = int_or("workload.operations", &w.operations, 200, 1, 1 << 32)?;
                Workload::Dsm { mix, procs: procs()?, operations }
            }
            RunsOn::OpenMx { .. } => {
                return Err(ConfigError::range(
                    "protocol.stack",
                    "\"open-mx\" with workload.kind = \"dsm\"",
                    "\"lci\": only the LCI stack runs it (its requests are answered from upcalls)",
                ))
            }
        },
        WorkloadKind::FftAlltoall => {
            let (per_host, ranks) = match on {
                RunsOn::Lci { .. } => (1, procs()?),
                RunsOn::OpenMx { .. } => {
                    let per_host = per_host()?;
                    (per_host, per_host * hosts)
                }
            };
            let iterations = int_or("workload.iterations", &w.iterations, 5, 1, 1 << 20)?;
            let block = int_or("workload.size_bytes", &w.size_bytes, 65536, 0, 1 << 30)?;
            let compute_us = match (w.compute_us, on) {
                (Some(us), _) => us,
                // [estimate] one 2D FFT of 2^20 complex points per iteration
                // on 16 processes: 5 N log2 N / P = 6.6 Mflop per process at
                // ~100 Mflop/s (half the Pentium Pro 200's one-flop-per-cycle
                // peak) = 65 ms, and the transpose moves 1 MB per process,
                // i.e. 64 KB to each other process.
                (None, RunsOn::Lci { .. }) => 65000.0,
                (None, RunsOn::OpenMx { .. }) => {
                    // The points whose transpose sends `block` bytes of
                    // complex doubles to each rank, and the radix-2 FFT's
                    // flops on them.
                    let n = ranks as f64;
                    let points = (block as f64 * n * n / 16.0).max(2.0);
                    let flops = 5.0 * points * points.log2() / n;
                    let (flop_rate, _) = nas_rates(platform, per_host);
                    flops / flop_rate * 1e6
                }
            };
            check_f("workload.compute_us", compute_us, 0.0, 1e9)?;
            let compute = Duration::from_ns_f64(compute_us * 1e3);
            Workload::FftAlltoall { block, iterations, per_host, ranks, compute }
        }
        WorkloadKind::Asp | WorkloadKind::Qr => {
            let per_host = per_host()?;
            let ranks = per_host * hosts;
            let (tree, forwarding) = match on {
                RunsOn::Lci { fanout } => (Tree::Kary(fanout), BcastForwarding::Ni),
                RunsOn::OpenMx { .. } => (w.tree.unwrap_or_default(), w.forwarding.unwrap_or_default()),
            };
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
            let allowed = match on {
                RunsOn::Lci { .. } => format!("a multiple of the {ranks} ranks (one per host), at most 65536"),
                RunsOn::OpenMx { .. } => {
                    format!("a multiple of the {ranks} ranks (hosts x procs_per_host), at most 65536")
                }
            };
            let dim = match v {
                None => default,
                Some(v) => v.integer(key, &allowed)?,
            };
            let dim = match u32::try_from(dim) {
                Ok(d) if d > 0 && d.is_multiple_of(ranks) && d <= 1 << 16 => d,
                _ => return Err(ConfigError::range(key, dim, &allowed)),
            };
            // The largest message: a row of 32-bit distances, or the first
            // pivot column of doubles.
            let largest = if asp { 4 * dim as u64 } else { 8 * dim as u64 };
            if let (RunsOn::OpenMx { rndv_threshold, loss }, BcastForwarding::Ni) = (on, forwarding) {
                // The firmware forwards the frames of an eager message.
                if largest > rndv_threshold as u64 {
                    return Err(ConfigError::range(key, dim, &ni_limit(rndv_threshold, if asp { 4 } else { 8 })));
                }
                no_loss_with_ni(loss)?;
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
            let n = hosts * per_host;
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
