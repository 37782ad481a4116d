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
        "alltoall" | "exchange" | "nas-is" => {
            // `count` is the number of processes N.
            let text = scale_scenario(kind, count)?;
            let s = crate::config::Scenario::from_toml(&text).map_err(|e| e.to_string())?;
            crate::memory::reset_peak();
            // The cost per event is the event loop's alone: building the
            // world (its hosts, every rank's peers and programs) is timed
            // apart, as it is paid once whatever the run's length. A run
            // whose loop is shorter than `SCALE_MIN_LOOP_S` is made again
            // (a new world each time) until the loops add up to it: one run
            // of a few milliseconds weighs its cold caches and any hiccup
            // of the machine too much to be a steady figure.
            let (mut build, mut run, mut wall, mut runs) = (0.0, 0.0, 0.0, 0u32);
            let mut first: Option<crate::metrics::Metrics> = None;
            while runs == 0 || (run < SCALE_MIN_LOOP_S && runs < SCALE_MAX_RUNS) {
                let t0 = std::time::Instant::now();
                let mut w = crate::sim::World::with_policy(&s, None);
                let built = t0.elapsed().as_secs_f64();
                w.run_checked(&mut *check).map_err(|e| e.to_string())?;
                run += t0.elapsed().as_secs_f64() - built;
                build += built;
                w.check_invariants().map_err(|e| e.to_string())?;
                let m = w.metrics();
                wall += t0.elapsed().as_secs_f64();
                runs += 1;
                match &first {
                    None => first = Some(m),
                    Some(f) if !same_bits(f, &m) => {
                        return Err(format!("{kind} at {count} ranks: run {runs} differs from the first"))
                    }
                    Some(_) => {}
                }
            }
            let m = first.unwrap_or_default();
            let events = m.get("events").unwrap_or(0.0);
            let per_run = f64::from(runs);
            out.insert("procs".into(), count as f64);
            out.insert("events".into(), events);
            out.insert("runs".into(), per_run);
            out.insert("min_loop_s".into(), SCALE_MIN_LOOP_S);
            out.insert("ns_per_event".into(), run * 1e9 / (events * per_run).max(1.0));
            out.insert("build_s".into(), build / per_run);
            out.insert("wall_s".into(), wall / per_run);
            out.insert("peak_rss_MiB".into(), crate::memory::peak_kib().unwrap_or(0) as f64 / 1024.0);
            out.insert("dropped".into(), m.get("dropped").unwrap_or(0.0));
            out.insert("messages_per_rank".into(), SCALE_MESSAGES_PER_RANK as f64);
            out.insert("sim_time_ms".into(), m.get("sim_time_us").unwrap_or(0.0) / 1e3);
        }
        other => {
            return Err(format!(
                "invalid value for `kind`: {other:?} (allowed: engine, pingpong, stream, alltoall, exchange, nas-is)"
            ))
        }
    }
    Ok(out)
}

/// Whether two runs' metrics are the same, bit for bit (NaN included).
fn same_bits(a: &crate::metrics::Metrics, b: &crate::metrics::Metrics) -> bool {
    let (x, y) = (&a.values, &b.values);
    a.not_measured == b.not_measured
        && x.len() == y.len()
        && x.iter().zip(y).all(|((ka, va), (kb, vb))| ka == kb && va.to_bits() == vb.to_bits())
}

/// Least event-loop time (seconds) behind a size benchmark's ns per event:
/// shorter runs are repeated until their loops add up to it.
pub const SCALE_MIN_LOOP_S: f64 = 0.25;

/// Most runs made to reach [`SCALE_MIN_LOOP_S`].
pub const SCALE_MAX_RUNS: u32 = 1000;

/// Messages each rank sends in a size benchmark (`alltoall`, `exchange`,
/// `nas-is`),
/// whatever N: the runs do the same work per rank, so the cost per event
/// can be compared across N, and the whole table up to 1,024 ranks takes
/// minutes. An alltoall sends N - 1 messages per rank per repetition, so
/// from N = 4,097 a single repetition sends more.
pub const SCALE_MESSAGES_PER_RANK: u64 = 4096;

/// The size benchmarks and the ranks each puts on a host: one for the
/// all-to-all and the exchange, 8 for IS (from 16 ranks).
pub const SCALE_KINDS: [(&str, u64); 3] = [("alltoall", 1), ("exchange", 1), ("nas-is", 8)];

/// The most processes the size benchmark `kind` runs: its ranks per host
/// times [`crate::config::MAX_HOSTS`].
pub fn scale_max_procs(kind: &str) -> Result<u64, String> {
    match SCALE_KINDS.iter().find(|(k, _)| *k == kind) {
        Some((_, per_host)) => Ok(per_host * crate::config::MAX_HOSTS as u64),
        None => Err(unknown_kind(kind)),
    }
}

fn unknown_kind(kind: &str) -> String {
    format!("invalid value for `kind`: {kind:?} (allowed here: alltoall, exchange, nas-is)")
}

/// The scenario of the size benchmark `kind` at `n` processes:
/// * `alltoall`: 64 B to every other rank, one rank per host on `n` hosts,
///   `SCALE_MESSAGES_PER_RANK / (n - 1)` repetitions (at least one), no
///   warm-up, the linear algorithm at every `n` (`tuned` would take Bruck's
///   from 13 ranks): each rank has a receive posted from, and a message in
///   flight to, every other rank, so the run's live state grows as n^2;
/// * `exchange`: IMB Exchange of 64 B, one rank per host on `n` hosts,
///   `SCALE_MESSAGES_PER_RANK / 2` repetitions, no warm-up: each rank talks
///   to its two neighbours only, so the live state per rank is the same at
///   every n (what is left to grow is the run's fixed per-rank state);
/// * `nas-is`: NAS IS class S, 8 ranks per host on `n / 8` hosts (two hosts
///   of `n / 2` below 16 ranks, so that messages cross the network), as many
///   iterations (at most 1,000) as make about `SCALE_MESSAGES_PER_RANK`
///   messages per rank with the warm-up iteration, at least one.
///
/// The hosts share one switch (the platform's single-switch network).
pub fn scale_scenario(kind: &str, n: u64) -> Result<String, String> {
    let max = scale_max_procs(kind)?;
    if !(2..=max).contains(&n) {
        return Err(format!("invalid value for `procs`: {n} (allowed for {kind}: 2 to {max})"));
    }
    match kind {
        "alltoall" | "exchange" => {
            // An alltoall sends n - 1 messages per rank per repetition, an
            // exchange two.
            let iterations = if kind == "alltoall" {
                (SCALE_MESSAGES_PER_RANK / (n - 1)).max(1)
            } else {
                SCALE_MESSAGES_PER_RANK / 2
            };
            Ok(format!(
                "[platform.topology]\nhosts = {n}\n[workload]\nkind = \"{kind}\"\nsize_bytes = 64\n\
                 iterations = {iterations}\nwarmup = 0\nprocs_per_host = 1\n{}",
                if kind == "alltoall" { "alltoall_algorithm = \"linear\"\n" } else { "" }
            ))
        }
        "nas-is" => {
            if !n.is_power_of_two() {
                return Err(format!("invalid value for `procs`: {n} (nas-is: a power of two from 2 to {max})"));
            }
            let hosts = (n / 8).max(2);
            let per_host = n / hosts;
            // Per iteration: the allreduce's log2(n) exchanges, then two alltoalls.
            let per_iteration = 2 * (n - 1) + n.trailing_zeros() as u64;
            let iterations = (SCALE_MESSAGES_PER_RANK / per_iteration).saturating_sub(1).clamp(1, 1000);
            Ok(format!(
                "[platform.topology]\nhosts = {hosts}\n[workload]\nkind = \"nas-is\"\nclass = \"S\"\n\
                 procs_per_host = {per_host}\niterations = {iterations}\n"
            ))
        }
        other => Err(unknown_kind(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages sent per rank by the bench scenario `kind` at `n` ranks
    /// (each completes two requests: its send and its receive).
    fn messages_per_rank(kind: &str, n: u64) -> f64 {
        let s = crate::Scenario::from_toml(&scale_scenario(kind, n).unwrap()).unwrap();
        let mut w = crate::sim::World::new(&s);
        w.run().unwrap();
        w.run.completions as f64 / 2.0 / n as f64
    }

    #[test]
    fn bench_scenarios_give_each_rank_the_same_work_at_every_size() {
        let target = SCALE_MESSAGES_PER_RANK as f64;
        for kind in ["alltoall", "exchange", "nas-is"] {
            for n in [2, 16, 64] {
                let got = messages_per_rank(kind, n);
                assert!((0.5 * target..=1.1 * target).contains(&got), "{kind} at {n} ranks: {got} messages per rank");
            }
        }
    }

    /// A process keeps protocol records and receive lists for the ranks
    /// it talks to: two neighbours in an exchange (at most two pages of 64
    /// ranks), every rank in an all-to-all.
    #[test]
    fn per_peer_state_follows_the_ranks_a_process_talks_to() {
        let made = |kind: &str| {
            let s = crate::Scenario::from_toml(&scale_scenario(kind, 256).unwrap()).unwrap();
            let mut w = crate::sim::World::new(&s);
            w.run().unwrap();
            let procs = || w.hosts.iter().flat_map(|h| &h.procs);
            let peers: Vec<usize> = procs().map(|p| p.parts().0.peer_bytes()).collect();
            let lists: Vec<usize> = procs().map(|p| p.parts().1.list_pages()).collect();
            let range = |v: &[usize]| (*v.iter().min().unwrap(), *v.iter().max().unwrap());
            (range(&peers), range(&lists))
        };
        let page = crate::paged::PAGE * 64;
        let ((low, high), (lists_low, lists_high)) = made("exchange");
        assert!(low >= page && high <= 2 * page, "exchange: {low}..{high} bytes of peers per process");
        assert!(lists_low >= 1 && lists_high <= 2, "exchange: {lists_low}..{lists_high} pages of posted lists");
        assert_eq!(made("alltoall"), ((4 * page, 4 * page), (4, 4)));
    }

    /// The world of an exchange of 64 B on `hosts` hosts of `per_host`
    /// ranks, `iterations` repetitions, run to its end.
    fn ran_exchange(hosts: u32, per_host: u32, iterations: u32) -> crate::sim::World {
        let toml = format!(
            "[platform.topology]\nhosts = {hosts}\n[workload]\nkind = \"exchange\"\nsize_bytes = 64\n\
             iterations = {iterations}\nwarmup = 0\nprocs_per_host = {per_host}\n"
        );
        let mut w = crate::sim::World::new(&crate::Scenario::from_toml(&toml).unwrap());
        w.run().unwrap();
        w
    }

    /// Nor does the table of where a process's pages are grow with the
    /// ranks of the run: beyond the first 4,096 ranks, a chunk of page
    /// addresses covers 4,096 ranks and is made with its first page. In an
    /// exchange of 8,192 ranks, 8 to a host, the first and last rank of a
    /// host each have one neighbour on another host and the protocol's
    /// record of it (the other six talk through shared memory). A rank's
    /// posted receives wait in one page of lists: its neighbour's across
    /// the wire, whose message comes last, if it has one. A process makes
    /// the chunk of ranks 4,096 to 8,191 only for a neighbour among them.
    #[test]
    fn the_pages_addresses_follow_the_ranks_a_process_talks_to() {
        let w = ran_exchange(1024, 8, 1);
        let n = w.env.ranks.len();
        let page = crate::paged::PAGE * 64;
        let beyond = |rank: usize| usize::from(rank >= 4096);
        for p in w.hosts.iter().flat_map(|h| &h.procs) {
            let r = p.rank() as usize;
            let (proto, posted, _) = p.parts();
            let (left, right) = ((r + n - 1) % n, (r + 1) % n);
            let wire = match r % 8 {
                0 => Some(left),
                7 => Some(right),
                _ => None,
            };
            let want = (wire.map_or(0, beyond), wire.map_or(0, |_| page), beyond(wire.unwrap_or(left)), 1);
            let made = (proto.peer_chunks(), proto.peer_bytes(), posted.list_chunks(), posted.list_pages());
            assert_eq!(made, want, "rank {r}: chunks and bytes of peers, chunks and pages of lists");
        }
    }

    /// A process keeps the receive-queue slots it has filled, not all
    /// 1,024 of them: in an exchange of two repetitions, one rank per host,
    /// each rank receives four messages of 64 B, a slot each.
    #[test]
    fn a_process_keeps_the_receive_queue_slots_it_has_filled() {
        let w = ran_exchange(16, 1, 2);
        for p in w.hosts.iter().flat_map(|h| &h.procs) {
            let lines = p.parts().2;
            let (filled, kept) = (lines.recvq_written, lines.recvq.len());
            assert_eq!((filled, kept), (4, 4), "rank {}: slots filled, slots kept", p.rank());
        }
    }

    /// A run of a few milliseconds is made again until the loops add up to
    /// `SCALE_MIN_LOOP_S`; its events are one run's.
    #[test]
    fn a_short_size_run_is_repeated_until_its_loops_add_up() {
        let r = run("exchange", 2).unwrap();
        let runs = r["runs"];
        let loops_s = r["ns_per_event"] * r["events"] * runs / 1e9;
        assert!(runs > 1.0 && runs <= f64::from(SCALE_MAX_RUNS), "{runs} runs");
        assert!(loops_s >= SCALE_MIN_LOOP_S || runs == f64::from(SCALE_MAX_RUNS), "loops {loops_s} s");
        let once = crate::run_toml(&scale_scenario("exchange", 2).unwrap()).unwrap();
        assert_eq!(r["events"], once.get("events").unwrap());
    }

    /// Pushes and pops of the event queue per unit of the `pingpong` and
    /// `stream` benches (a round trip, a message), counted by the queue. A
    /// 0 B round trip is 30.04 events (per message 7 core segments, 2
    /// interrupts and the 3 claims that re-arm them on the NIC,
    /// `nic.claim_latency_ns`; `NicRx`, `DmaDone`, `TxDone`; a few protocol
    /// timers), each pushed once and popped once: 60.01 operations; a
    /// streamed message 9.11 events and 18.22 operations. An event added to the path fails here before it
    /// shows in a bench (docs/performance.md, "Where the time goes"). The
    /// kernel tick (`host.tick`), whose events come per period and busy
    /// core rather than per message, is off here.
    #[test]
    fn queue_operations_per_round_trip_do_not_grow() {
        let ops = |toml: &str, units: f64| {
            let mut w = crate::sim::World::new(&crate::Scenario::from_toml(toml).unwrap());
            w.run().unwrap();
            (w.q.pushed() + w.q.popped()) as f64 / units
        };
        let n = 20_000;
        let no_tick = "[platform.host.tick]\nhz = 0\n";
        let pp = format!(
            "[nic]\ncoalescing = \"disabled\"\n[workload]\nkind = \"pingpong\"\niterations = {n}\nwarmup = 0\n{no_tick}"
        );
        let st = format!("[workload]\nkind = \"stream\"\nmessages = {n}\nwarmup = 0\n{no_tick}");
        let (pp, st) = (ops(&pp, n as f64), ops(&st, n as f64));
        assert!(pp <= 60.1, "{pp} queue operations per ping-pong round trip (60.01 expected)");
        assert!(st <= 18.3, "{st} queue operations per streamed message (18.22 expected)");
    }

    /// ns per event prices the event loop alone: the build is timed apart
    /// and lies within the wall time, outside the events' share.
    #[test]
    fn size_bench_leaves_the_build_out_of_the_cost_per_event() {
        let r = run("alltoall", 64).unwrap();
        let (build, wall) = (r["build_s"], r["wall_s"]);
        let loop_s = r["ns_per_event"] * r["events"] / 1e9;
        assert!(build > 0.0 && build < wall, "build {build} s, wall {wall} s");
        assert!(loop_s > 0.0 && loop_s <= wall - build, "event loop {loop_s} s, wall {wall} s, build {build} s");
    }
}
