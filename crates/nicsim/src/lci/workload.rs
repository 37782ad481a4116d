//! The programs the LCI hosts run, as one [`Job`]. ASP and QR are
//! `crate::workload::Program`s, one per host ([`Job::Procs`],
//! `super::process`), the operation sequences the Open-MX library runs.
//! The others keep the state of every host's part together, told by the
//! stack what reached which host (the upcall of a message's last packet)
//! and what compute ended, and answering what each host sends or does
//! next: the broadcast benchmark (`super::apps`), stream, ping-pong, the
//! DSM (`super::dsm`) and the FFT all-to-all (`super::fft`).
//!
//! This module owns program logic and its measurements only; it does not
//! time anything (the world calls it at upcall time with `now`).
//!
//! Extension points: a program of operations is a `Job::Procs` built in
//! `super::process::Processes::new` from `crate::workload`'s operations;
//! a whole-job program is a variant of [`Job`] (and of
//! `crate::config::LciWorkload`) implemented in [`Job::participates`],
//! [`Job::start`], [`Job::on_message`], [`Job::done`] and [`Job::metrics`].

use super::apps::McJob;
use super::dsm::Dsm;
pub use super::host::Control;
use super::host::Outgoing;
use super::process::{Drive, Processes};
use crate::config::LciWorkload;
use crate::metrics::{stream_unmeasurable, LinkBound};
use crate::time::Instant;
use crate::Metrics;

/// A running program: every host's part of it.
#[derive(Debug)]
pub enum Job {
    /// `src` streams messages to `dst`; the receiver times the last `messages`.
    Stream { src: u32, dst: u32, size: u64, messages: u64, warmup: u64, received: u64, t0: Instant, t1: Instant },
    /// `src` and `dst` bounce one message; `src` times the last `iterations` round trips.
    PingPong { src: u32, dst: u32, size: u64, iterations: u64, warmup: u64, trips: u64, t0: Instant, t1: Instant },
    /// The broadcast benchmark: every host takes part; driven by
    /// `super::multicast`, not by [`Job::start`] / [`Job::on_message`].
    Mc(Box<McJob>),
    /// One program per host (ASP, QR, FFT all-to-all: `super::process`),
    /// driven by `super::multicast` or by the library's idle choice
    /// (`super::cpu`), as its [`Drive`] says.
    Procs(Processes),
    /// CRL-like DSM request/reply mix (`super::dsm`).
    Dsm(Box<Dsm>),
}

impl Job {
    pub fn new(w: &LciWorkload, fanout: u32) -> Self {
        if let Some(p) = Processes::new(w, fanout) {
            return Job::Procs(p);
        }
        if let Some(p) = McJob::new(w) {
            return Job::Mc(Box::new(p));
        }
        match *w {
            LciWorkload::Stream { src, dst, size, messages, warmup } => {
                Job::Stream { src, dst, size, messages, warmup, received: 0, t0: Instant::ZERO, t1: Instant::ZERO }
            }
            LciWorkload::PingPong { src, dst, size, iterations, warmup } => {
                Job::PingPong { src, dst, size, iterations, warmup, trips: 0, t0: Instant::ZERO, t1: Instant::ZERO }
            }
            LciWorkload::Bcast { .. }
            | LciWorkload::Asp { .. }
            | LciWorkload::Qr { .. }
            | LciWorkload::FftAllToAll { .. } => unreachable!("McJob or Processes run these"),
            LciWorkload::Dsm { mix, procs, operations, seed } => {
                Job::Dsm(Box::new(Dsm::new(mix, procs, operations, seed)))
            }
        }
    }

    /// Whether `host` runs the program (enters the library and polls).
    pub fn participates(&self, host: u32) -> bool {
        match *self {
            Job::Stream { src, dst, .. } | Job::PingPong { src, dst, .. } => host == src || host == dst,
            Job::Mc(_) => true,
            Job::Procs(ref p) => p.participates(host),
            Job::Dsm(ref d) => d.participates(host),
        }
    }

    /// What `host` sends at time zero.
    pub fn start(&self, host: u32) -> Option<Outgoing> {
        match *self {
            Job::Stream { src, dst, size, messages, warmup, .. } if host == src => {
                Some(Outgoing { dst, size, count: messages + warmup, bcast: None, tag: 0 })
            }
            Job::PingPong { src, dst, size, .. } if host == src => {
                Some(Outgoing { dst, size, count: 1, bcast: None, tag: 0 })
            }
            _ => None,
        }
    }

    /// A whole message from `from` with `tag` reached `host`'s program at
    /// `now` (the multicast programs learn theirs from `super::multicast`).
    pub fn on_message(&mut self, host: u32, from: u32, tag: u64, now: Instant) -> Option<Outgoing> {
        match self {
            Job::Stream { messages, warmup, received, t0, t1, .. } => {
                *received += 1;
                if *received == *warmup {
                    *t0 = now;
                }
                if *received == *warmup + *messages {
                    *t1 = now;
                }
                None
            }
            Job::PingPong { src, size, iterations, warmup, trips, t0, t1, .. } => {
                if host != *src {
                    return Some(Outgoing { dst: from, size: *size, count: 1, bcast: None, tag: 0 });
                }
                *trips += 1;
                if *trips == *warmup {
                    *t0 = now;
                }
                if *trips == *warmup + *iterations {
                    *t1 = now;
                    return None;
                }
                Some(Outgoing { dst: from, size: *size, count: 1, bcast: None, tag: 0 })
            }
            Job::Procs(p) if p.drive == Drive::Idle => {
                p.procs[host as usize].arrived(from, tag);
                None
            }
            Job::Mc(_) | Job::Procs(_) => None,
            Job::Dsm(d) => {
                d.on_message(host, from);
                None
            }
        }
    }

    /// Whether the program has finished.
    pub fn done(&self) -> bool {
        match *self {
            Job::Stream { messages, warmup, received, .. } => received >= messages + warmup,
            Job::PingPong { iterations, warmup, trips, .. } => trips >= iterations + warmup,
            Job::Mc(ref p) => p.done(),
            Job::Procs(ref p) => p.done(),
            Job::Dsm(ref d) => d.done(),
        }
    }

    /// The program's measurements; `link` bounds how fast the network can
    /// carry a stream (a faster figure is not measured).
    pub fn metrics(&self, m: &mut Metrics, link: &LinkBound) {
        match *self {
            Job::Stream { size, messages, t0, t1, .. } => {
                let s = t1.since(t0).as_s_f64();
                // The sender posts every message at once: no window to fill.
                match stream_unmeasurable(messages, 0, 0, size, s, link) {
                    None => {
                        m.set("msg_rate_per_s", messages as f64 / s);
                        m.set("throughput_MBps", (size * messages) as f64 / s / 1e6);
                    }
                    Some(why) => {
                        m.unmeasured("msg_rate_per_s", why.clone());
                        m.unmeasured("throughput_MBps", why);
                    }
                }
                m.set("elapsed_us", s * 1e6);
            }
            Job::PingPong { size, iterations, t0, t1, .. } => {
                let one_way = t1.since(t0).as_s_f64() / (2 * iterations) as f64;
                if one_way > 0.0 {
                    m.set("latency_us", one_way * 1e6);
                    m.set("throughput_MBps", size as f64 / one_way / 1e6);
                } else {
                    let why = "the timed round trips took no simulated time; raise workload.iterations";
                    m.unmeasured("latency_us", why);
                    m.unmeasured("throughput_MBps", why);
                }
            }
            Job::Mc(ref p) => p.metrics(m),
            Job::Procs(ref p) => p.metrics(m),
            Job::Dsm(ref d) => d.metrics(m),
        }
    }

    /// Host `h`'s library has nothing to do at `now`: stay, compute or sleep.
    pub fn control(&mut self, h: u32, now: Instant) -> Control {
        match self {
            Job::Dsm(d) => d.control(h, now),
            Job::Procs(p) if p.drive == Drive::Idle => p.control(h, now),
            _ => Control::Wait,
        }
    }

    /// Host `h` finished the compute phase that [`Job::control`] asked for.
    pub fn compute_done(&mut self, h: u32) {
        match self {
            Job::Dsm(d) => d.compute_done(h),
            Job::Procs(p) if p.drive == Drive::Idle => p.procs[h as usize].compute_done(),
            _ => {}
        }
    }

    /// Moves the messages the program decided to send since the last call
    /// to `out`: (host, message).
    pub fn drain_sends(&mut self, out: &mut Vec<(u32, Outgoing)>) {
        match self {
            Job::Dsm(d) => out.extend(d.drain_sends()),
            Job::Procs(p) => p.drain_sends(out),
            _ => {}
        }
    }

    /// Whether the program multicasts (`super::multicast` drives it and
    /// reports the forwarding metrics).
    pub fn multicasts(&self) -> bool {
        match self {
            Job::Mc(_) => true,
            Job::Procs(p) => p.drive == Drive::Upcall,
            _ => false,
        }
    }
}
