//! The timeline (`sim::run_traced`): recording changes no metric, its
//! records repeat with the seed, a core's or a queue's records nest, the
//! busy ones add up to the CPU metric, and the window and cap hold.

use nicsim::interrupt;
use nicsim::sim::{run_traced, Record, TraceCfg, Tracer, What};
use nicsim::time::Instant;
use nicsim::{Metrics, Scenario};
use std::collections::BTreeMap;

/// Several ranks per host on four hosts, blocking waits, loss and jitter:
/// preemptions, process wake-ups, sleep, resends and notifications from
/// other cores.
const BUSY_WORLD: &str = "seed = 3\n[platform.topology]\nhosts = 4\n[host]\nwait = \"block\"\n\
    [protocol]\nloss = 0.002\njitter_ns = 500\n[nic]\ncoalescing = \"stream\"\n\
    [workload]\nkind = \"exchange\"\nprocs_per_host = 4\nsize_bytes = 3000\niterations = 20\n";

const STREAM: &str = "[nic]\ncoalescing = \"openmx\"\n[workload]\nkind = \"stream\"\nsize_bytes = 0\nmessages = 2000\n";

const ALL: TraceCfg = TraceCfg { from: Instant::ZERO, until: Instant::from_ps(u64::MAX), cap: u64::MAX };

fn traced(text: &str, cfg: TraceCfg) -> (Metrics, Box<Tracer>) {
    let s = Scenario::from_toml(text).unwrap();
    let (m, t) = run_traced(&s, None, &mut interrupt::never, Some(cfg)).unwrap();
    (m, t.expect("a timeline was asked for"))
}

fn plain(text: &str) -> Metrics {
    nicsim::run(&Scenario::from_toml(text).unwrap()).unwrap()
}

fn slice(r: &Record) -> bool {
    r.what.describe().2 == "X"
}

#[test]
fn recording_changes_no_metric() {
    for text in [BUSY_WORLD, STREAM] {
        assert_eq!(traced(text, ALL).0, plain(text));
    }
}

#[test]
fn same_seed_same_records() {
    let key = |t: Box<Tracer>| {
        t.into_records().iter().map(|r| (r.ts, r.dur, r.id, r.arg, r.host, r.track, r.what as u8)).collect::<Vec<_>>()
    };
    assert_eq!(key(traced(BUSY_WORLD, ALL).1), key(traced(BUSY_WORLD, ALL).1));
}

#[test]
fn records_of_a_track_nest_and_busy_ones_add_up_to_the_cpu_metric() {
    let polling = BUSY_WORLD.replace("wait = \"block\"", "wait = \"poll\"");
    for text in [BUSY_WORLD, STREAM, &polling] {
        let (m, t) = traced(text, ALL);
        let overlap = t.spin_overlap.clone();
        let records = t.into_records();
        let mut tracks: BTreeMap<(u16, u16), Vec<(u64, u64)>> = BTreeMap::new();
        let mut busy: BTreeMap<u16, u64> = BTreeMap::new();
        for r in records.iter().filter(|r| slice(r)) {
            tracks.entry((r.host, r.track)).or_default().push((r.ts, r.dur));
            if ["kernel", "app", "spin"].contains(&r.what.describe().1) {
                *busy.entry(r.host).or_default() += r.dur;
            }
        }
        for (track, items) in &tracks {
            // Sorted by start, longer first: each one ends within the one
            // that holds it, or after it.
            let mut open: Vec<u64> = Vec::new();
            for &(ts, dur) in items {
                while open.last().is_some_and(|&end| end <= ts) {
                    open.pop();
                }
                if let Some(&end) = open.last() {
                    assert!(ts + dur <= end, "{text}: track {track:?}: ({ts}, {dur}) overlaps a slice ending at {end}");
                }
                open.push(ts + dur);
            }
        }
        let sim_ps = m.get("sim_time_us").unwrap() * 1e6;
        for h in 0..2u16 {
            let counted = (busy[&h] + overlap[h as usize]) as f64 / sim_ps;
            let metric = m.get(&format!("host{h}_cpu_cores")).unwrap();
            assert!((counted / metric - 1.0).abs() < 1e-9, "{text}: host {h}: {counted} against {metric}");
        }
        let has = |w| records.iter().any(|r| r.what == w);
        assert!(has(What::ProcWake) || text != BUSY_WORLD);
        assert!(has(What::Spin) || text == BUSY_WORLD);
    }
}

#[test]
fn the_window_and_the_cap_hold() {
    let (from, until) = (Instant::from_ps(200_000_000), Instant::from_ps(300_000_000));
    let (_, t) = traced(STREAM, TraceCfg { from, until, cap: u64::MAX });
    assert_eq!(t.over_cap, 0);
    let records = t.into_records();
    assert!(!records.is_empty());
    for r in &records {
        assert!(r.ts <= until.as_ps() && r.ts + r.dur >= from.as_ps(), "{r:?} is outside the window");
    }
    let (_, t) = traced(STREAM, TraceCfg { cap: 100, ..ALL });
    assert!(t.over_cap > 0);
    let records = t.into_records();
    assert!(records.len() <= 100 && records.len() >= 98);
    // Arrows keep both ends or neither.
    let ends = |w| records.iter().filter(|r| r.what == w).count();
    assert_eq!(ends(What::FrameOut), ends(What::FrameIn));
}
