//! The world's side of the library interface (`crate::library`): each call
//! into a process's library is made with its context (`Cx`: the time, the
//! costs, the host's cache counters and send path, the rank map) and the
//! outputs it returns are routed here, in order, right after the call:
//! frames to the NIC, intra-host copies to the peer's ring, timers to the
//! event queue, pulls to the driver (`pull`), multicast frames to the NIC
//! (`mcast`), counters to the run's.
//!
//! It also owns the host's record of which processes poll which receive
//! queue (`HostState::start_polling`, `stop_polling`, `poller_of`, over
//! its `pollers`, as a [`ProcSet`] per queue) and a waiting process's busy
//! poll (`wait_polling`). It does not own what the library decides or
//! what a step costs (`crate::library`).

use super::{Ev, HostState, RxBy, World};
use crate::kernel::KWork;
use crate::library::{Action, Cx, LibEvent, Output, PState, Proc, Step};
use crate::nic::{BusyStep, RingEntry};
use crate::proto::RESENDS_MAX;
use crate::time::{Duration, Instant};
use crate::wire::{self, FrameRepr};

/// Processes of one host, as a set of their indices: a host has at most
/// 256 cores (topology validation) and a process per core at most, so four
/// words hold any host's. The lowest index comes out first, as a scan of
/// the host's processes in order would meet them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ProcSet([u64; 4]);

impl ProcSet {
    pub fn insert(&mut self, p: usize) {
        self.0[p / 64] |= 1 << (p % 64);
    }

    pub fn remove(&mut self, p: usize) {
        self.0[p / 64] &= !(1 << (p % 64));
    }

    /// The lowest index in the set.
    pub fn first(&self) -> Option<usize> {
        let w = self.0.iter().position(|&w| w != 0)?;
        Some(w * 64 + self.0[w].trailing_zeros() as usize)
    }
}

impl HostState {
    /// Process `p` spins on its event ring (or, busy polling, its queue),
    /// since `since` if its spin counts.
    pub(crate) fn start_polling(&mut self, p: usize, since: Option<Instant>) {
        let pr = &mut self.procs[p];
        pr.start_polling(since);
        let q = self.steering.queue_for(Some(pr.ep()), 0);
        self.pollers[q].insert(p);
    }

    /// Process `p`, polling, was notified (`Proc::notice`): it no longer
    /// polls its queue.
    pub(crate) fn stop_polling(&mut self, p: usize) {
        let q = self.steering.queue_for(Some(self.procs[p].ep()), 0);
        self.pollers[q].remove(p);
    }

    /// The first process (lowest index) polling queue `q`, if any.
    pub(crate) fn poller_of(&self, q: usize) -> Option<usize> {
        let first = self.pollers[q].first();
        debug_assert_eq!(
            first,
            self.procs
                .iter()
                .position(|pr| pr.state() == PState::Polling && self.steering.queue_for(Some(pr.ep()), 0) == q),
            "the pollers of queue {q} are not the processes polling it"
        );
        first
    }
}

impl World {
    /// Calls process `p` of host `h` with its context, then routes what it
    /// returned. Outputs of calls made while routing (a copy into a local
    /// process that runs it) go after this call's in the buffer and are
    /// routed and removed by their own call.
    #[inline(always)]
    fn lib_call<R>(&mut self, now: Instant, h: usize, p: usize, f: impl FnOnce(&mut Proc, &mut Cx<'_>) -> R) -> R {
        let start = self.lib_out.len();
        let hs = &mut self.hosts[h];
        let mut cx = Cx {
            now,
            host: h as u16,
            c: &self.c,
            cc: &self.cc,
            topo: &self.topo,
            cache: &mut hs.cache,
            tx: &mut hs.tx,
            kernel_lines: &mut hs.lines,
            ranks: self.ranks.all(),
            clock: self.clock.is_some(),
            out: &mut self.lib_out,
        };
        let r = f(&mut hs.procs[p], &mut cx);
        if self.lib_out.len() > start {
            self.route(now, h, p, start);
        }
        r
    }

    /// Routes the outputs of process `p` of host `h` from `start` on.
    fn route(&mut self, now: Instant, h: usize, p: usize, start: usize) {
        let end = self.lib_out.len();
        for i in start..end {
            match self.lib_out[i] {
                Output::Timer { at } => self.q.push(at, h as u32, Ev::ProcTimer { host: h as u16, p: p as u16 }),
                Output::Transmit { dst, marked, body } => {
                    let repr = FrameRepr {
                        dst_mac: wire::host_mac(dst),
                        src_mac: wire::host_mac(h as u16),
                        src_peer: h as u16,
                        marked,
                        body,
                    };
                    let f = self.new_frame(h as u16, dst, &repr);
                    self.transmit(now, h, f);
                }
                Output::Local { host, ep, ev } => {
                    if let Some(q) = self.hosts[host as usize].eps[ep as usize] {
                        self.post_event(now, host as usize, q as usize, ev, RxBy::Nic);
                    }
                }
                Output::Mcast { ep, rank, tag, size, frag, frags } => {
                    self.mcast_send(now, h, ep, rank, tag, size, frag, frags)
                }
                Output::OpenPull { ep, req, ev } => {
                    let (handle, blocks) = self.open_pull(now, h, ep, req, ev);
                    let pages = crate::library::region_pages(ev.msg.size);
                    self.hosts[h].procs[p].pull_opened(handle, blocks, pages, self.c.lib.max_pulls);
                }
                Output::PullStart { handle } => self.pull_start(now, h, handle),
                Output::Completed => self.run.completions += 1,
                Output::Medium { one_irq } => {
                    self.run.medium_msgs += 1;
                    self.run.medium_one_irq += one_irq as u64;
                }
                Output::Duplicates { n } => self.frames.drops.duplicate += n,
                Output::ProgramDone => self.programs_left -= 1,
                Output::Mark { label } => {
                    let i = label as usize;
                    for (hb, hs) in self.run.busy_at_mark[i].iter_mut().zip(&self.hosts) {
                        *hb = hs.kernel_time + hs.app_time + hs.spin_time;
                    }
                    // Interrupts raised so far on this host, and on every host.
                    let (own, all) = (self.hosts[h].rx.irq_raised(), self.run.irq_raised_all);
                    self.hosts[h].procs[p].set_mark_irqs(i, own, all);
                }
                Output::Stall { core, stall } => self.hosts[h].cores[core as usize].stall += stall,
                Output::GiveUp { peer, seq, size } => self.give_up(h, p, peer, seq, size),
            }
        }
        self.lib_out.truncate(start);
    }

    /// Prices the next segment of process `p` of host `h`, which has its
    /// core; `None` if it has nothing to run (it then polls, sleeps, or is
    /// done).
    #[inline(always)]
    pub(crate) fn lib_step(&mut self, now: Instant, h: usize, p: usize) -> Option<(Duration, Action)> {
        if self.c.busy_poll {
            if let Some(step) = self.busy_poll_more(now, h, p) {
                return Some(step);
            }
        }
        match self.lib_call(now, h, p, |pr, cx| pr.step(cx)) {
            // A computation starts: a parked NI clock resumes (`clock`).
            Step::Run(cost, Action::None) if self.clock.is_some() => {
                self.clock_resume(now, h);
                Some((cost, Action::None))
            }
            Step::Run(cost, action) => Some((cost, action)),
            Step::Idle => None,
            Step::Wait => self.wait_polling(now, h, p),
            Step::Spin => {
                self.hosts[h].start_polling(p, None);
                None
            }
        }
    }

    /// The process waits by polling: with busy polling it runs the NIC
    /// queue's receive path itself, a poll of up to `BUSY_POLL_BUDGET` (or
    /// `host.busy_poll_budget`, `SO_BUSY_POLL_BUDGET`) entries whose first pays `napi_poll` (`busy_poll_more` takes the
    /// others), and holds the interrupt suspended with
    /// irq_suspend_timeout; otherwise it spins on its event ring.
    fn wait_polling(&mut self, now: Instant, h: usize, p: usize) -> Option<(Duration, Action)> {
        if self.c.busy_poll {
            let pr = &self.hosts[h].procs[p];
            let core = pr.core() as usize;
            let q = self.hosts[h].steering.queue_for(Some(pr.ep()), 0);
            let queue = &mut self.hosts[h].nic.queues[q];
            if let Some(poll) = queue.busy_poll(now, self.c.irq_suspend, self.c.busy_poll_budget, p as u16) {
                // Each busy poll pushes the suspension's deadline on, and
                // starts its timer if none is pending (`suspend_timer`).
                if let Some(at) = poll.suspend_timer {
                    self.q.push(at, h as u32, Ev::SuspendTimer { host: h as u16, q: q as u8 });
                }
                self.flow_kick(now, h);
                if let Some(entry) = poll.entry {
                    let cost = self.c.host.napi_poll + self.entry_cost(now, h, core, q as u8, entry);
                    self.hosts[h].kernel_time += cost;
                    return Some((cost, Action::BusyPoll(entry)));
                }
            }
        }
        self.hosts[h].start_polling(p, Some(now));
        None
    }

    /// The busy poll process `p` of host `h` has in progress goes on
    /// (`RxQueue::busy_poll_more`): the next ring entry its budget lets it
    /// take, at the entry's cost alone (the poll's own cost, `napi_poll`,
    /// was paid by its first entry: `wait_polling`), then `busy_poll_stop`'s
    /// extra driver poll, which pays `napi_poll` again, takes entries the
    /// same way and ends with the interrupt's re-arm (`irq_rearm`) or, its
    /// budget spent, NAPI scheduled on this core (a softirq poll queued
    /// here, which runs as the segment ends: `local_bh_enable`). `None`
    /// once the poll is over; the process then handles what it polled up
    /// before it polls again, as `napi_busy_loop` returns to the
    /// application once its socket has data.
    fn busy_poll_more(&mut self, now: Instant, h: usize, p: usize) -> Option<(Duration, Action)> {
        let pr = &self.hosts[h].procs[p];
        let core = pr.core() as usize;
        let q = self.hosts[h].steering.queue_for(Some(pr.ep()), 0);
        let step = self.hosts[h].nic.queues[q].busy_poll_more(p as u16)?;
        self.flow_kick(now, h);
        let (cost, action) = match step {
            BusyStep::Entry { entry, poll } => {
                let fee = if poll { self.c.host.napi_poll } else { Duration::ZERO };
                (fee + self.entry_cost(now, h, core, q as u8, entry), Action::BusyPoll(entry))
            }
            BusyStep::Stop { poll, rearm, napi } => {
                let c = &self.c.host;
                let mut cost =
                    if poll { c.napi_poll } else { Duration::ZERO } + if rearm { c.irq_rearm } else { Duration::ZERO };
                if napi {
                    if self.hosts[h].nic.queues[q].threaded(self.c.napi_threaded) {
                        // __napi_schedule wakes the queue's kernel thread.
                        cost += c.napi_thread_wake;
                        self.wake_napi_thread(now, h, q as u8, core);
                    } else {
                        let w = KWork::Napi { q: q as u8, budget: self.c.napi_budget };
                        self.hosts[h].cores[core].kq.push_back(w);
                    }
                }
                (cost, Action::BusyPollStop)
            }
        };
        self.hosts[h].kernel_time += cost;
        Some((cost, action))
    }

    /// Applies a completed segment of process `p` of host `h`.
    pub(crate) fn lib_apply(&mut self, now: Instant, h: usize, p: usize, action: Action) {
        match action {
            Action::None if self.clock.is_some() => self.computed(now, h, p),
            Action::None => {}
            Action::BusyPollStop => {}
            Action::BusyPoll(entry) => {
                let core = self.hosts[h].procs[p].core() as usize;
                match entry {
                    RingEntry::Rx(frame) => self.handle_frame(now, h, super::RxBy::Core(core), frame),
                    // The busy poll freed the skbs it reaped (`poll_dtors`).
                    RingEntry::TxDone(_) if self.c.tx_softirq => self.net_tx_done(now, h, core),
                    RingEntry::TxDone(_) => {}
                }
            }
            _ => self.lib_call(now, h, p, |pr, cx| pr.apply(cx, action)),
        }
    }

    /// The protocol timer of process `p` fired (`Ev::ProcTimer`).
    pub(super) fn proc_timer(&mut self, now: Instant, h: usize, p: usize) {
        if self.lib_call(now, h, p, |pr, cx| pr.timer_fired(cx)) {
            self.notify_proc(now, h, p);
        }
    }

    /// The library gave up on `peer` (message `seq` of `size` bytes
    /// unacknowledged for [`RESENDS_MAX`] resend delays): the run fails,
    /// naming both ends.
    #[cold]
    #[inline(never)]
    fn give_up(&mut self, h: usize, p: usize, peer: u16, seq: u32, size: u64) {
        let me = self.hosts[h].procs[p].rank();
        let secs = self.c.proto.resend.times(RESENDS_MAX).as_us_f64() / 1e6;
        self.fail(format!(
            "peer unreachable: rank {me} (host {h}) gave up on rank {peer} (host {}): message {seq} of {size} bytes \
             unacknowledged for {secs} s (library.resend_us x {RESENDS_MAX}, Open-MX's OMX_RESENDS_MAX){}",
            self.ranks[peer as usize].0,
            self.ring_overflow_note()
        ));
    }

    /// Writes an event into a process's ring and makes it notice; `by` is
    /// what posts it (a core's bottom half pays for waking the process if
    /// it sleeps on another core: `waker_pays`).
    pub(crate) fn post_event(&mut self, now: Instant, h: usize, p: usize, ev: LibEvent, by: RxBy) {
        let pr = &mut self.hosts[h].procs[p];
        pr.post(ev);
        if let RxBy::Core(k) = by {
            if pr.state() == PState::Blocked && !self.c.host.wake_remote.is_zero() {
                self.waker_pays(h, p, k);
            }
        }
        self.notify_proc(now, h, p);
    }

    /// Core `k` posted an event for process `p`, which sleeps in the wait
    /// ioctl: if on another core, `k` wakes it as Open-MX 1.0.901 does. Every
    /// event post ends in `omx_wakeup_waiter_list` → `wake_up_process`
    /// (driver/linux `omx_event.c`), so the poster runs `try_to_wake_up`:
    /// the sleeper's runqueue lock (a line of the other core) and, from
    /// `resched_task`, the reschedule IPI to a core that is not polling its
    /// need-resched flag (`if (!tsk_is_polling(p)) smp_send_reschedule(cpu)`,
    /// kernel/sched.c of Linux 2.6.26; `default_idle` halts without that
    /// flag). `host.wake_remote_ns` is that work: the poster's next kernel
    /// item pays it, and the sleeper's core starts only when the IPI it
    /// sends lands (its C1E exit and `host.wakeup_ns` follow, as without).
    /// A sleeper on the poster's own core needs neither.
    #[cold]
    #[inline(never)]
    fn waker_pays(&mut self, h: usize, p: usize, k: usize) {
        let w = self.c.host.wake_remote;
        let hs = &mut self.hosts[h];
        let s = hs.procs[p].core() as usize;
        if s == k {
            return;
        }
        hs.cores[k].tail += w;
        hs.cores[s].stall += w;
        hs.wakes_remote += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::ProcSet;

    #[test]
    fn a_proc_set_gives_its_lowest_index_first() {
        let mut s = ProcSet::default();
        assert_eq!(s.first(), None);
        for p in [255, 130, 64, 63] {
            s.insert(p);
        }
        assert_eq!(s.first(), Some(63));
        s.remove(63);
        assert_eq!(s.first(), Some(64));
        s.remove(64);
        s.remove(64);
        assert_eq!(s.first(), Some(130));
        s.remove(130);
        assert_eq!(s.first(), Some(255));
        s.insert(0);
        assert_eq!(s.first(), Some(0));
        s.remove(0);
        s.remove(255);
        assert_eq!(s, ProcSet::default());
    }
}
