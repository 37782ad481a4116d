//! The metrics of an LCI run: what the stack's counters, the hosts, NIs,
//! buses, multicast, watchdog and reliability layers counted, under the
//! names `nicsim.metrics` lists for the LCI stack. This module owns the
//! naming only; each counter is its component's.

use super::host::Host;
use super::{reliable, Stack};
use crate::time::Instant;
use crate::Metrics;

impl Stack {
    /// Metrics of the run at `now`, after the world's `events` events
    /// (units in the names).
    pub fn metrics(&self, now: Instant, events: u64) -> Metrics {
        let mut m = Metrics::default();
        let mut set = |k: &str, v: f64| {
            m.0.insert(k.to_string(), v);
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
        self.program.metrics(&mut m);
        // The NIs' interrupts: the watchdogs' and, with `"none"`, one per delivered packet.
        let wd_irqs = self.packet_irqs + self.wd.iter().map(|w| w.raised).sum::<u64>();
        m.0.insert("watchdog_interrupts".into(), wd_irqs as f64);
        m.0.insert("watchdog_fetches".into(), self.wd.iter().map(|w| w.fetches).sum::<u64>() as f64);
        m.0.insert("clock_interrupts".into(), self.clock_interrupts as f64);
        m.0.insert("signals_returned_at_once".into(), self.signals_at_once as f64);
        m.0.insert("signals_merged".into(), self.signals_merged as f64);
        m.0.insert("ni_host_fetches".into(), self.ni_host_fetches as f64);
        let rel = |f: &dyn Fn(&reliable::Reliable) -> u64| {
            self.hosts.iter().filter_map(|h| h.rel.as_ref()).map(f).sum::<u64>() as f64
        };
        m.0.insert("explicit_acks".into(), rel(&|r| r.explicit_acks));
        m.0.insert("piggybacked_acks".into(), rel(&|r| r.piggybacked_acks));
        m.0.insert("window_full_polls".into(), rel(&|r| r.stalls));
        m
    }
}
