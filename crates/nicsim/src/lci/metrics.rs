//! The metrics of an LCI run: what the stack's counters, the hosts, NIs,
//! buses, multicast, watchdog and reliability layers counted, under the
//! names `nicsim.metrics` lists for the LCI stack. This module owns the
//! naming only; each counter is its component's.

use super::host::Host;
use super::{reliable, Stack};
use crate::metrics::LinkBound;
use crate::time::Instant;
use crate::Metrics;

impl Stack {
    /// Metrics of the run at `now`, after the world's `events` events
    /// (units in the names).
    pub fn metrics(&self, now: Instant, events: u64) -> Metrics {
        let mut m = Metrics::default();
        let mut set = |k: &str, v: f64| {
            m.set(k, v);
        };
        set("sim_time_us", now.as_us_f64());
        set("events", events as f64);
        set("packets", self.packets_sent as f64);
        set("packets_delivered", self.packets_delivered as f64);
        let sum = |f: &dyn Fn(&Host) -> u64| self.hosts.iter().map(f).sum::<u64>() as f64;
        set("interrupts", sum(&|h| h.interrupts));
        set("polls_failed", sum(&|h| h.polls_failed));
        set("polls_ok", sum(&|h| h.polls_ok));
        set("upcalls", sum(&|h| h.upcalls));
        set("host_dmas", self.nis.iter().map(|n| n.host_dmas).sum::<u64>() as f64);
        set("host_counter_fetches", self.nis.iter().map(|n| n.refreshes).sum::<u64>() as f64);
        for (i, b) in self.buses.iter().enumerate().take(2) {
            b.report(i, now.since(Instant::ZERO), &mut set);
        }
        self.mc_metrics(&mut set);
        let spec = self.grid.spec();
        let link = LinkBound {
            bytes_per_s: spec.bytes_per_s as f64,
            frame_extra_bytes: (self.header + spec.overhead_bytes) as u64,
            frame_payload: self.hosts[0].packet_bytes() as u64,
        };
        self.job.metrics(&mut m, &link);
        // The NIs' interrupts: the watchdogs' and, with `"none"`, one per delivered packet.
        let wd_irqs = self.packet_irqs + self.wd.iter().map(|w| w.raised).sum::<u64>();
        m.set("watchdog_interrupts", wd_irqs as f64);
        m.set("watchdog_fetches", self.wd.iter().map(|w| w.fetches).sum::<u64>() as f64);
        m.set("clock_interrupts", self.clock_interrupts as f64);
        m.set("signals_returned_at_once", self.signals_at_once as f64);
        m.set("signals_merged", self.signals_merged as f64);
        m.set("ni_host_fetches", self.ni_host_fetches as f64);
        let rel = |f: &dyn Fn(&reliable::Reliable) -> u64| {
            self.hosts.iter().filter_map(|h| h.rel.as_ref()).map(f).sum::<u64>() as f64
        };
        m.set("explicit_acks", rel(&|r| r.explicit_acks));
        m.set("piggybacked_acks", rel(&|r| r.piggybacked_acks));
        m.set("window_full_polls", rel(&|r| r.stalls));
        m
    }
}
