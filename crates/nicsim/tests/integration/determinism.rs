//! Same inputs and seed give the same metrics, bit for bit.

use super::run;

const LOSSY: &str = "seed = 7\n[protocol]\nloss = 0.01\nreorder = 0.02\n[nic]\ncoalescing = \"stream\"\n[workload]\nkind = \"stream\"\nsize_bytes = 20000\nmessages = 300\nwarmup = 10\n";

#[test]
fn same_seed_same_metrics() {
    assert_eq!(run(LOSSY), run(LOSSY));
}

#[test]
fn different_seed_different_trace() {
    let other = LOSSY.replace("seed = 7", "seed = 8");
    assert_ne!(run(LOSSY).get("sim_time_us"), run(&other).get("sim_time_us"));
}
