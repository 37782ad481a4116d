//! Tests of the LCI platform's validation.

use super::*;

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
    "invalid value for `workload.rows`: \"many\" (allowed: a multiple of platform.grid.hosts = 64, at most 65536)"
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
    "invalid value for `nic.watchdog_us`: \"never\" (allowed: \"none\", \"inf\" or a number of us in [0.01, 1e7])"
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
fn error_messages(#[case] text: &str, #[case] want: &str) {
    assert_eq!(LciScenario::from_toml(text).unwrap_err().0, want);
}

#[test]
fn watchdog_values() {
    let parse = |v: &str| {
        LciScenario::from_toml(&format!("[nic]\nwatchdog_us = {v}\n[workload]\nkind = \"stream\"")).unwrap().watchdog
    };
    assert_eq!(parse("\"none\""), WatchdogDelay::Immediate);
    assert_eq!(parse("\"inf\""), WatchdogDelay::Never);
    assert_eq!(parse("20"), WatchdogDelay::After(Duration::from_us(20)));
    assert_eq!(parse("0.5"), WatchdogDelay::After(Duration::from_ns(500)));
}
