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
        other => return Err(format!("invalid value for `kind`: {other:?} (allowed: engine, pingpong, stream)")),
    }
    Ok(out)
}
