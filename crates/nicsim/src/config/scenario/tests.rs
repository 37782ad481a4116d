//! Tests of the scenario's validation: defaults, overrides, bindings and the messages of bad input.

use super::*;
use crate::config::WatchdogDelay;
use crate::time::Instant;

#[test]
fn minimal_scenario_uses_defaults() {
    let s = Scenario::from_toml("[workload]\nkind = \"pingpong\"\n").unwrap();
    assert_eq!(s.platform.name, "omx2009");
    assert!(matches!(s.coalesce, CoalesceSpec::Timeout(t) if t.delay == Duration::from_us(75)));
    assert_eq!(s.steering, SteeringKind::SingleRr);
}

#[test]
fn an_lci_preset_maps_onto_this_world_for_an_mpi_workload() {
    let s = Scenario::from_toml("preset = \"lci2000\"\n[workload]\nkind = \"pingpong\"\n").unwrap();
    assert_eq!((s.platform.name.as_str(), s.platform.cores()), ("lci2000", 1));
    assert!(s.platform.grid.is_some());
}

#[test]
fn what_this_world_does_not_run_on_an_lci_preset_is_refused_by_name() {
    let cases = [
        ("[workload]\nkind = \"flood\"\n", &["`workload.kind`", "flood", "lci2000", "alltoall", "asp"][..]),
        ("[host]\nioat = true\n[workload]\nkind = \"stream\"\n", &["`host.ioat`", "true", "copy engine"][..]),
        ("[protocol]\nloss = 0.1\n[workload]\nkind = \"stream\"\n", &["`protocol.loss`", "0.1", "grid"][..]),
        ("[platform.grid]\nx = 99\n[workload]\nkind = \"stream\"\n", &["grid.x`", "99"][..]),
    ];
    for (text, needles) in cases {
        let e = Scenario::from_toml(&format!("preset = \"lci2000\"\n{text}")).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        for n in needles {
            assert!(e.contains(n), "{n:?} not in {e:?}");
        }
    }
}

#[test]
fn errors_name_key_value_and_allowed() {
    let cases = [
        ("[nic]\ncoalescing = \"fast\"\n[workload]\nkind = \"pingpong\"\n", &["nic.coalescing", "fast", "openmx"][..]),
        ("[nic]\ndelay_us = -3\n[workload]\nkind = \"pingpong\"\n", &["nic.delay_us", "-3"][..]),
        ("[workload]\nkind = \"pingpong\"\nsize = 3\n", &["size"][..]),
        ("[platform.link]\nmtu = 10\n[workload]\nkind = \"stream\"\n", &["link.mtu", "10"][..]),
        ("[platform.link]\nmtux = 10\n[workload]\nkind = \"stream\"\n", &["platform.link.mtux"][..]),
        ("[platform.link]\nmtu = \"big\"\n[workload]\nkind = \"stream\"\n", &["platform.link.mtu", "big"][..]),
        ("[host]\nbinding = 99\n[workload]\nkind = \"stream\"\n", &["host.binding", "99"][..]),
        ("[protocol]\nunmarked = [\"rdnv\"]\n[workload]\nkind = \"stream\"\n", &["rdnv"][..]),
        ("[host]\ntx_reap = \"irq\"\n[workload]\nkind = \"stream\"\n", &["host.tx_reap", "irq", "hard-irq"][..]),
        (
            "[platform.nic]\ntx_reap = \"soft\"\n[workload]\nkind = \"stream\"\n",
            &["platform.nic.tx_reap", "soft", "hard-irq"][..],
        ),
        (
            "[platform.cache]\ntx_contention_lines = -3\n[workload]\nkind = \"stream\"\n",
            &["platform.cache.tx_contention_lines", "-3", "0 ..= 1024"][..],
        ),
    ];
    for (text, needles) in cases {
        let e = Scenario::from_toml(text).unwrap_err().0;
        for n in needles {
            assert!(e.contains(n), "error {e:?} should mention {n:?}");
        }
        assert!(!e.contains('\n'), "one line: {e:?}");
    }
}

/// Exact messages: one line naming the key, the value and what is
/// allowed, for type errors as for range errors.
#[rstest::rstest]
#[case::type_error(
    "[workload]\nkind = \"stream\"\nsize_bytes = \"big\"",
    "invalid value for `workload.size_bytes`: \"big\" (allowed: an integer 0 ..= 1073741824)"
)]
#[case::negative_size(
    "[workload]\nkind = \"stream\"\nsize_bytes = -1",
    "invalid value for `workload.size_bytes`: -1 (allowed: an integer 0 ..= 1073741824)"
)]
#[case::iterations_of_the_kind(
    "[workload]\nkind = \"nas-is\"\niterations = \"ten\"",
    "invalid value for `workload.iterations`: \"ten\" (allowed: an integer 1 ..= 1000)"
)]
#[case::irq_core_of_the_topology(
    "[nic]\nsteering = \"single-core\"\nirq_core = -1\n[workload]\nkind = \"stream\"",
    "invalid value for `nic.irq_core`: -1 (allowed: an integer 0 ..= 7)"
)]
#[case::rndv_threshold(
    "[protocol]\nrndv_threshold = -1\n[workload]\nkind = \"stream\"",
    "invalid value for `protocol.rndv_threshold`: -1 (allowed: an integer 129 ..= 46464: a MEDIUM message \
     travels in at most 32 fragments of 1452 bytes at platform.link.mtu = 1500)"
)]
#[case::hosts_negative(
    "[platform.topology]\nhosts = -2\n[workload]\nkind = \"stream\"",
    "invalid value for `platform.topology.hosts`: -2 (allowed: an integer 2 ..= 1024)"
)]
#[case::hosts_below(
    "[platform.topology]\nhosts = 1\n[workload]\nkind = \"stream\"",
    "invalid value for `platform.topology.hosts`: 1 (allowed: an integer 2 ..= 1024)"
)]
#[case::hosts_beyond_32_bits(
    "[platform.topology]\nhosts = 5000000000\n[workload]\nkind = \"stream\"",
    "invalid value for `platform.topology.hosts`: 5000000000 (allowed: an integer 2 ..= 1024)"
)]
#[case::hosts_not_a_number(
    "[platform.topology]\nhosts = \"many\"\n[workload]\nkind = \"stream\"",
    "invalid value for `platform.topology.hosts`: \"many\" (allowed: an integer 2 ..= 1024)"
)]
#[case::count_without_a_range(
    "[platform.cache]\ntx_contention_lines = -3\n[workload]\nkind = \"stream\"",
    "invalid value for `platform.cache.tx_contention_lines`: -3 (allowed: an integer 0 ..= 1024)"
)]
#[case::number_of_the_preset(
    "[platform.link]\nrate_gbps = \"fast\"\n[workload]\nkind = \"stream\"",
    "invalid value for `platform.link.rate_gbps`: \"fast\" (allowed: a number 0.001 ..= 10000)"
)]
#[case::value_for_a_table(
    "[platform]\ntopology = 3\n[workload]\nkind = \"stream\"",
    "`platform.topology` is a table in the preset; give its keys"
)]
#[case::float_key(
    "[nic]\ndelay_us = \"x\"\n[workload]\nkind = \"stream\"",
    "invalid value for `nic.delay_us`: \"x\" (allowed: a number 0 ..= 1000000)"
)]
#[case::float_key_of_the_protocol(
    "[protocol]\nloss = \"x\"\n[workload]\nkind = \"stream\"",
    "invalid value for `protocol.loss`: \"x\" (allowed: a number 0 ..= 0.5)"
)]
#[case::negative_seed(
    "seed = -1\n[workload]\nkind = \"stream\"",
    "invalid value for `seed`: -1 (allowed: an integer 0 ..= 9223372036854775807)"
)]
#[case::missing_kind(
    "[workload]\nsize_bytes = 8",
    "missing key `workload.kind` (required: one of pingpong, stream, uniband, flood, nas-is, nas-cg, nas-mg, \
     nas-ft, nas-bt, nas-ep, nas-lu, nas-sp, alltoall, exchange, bcast, asp, qr, fft-alltoall, echo-nic, echo-kernel, dsm)"
)]
#[case::missing_workload(
    "seed = 3",
    "missing key `workload.kind` (required: one of pingpong, stream, uniband, flood, nas-is, nas-cg, nas-mg, \
     nas-ft, nas-bt, nas-ep, nas-lu, nas-sp, alltoall, exchange, bcast, asp, qr, fft-alltoall, echo-nic, echo-kernel, dsm)"
)]
#[case::unknown_kind(
    "[workload]\nkind = \"pong\"",
    "invalid value for `workload.kind`: \"pong\" (allowed: one of pingpong, stream, uniband, flood, nas-is, \
     nas-cg, nas-mg, nas-ft, nas-bt, nas-ep, nas-lu, nas-sp, alltoall, exchange, bcast, asp, qr, fft-alltoall, echo-nic, echo-kernel, dsm)"
)]
#[case::name_of_wrong_type(
    "[nic]\ncoalescing = 3\n[workload]\nkind = \"stream\"",
    "invalid value for `nic.coalescing`: 3 (allowed: one of disabled, timeout, openmx, stream, adaptive, \
     openmx-adaptive)"
)]
#[case::unknown_key(
    "[nic]\nbogus = 1\n[workload]\nkind = \"stream\"",
    "unknown key `nic.bogus` (allowed here: coalescing, delay_us, frames, timeout_mode, cap_us, adaptive, \
     tx_delay_us, tx_frames, cqe_mode_rx, cqe_mode_tx, adaptive_tx, rx_profile, tx_profile, steering, irq_core, watchdog_us, multicast_forwarding, clock_period_us, rx_delivery, flow_control, \
     polling, split_bytes, forwarding, fanout, host0)"
)]
#[case::list_item(
    "[protocol]\nunmarked = [\"rndv\", \"rdnv\"]\n[workload]\nkind = \"stream\"",
    "invalid value for `protocol.unmarked[1]`: \"rdnv\" (allowed: one of tiny_small, medium_last, rndv, pull, \
     last_pull_reply, notify)"
)]
#[case::not_a_list(
    "[protocol]\nunmarked = \"rndv\"\n[workload]\nkind = \"stream\"",
    "invalid value for `protocol.unmarked`: \"rndv\" (allowed: a list)"
)]
#[case::binding(
    "[host]\nbinding = -1\n[workload]\nkind = \"stream\"",
    "invalid value for `host.binding`: -1 (allowed: a core index or one of \"none\", \"auto\", \"SC\", \"S$\", \
     \"SP\", \"OP\")"
)]
#[case::u32_overflow(
    "[workload]\nkind = \"uniband\"\nwindow = 5000000000",
    "invalid value for `workload.window`: 5000000000 (allowed: an integer 1 ..= 65536)"
)]
#[case::nas_bt_square(
    "[workload]\nkind = \"nas-bt\"\nprocs_per_host = 4",
    "invalid value for `workload.procs_per_host`: 4 (allowed: a value giving a square rank count (NPB BT and SP's \
     multi-partition: 4, 16, 64, ...))"
)]
#[case::nas_class(
    "[workload]\nkind = \"nas-cg\"\nclass = \"A\"",
    "invalid value for `workload.class`: \"A\" (allowed: B or C (the NPB classes of the CG, MG, FT, BT, EP, LU and SP \
     skeletons))"
)]
#[case::unread_key(
    "[workload]\nkind = \"stream\"\niterations = 5",
    "`workload.iterations` = 5 is not read by workload.kind = \"stream\" (its keys: size_bytes, messages, warmup, window)"
)]
#[case::unread_size(
    "[workload]\nkind = \"nas-is\"\nsize_bytes = 64",
    "`workload.size_bytes` = 64 is not read by workload.kind = \"nas-is\" (its keys: class, iterations, procs_per_host)"
)]
#[case::unread_class(
    "[workload]\nkind = \"pingpong\"\nclass = \"C\"",
    "`workload.class` = \"C\" is not read by workload.kind = \"pingpong\" (its keys: size_bytes, iterations, warmup)"
)]
#[case::alltoall_algorithm_unknown(
    "[workload]\nkind = \"alltoall\"\nalltoall_algorithm = \"ring\"",
    "invalid value for `workload.alltoall_algorithm`: \"ring\" (allowed: one of auto, linear, pairwise, bruck)"
)]
#[case::alltoall_algorithm_unread(
    "[workload]\nkind = \"exchange\"\nalltoall_algorithm = \"bruck\"",
    "`workload.alltoall_algorithm` = \"bruck\" is not read by workload.kind = \"exchange\" (its keys: size_bytes, \
     iterations, warmup, procs_per_host)"
)]
#[case::ranks_beyond_16_bits(
    "[platform.topology]\nhosts = 1024\nsockets = 16\ndies_per_socket = 1\ncores_per_die = 16\n\
     [workload]\nkind = \"exchange\"\nprocs_per_host = 256",
    "invalid value for `workload.procs_per_host`: 256 (allowed: at most 63 with platform.topology.hosts = 1024: \
     a run has at most 65535 ranks)"
)]
#[case::table_expected("nic = 3\n[workload]\nkind = \"stream\"", "invalid value for `nic`: 3 (allowed: a table)")]
#[case::preset_enum(
    "[platform.nic]\ntx_reap = \"soft\"\n[workload]\nkind = \"stream\"",
    "invalid value for `platform.nic.tx_reap`: \"soft\" (allowed: one of napi, hard-irq)"
)]
#[case::asp_rows_of_the_ranks(
    "[workload]\nkind = \"asp\"\nprocs_per_host = 1\nrows = 33",
    "invalid value for `workload.rows`: 33 (allowed: a multiple of the 2 ranks (hosts x procs_per_host), at most \
     65536)"
)]
#[case::asp_ni_forwards_eager_messages(
    "[workload]\nkind = \"asp\"\nprocs_per_host = 1\nrows = 8194\nforwarding = \"ni\"",
    "invalid value for `workload.rows`: 8194 (allowed: at most 8192 with workload.forwarding = \"ni\" (the NIC \
     firmware forwards eager messages, up to protocol.rndv_threshold = 32768 B))"
)]
#[case::qr_iterations_below_the_columns(
    "[workload]\nkind = \"qr\"\nprocs_per_host = 1\ncols = 16\niterations = 16",
    "invalid value for `workload.iterations`: 16 (allowed: an integer 1 ..= 15)"
)]
#[case::qr_cycles(
    "[workload]\nkind = \"qr\"\nprocs_per_host = 1\nnorm_cycles = -1",
    "invalid value for `workload.norm_cycles`: -1 (allowed: 0 ..= 1000000)"
)]
#[case::fft_keys(
    "[workload]\nkind = \"fft-alltoall\"\nrows = 4",
    "`workload.rows` = 4 is not read by workload.kind = \"fft-alltoall\" (its keys: size_bytes, iterations, \
     procs_per_host, compute_us)"
)]
#[case::irq_moderation(
    "[nic]\nrx_frames_irq = 2\n[workload]\nkind = \"stream\"",
    "`nic.rx_frames_irq` is not modelled: no NIC nicsim models honours it: myri10ge takes rx-usecs only, mlx5 \
     rx/tx-usecs, rx/tx-frames, adaptive and CQE mode, acenic no ethtool coalescing; bnxt and tg3 do (a moderation \
     that applies while an interrupt is pending)"
)]
fn error_messages(#[case] text: &str, #[case] want: &str) {
    assert_eq!(Scenario::from_toml(text).unwrap_err().0, want);
}

/// Every accepted name parses, and the help of each field lists it.
#[test]
fn enumerations_accept_every_listed_name() {
    for kind in crate::config::Stack::OpenMx.programs(crate::config::Hardware::Ethernet) {
        let collective = kind.starts_with("nas-") || ["alltoall", "exchange"].contains(&kind);
        let per_host = if collective { "procs_per_host = 2\n" } else { "" };
        let text = format!("[workload]\nkind = \"{kind}\"\n{per_host}");
        assert!(Scenario::from_toml(&text).is_ok(), "{kind}");
    }
    for b in crate::config::variant_names::<BindingName>() {
        let text = format!("[host]\nbinding = \"{b}\"\n[workload]\nkind = \"stream\"\n");
        assert!(Scenario::from_toml(&text).is_ok(), "{b}");
    }
    let s = Scenario::from_toml("[host]\nbinding = \"none\"\n[workload]\nkind = \"stream\"\n").unwrap();
    assert_eq!(s.binding, None);
}

/// A value of the scenario names its key as the scenario does, one of
/// a preset file as the file does, whichever check refuses it.
#[test]
fn a_preset_file_value_is_named_as_the_file_names_it() {
    let dir = std::env::temp_dir().join(format!("nicsim-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mine.toml");
    let preset = crate::config::preset_text("omx2009").unwrap().replace("hosts = 2", "hosts = 1");
    std::fs::write(&file, preset).unwrap();
    let path = file.to_str().unwrap();
    let run = |platform: &str| {
        Scenario::from_toml(&format!("preset = {path:?}\n{platform}[workload]\nkind = \"stream\"\n")).unwrap_err().0
    };
    assert_eq!(
        run(""),
        format!("preset file {path:?}: invalid value for `topology.hosts`: 1 (allowed: an integer 2 ..= 1024)")
    );
    assert_eq!(
        run("[platform.topology]\nhosts = 0\n"),
        "invalid value for `platform.topology.hosts`: 0 (allowed: an integer 2 ..= 1024)"
    );
    assert!(Scenario::from_toml(&format!(
        "preset = {path:?}\n[platform.topology]\nhosts = 4\n[workload]\nkind = \"stream\"\n"
    ))
    .is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn platform_overrides_apply() {
    let s = Scenario::from_toml(
        "[platform.link]\nmtu = 9000\n[platform.host]\nsyscall_ns = 1\n[workload]\nkind = \"stream\"\n",
    )
    .unwrap();
    assert_eq!(s.platform.link.mtu, 9000);
    assert_eq!(s.platform.host.syscall_ns, 1.0);
}

/// `library.spin_ns` is read by nothing: a scenario or a preset file that
/// sets it is refused with one line saying why, not run as if it counted.
#[test]
fn a_key_no_platform_reads_is_refused_with_why() {
    let err =
        Scenario::from_toml("[platform.library]\nspin_ns = 100000\n[workload]\nkind = \"stream\"\n").unwrap_err().0;
    assert!(err.starts_with("`platform.library.spin_ns` = 100000 is no key of a platform: "), "{err}");
    assert!(err.contains("host.wait") && !err.contains('\n'), "{err}");
    let dir = std::env::temp_dir().join(format!("nicsim-gone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("old.toml");
    let text = crate::config::preset_text("omx2009").unwrap().replace("[library]\n", "[library]\nspin_ns = 0.0\n");
    std::fs::write(&file, text).unwrap();
    let path = file.to_str().unwrap();
    let err = Scenario::from_toml(&format!("preset = {path:?}\n[workload]\nkind = \"stream\"\n")).unwrap_err().0;
    assert!(
        err.starts_with(&format!("preset file {path:?}: `library.spin_ns` = 0.0 is no key of a platform")),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A capture is an Open-MX run's: the LCI stack refuses `pcap` by name and
/// says why, not as an unknown key.
#[test]
fn pcap_on_the_lci_stack_says_why() {
    let err = Scenario::from_toml(
        "preset = \"lci2000\"\npcap = \"x.pcap\"\n[protocol]\nstack = \"lci\"\n[workload]\nkind = \"stream\"\n",
    )
    .unwrap_err()
    .0;
    assert!(err.starts_with("`pcap` (--pcap): the LCI stack writes no capture"), "{err}");
}

/// gro_flush_timeout and irq_suspend_timeout in the kernel's unit (ns) or
/// in µs, one of the two.
#[test]
fn linux_timeouts_in_ns_or_us() {
    let host =
        |h: &str| Scenario::from_toml(&format!("preset = \"modern\"\n[host]\n{h}\n[workload]\nkind = \"pingpong\"\n"));
    let ns = host("gro_flush_timeout_ns = 20000\nirq_suspend_timeout_ns = 100000\nbusy_poll = true").unwrap();
    let us = host("gro_flush_timeout_us = 20\nirq_suspend_timeout_us = 100\nbusy_poll = true").unwrap();
    assert_eq!(ns.napi, us.napi);
    assert_eq!(ns.napi.gro_flush_timeout, Duration::from_us(20));
    let e = host("gro_flush_timeout_ns = 20000\ngro_flush_timeout_us = 20").unwrap_err().0;
    assert!(e.starts_with("`host.gro_flush_timeout_ns` and `host.gro_flush_timeout_us` are the same setting"), "{e}");
    let e = host("irq_suspend_timeout_ns = 100000").unwrap_err().0;
    assert!(e.starts_with("invalid value for `host.irq_suspend_timeout_ns`: it needs `host.busy_poll = true`"), "{e}");
    let e = host("gro_flush_timeout_ns = 1.5").unwrap_err().0;
    assert!(e.starts_with("invalid value for `host.gro_flush_timeout_ns`"), "{e}");
}

/// The LCI stack's part of a scenario (`Scenario::lci`), read in its own words.
#[rstest::rstest]
#[case::missing_kind(
    "preset = \"lci2000\"\n[workload]\nsize_bytes = 8",
    "missing key `workload.kind` (required: one of pingpong, stream, bcast, asp, qr, fft-alltoall, dsm)"
)]
#[case::type_error(
    "preset = \"lci2000\"\n[workload]\nkind = \"stream\"\nsize_bytes = \"big\"",
    "invalid value for `workload.size_bytes`: \"big\" (allowed: an integer 0 ..= 1073741824)"
)]
#[case::grid_negative(
    "preset = \"lci2000\"\n[platform.grid]\nx = -1\n[workload]\nkind = \"stream\"",
    "invalid value for `platform.grid.x`: -1 (allowed: an integer 1 ..= 64)"
)]
#[case::hosts_of_the_grid(
    "preset = \"lci2000\"\n[platform.grid]\nhosts = 3\n[workload]\nkind = \"stream\"",
    "invalid value for `platform.grid.hosts`: 3 (allowed: x*y*z*hosts_per_switch = 64, at least 2)"
)]
#[case::rows(
    "preset = \"lci2000\"\n[workload]\nkind = \"asp\"\nrows = \"many\"",
    "invalid value for `workload.rows`: \"many\" (allowed: a multiple of the 64 ranks (one per host), at most 65536)"
)]
#[case::src_of_the_grid(
    "preset = \"lci2000\"\n[workload]\nkind = \"stream\"\nsrc = -1",
    "invalid value for `workload.src`: -1 (allowed: an integer 0 ..= 63)"
)]
#[case::polling(
    "preset = \"lci2000\"\n[nic]\npolling = \"shift\"\n[workload]\nkind = \"stream\"",
    "invalid value for `nic.polling`: \"shift\" (allowed: one of pio, double-dma, full-packet, static-split, \
     packet-shifting)"
)]
#[case::watchdog_name(
    "preset = \"lci2000\"\n[nic]\nwatchdog_us = \"never\"\n[workload]\nkind = \"stream\"",
    "invalid value for `nic.watchdog_us`: \"never\" (allowed: \"none\", \"inf\" or a number of us)"
)]
#[case::watchdog_range(
    "preset = \"lci2000\"\n[nic]\nwatchdog_us = 0\n[workload]\nkind = \"stream\"",
    "invalid value for `nic.watchdog_us`: 0 (allowed: \"none\", \"inf\" or a number of us in [0.01, 1e7])"
)]
#[case::mix(
    "preset = \"lci2000\"\n[workload]\nkind = \"dsm\"\nmix = \"ocean\"",
    "invalid value for `workload.mix`: \"ocean\" (allowed: one of barnes, fft, radix)"
)]
#[case::unread_key(
    "preset = \"lci2000\"\n[workload]\nkind = \"stream\"\niterations = 5",
    "`workload.iterations` = 5 is not read by workload.kind = \"stream\" (its keys: size_bytes, messages, \
     warmup, src, dst)"
)]
#[case::unread_mix(
    "preset = \"lci2000\"\n[workload]\nkind = \"bcast\"\nmix = \"fft\"",
    "`workload.mix` = \"fft\" is not read by workload.kind = \"bcast\" (its keys: size_bytes, root, \
     iterations, count)"
)]
fn lci_stack_error_messages(#[case] text: &str, #[case] want: &str) {
    assert_eq!(Scenario::from_toml(&format!("{text}\n[protocol]\nstack = \"lci\"\n")).unwrap_err().0, want);
}

#[test]
fn lci_stack_watchdog_values() {
    let parse = |v: &str| {
        let text = format!("preset = \"lci2000\"\n[nic]\nwatchdog_us = {v}\n[workload]\nkind = \"stream\"");
        Scenario::from_toml(&format!("{text}\n[protocol]\nstack = \"lci\"\n")).unwrap().ni.watchdog
    };
    assert_eq!(parse("\"none\""), WatchdogDelay::Immediate);
    assert_eq!(parse("\"inf\""), WatchdogDelay::Never);
    assert_eq!(parse("20"), WatchdogDelay::After(Duration::from_us(20)));
    assert_eq!(parse("0.5"), WatchdogDelay::After(Duration::from_ns(500)));
}

/// One scenario file for every stack: a key of the shared tables that only
/// the other stacks read is refused by name, with its value and why.
#[test]
fn a_key_only_the_other_stacks_read_is_refused_by_name() {
    let omx = |t: &str| Scenario::from_toml(&format!("{t}\n[workload]\nkind = \"stream\"\n")).unwrap_err().0;
    for (text, key) in [
        ("[nic]\npolling = \"pio\"", "`nic.polling` = \"pio\""),
        ("[nic]\nfanout = 3", "`nic.fanout` = 3"),
        ("[protocol]\nsend_buffers = 8", "`protocol.send_buffers` = 8"),
        ("preset = \"lci2000\"\n[protocol]\nstack = \"open-mx\"\nack_delay_us = 5.0", "`protocol.ack_delay_us` = 5.0"),
    ] {
        let e = omx(text);
        assert!(e.starts_with(&format!("{key} is read by protocol.stack = \"lci\" only")), "{e}");
    }
    let lci = |t: &str| {
        let text = format!("preset = \"lci2000\"\n{t}\n[workload]\nkind = \"stream\"\n");
        Scenario::from_toml(&text).unwrap_err().0
    };
    for (text, key) in [
        ("[host]\nsleep = true\n[protocol]\nstack = \"lci\"", "`host.sleep` = true"),
        ("[nic]\ncoalescing = \"timeout\"\n[protocol]\nstack = \"lci\"", "`nic.coalescing` = \"timeout\""),
        ("[protocol]\nstack = \"lci\"\nloss = 0.1", "`protocol.loss` = 0.1"),
    ] {
        let e = lci(text);
        assert!(e.starts_with(&format!("{key} is not read by protocol.stack = \"lci\"")) && !e.contains('\n'), "{e}");
    }
    // A file built in code is checked as one read from TOML.
    let mut f = ScenarioFile::default();
    f.workload.kind = Some(crate::config::WorkloadKind::Stream);
    f.protocol.send_buffers = Some(crate::config::Int(8.into()));
    let e = Scenario::from_file(f).unwrap_err().0;
    assert!(e.starts_with("`protocol.send_buffers` is read by protocol.stack = \"lci\" only"), "{e}");
}

/// `nic.watchdog_us` is one key of every stack: "none" is no watchdog on
/// Open-MX (as 0), "inf" the LCI stack's only.
#[test]
fn the_watchdog_delay_is_one_key_for_every_stack() {
    let omx = |v: &str| Scenario::from_toml(&format!("[nic]\nwatchdog_us = {v}\n[workload]\nkind = \"stream\"\n"));
    assert_eq!(omx("\"none\"").unwrap().ni.watchdog, WatchdogDelay::Immediate);
    assert_eq!(omx("0").unwrap().ni.watchdog, WatchdogDelay::Immediate);
    assert_eq!(omx("20").unwrap().ni.watchdog, WatchdogDelay::After(Duration::from_us(20)));
    let e = omx("\"inf\"").unwrap_err().0;
    assert!(e.starts_with("invalid value for `nic.watchdog_us`: \"inf\"") && e.contains("LCI stack"), "{e}");
    // The NI clock's period: one check, the tick's fetch priced by each stack's NIC.
    let clock = |preset: &str, stack: &str, us: &str| {
        let text = format!(
            "preset = \"{preset}\"\n[nic]\nclock_period_us = {us}\n[protocol]\nstack = \"{stack}\"\n\
             [workload]\nkind = \"stream\"\n"
        );
        Scenario::from_toml(&text).map_err(|e| e.0)
    };
    assert_eq!(clock("omx2009", "open-mx", "0").unwrap().ni.clock, None);
    let e = clock("lci2000", "lci", "0").unwrap_err();
    assert!(e.contains("0.876 ..= 10000000: at least one tick's fetch") && !e.contains("0 (no NI clock)"), "{e}");
    let e = clock("omx2009", "open-mx", "0.5").unwrap_err();
    assert!(e.contains("0 (no NI clock), or 0.7 ..= 1000000: at least one tick's fetch"), "{e}");
}

/// The NIC's watchdog and clock are one concept on every stack: on the LCI
/// stack the LANai firmware each host gets runs the scenario's `ni`
/// watchdog (its interval, its per-packet interrupts), and the world runs
/// no second one (no queue watchdog, no process clock); its NI clock is
/// the world's one (`sim/clock.rs`, tested there).
#[test]
fn the_lanai_firmware_runs_the_scenarios_watchdog_and_clock() {
    for (nic, watchdog, clock) in [
        ("watchdog_us = 20\nclock_period_us = 5.0", WatchdogDelay::After(Duration::from_us(20)), Some(5)),
        ("watchdog_us = \"none\"", WatchdogDelay::Immediate, None),
        ("", WatchdogDelay::Never, None),
    ] {
        let text =
            format!("preset = \"lci2000\"\n[nic]\n{nic}\n[protocol]\nstack = \"lci\"\n[workload]\nkind = \"stream\"\n");
        let s = Scenario::from_toml(&text).unwrap();
        assert_eq!((s.ni.watchdog, s.ni.clock), (watchdog, clock.map(Duration::from_us)), "{nic}");
        assert_eq!((s.queue_watchdog(), s.process_clock()), (None, None), "{nic}");
        let (_, parts) = crate::lci::build(&s, s.lci.as_deref().unwrap());
        for (_, ni) in &parts {
            let at = Instant::ZERO + Duration::from_us(1);
            let timer = ni.watchdog.clone().and_then(|mut w| w.on_delivered(at)).map(|(t, _)| t.since(at));
            assert_eq!(timer, s.ni.watchdog.timer(), "{nic}");
            assert_eq!(ni.irq_per_packet, s.ni.watchdog == WatchdogDelay::Immediate, "{nic}");
        }
    }
    // On Open-MX the world's NIC runs them.
    let text = "[nic]\nwatchdog_us = 20\nclock_period_us = 5.0\n[workload]\nkind = \"stream\"\n";
    let s = Scenario::from_toml(text).unwrap();
    assert_eq!((s.queue_watchdog(), s.process_clock()), (Some(Duration::from_us(20)), Some(Duration::from_us(5))));
}

/// The reliable protocol is on when `[protocol]` has a key besides
/// `stack` (or is empty), off when it names the stack only.
#[test]
fn the_lci_reliable_protocol_follows_its_keys() {
    let p = |t: &str| {
        let text = format!("preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n{t}\n[workload]\nkind = \"stream\"\n");
        Scenario::from_toml(&text).unwrap().lci.unwrap().protocol
    };
    assert_eq!(p(""), None);
    assert_eq!(p("send_buffers = 8").map(|r| r.send_buffers), Some(8));
    assert_eq!(p("ack_delay_us = 5.0").map(|r| (r.send_buffers, r.ack_delay)), Some((64, Duration::from_us(5))));
}

/// `[[host.napi]]` (netdev-genl napi-set): a queue's own NAPI settings over
/// the host-wide ones, each queue named once and among the host's queues.
#[test]
fn per_napi_settings_override_the_host_wide_ones_per_queue() {
    let s = |steering: &str, t: &str| {
        Scenario::from_toml(&format!(
            "preset = \"modern\"\n[nic]\nsteering = \"{steering}\"\n[host]\nnapi_defer_hard_irqs = 1\n\
             gro_flush_timeout_us = 20\n{t}\n[workload]\nkind = \"pingpong\"\n"
        ))
    };
    let ok = s("multiqueue", "[[host.napi]]\nqueue = 1\ndefer_hard_irqs = 3\ngro_flush_timeout_ns = 50000").unwrap();
    assert_eq!(ok.napi_of(0), ok.napi, "queue 0 keeps the host's");
    assert_eq!((ok.napi_of(1).defer_hard_irqs, ok.napi_of(1).gro_flush_timeout), (3, Duration::from_us(50)));
    let kept = s("multiqueue", "[[host.napi]]\nqueue = 1\ndefer_hard_irqs = 0").unwrap().napi_of(1);
    assert_eq!((kept.defer_hard_irqs, kept.gro_flush_timeout), (0, Duration::from_us(20)), "not given: the host's");
    let e = s("single-rr", "[[host.napi]]\nqueue = 1").unwrap_err().0;
    assert!(
        e.starts_with("invalid value for `host.napi[0].queue`: 1 (allowed: an integer 0 ..= 0, one of the 1"),
        "{e}"
    );
    let e = s("multiqueue", "[[host.napi]]\nqueue = 1\n[[host.napi]]\nqueue = 1").unwrap_err().0;
    assert!(e.starts_with("invalid value for `host.napi[1].queue`: 1 (an earlier"), "{e}");
    let e = s("multiqueue", "[[host.napi]]\ndefer_hard_irqs = 2").unwrap_err().0;
    assert!(e.starts_with("`host.napi[0].queue` is missing"), "{e}");
    let e = s("multiqueue", "[[host.napi]]\nqueue = 0\nirq_suspend_timeout_us = 100").unwrap_err().0;
    assert!(e.starts_with("invalid value for `host.napi[0].irq_suspend_timeout_us`: it needs `host.busy_poll"), "{e}");
    let e = s("multiqueue", "[[host.napi]]\nqueue = 0\ngro_flush_timeout_ns = -1").unwrap_err().0;
    assert!(e.starts_with("invalid value for `host.napi[0].gro_flush_timeout_ns`: -1"), "{e}");
    let e = s("multiqueue", "[[host.napi]]\nqueue = 0\ndefer = 1").unwrap_err().0;
    assert!(e.contains("defer") && e.contains("defer_hard_irqs"), "{e}");
}

/// `host.busy_poll_budget` is the socket's SO_BUSY_POLL_BUDGET as
/// net/core/sock.c `sk_setsockopt` takes it (0 ..= U16_MAX), 0 meaning
/// the kernel's BUSY_POLL_BUDGET; it needs busy polling.
#[test]
fn the_busy_poll_budget_is_so_busy_poll_budget() {
    let host =
        |h: &str| Scenario::from_toml(&format!("preset = \"modern\"\n[host]\n{h}\n[workload]\nkind = \"pingpong\"\n"));
    assert_eq!(host("busy_poll = true").unwrap().napi.busy_poll_budget, crate::nic::BUSY_POLL_BUDGET);
    assert_eq!(host("busy_poll = true\nbusy_poll_budget = 0").unwrap().napi.busy_poll_budget, 8);
    assert_eq!(host("busy_poll = true\nbusy_poll_budget = 64").unwrap().napi.busy_poll_budget, 64);
    assert_eq!(host("busy_poll = true\nbusy_poll_budget = 65535").unwrap().napi.busy_poll_budget, u16::MAX);
    let e = host("busy_poll = true\nbusy_poll_budget = 65536").unwrap_err().0;
    assert!(e.starts_with("invalid value for `host.busy_poll_budget`: 65536 (allowed: an integer 0 ..= 65535"), "{e}");
    let e = host("busy_poll = true\nbusy_poll_budget = -1").unwrap_err().0;
    assert!(e.starts_with("invalid value for `host.busy_poll_budget`: -1"), "{e}");
    let e = host("busy_poll_budget = 16").unwrap_err().0;
    assert!(e.starts_with("invalid value for `host.busy_poll_budget`: 16 (it needs `host.busy_poll = true`"), "{e}");
}

/// Threaded NAPI host-wide and per queue; refused where the preset's kernel
/// has none (Linux 2.6.26) and with myri10ge's split claims.
#[test]
fn threaded_napi_is_a_host_and_a_per_queue_setting() {
    let s = |preset: &str, t: &str| {
        Scenario::from_toml(&format!(
            "preset = \"{preset}\"\n[nic]\nsteering = \"multiqueue\"\n[host]\n{t}\n[workload]\nkind = \"pingpong\"\n"
        ))
    };
    let on = s("modern", "napi_threaded = true\n[[host.napi]]\nqueue = 1\nthreaded = false").unwrap();
    assert!(on.napi_of(0).threaded && !on.napi_of(1).threaded);
    let one = s("modern", "[[host.napi]]\nqueue = 2\nthreaded = true").unwrap();
    assert!(!one.napi.threaded && one.napi_of(2).threaded);
    assert!(!s("modern", "").unwrap().napi.threaded, "off by default");
    let e = s("omx2009-mq", "napi_threaded = true").unwrap_err().0;
    assert!(
        e.starts_with(
            "invalid value for `host.napi_threaded`: true (allowed: false on preset \"omx2009-mq\", whose kernel"
        ),
        "{e}"
    );
    let e = s("omx2009-mq", "[[host.napi]]\nqueue = 0\nthreaded = true").unwrap_err().0;
    assert!(e.starts_with("invalid value for `host.napi[0].threaded`: true"), "{e}");
    let e = s("modern", "napi_threaded = true\ntx_reap = \"hard-irq\"").unwrap_err().0;
    assert!(e.contains("`host.napi_threaded`: true (allowed: false with tx_reap = \"hard-irq\""), "{e}");
    let e = s("modern", "napi_threaded = 1").unwrap_err().0;
    assert!(e.contains("napi_threaded"), "{e}");
}

/// The one scenario reader: a bad value of a key every stack shares is
/// refused in the same words whichever stack the hosts run, a number
/// given as another type with the range the stack allows, and an LCI
/// scenario's shared keys are the file's (its seed, its program from the
/// one `[workload]`, the world's NIC features at the platform's values,
/// its NIC's watchdog and clock the scenario's one `ni`).
#[test]
fn one_reader_reads_the_shared_keys_of_every_stack_alike() {
    let read = |stack: &str, kind: &str, t: &str| {
        Scenario::from_toml(&format!(
            "preset = \"lci2000\"\n{t}\n[protocol]\nstack = \"{stack}\"\n[workload]\nkind = \"{kind}\"\n"
        ))
    };
    for bad in ["seed = -1", "seed = 1.5", "seed = \"x\"", "[platform.link]\nmtu = 1.5", "[platform.link]\nmtu = -3"] {
        let lci = read("lci", "stream", bad).unwrap_err().0;
        let omx = read("open-mx", "stream", bad).unwrap_err().0;
        assert_eq!(lci, omx, "{bad}");
    }
    // A number given as another type: the range the stack's check allows,
    // found by the one reader's probe (`overrides::number_limits`).
    let e = read("lci", "stream", "[nic]\nclock_period_us = \"x\"").unwrap_err().0;
    assert!(
        e.starts_with("invalid value for `nic.clock_period_us`: \"x\" (allowed: a number 0.876 ..= 10000000"),
        "{e}"
    );
    let text =
        "preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\nack_delay_us = \"x\"\n[workload]\nkind = \"stream\"\n";
    let e = Scenario::from_toml(text).unwrap_err().0;
    assert_eq!(e, "invalid value for `protocol.ack_delay_us`: \"x\" (allowed: a number 0 ..= 1000000000)");
    let s = read("lci", "stream", "seed = 7\n[nic]\nclock_period_us = 5.0").unwrap();
    assert_eq!(s.seed, 7);
    assert!(matches!(s.workload, crate::config::Workload::Stream { messages: 1000, .. }), "{:?}", s.workload);
    assert_eq!(s.ni.clock, Some(Duration::from_us(5)));
}
