//! The \[LCI] NI clock of the library's fine-grain timers
//! (`nic.clock_period_us`, \[LCI] §5.2): each NIC ticks every period, reads
//! its processes' timer words with one small DMA, and interrupts a process
//! that has a protocol deadline pending and has not entered its library
//! within the period. The interrupt reaches the process as a signal whose
//! handler runs its library once (queued frames go out, ring events are
//! taken, due timers fire: a delayed ack, a resend); then the computation it
//! interrupted resumes.
//!
//! Without the NI clock the library's timers run when the process enters
//! the library, or when the OS timer wakes a process that sleeps or spins in
//! it (`Ev::ProcTimer`); a process that computes meets its deadlines only
//! when its computation ends.
//!
//! A NIC whose host has no computing process parks its clock: a tick then
//! can interrupt nobody (a process in its library counts as having just
//! polled, [`ClockPolicy::on_fetch`]), so none is queued until a process of
//! that host starts computing (`lib_step`); the clock then resumes on its
//! grid (every period from the start), and the ticks it skipped are counted
//! as ticks. The interrupts, signals and timers are those of a clock that
//! ticks throughout; the queue holds no tick a run spends waiting (a run
//! whose Open-MX pulls wait out 1 s timers for thousands of simulated
//! seconds would otherwise queue two events per host every period).
//!
//! The LANai firmware's clock on the \[LCI] stack is the same clock: the
//! same first tick, tick, fetch (`Nic::fetch_host_words`) and rule at the
//! fetch's return ([`ClockPolicy::on_fetch`], on the LCI library's words);
//! what differs is whom its interrupt signals ([`Signals`]: the library,
//! `LibEv::Signal`, as the firmware's watchdog does, `lanai_signal`) and
//! that it never parks (it ticks on the hosts
//! that run the program while the run lasts).
//!
//! This file owns the tick, the fetch's return, the interrupt's arrival, the
//! signal's price and what it does to the process, and the clock's
//! counters. The decision is `crate::nic::timers::ClockPolicy`'s; the timers
//! are the library's (`crate::proto::Endpoint`, run by `protocol_timers` in
//! `crate::library`); the interrupt's kernel work runs on the process's core as
//! `KWork::Signal` (`kernel`).

use super::{Ev, KWork, World, NO_RANK};
#[cfg(doc)]
use crate::library::lci::Lib;
use crate::nic::timers::{ClockPolicy, Tick};
use crate::time::{Duration, Instant};

/// Whom a clock interrupt signals: the one difference between the NI
/// clocks of the two libraries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signals {
    /// The Open-MX library's processes, each on its core (`Ev::ClockIrq`);
    /// the clock parks while no process of its host computes.
    Processes,
    /// The host's \[LCI] library (`LibEv::Signal`, its signal handler,
    /// `crate::library::lci`), as the LANai firmware's own interrupts do;
    /// the LANai firmware's clock ticks on the hosts that run the program
    /// and never parks.
    Library,
}

/// A world's NI clocks (one per NIC, all of one period) and their counters.
pub(crate) struct Clock {
    policy: ClockPolicy,
    signals_to: Signals,
    pub ticks: u64,
    /// Clock interrupts raised, and those whose signal found the process
    /// computing and ran its library.
    pub interrupts: u64,
    pub signals: u64,
    /// Protocol deadlines that passed while their process computed, and how
    /// late the library ran them (sum and worst).
    pub missed: u64,
    pub late_sum: Duration,
    pub late_max: Duration,
    /// The longest a clock interrupt's signal waited on its process's core
    /// for the kernel work under way there (a NAPI poll, a hard IRQ, a
    /// tick), from the interrupt's arrival to the signal's start.
    pub signal_wait_max: Duration,
    /// The clock's own events in the queue (ticks, fetches, interrupts on
    /// their way): when nothing else is, nothing else will come (a clock
    /// interrupt needs a computing process, whose segment has its event),
    /// and the clocks stop, so that a run that cannot go on ends as one
    /// without a clock does.
    queued: usize,
    /// Per host, the time of the tick at which its clock parked (`None`:
    /// it ticks).
    parked: Vec<Option<Instant>>,
}

impl Clock {
    pub fn new(period: Duration, hosts: usize, signals_to: Signals) -> Self {
        Clock {
            parked: vec![None; hosts],
            policy: ClockPolicy { period },
            signals_to,
            ticks: 0,
            interrupts: 0,
            signals: 0,
            missed: 0,
            late_sum: Duration::ZERO,
            late_max: Duration::ZERO,
            signal_wait_max: Duration::ZERO,
            queued: 0,
        }
    }

    pub fn period(&self) -> Duration {
        self.policy.period
    }

    /// Ticks of the grid (every period from the start) after `from` and
    /// before `to`.
    fn ticks_between(&self, from: Instant, to: Instant) -> u64 {
        let p = self.period().as_ps();
        let (a, b) = (from.as_ps() / p, to.as_ps().saturating_sub(1) / p);
        b.saturating_sub(a)
    }

    /// The grid's first tick at or after `now`.
    fn next_tick(&self, now: Instant) -> Instant {
        let p = self.period().as_ps();
        Instant::from_ps(now.as_ps().div_ceil(p) * p)
    }

    /// The ticks counted at the end of a run at `end`: those ticked, and
    /// those a parked clock skipped since it parked.
    pub fn ticks_at_end(&self, end: Instant) -> u64 {
        self.ticks + self.parked.iter().flatten().map(|&at| self.ticks_between(at, end)).sum::<u64>()
    }

    /// The library ran a deadline that had passed at `due` while its
    /// process computed, at `now`.
    pub fn ran_late(&mut self, due: Instant, now: Instant) {
        let late = now.since(due);
        self.missed += 1;
        self.late_sum += late;
        self.late_max = self.late_max.max(late);
    }
}

impl World {
    /// Every NIC's first tick, one period in (the build's, once the
    /// processes are placed): on every host for the Open-MX library's
    /// processes (a host with none parks at its first tick), on the hosts
    /// that run the program for the \[LCI] library.
    pub(super) fn start_clocks(&mut self) {
        let Some(c) = self.clock.as_deref_mut() else { return };
        for h in 0..self.hosts.len() {
            if c.signals_to == Signals::Library && self.env.ranks.at(h, 0) == NO_RANK {
                continue;
            }
            c.queued += 1;
            self.q.push(Instant::ZERO + c.period(), self.hosts[h].nic.origin, Ev::ClockTick { host: h as u16 });
        }
    }

    /// Host `h`'s NIC ticks (`Ev::ClockTick`): the fetch of the host's
    /// timer words (the NIC's, `Nic::fetch_host_words`, for either
    /// firmware), and the next tick; the Open-MX processes' clock parks
    /// instead while no process of the host computes, and ticks no more
    /// once only the clocks' own events are left.
    pub(super) fn clock_tick(&mut self, now: Instant, h: usize) {
        let Some(c) = self.clock.as_deref_mut() else { return };
        c.queued -= 1;
        let parks = c.signals_to == Signals::Processes;
        if parks && self.q.len() == c.queued {
            return;
        }
        c.ticks += 1;
        let nic = &mut self.hosts[h].nic;
        let (back, origin, host) = (nic.fetch_host_words(now), nic.origin, h as u16);
        c.queued += 1;
        self.q.push(back, origin, Ev::ClockFetched { host });
        if !parks || self.hosts[h].procs.iter().any(|p| p.computing()) {
            c.queued += 1;
            self.q.push(now + c.period(), origin, Ev::ClockTick { host });
        } else {
            c.parked[h] = Some(now);
        }
    }

    /// A process of host `h` starts computing at `now`: a parked clock
    /// resumes at the grid's next tick, the ticks it skipped counted.
    #[inline(never)]
    pub(super) fn clock_resume(&mut self, now: Instant, h: usize) {
        let Some(c) = self.clock.as_deref_mut() else { return };
        let Some(at) = c.parked[h].take() else { return };
        c.ticks += c.ticks_between(at, now);
        let next = c.next_tick(now).max(at + c.period());
        c.queued += 1;
        self.q.push(next, h as u32, Ev::ClockTick { host: h as u16 });
    }

    /// The tick's fetch is back (`Ev::ClockFetched`): each process with a
    /// protocol deadline pending ("a timer running") that has not entered
    /// its library within the period gets a clock interrupt. A process in
    /// its library polls the clock there: it counts as having just polled.
    /// On the \[LCI] stack, the library's (`library_clock_fetched`).
    pub(super) fn clock_fetched(&mut self, now: Instant, h: usize) {
        let Some(c) = self.clock.as_deref_mut() else { return };
        c.queued -= 1;
        if c.signals_to == Signals::Library {
            return self.library_clock_fetched(now, h);
        }
        let hs = &self.hosts[h];
        for (p, pr) in hs.procs.iter().enumerate() {
            let running = pr.timers_running();
            let polled = if pr.computing() { pr.lib_at() } else { now };
            if c.policy.on_fetch(now, running, polled) == Tick::Interrupt {
                c.interrupts += 1;
                c.queued += 1;
                let at = now + hs.nic.irq_delivery;
                self.q.push(at, h as u32, Ev::ClockIrq { host: h as u16, p: p as u16 });
            }
        }
    }

    /// The fetch's return on the \[LCI] stack: the same rule on the
    /// library's words ([`Lib::timer_words`]); its interrupt is a signal to
    /// the library (`lanai_signal`). Out of line: the Open-MX event loop
    /// never calls it.
    #[cold]
    #[inline(never)]
    fn library_clock_fetched(&mut self, now: Instant, h: usize) {
        let Some(c) = self.clock.as_deref_mut() else { return };
        let (running, polled) = self.hosts[h].lib_ref().timer_words(now);
        if c.policy.on_fetch(now, running, polled) == Tick::Interrupt {
            c.interrupts += 1;
            self.lanai_signal(now, h);
        }
    }

    /// A clock interrupt reaches process `p`'s core (`Ev::ClockIrq`): its
    /// hard IRQ and the signal run before anything else queued there, but
    /// after the kernel item under way; a NAPI poll's next frame goes
    /// before them too (`finish_kernel`), so the signal waits for the poll
    /// to run dry or spend its budget, as Linux delivers it only on the
    /// return to user mode, after the softirq (`irq_exit` -> `do_softirq`,
    /// `kernel/softirq.c`).
    pub(super) fn clock_irq(&mut self, now: Instant, h: usize, p: usize) {
        if let Some(c) = self.clock.as_deref_mut() {
            c.queued -= 1;
        }
        self.hosts[h].procs[p].signal_sent(now);
        let core = self.hosts[h].procs[p].core() as usize;
        self.hosts[h].cores[core].kq.push_front(KWork::Signal { p: p as u16 });
        self.kick(now, h, core);
    }

    /// The kernel work of a clock interrupt for process `p` begins at
    /// `now`: how long its signal waited on the core, counted once per
    /// pending signal.
    pub(super) fn signal_starts(&mut self, now: Instant, h: usize, p: usize) {
        if let (Some(sent), Some(c)) = (self.hosts[h].procs[p].take_signal_sent(), self.clock.as_deref_mut()) {
            c.signal_wait_max = c.signal_wait_max.max(now.since(sent));
        }
    }

    /// The kernel work of a clock interrupt for process `p`: the hard IRQ,
    /// and the signal's delivery and return when the process computes (in
    /// its library, the handler returns at once: it has just polled).
    pub(super) fn signal_cost(&self, h: usize, p: usize) -> Duration {
        let signal = if self.hosts[h].procs[p].computing() { self.env.c.host.signal } else { Duration::ZERO };
        self.env.c.host.irq_entry + signal
    }

    /// The signal handler ran: a computing process runs its library now
    /// (`lib_step`, which polls the clock and fires its due timers), then
    /// the rest of its computation, held as its next operation.
    pub(super) fn signal_done(&mut self, now: Instant, h: usize, p: usize) {
        if !self.hosts[h].procs[p].signal() {
            return;
        }
        if let Some(c) = self.clock.as_deref_mut() {
            c.signals += 1;
        }
        self.computed(now, h, p);
    }

    /// Process `p` leaves its computation for its library at `now` (the
    /// computation ended, or a clock signal broke in): a deadline that
    /// passed meanwhile runs now. Kept out of line: only computations pass.
    #[inline(never)]
    pub(super) fn computed(&mut self, now: Instant, h: usize, p: usize) {
        if let (Some(due), Some(c)) = (self.hosts[h].procs[p].take_timer_missed(), self.clock.as_deref_mut()) {
            c.ran_late(due, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Signals;
    use crate::time::Duration;

    /// One NI clock for both firmwares: on the \[LCI] stack the world's
    /// clock runs `nic.clock_period_us`, its interrupts signal the library,
    /// and it ticks every period on each host that runs the program (four
    /// of the platform's hosts), never parked, each tick one fetch of host
    /// words; without the key there is none.
    #[test]
    fn the_lanai_firmware_ticks_the_worlds_one_ni_clock() {
        let text = |clock: &str| {
            format!(
                "preset = \"lci2000\"\n[nic]\n{clock}\n[protocol]\n[workload]\nkind = \"fft-alltoall\"\nprocs = 4\n\
                 iterations = 2\n"
            )
        };
        let s = crate::Scenario::from_toml(&text("")).unwrap();
        assert!(super::World::new(&s).clock.is_none());
        let s = crate::Scenario::from_toml(&text("clock_period_us = 10")).unwrap();
        assert!(s.ni.watchdog.timer().is_none());
        let mut w = super::World::new(&s);
        let c = w.clock.as_deref().expect("the NI clock");
        assert_eq!((c.period(), c.signals_to), (Duration::from_us(10), Signals::Library));
        w.run().unwrap();
        let m = w.metrics();
        let c = w.clock.as_deref().unwrap();
        let periods = w.q.now().as_ps() / Duration::from_us(10).as_ps();
        assert!(w.hosts.len() > 4 && periods > 10, "{} hosts, {periods} periods", w.hosts.len());
        assert!((4 * (periods - 1)..=4 * periods).contains(&c.ticks), "{} ticks in {periods} periods", c.ticks);
        assert!(c.interrupts > 0);
        assert_eq!(m.get("clock_interrupts"), Some(c.interrupts as f64));
        assert_eq!(m.get("ni_host_fetches"), Some(c.ticks as f64));
    }
}
