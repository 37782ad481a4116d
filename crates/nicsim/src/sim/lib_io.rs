//! A library called without a core's dispatch: a host's \[LCI] library
//! (`lci_lib`: called with the one library context, `crate::library::Cx`,
//! its `crate::library::Output`s routed by the one router, `kernel`'s
//! `route`, as an Open-MX process's are), and an Open-MX process waiting
//! for the library's next event: its busy poll of its receive queue
//! (`wait_polling`, `busy_poll_more`: the NIC queue's receive path run by
//! the process itself), its protocol timer's event (`proc_timer`) and the
//! run's end when the library gives up on a peer (`give_up`).
//!
//! The pollers' record, the calls into a process and the routing of what
//! a library returns are the cores' (`kernel`); what a library decides and
//! what a step costs are `crate::library`'s.

use super::{Ev, World};
use crate::kernel::KWork;
use crate::library::lci::Lib;
use crate::library::{Action, Cx};
use crate::nic::BusyStep;
use crate::proto::RESENDS_MAX;
use crate::time::{Duration, Instant};

impl World {
    /// Calls host `h`'s \[LCI] library at `now` (`f`) with its context, then
    /// routes what it returned as [`World::lib_call`] does (its `p` is 0:
    /// the host's one library), and forgets the packets its outputs named.
    pub(super) fn lci_lib(&mut self, h: u32, now: Instant, f: impl FnOnce(&mut Lib, &mut Cx<'_>)) {
        let start = self.lib_out.len();
        let hs = &mut self.hosts[h as usize];
        let lib = hs.lci.as_deref_mut().expect("a host of a world that runs the LCI stack has its library");
        let held = lib.held_mark();
        f(lib, &mut Cx { now, host: h as u16, env: &self.env, mem: &mut hs.mem, out: &mut self.lib_out });
        if self.lib_out.len() > start {
            self.route(now, h as usize, 0, start);
        }
        self.hosts[h as usize].lib().release_held(held);
    }

    /// The process waits by polling: with busy polling it runs the NIC
    /// queue's receive path itself, a poll of up to `BUSY_POLL_BUDGET` (or
    /// `host.busy_poll_budget`, `SO_BUSY_POLL_BUDGET`) entries whose first
    /// pays `napi_poll` (`busy_poll_more` takes the
    /// others), and holds the interrupt suspended with
    /// irq_suspend_timeout; otherwise it spins on its event ring.
    pub(super) fn wait_polling(&mut self, now: Instant, h: usize, p: usize) -> Option<Duration> {
        if self.env.c.busy_poll {
            let pr = &self.hosts[h].procs[p];
            let core = pr.core() as usize;
            let q = self.hosts[h].steering.queue_for(Some(pr.ep()), 0);
            let queue = &mut self.hosts[h].nic.queues[q];
            if let Some(poll) = queue.busy_poll(now, self.env.c.irq_suspend, self.env.c.busy_poll_budget, p as u16) {
                // Each busy poll pushes the suspension's deadline on, and
                // starts its timer if none is pending (`suspend_timer`).
                if let Some(at) = poll.suspend_timer {
                    self.q.push(at, h as u32, Ev::SuspendTimer { host: h as u16, q: q as u8 });
                }
                self.flow_kick(now, h);
                if let Some(entry) = poll.entry {
                    let cost = self.env.c.host.napi_poll + self.entry_cost(now, h, core, q as u8, entry);
                    let hs = &mut self.hosts[h];
                    hs.kernel_time += cost;
                    hs.procs[p].begin(Action::BusyPoll(entry));
                    return Some(cost);
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
    pub(super) fn busy_poll_more(&mut self, now: Instant, h: usize, p: usize) -> Option<Duration> {
        let pr = &self.hosts[h].procs[p];
        let core = pr.core() as usize;
        let q = self.hosts[h].steering.queue_for(Some(pr.ep()), 0);
        let step = self.hosts[h].nic.queues[q].busy_poll_more(p as u16)?;
        self.flow_kick(now, h);
        let (cost, action) = match step {
            BusyStep::Entry { entry, poll } => {
                let fee = if poll { self.env.c.host.napi_poll } else { Duration::ZERO };
                (fee + self.entry_cost(now, h, core, q as u8, entry), Action::BusyPoll(entry))
            }
            BusyStep::Stop { poll, rearm, napi } => {
                let c = &self.env.c.host;
                let mut cost =
                    if poll { c.napi_poll } else { Duration::ZERO } + if rearm { c.irq_rearm } else { Duration::ZERO };
                if napi {
                    if self.hosts[h].nic.queues[q].threaded(self.env.c.napi_threaded) {
                        // __napi_schedule wakes the queue's kernel thread.
                        cost += c.napi_thread_wake;
                        self.wake_napi_thread(now, h, q as u8, core);
                    } else {
                        let w = KWork::Napi { q: q as u8, budget: self.env.c.napi_budget };
                        self.hosts[h].cores[core].kq.push_back(w);
                    }
                }
                (cost, Action::BusyPollStop)
            }
        };
        let hs = &mut self.hosts[h];
        hs.kernel_time += cost;
        hs.procs[p].begin(action);
        Some(cost)
    }

    /// The protocol timer of process `p` fired (`Ev::ProcTimer`).
    pub(super) fn proc_timer(&mut self, now: Instant, h: usize, p: usize) {
        if self.lib_call(now, h, p, |pr, cx| pr.timer_fired(cx)) {
            self.notify_proc(now, h, p);
        }
    }

    /// The library gave up on `peer` (message `seq` of `size` bytes
    /// unacknowledged for [`RESENDS_MAX`] resend delays, last put on the
    /// wire at `last_sent`): the run fails, naming both ends, and the key
    /// to change when a full receive ring of either end dropped frames
    /// after that last resend (the message or its ack may be among them:
    /// every resend round then overflows the ring the same way) or since
    /// the last message completed ([`World::ring_overflow_note`]).
    #[cold]
    #[inline(never)]
    pub(super) fn give_up(&mut self, h: usize, p: usize, peer: u16, seq: u32, size: u64, last_sent: Instant) {
        let me = self.hosts[h].procs[p].rank();
        let ph = self.env.ranks[peer as usize].0 as usize;
        let secs = self.env.c.proto.resend.times(RESENDS_MAX).as_us_f64() / 1e6;
        let ring = [h, ph].into_iter().find(|&x| self.hosts[x].nic.ring_drop_at.is_some_and(|t| t >= last_sent));
        let note = match ring {
            Some(x) => format!(
                "; frames were dropped at full receive rings (host {x}) after the last resend{}",
                super::ring_advice(self.hosts[x].nic.ring_slots)
            ),
            None => self.ring_overflow_note(),
        };
        self.fail(format!(
            "peer unreachable: rank {me} (host {h}) gave up on rank {peer} (host {ph}): message {seq} of {size} bytes \
             unacknowledged for {secs} s (library.resend_us x {RESENDS_MAX}, Open-MX's OMX_RESENDS_MAX){note}"
        ));
    }
}
