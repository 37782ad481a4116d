//! The interrupt check: the world calls it every `CHECK_EVERY` events with
//! its progress (Open-MX runs and the LCI stack's), stops when it says so (a
//! capture keeps what was written until then), and a check that never stops
//! changes no result.

use nicsim::interrupt::{Progress, CHECK_EVERY};

const OMX: &str = "[nic]\ncoalescing = \"disabled\"\n[workload]\nkind = \"pingpong\"\niterations = 20000\nwarmup = 0\n";
const LCI: &str = "preset = \"lci2000\"\n[workload]\nkind = \"pingpong\"\niterations = 5000\nwarmup = 0\n";
/// A DSM program reports "cannot progress" as a result (`stuck_at_us`);
/// an interrupt is not one.
const DSM: &str =
    "preset = \"lci2000\"\n[nic]\npolling = \"pio\"\n[workload]\nkind = \"dsm\"\nmix = \"barnes\"\nprocs = 4\noperations = 400\n";

/// Runs `text`, recording every call of the check; stops at call `stop_at`.
fn run_recorded(text: &str, stop_at: usize) -> (Result<nicsim::Metrics, String>, Vec<Progress>) {
    let mut calls = Vec::new();
    let r = nicsim::run_toml_checked(text, &mut |p| {
        calls.push(p);
        calls.len() >= stop_at
    });
    (r, calls)
}

#[test]
fn the_check_sees_every_check_every_th_event_in_time_order() {
    for text in [OMX, LCI] {
        let (r, calls) = run_recorded(text, usize::MAX);
        let m = r.unwrap();
        let events = m.get("events").unwrap() as u64;
        assert!(calls.len() >= 10, "{} calls for {events} events", calls.len());
        assert_eq!(calls.len() as u64, events / CHECK_EVERY as u64);
        for (i, p) in calls.iter().enumerate() {
            assert_eq!(p.events, (i as u64 + 1) * CHECK_EVERY as u64);
        }
        assert!(calls.windows(2).all(|w| w[0].now <= w[1].now));
        assert!(calls.last().unwrap().now.as_us_f64() <= m.get("sim_time_us").unwrap());
    }
}

#[test]
fn a_check_that_never_stops_changes_no_result() {
    for text in [OMX, LCI, DSM] {
        let (r, _) = run_recorded(text, usize::MAX);
        // Compared as text: a stuck DSM run's exec_time_s is NaN.
        assert_eq!(format!("{:?}", r.unwrap()), format!("{:?}", nicsim::run_toml(text).unwrap()));
    }
}

#[test]
fn a_check_that_says_stop_ends_the_run_at_once() {
    for text in [OMX, LCI, DSM] {
        let (r, calls) = run_recorded(text, 3);
        assert_eq!(r, Err("interrupted".to_string()), "{text}");
        assert_eq!(calls.len(), 3);
    }
}

/// The capture is written as the run goes: a stopped run leaves at its path
/// the start of the whole run's capture (the caller that wants it whole or
/// not at all renames a temporary file after success, `run_traced`).
#[test]
fn an_interrupted_run_leaves_the_start_of_its_capture() {
    let dir = std::env::temp_dir().join(format!("nicsim-interrupted-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (part, whole) = (dir.join("part.pcap"), dir.join("whole.pcap"));
    let with_pcap = |p: &std::path::Path| format!("pcap = {:?}\n{OMX}", p.to_str().unwrap());
    let (r, _) = run_recorded(&with_pcap(&part), 20);
    assert_eq!(r, Err("interrupted".to_string()));
    nicsim::run_toml(&with_pcap(&whole)).unwrap();
    let (part, whole) = (std::fs::read(&part).unwrap(), std::fs::read(&whole).unwrap());
    assert!(part.len() >= 24 && part.len() < whole.len(), "{} of {} bytes", part.len(), whole.len());
    assert_eq!(part[..], whole[..part.len()]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn interrupted_is_its_own_kind_of_error() {
    let e = nicsim::SimError::interrupted();
    assert!(e.is_interrupted());
    assert_eq!(e.to_string(), "interrupted");
    assert!(!nicsim::SimError("no progress: nothing left".into()).is_interrupted());
}
