//! Benchmarks callable from the CLI (`nicsim bench`): engine events/s and
//! full-path simulated messages/s. Wall-clock time is measured here and only
//! here; nothing in the simulation reads it.

use crate::engine::EventQueue;
use crate::time::{Duration, Instant};
use std::collections::BTreeMap;

/// Runs benchmark `kind` with `count` units; returns named figures.
pub fn run(kind: &str, count: u64) -> Result<BTreeMap<String, f64>, String> {
    run_checked(kind, count, &mut crate::interrupt::never)
}

/// Runs benchmark `kind` as [`run`] does; the full-path kinds call `check`
/// as any run does (see [`crate::interrupt`]), so its cost is in the figures.
pub fn run_checked(
    kind: &str,
    count: u64,
    check: crate::interrupt::Check<'_>,
) -> Result<BTreeMap<String, f64>, String> {
    let mut out = BTreeMap::new();
    let t0 = std::time::Instant::now();
    match kind {
        "engine" => {
            // A hold model: 1024 events in flight, each pop pushes one.
            let mut q: EventQueue<u32> = EventQueue::new();
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            for i in 0..1024u32 {
                q.push(Instant::ZERO + Duration::from_ns(i as u64), i % 8, i);
            }
            for _ in 0..count {
                let (t, e) = q.pop().ok_or("queue drained")?;
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                q.push(t + Duration::from_ps(1 + x % 1_000_000), e % 8, e);
            }
            let wall = t0.elapsed().as_secs_f64();
            out.insert("events".into(), count as f64);
            out.insert("events_per_s".into(), count as f64 / wall);
            out.insert("wall_s".into(), wall);
        }
        "pingpong" | "stream" => {
            let text = if kind == "pingpong" {
                format!("[nic]\ncoalescing = \"disabled\"\n[workload]\nkind = \"pingpong\"\niterations = {count}\nwarmup = 0\n")
            } else {
                format!("[workload]\nkind = \"stream\"\nmessages = {count}\nwarmup = 0\n")
            };
            let m = crate::run_toml_checked(&text, check)?;
            let wall = t0.elapsed().as_secs_f64();
            let events = m.get("events").unwrap_or(0.0);
            let msgs = if kind == "pingpong" { 2 * count } else { count } as f64;
            out.insert("events".into(), events);
            out.insert("events_per_s".into(), events / wall);
            out.insert("wall_s".into(), wall);
            out.insert("messages_per_s".into(), msgs / wall);
            if kind == "pingpong" {
                out.insert("round_trips_per_s".into(), count as f64 / wall);
            }
        }
        "alltoall" | "nas-is" => {
            // `count` is the number of processes N.
            if !(2..=8192).contains(&count) {
                return Err(format!("invalid value for `procs`: {count} (allowed: 2 to 8192)"));
            }
            let text = if kind == "alltoall" {
                // 64 B to every other rank, one rank per host; about 4,096
                // messages per rank in all, whatever N.
                let iterations = (4096 / count).max(1);
                format!(
                    "[platform.topology]\nhosts = {count}\n[workload]\nkind = \"alltoall\"\nsize_bytes = 64\niterations = {iterations}\nwarmup = 0\n"
                )
            } else {
                // NAS IS class S, 8 ranks per host on N/8 hosts, one switch.
                let per_host = count.min(8);
                let hosts = (count / per_host).max(1);
                format!(
                    "[platform.topology]\nhosts = {hosts}\n[workload]\nkind = \"nas-is\"\nclass = \"S\"\nprocs_per_host = {per_host}\n"
                )
            };
            reset_peak_rss();
            let t0 = std::time::Instant::now();
            let m = crate::run_toml(&text)?;
            let wall = t0.elapsed().as_secs_f64();
            let events = m.get("events").unwrap_or(0.0);
            out.insert("procs".into(), count as f64);
            out.insert("events".into(), events);
            out.insert("ns_per_event".into(), wall * 1e9 / events.max(1.0));
            out.insert("wall_s".into(), wall);
            out.insert("peak_rss_MiB".into(), peak_rss_kib().unwrap_or(0) as f64 / 1024.0);
            out.insert("dropped".into(), m.get("dropped").unwrap_or(0.0));
        }
        other => {
            return Err(format!(
                "invalid value for `kind`: {other:?} (allowed: engine, pingpong, stream, alltoall, nas-is)"
            ))
        }
    }
    Ok(out)
}

/// Resets the process's peak resident set (`VmHWM`) to its current size
/// (Linux: writing 5 to `/proc/self/clear_refs`), so that each bench run
/// reports its own peak. Elsewhere, or if refused, the peak stays the
/// process's.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The process's peak resident set in KiB (`VmHWM` of `/proc/self/status`).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
