//! The NAS skeletons compute NPB's work at the host's rates: their time
//! follows the work and the memory bandwidth the ranks of a host share, and
//! the same CPU gives the same compute in every preset of its hosts.

use super::run;

/// NAS IS with 8 ranks on each of the 2 hosts, `iterations` timed, the
/// host's memory bandwidth `mem_mbps`, on `preset`, with receive rings that
/// hold every pull reply in flight (nothing dropped, no resend timer).
fn is_time(preset: &str, class: &str, iterations: u32, mem_mbps: f64, nic: &str) -> f64 {
    run(&format!(
        "preset = \"{preset}\"\n[platform.nas]\nmem_MBps = {mem_mbps}\n[platform.nic]\nring_slots = {RING}\n[nic]\n{nic}\n[workload]\nkind = \"nas-is\"\nclass = \"{class}\"\niterations = {iterations}\nprocs_per_host = 8\n"
    ))
    .get("exec_time_s")
    .unwrap()
}

/// Receive ring entries that hold every reply 16 ranks' pulls have in
/// flight at once (8 remote pulls a rank, 128 replies each, 8 ranks a host).
const RING: u32 = 16384;

#[test]
fn is_time_grows_with_the_per_key_memory_work() {
    // Class A: 2^23 keys, 2^19 per rank; IS is memory-bound on these hosts
    // (16 B per key before the exchange, 4 B after, a 2^15-entry range of
    // 8 B), so halving the bandwidth adds one more compute time per iteration.
    let nic = "coalescing = \"timeout\"";
    let (fast, slow) = (is_time("omx2009", "A", 3, 6000.0, nic), is_time("omx2009", "A", 3, 3000.0, nic));
    let per_rank_bytes = 20.0 * (1u64 << 19) as f64 + 8.0 * (1u64 << 15) as f64;
    let compute_at_6000 = per_rank_bytes / (6000e6 / 8.0);
    let added = slow - fast;
    assert!(
        (added / (3.0 * compute_at_6000) - 1.0).abs() < 0.15,
        "{added} s added, expected ~{} s",
        3.0 * compute_at_6000
    );
}

#[test]
fn the_two_presets_of_the_same_hosts_compute_the_same() {
    // Same CPU, same rates: two ranks on each host, with the same fabric
    // and Open-MX build (the studies' MTUs and wires differ), compute MG
    // class B in the same time on both presets.
    let t = |preset: &str| {
        run(&format!(
            "preset = \"{preset}\"\n[platform.link]\nmtu = 1500\n[platform.nic]\nsmall_bytes = 126\n\
             [platform.library]\nwire = \"open-mx-1.0\"\n[nic]\ncoalescing = \"disabled\"\n\
             [workload]\nkind = \"nas-mg\"\nclass = \"B\"\nprocs_per_host = 2\n"
        ))
        .get("exec_time_s")
        .unwrap()
    };
    let (coal, mq) = (t("omx2009"), t("omx2009-mq"));
    assert!((coal / mq - 1.0).abs() < 0.02, "omx2009 {coal} s, omx2009-mq {mq} s");
}

#[test]
fn is_is_communication_bound_enough_for_coalescing_to_move_it() {
    // With IS's compute at NPB's work (not a fitted 1.8 s per iteration),
    // the interrupt per packet of disabled coalescing costs IS class B
    // several percent against the 75 us timeout (the study: disabling
    // coalescing "increases the execution time of the benchmarks whose
    // network traffic is the highest (IS, FT and CG)"). On rings that drop
    // nothing: a dropped frame waits for Open-MX's 0.5 s resend, and a few
    // such waits, not the per-packet work, then decide the time.
    let t = |c: &str| {
        run(&format!(
            "preset = \"omx2009\"\n[platform.nas]\nmem_MBps = 6000.0\n[platform.nic]\nring_slots = {RING}\n[nic]\ncoalescing = \"{c}\"\n[workload]\nkind = \"nas-is\"\nclass = \"B\"\niterations = 3\nprocs_per_host = 8\n"
        ))
    };
    let (disabled, timeout) = (t("disabled"), t("timeout"));
    for m in [&disabled, &timeout] {
        assert_eq!(m.get("dropped"), Some(0.0));
    }
    let time = |m: &nicsim::Metrics| m.get("exec_time_s").unwrap();
    assert!(time(&disabled) > 1.05 * time(&timeout), "disabled {} s, timeout {} s", time(&disabled), time(&timeout));
}

/// nicsim's expectation, not a study's statement: LU's wavefront sends a
/// 1.6 kB message per plane and neighbour (`exchange_1`), each after a
/// plane's compute, so under the default coalescing its hosts take far more
/// interrupts a second than BT's or SP's, whose few messages a step are
/// faces and solve buffers of hundreds of kB (class B, 2 ranks a host):
/// about 2,600 a second against 840 and 900.
#[test]
fn lu_s_plane_messages_raise_the_most_interrupts_a_second() {
    let rate = |kind: &str| {
        let m = run(&format!(
            "preset = \"omx2009\"\n[nic]\ncoalescing = \"timeout\"\n[workload]\nkind = \"nas-{kind}\"\n\
             class = \"B\"\nprocs_per_host = 2\n"
        ));
        m.get("interrupts_timed").unwrap() / m.get("exec_time_s").unwrap()
    };
    let (lu, bt, sp) = (rate("lu"), rate("bt"), rate("sp"));
    assert!(lu > 2.5 * bt && lu > 2.5 * sp, "interrupts/s: lu {lu}, bt {bt}, sp {sp}");
}
