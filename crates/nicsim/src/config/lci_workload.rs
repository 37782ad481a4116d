//! `[workload]` of an LCI scenario (\[LCI]): the validation of the one
//! `[workload]` table (`super::workload`'s [`WorkloadOpts`], read by every
//! stack) into an [`LciWorkload`], the programs the LCI stack runs
//! (`crate::lci::workload`), with the LCI stack's defaults. Called by
//! [`super::LciScenario::from_file`].

use super::{
    check_f, check_read, int_or, missing, ConfigError, Hardware, Int, LciHostCfg, Mix, Platform, Stack, WorkloadKind,
    WorkloadOpts,
};

/// The `[workload]` table of an LCI scenario: the one table of every
/// stack ([`WorkloadOpts`]), whose LCI-only keys (`src`, `dst`, `root`,
/// `count`, `mix`, `procs`, `operations`) sit beside the shared ones.
pub type LciWorkloadOpts = WorkloadOpts;

/// A validated LCI workload (`crate::lci::workload` runs it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LciWorkload {
    /// `src` sends `warmup + messages` messages of `size` bytes to `dst`
    /// back to back; throughput is measured at the receiver over the timed ones.
    Stream { src: u32, dst: u32, size: u64, messages: u64, warmup: u64 },
    /// `src` and `dst` bounce a message `warmup + iterations` times;
    /// one-way latency = half the mean timed round trip.
    PingPong { src: u32, dst: u32, size: u64, iterations: u64, warmup: u64 },
    /// `root` broadcasts `size` bytes to all `hosts`: `iterations` one at a
    /// time (latency to the last receiver), then `count` back to back
    /// (sender throughput).
    Bcast { hosts: u32, root: u32, size: u64, iterations: u32, count: u32 },
    /// ASP over a `rows` x `rows` matrix, the first `iterations` iterations;
    /// `elem_ps` of host compute per element update.
    Asp { hosts: u32, rows: u32, iterations: u32, elem_ps: u64 },
    /// QR over a `cols` x `cols` matrix, the first `iterations` iterations;
    /// per-element compute of the norms and of the update.
    Qr { hosts: u32, cols: u32, iterations: u32, norm_ps: u64, update_ps: u64 },
    /// CRL-like DSM request/reply mix on hosts 0..procs (`crate::lci::dsm`).
    Dsm { mix: Mix, procs: u32, operations: u64, seed: u64 },
    /// FFT all-to-all: `iterations` of compute then one `size`-byte block to every other process.
    FftAllToAll { procs: u32, iterations: u64, size: u64, compute_ns: u64, seed: u64 },
}

/// The `[workload]` keys besides `kind` that `kind` reads, for the LCI
/// stack's programs (`None`: the stack has no program of that kind).
fn keys_of(kind: WorkloadKind) -> Option<(&'static str, &'static [&'static str])> {
    use WorkloadKind::*;
    Some(match kind {
        Stream => ("stream", &["size_bytes", "messages", "warmup", "src", "dst"]),
        Pingpong => ("pingpong", &["size_bytes", "iterations", "warmup", "src", "dst"]),
        Bcast => ("bcast", &["size_bytes", "root", "iterations", "count"]),
        Asp => ("asp", &["rows", "iterations"]),
        Qr => ("qr", &["cols", "iterations"]),
        Dsm => ("dsm", &["mix", "procs", "operations"]),
        FftAlltoall => ("fft-alltoall", &["procs", "iterations", "compute_us", "size_bytes"]),
        Uniband | Flood | NasIs | NasCg | NasMg | NasFt | Alltoall | Exchange | EchoNic | EchoKernel => return None,
    })
}

/// Validates `[workload]` of an LCI scenario on `platform` (`seed`: the
/// scenario's, which the DSM and FFT workloads draw from).
pub(super) fn lci_workload(
    w: &WorkloadOpts,
    platform: &Platform,
    lib: &LciHostCfg,
    seed: Option<u64>,
) -> Result<LciWorkload, ConfigError> {
    let programs = || Stack::Lci.programs(Hardware::Lci).join(", ");
    let kind = w.kind.ok_or_else(|| missing("workload.kind", &format!("one of {}", programs())))?;
    let Some((name, keys)) = keys_of(kind) else {
        let name = toml::Value::try_from(kind).map(|v| v.to_string()).unwrap_or_default();
        return Err(ConfigError::range(
            "workload.kind",
            format!("{name} with protocol.stack = \"lci\""),
            &format!("one of {} (the LCI stack's programs)", programs()),
        ));
    };
    check_read(w, name, keys)?;
    let hosts = platform.topology.hosts as u64;
    let src = int_or("workload.src", &w.src, 0, 0, hosts - 1)? as u32;
    let dst = int_or("workload.dst", &w.dst, 1, 0, hosts - 1)? as u32;
    if src == dst {
        return Err(ConfigError::range("workload.dst", dst, "a host other than workload.src"));
    }
    let size = int_or("workload.size_bytes", &w.size_bytes, 0, 0, 1 << 30)?;
    let warmup = int_or("workload.warmup", &w.warmup, 10, 0, 1 << 32)?;
    Ok(match kind {
        WorkloadKind::Stream => {
            let messages = int_or("workload.messages", &w.messages, 1000, 1, 1 << 32)?;
            LciWorkload::Stream { src, dst, size, messages, warmup }
        }
        WorkloadKind::Pingpong => {
            let iterations = int_or("workload.iterations", &w.iterations, 1000, 1, 1 << 32)?;
            LciWorkload::PingPong { src, dst, size, iterations, warmup }
        }
        WorkloadKind::Bcast | WorkloadKind::Asp | WorkloadKind::Qr => mc_workload(kind, w, platform, lib, size)?,
        WorkloadKind::Dsm => {
            let mix = w.mix.unwrap_or_default();
            let procs = int_or("workload.procs", &w.procs, 16, 2, hosts)? as u32;
            let operations = int_or("workload.operations", &w.operations, 200, 1, 1 << 32)?;
            LciWorkload::Dsm { mix, procs, operations, seed: seed.unwrap_or(1) }
        }
        // fft-alltoall (`keys_of` refused the kinds the stack has no program of).
        _ => {
            let procs = int_or("workload.procs", &w.procs, 16, 2, hosts)? as u32;
            let iterations = int_or("workload.iterations", &w.iterations, 5, 1, 1 << 32)?;
            // [estimate] one 2D FFT of 2^20 complex points per iteration on 16
            // processes: 5 N log2 N / P = 6.6 Mflop per process at ~100 Mflop/s
            // (half the Pentium Pro 200's one-flop-per-cycle peak) = 65 ms, and the
            // transpose moves 1 MB per process, i.e. 64 KB to each other process.
            let compute = w.compute_us.unwrap_or(65000.0);
            check_f("workload.compute_us", compute, 0.0, 1e9)?;
            let size = int_or("workload.size_bytes", &w.size_bytes, 65536, 0, 1 << 30)?;
            LciWorkload::FftAllToAll {
                procs,
                iterations,
                size,
                compute_ns: (compute * 1e3).round() as u64,
                seed: seed.unwrap_or(1),
            }
        }
    })
}

/// Validates the multicast workloads (`bcast`, `asp`, `qr`).
fn mc_workload(
    kind: WorkloadKind,
    w: &WorkloadOpts,
    p: &Platform,
    lib: &LciHostCfg,
    size: u64,
) -> Result<LciWorkload, ConfigError> {
    let hosts = p.topology.hosts;
    let mhz = p.host.clock_ghz * 1e3;
    let ps = |cycles: u32| (cycles as f64 * 1e6 / mhz).round() as u64;
    // The cost of `elems` elements per step fits the simulated clock.
    let fits = |key: &str, cycles: u32, elems: u64| {
        let at = format!("{elems} elements per step and host.clock_ghz = {}", p.host.clock_ghz);
        super::workload::step_within_clock(key, cycles as f64, 1e6 / mhz, elems, (1u32 << 24) as f64, &at)
    };
    Ok(match kind {
        WorkloadKind::Bcast => {
            let root = int_or("workload.root", &w.root, 0, 0, hosts as u64 - 1)? as u32;
            let iterations = int_or("workload.iterations", &w.iterations, 20, 0, 1 << 20)?;
            let count = int_or("workload.count", &w.count, 100, 0, 1 << 20)?;
            if iterations + count == 0 {
                return Err(ConfigError::range("workload.count", count, "at least 1 when workload.iterations = 0"));
            }
            LciWorkload::Bcast { hosts, root, size, iterations: iterations as u32, count: count as u32 }
        }
        WorkloadKind::Asp => {
            let rows = multiple_of_hosts("workload.rows", &w.rows, 1024, hosts)?;
            let iterations = int_or("workload.iterations", &w.iterations, rows as u64, 1, rows as u64)?;
            // A host's update of its rows per iteration (`crate::workload::asp_ops`).
            fits("lci.asp_elem_cycles", lib.asp_elem_cycles, (rows / hosts) as u64 * rows as u64)?;
            LciWorkload::Asp { hosts, rows, iterations: iterations as u32, elem_ps: ps(lib.asp_elem_cycles) }
        }
        _ => {
            let cols = multiple_of_hosts("workload.cols", &w.cols, 512, hosts)?;
            let iterations = int_or("workload.iterations", &w.iterations, cols as u64 / 4, 1, cols as u64 - 1)?;
            // The largest steps: the first iteration's norms and update of a
            // host's columns, the owner's two passes over a column.
            let local = (cols / hosts) as u64;
            fits("lci.qr_norm_cycles", lib.qr_norm_cycles, local * cols as u64)?;
            fits("lci.qr_update_cycles", lib.qr_update_cycles, local.max(2) * cols as u64)?;
            LciWorkload::Qr {
                hosts,
                cols,
                iterations: iterations as u32,
                norm_ps: ps(lib.qr_norm_cycles),
                update_ps: ps(lib.qr_update_cycles),
            }
        }
    })
}

/// A matrix dimension (`workload.rows`, `workload.cols`): a positive
/// multiple of the hosts, at most 65536 (`default` when absent).
fn multiple_of_hosts(key: &str, v: &Option<Int>, default: u32, hosts: u32) -> Result<u32, ConfigError> {
    let allowed = format!("a multiple of platform.grid.hosts = {hosts}, at most 65536");
    let n = match v {
        None => return Ok(default),
        Some(v) => v.integer(key, &allowed)?,
    };
    match u32::try_from(n) {
        Ok(n) if n > 0 && n.is_multiple_of(hosts) && n <= 1 << 16 => Ok(n),
        _ => Err(ConfigError::range(key, n, &allowed)),
    }
}
