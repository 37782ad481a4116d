//! The calls into a library and the one routing of what it returns, for
//! both libraries: an Open-MX process's (`lib_call`) and a host's \[LCI]
//! library (`lci_lib`) are called with the one context
//! (`crate::library::Cx`) and their `crate::library::Output`s routed in
//! order (`route`: a timer queued as the library's event, a frame handed
//! to the host's send path, a completion counted, the LCI library's PIO
//! and its program's news handed to `lci_stack`). Also a process waiting
//! for the library's next event without a core's dispatch: its busy poll
//! of its receive queue (`wait_polling`, `busy_poll_more`: the NIC queue's
//! receive path run by the process itself), its protocol timer's event
//! (`proc_timer`) and the run's end when the library gives up on a peer
//! (`give_up`).
//!
//! The pollers' record is the cores' (`kernel`); what a library decides
//! and what a step costs are `crate::library`'s.

use super::{Ev, RxBy, World};
use crate::kernel::KWork;
use crate::library::lci::Lib;
use crate::library::{Action, Cx, LibEv, Output, Proc};
use crate::nic::BusyStep;
use crate::proto::RESENDS_MAX;
use crate::time::{Duration, Instant};
use crate::wire::{self, FrameRepr, OmxBody};

impl World {
    /// Calls process `p` of host `h` with its context, then routes what it
    /// returned. Outputs of calls made while routing (a copy into a local
    /// process that runs it) go after this call's in the buffer and are
    /// routed and removed by their own call.
    #[inline(always)]
    pub(super) fn lib_call<R>(
        &mut self,
        now: Instant,
        h: usize,
        p: usize,
        f: impl FnOnce(&mut Proc, &mut Cx<'_>) -> R,
    ) -> R {
        let start = self.lib_out.len();
        let hs = &mut self.hosts[h];
        let mut cx = Cx { now, host: h as u16, env: &self.env, mem: &mut hs.mem, out: &mut self.lib_out };
        let r = f(&mut hs.procs[p], &mut cx);
        if self.lib_out.len() > start {
            self.route(now, h, p, start);
        }
        r
    }

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

    /// Routes the outputs of a library of host `h` (process `p`'s) from `start` on. The
    /// outputs of most calls (a frame, a completion) are routed here and
    /// the others by `route_other`, out of line: the loop then holds no
    /// addresses and constants for them, computed ahead of it at every
    /// call (about 4 calls a round trip).
    fn route(&mut self, now: Instant, h: usize, p: usize, start: usize) {
        let end = self.lib_out.len();
        for i in start..end {
            match self.lib_out[i] {
                Output::Transmit { dst, marked, body } => self.route_transmit(now, h, dst, marked, body),
                Output::Completed => self.run.completions += 1,
                o => self.route_other(now, h, p, o),
            }
        }
        self.lib_out.truncate(start);
    }

    /// Routes output `o` of a library of host `h` (process `p`'s; any
    /// output; called for those [`World::route`] does not route itself): a
    /// timer becomes the library's event, a frame the host's send path, a
    /// completion the run's count; the \[LCI] library's PIO goes across its
    /// NIC's bus and what its program learns to the program
    /// (`lci_stack`).
    #[inline(never)]
    fn route_other(&mut self, now: Instant, h: usize, p: usize, o: Output) {
        match o {
            Output::Timer { at, ev: LibEv::Protocol, .. } => {
                self.q.push(at, h as u32, Ev::ProcTimer { host: h as u16, p: p as u16 })
            }
            Output::Timer { at, ev, arg } => self.lci_timer(h as u32, at, ev, arg),
            Output::Transmit { dst, marked, body } => self.route_transmit(now, h, dst, marked, body),
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
                self.hosts[h].procs[p].pull_opened(handle, blocks, pages, self.env.c.lib.max_pulls);
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
            Output::GiveUp { peer, seq, size, last_sent } => self.give_up(h, p, peer, seq, size, last_sent),
            Output::PioRead { then, arg } => self.lci_pio_read(h as u32, now, then, arg),
            Output::PioWrite { pkt, bytes } => self.lci_pio_write(h as u32, now, pkt, bytes),
            Output::Message { src, tag } => self.lci_message(h as u32, now, src, tag),
            Output::Arrived { from, tag, at } => self.lci_arrived(h as u32, from, tag, at),
            Output::Idle => self.lci_idle(h as u32, now),
            Output::ComputeDone => self.lci_compute_done(h as u32),
        }
    }

    /// The frame of an `Output::Transmit` sent from host `h`: out of line,
    /// so that `route`, called for every library call with outputs (most
    /// of them no frame), does not compute its addresses ahead of its loop.
    #[inline(never)]
    fn route_transmit(&mut self, now: Instant, h: usize, dst: u16, marked: bool, body: OmxBody) {
        let repr = FrameRepr {
            dst_mac: wire::host_mac(dst),
            src_mac: wire::host_mac(h as u16),
            src_peer: h as u16,
            marked,
            body,
        };
        self.send_frame(now, h, dst, &repr);
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
