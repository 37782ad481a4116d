//! Open-MX's transmit completions as Linux 2.6.26 runs them
//! (`host.tx_softirq`): the NET_TX softirq frees the reaped skbs and runs
//! their destructors, a medium fragment's posting a FRAG_DONE event that
//! the sender's library consumes, a pull reply's putting its region's
//! refcount.

use super::{pingpong, stream};

/// Native Open-MX (no MPI layer), as the [OMX-COAL] micro-benchmarks.
const NATIVE: &str = "[protocol]\nmpi = false\n";

fn softirq(on: bool) -> String {
    format!("[host]\ntx_softirq = {on}\n{NATIVE}")
}

#[test]
fn a_32k_sender_consumes_one_frag_done_event_per_fragment() {
    for strategy in ["timeout", "disabled"] {
        let m = stream(strategy, 32768, 300, &softirq(true));
        let msgs = m.get("medium_messages").unwrap();
        // ⌈32768 / 1452⌉ = 23 fragments, each its skb's destructor's event.
        assert_eq!(m.get("frag_done_posted"), Some(23.0 * msgs), "{strategy}");
        assert_eq!(m.get("frag_done_consumed"), Some(23.0 * msgs), "{strategy}");
        assert_eq!(m.get("region_puts"), Some(0.0), "{strategy}: no pull");
        let off = stream(strategy, 32768, 300, &softirq(false));
        assert_eq!(off.get("frag_done_consumed"), None, "{strategy}: nothing posted without the softirq");
    }
}

/// §IV-B4's "improves locality during interrupt processing since more
/// packets are processed at once on the same core, thus avoiding
/// cache-line bounces": without coalescing, each fragment's destructor runs
/// on the next round-robin core and takes the sender's endpoint there, and
/// the library takes it back to consume the event; with the 75 µs timeout
/// one softirq runs a batch of them on one core.
#[test]
fn without_coalescing_each_frag_done_moves_the_sender_s_endpoint() {
    let endpoint_misses = |strategy: &str, on: bool| {
        let m = stream(strategy, 32768, 300, &softirq(on));
        m.get("host0_cache_endpoint_misses").unwrap() / m.get("medium_messages").unwrap()
    };
    let (disabled, timeout) = (endpoint_misses("disabled", true), endpoint_misses("timeout", true));
    assert!(disabled > 10.0 && disabled > 5.0 * timeout, "per message: disabled {disabled}, timeout {timeout}");
    // Without the softirq's events, the sender's endpoint moves only for
    // the acks it receives, in either mode.
    let (d0, t0) = (endpoint_misses("disabled", false), endpoint_misses("timeout", false));
    assert!(d0 <= 1.0 && t0 <= 1.0, "without: disabled {d0}, timeout {t0}");
}

#[test]
fn each_pull_reply_puts_its_region_s_refcount_once() {
    let size = 1 << 20;
    let m = pingpong("disabled", size, 4, &softirq(true));
    // 4 timed + 3 warm-up round trips, two 1 MiB pulls each, of
    // ⌈1 MiB / 1468 B⌉ = 715 replies.
    let replies = 2.0 * 7.0 * (size as f64 / 1468.0).ceil();
    assert_eq!(m.get("region_puts"), Some(replies));
    assert_eq!(m.get("frag_done_posted"), Some(0.0), "no medium message");
}
