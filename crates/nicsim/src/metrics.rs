//! Metrics of a finished run: named values, the one result type of both
//! simulated worlds (`crate::sim` for Open-MX, `crate::lci` for LCI).
//!
//! This module owns the container and the validity rules both worlds share:
//! a metric is either measured (a finite value) or *not measured* with the
//! reason, never a number standing in for one a run could not measure (a
//! rate over too few messages, a ratio over zero events). Each world
//! computes its own metrics from its state at the end of a run.

use crate::time::{Duration, Instant};
use std::collections::BTreeMap;

/// Named metric values of one run, in a stable (sorted) order, and the
/// metrics the run could not measure with the reason of each. A name is in
/// at most one of the two maps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics {
    /// Measured values: finite numbers.
    pub values: BTreeMap<String, f64>,
    /// Metrics the run reports but could not measure: name → why (one
    /// sentence naming the keys that would make it measurable).
    pub not_measured: BTreeMap<String, String>,
}

impl Metrics {
    /// The measured value of `k` (`None` when absent or not measured).
    pub fn get(&self, k: &str) -> Option<f64> {
        self.values.get(k).copied()
    }
    /// Why `k` was not measured, when it was not.
    pub fn why_not(&self, k: &str) -> Option<&str> {
        self.not_measured.get(k).map(String::as_str)
    }
    /// Records `v` for `k`; a value that is not finite is recorded as not
    /// measured (a division by a zero span or count).
    pub(crate) fn set(&mut self, k: &str, v: f64) {
        if v.is_finite() {
            self.not_measured.remove(k);
            self.values.insert(k.to_string(), v);
        } else {
            self.unmeasured(k, "the run gives no finite value (a zero count or time span)");
        }
    }
    /// Records that `k` was not measured, and why.
    pub(crate) fn unmeasured(&mut self, k: &str, why: impl Into<String>) {
        self.values.remove(k);
        self.not_measured.insert(k.to_string(), why.into());
    }
    /// `num / den` under `k`, or not measured with `why` when `den` is zero
    /// (or the quotient is not finite).
    pub(crate) fn ratio(&mut self, k: &str, num: f64, den: f64, why: &str) {
        if den > 0.0 && (num / den).is_finite() {
            self.set(k, num / den);
        } else {
            self.unmeasured(k, why);
        }
    }
}

/// The least time a link takes to carry messages: its line rate, and per
/// frame the bytes it carries besides a message's payload (Ethernet or
/// network header and the link's framing overhead) and the most payload a
/// frame holds. A lower bound: the protocol's own headers, acks and pulls
/// only add to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkBound {
    pub bytes_per_s: f64,
    pub frame_extra_bytes: u64,
    pub frame_payload: u64,
}

impl LinkBound {
    /// Seconds the link needs at least for `messages` messages of `size` bytes.
    pub fn least_secs(&self, messages: u64, size: u64) -> f64 {
        let frames = size.div_ceil(self.frame_payload.max(1)).max(1);
        let wire = size as f64 + (frames * self.frame_extra_bytes) as f64;
        messages as f64 * wire / self.bytes_per_s
    }
}

/// Why a windowed stream's rate over `messages` timed messages after
/// `warmup` ones, with `window` outstanding, in `secs` seconds, is not
/// measured, or `None` when it is: the timed part must have at least a
/// window of messages (after a warm-up, up to `window` timed messages are
/// already in flight when timing starts), and the link must have been able
/// to carry them in that time (a faster figure is an artefact of a run too
/// short to measure).
pub(crate) fn stream_unmeasurable(
    messages: u64,
    warmup: u64,
    window: u64,
    size: u64,
    secs: f64,
    link: &LinkBound,
) -> Option<String> {
    if warmup > 0 && messages < window {
        return Some(format!(
            "the first {messages} message(s) of the timed part were in flight when timing started; \
             run at least workload.window = {window} timed messages (workload.messages)"
        ));
    }
    let least = link.least_secs(messages, size);
    if secs <= 0.0 || secs < least {
        return Some(format!(
            "{messages} message(s) of {size} B timed over {:.3} µs, less than the {:.3} µs the link needs \
             to carry them: the run is too short; raise workload.messages",
            secs.max(0.0) * 1e6,
            least * 1e6
        ));
    }
    None
}

/// Why a program that could not go on (`stuck = 1`) has no execution time.
pub(crate) const STUCK: &str = "the program could not go on (stuck = 1): it never finished";

/// How a catalogue names a rate in bytes and its unit: Open-MX's
/// `throughput_MiBps` (2^20 B/s, as omx_perf and IMB print it), LCI's
/// `throughput_MBps` (10^6 B/s, as \[LCI]'s figures give it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Throughput {
    pub name: &'static str,
    pub bytes: f64,
}

pub(crate) const MIB_PER_S: Throughput = Throughput { name: "throughput_MiBps", bytes: 1024.0 * 1024.0 };
pub(crate) const MB_PER_S: Throughput = Throughput { name: "throughput_MBps", bytes: 1e6 };

/// A program's execution time, from time zero to the last of its ranks'
/// `ends`; not measured ([`STUCK`]) if a rank never ended.
pub(crate) fn exec_time(m: &mut Metrics, ends: impl IntoIterator<Item = Option<Instant>>) {
    match ends.into_iter().try_fold(Instant::ZERO, |last, end| end.map(|e| last.max(e))) {
        Some(end) => m.set("exec_time_s", end.since(Instant::ZERO).as_s_f64()),
        None => m.unmeasured("exec_time_s", STUCK),
    }
}

/// A ping-pong's one-way latency over its `iterations` timed round trips of
/// `size` bytes, which took `span`, and the throughput it gives, named as
/// `rate` says; neither is measured when a one-way transfer took less than
/// `link` needs to carry it (a run too short to time).
pub(crate) fn pingpong(
    m: &mut Metrics,
    size: u64,
    iterations: u64,
    span: Duration,
    link: &LinkBound,
    rate: Throughput,
) {
    let half_rtt = span.as_us_f64() / (2 * iterations) as f64;
    let least = link.least_secs(1, size) * 1e6;
    if half_rtt > 0.0 && half_rtt >= least {
        m.set("latency_us", half_rtt);
        m.set(rate.name, size as f64 / (half_rtt * 1e-6) / rate.bytes);
    } else {
        let why = format!(
            "a one-way transfer of {size} B timed at {half_rtt:.3} µs, less than the {least:.3} µs the link needs; \
             raise workload.iterations"
        );
        m.unmeasured("latency_us", why.clone());
        m.unmeasured(rate.name, why);
    }
}

/// A stream's message rate over its `messages` timed messages of `size`
/// bytes (after `warmup`, `window` outstanding), which took `secs`, and
/// the throughput it gives, named as `rate` says; neither is measured when
/// [`stream_unmeasurable`] says why.
pub(crate) fn stream_rate(
    m: &mut Metrics,
    (messages, warmup, window): (u64, u64, u64),
    size: u64,
    secs: f64,
    link: &LinkBound,
    rate: Throughput,
) {
    match stream_unmeasurable(messages, warmup, window, size, secs, link) {
        None => {
            let per_s = messages as f64 / secs;
            m.set("msg_rate_per_s", per_s);
            m.set(rate.name, per_s * size as f64 / rate.bytes);
        }
        Some(why) => {
            m.unmeasured("msg_rate_per_s", why.clone());
            m.unmeasured(rate.name, why);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEN_G: LinkBound = LinkBound { bytes_per_s: 1.25e9, frame_extra_bytes: 38, frame_payload: 1500 };

    #[test]
    fn a_value_that_is_not_finite_is_not_measured() {
        let mut m = Metrics::default();
        m.set("x", f64::INFINITY);
        m.ratio("y", 3.0, 0.0, "no messages");
        m.set("z", 2.0);
        assert_eq!((m.get("x"), m.get("y"), m.get("z")), (None, None, Some(2.0)));
        assert_eq!(m.why_not("y"), Some("no messages"));
        assert!(m.why_not("x").is_some() && m.why_not("z").is_none());
        m.set("y", 1.0);
        assert_eq!((m.get("y"), m.why_not("y")), (Some(1.0), None));
    }

    #[test]
    fn the_link_bound_counts_each_frame_overhead() {
        // 3000 B = 2 frames: 3000 + 2 * 38 bytes at 1.25 GB/s.
        assert!((TEN_G.least_secs(1, 3000) - 3076.0 / 1.25e9).abs() < 1e-15);
        // An empty message still takes a frame.
        assert!((TEN_G.least_secs(10, 0) - 380.0 / 1.25e9).abs() < 1e-15);
    }

    #[test]
    fn both_catalogues_measure_from_marks_alike_and_name_their_rate_in_their_unit() {
        let t = |us| Some(Instant::ZERO + Duration::from_us(us));
        let mut m = Metrics::default();
        exec_time(&mut m, [t(3), t(7), t(5)]);
        assert_eq!(m.get("exec_time_s"), Some(7e-6), "the last rank's end");
        exec_time(&mut m, [t(3), None]);
        assert_eq!(m.why_not("exec_time_s"), Some(STUCK), "a rank that never ended");
        // 10 round trips of 1 MB in 20 ms: 1 ms one way, 10^9 B/s.
        let span = Duration::from_ms(20);
        for (rate, per_s) in [(MB_PER_S, 1e3), (MIB_PER_S, 1e9 / 1024.0 / 1024.0)] {
            let mut m = Metrics::default();
            pingpong(&mut m, 1_000_000, 10, span, &TEN_G, rate);
            assert_eq!(m.get("latency_us"), Some(1000.0));
            assert!((m.get(rate.name).unwrap() - per_s).abs() < 1e-9 * per_s, "{}", rate.name);
            // Faster than the link carries a megabyte (0.8 ms at 1.25 GB/s).
            pingpong(&mut m, 1_000_000, 10, Duration::from_us(500), &TEN_G, rate);
            assert!(m.why_not("latency_us").is_some_and(|w| w.contains("the link needs")));
            let mut m = Metrics::default();
            stream_rate(&mut m, (1000, 0, 0), 1000, 0.01, &TEN_G, rate);
            assert_eq!(m.get("msg_rate_per_s"), Some(1e5));
            assert!((m.get(rate.name).unwrap() - 1e8 / rate.bytes).abs() < 1e-6, "{}", rate.name);
        }
    }

    #[test]
    fn a_stream_shorter_than_its_window_or_faster_than_the_link_is_not_measured() {
        let why = stream_unmeasurable(1, 10, 64, 1 << 20, 1.0, &TEN_G).unwrap();
        assert!(why.contains("workload.window = 64") && why.contains("workload.messages"), "{why}");
        // No warm-up: timing starts at time zero with nothing in flight.
        assert_eq!(stream_unmeasurable(1, 0, 64, 1 << 20, 1.0, &TEN_G), None);
        let why = stream_unmeasurable(64, 10, 64, 1 << 20, 1e-3, &TEN_G).unwrap();
        assert!(why.contains("too short"), "{why}");
        assert_eq!(stream_unmeasurable(64, 10, 64, 1 << 20, 0.06, &TEN_G), None);
        assert!(stream_unmeasurable(64, 10, 64, 0, 0.0, &TEN_G).is_some());
    }
}
