//! The NIC of the receiving host: a frame's arrival (steering, ring space,
//! the coalescing policy's view of it), its DMA into host memory, transmit
//! completions, the queue's firmware timers (the coalescing timer, the
//! polling watchdog) and the outcome of a coalescing decision (a timer, an
//! interrupt towards a core); busy polling's interrupt suspension; with
//! `nic.flow_control`, frames that wait at the stopped link and their
//! admission when ring space frees (`flow_hold`, `flow_resume`).
//!
//! This module owns the path from `Ev::NicRx` to `Ev::IrqArrive`. The policy
//! and the watchdog themselves live in `crate::nic` (the receive queue's
//! state and rules), and so does the FIFO of waiting frames
//! (`crate::nic::flow`); what the core does with the interrupt lives in
//! `kernel`.

use super::{Ev, RxBy, What, World};
use crate::config::EchoAt;
use crate::nic::flow::{FlowControl, Held, Hold, LimitCheck, SenderRoom};
use crate::nic::{Nic, Outcome};
use crate::time::Instant;

impl World {
    pub(super) fn nic_rx(&mut self, now: Instant, frame: u32) {
        let f = &mut self.frames[frame as usize];
        let h = f.dst as usize;
        let repr = match f.parsed {
            Some(r) => r,
            None => {
                self.frames.drops.malformed += 1;
                self.free_frame(frame);
                return;
            }
        };
        f.marked = repr.marked;
        let hs = &self.hosts[h];
        if hs.echoes_at(EchoAt::Nic) {
            self.nic_echo(now, h, frame, &repr);
            return;
        }
        let (src, forwards) = (f.src, hs.nic.forwarding.is_some());
        let qi = hs.steering.queue_for(Some(repr.body.dst_endpoint()), src as u32);
        self.nic_ingress(now, h, frame, qi);
        if forwards {
            self.nic_forward(now, h, src, &repr);
        }
    }

    /// Frame `frame`, steered to queue `qi` of host `h`, reaches the NIC:
    /// it waits behind the frames held at a stopped link, or goes in.
    #[inline(always)]
    pub(super) fn nic_ingress(&mut self, now: Instant, h: usize, frame: u32, qi: usize) {
        if self.hosts[h].nic.flow_waiting() {
            self.flow_hold(now, h, frame, qi);
        } else {
            self.nic_accept(now, h, frame, qi);
        }
    }

    /// Frame `frame`, steered to queue `qi` of host `h`, takes a ring slot
    /// (or is dropped at a full ring), starts its DMA, and the coalescing
    /// policy sees its arrival (its marker flag is set).
    #[inline(always)]
    pub(super) fn nic_accept(&mut self, now: Instant, h: usize, frame: u32, qi: usize) {
        let f = &mut self.frames[frame as usize];
        let (len, marked) = (f.len as usize, f.marked);
        f.q = qi as u8;
        // The host is looked up once: the calls below (a coalescing policy
        // among them) would otherwise make the compiler look it up again.
        let hs = &mut self.hosts[h];
        let small = hs.nic.is_small(len);
        let bufs = if small { 1 } else { Nic::big_bufs(len) };
        if hs.nic.ring_full(qi, small, bufs) {
            if hs.nic.flow.is_some() {
                self.flow_hold(now, h, frame, qi);
                return;
            }
            self.frames.drops.ring_full += 1;
            hs.nic.ring_drop_at = Some(now);
            if self.trace.is_some() {
                self.trace_ring_drop(now, h, qi, frame);
            }
            self.free_frame(frame);
            return;
        }
        let nic = &mut hs.nic;
        nic.pending += 1;
        nic.in_dma += 1;
        nic.in_dma_small += small as u32;
        nic.in_dma_big += bufs * !small as u32;
        let out = nic.queues[qi].frame_arrived(now, marked);
        let done = nic.receive(now, len);
        self.q.push(done, h as u32, Ev::DmaDone { host: h as u16, frame });
        if let Some(t) = self.trace.as_deref_mut() {
            t.dma(h, qi, frame, now, done, len as u32);
        }
        self.nic_outcome(now, h, qi, out);
    }

    pub(super) fn dma_done(&mut self, now: Instant, h: usize, frame: u32) {
        // The frame leaves the DMA count: room for a waiting frame?
        self.flow_kick(now, h);
        let (marked, bytes, qi) = {
            let f = &self.frames[frame as usize];
            (f.marked, f.len, f.q as usize)
        };
        self.frames[frame as usize].irq_stamp = self.hosts[h].rx.irq_raised() as u32;
        let nic = &mut self.hosts[h].nic;
        let small = nic.is_small(bytes as usize);
        let bufs = if small { 1 } else { Nic::big_bufs(bytes as usize) };
        nic.pending -= 1;
        nic.in_dma -= 1;
        nic.in_dma_small -= small as u32;
        nic.in_dma_big -= bufs * !small as u32;
        if self.env.c.native {
            // OS-bypass: the event (and small data) is already in user
            // memory; no ring, no coalescing, no interrupt.
            self.handle_frame(now, h, RxBy::Nic, frame);
            return;
        }
        let other_pending = nic.other_pending();
        let dc = crate::nic::coalesce::DmaCompletion { marked, bytes, other_pending };
        let (out, watchdog) = nic.queues[qi].frame_delivered(now, frame, small, bufs, dc);
        if let Some((at, gen)) = watchdog {
            self.q.push(at, h as u32, Ev::WatchdogTimer { host: h as u16, q: qi as u8, gen });
        }
        self.nic_outcome(now, h, qi, out);
        if self.env.c.busy_poll {
            // A busy-polling application sees the new descriptor at once.
            // The one polling this queue, that is (with multiqueue each
            // process polls its own).
            if let Some(p) = self.hosts[h].poller_of(qi) {
                self.notify_proc(now, h, p);
            }
        }
    }

    /// The coalescing timer of queue `q` fired (`Ev::CoalTimer`): the
    /// queue's policy decides (`RxQueue::coal_timer`; nothing if the timer
    /// is stale).
    pub(super) fn coal_timer(&mut self, now: Instant, h: usize, q: usize, gen: u32) {
        if let Some(out) = self.hosts[h].nic.queues[q].coal_timer(now, gen) {
            if let Some(t) = self.trace.as_deref_mut() {
                t.nic(h, q, now, What::TimerFired, 0);
            }
            self.nic_outcome(now, h, q, out);
        }
    }

    /// A claim host `h` wrote for queue `q` reaches the NIC
    /// (`Ev::ClaimLands`, `nic.claim_latency_ns` after the write): the
    /// receive claim re-arms the line as the end of a poll does
    /// (`RxQueue::napi_done`), the interrupt claim as the end of a hard
    /// handler does (`RxQueue::rearm_claim`); a raise wanted meanwhile
    /// happens now.
    #[cold]
    pub(super) fn claim_lands(&mut self, now: Instant, h: usize, q: usize, rx: bool) {
        let queue = &mut self.hosts[h].nic.queues[q];
        let out = if rx { queue.napi_done(now) } else { queue.rearm_claim(now) };
        self.nic_outcome(now, h, q, out);
    }

    /// The polling watchdog of queue `q` fired (`Ev::WatchdogTimer`), or,
    /// on a NIC that runs the LANai firmware, the firmware's: the NIC's
    /// watchdog looks at the host's progress (`Nic::watchdog_timer`; the
    /// LANai's reads its host's words, the LCI library's interrupts-enabled
    /// flag and consumed count); its next event, and the interrupt it lets
    /// out: the queue's through its line, the LANai's a signal to the
    /// library (`lci_stack`).
    #[inline(never)]
    pub(super) fn watchdog_timer(&mut self, now: Instant, h: usize, q: usize, gen: u32) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.nic(h, q, now, What::WatchdogFired, 0);
        }
        let hs = &mut self.hosts[h];
        let words = hs.lci.as_deref().map_or((true, 0), |l| (l.irq_enabled(), l.consumed()));
        let (out, next) = hs.nic.watchdog_timer(now, q, gen, words);
        let (origin, lanai) = (self.hosts[h].nic.origin, self.hosts[h].lci.is_some());
        if let Some((at, gen)) = next {
            self.q.push(at, origin, Ev::WatchdogTimer { host: h as u16, q: q as u8, gen });
        }
        if lanai {
            if out.raise {
                self.lanai_signal(now, h);
            }
        } else {
            self.nic_outcome(now, h, q, out);
        }
    }

    /// A busy poller found work on queue `q`: the suspension lasts
    /// irq_suspend_timeout from now, and its timer starts if none is pending
    /// (`suspend_timer`).
    pub(super) fn release_suspension(&mut self, now: Instant, h: usize, q: usize) {
        if let Some(at) = self.hosts[h].nic.queues[q].poller_found_work(now, self.env.c.irq_suspend) {
            self.q.push(at, h as u32, Ev::SuspendTimer { host: h as u16, q: q as u8 });
        }
    }

    /// The NIC completed sending a frame of `bytes` on queue `qi`'s line
    /// (`Ev::TxDone`): the skb's destructor (`dtor`, of endpoint `ep`'s
    /// process) waits for the reaping interrupt; the queue's policy decides.
    pub(super) fn tx_done(
        &mut self,
        now: Instant,
        h: usize,
        qi: usize,
        (dtor, ep): (crate::kernel::TxDtor, u8),
        bytes: u32,
    ) {
        if dtor != crate::kernel::TxDtor::None {
            if let Some(p) = self.hosts[h].eps.get(ep as usize).copied().flatten() {
                self.hosts[h].net_tx.completed(qi, dtor, p);
            }
        }
        let nic = &mut self.hosts[h].nic;
        let other_pending = nic.other_pending();
        let out = nic.queues[qi].tx_completion(now, bytes, other_pending);
        self.nic_outcome(now, h, qi, out);
    }

    /// Inlined: small, and run for most events (the outcome then stays in
    /// registers).
    #[inline(always)]
    pub(super) fn nic_outcome(&mut self, now: Instant, h: usize, q: usize, out: Outcome) {
        if let Some((at, gen)) = out.timer {
            self.q.push(at.max(now), h as u32, Ev::CoalTimer { host: h as u16, q: q as u8, gen });
            if let Some(t) = self.trace.as_deref_mut() {
                t.timer_armed(h, q, now, at);
            }
        }
        if out.raise {
            let hs = &mut self.hosts[h];
            // The queue scheduled NAPI if the interrupt reports frames.
            hs.rx.raised(out.rx);
            self.run.irq_raised_all += 1;
            let at = now + hs.nic.irq_delivery;
            self.q.push(at, h as u32, Ev::IrqArrive { host: h as u16, q: q as u8, rx: out.rx });
            if let Some(t) = self.trace.as_deref_mut() {
                t.nic(h, q, now, What::IrqRaised, out.rx as u32);
            }
        }
    }

    /// Flow control (`nic.flow_control`): the frame cannot enter the NIC
    /// now (its ring is full, or frames wait before it) and waits at the
    /// stopped link; at the FIFO's bound, or if the ring could never hold
    /// it, it is dropped as without flow control. With the stop reaching
    /// the sender (`nic.pause_to_sender`), a frame the stopped sender's
    /// send ring and qdisc have no room for is dropped as its qdisc would
    /// (`pfifo_fast_enqueue` past `tx_queue_len`, Linux 2.6.26
    /// net/sched/sch_generic.c; Open-MX ignores `dev_queue_xmit`'s
    /// return), counted with the sender's drops (`dropped_tx_queue`).
    #[cold]
    #[inline(never)]
    fn flow_hold(&mut self, now: Instant, h: usize, frame: u32, qi: usize) {
        let (len, src) = (self.frames[frame as usize].len as usize, self.frames[frame as usize].src);
        if self.hosts[h].nic.flow.as_deref().is_some_and(FlowControl::pauses_sender) {
            let at_sender = self.hosts[src as usize].txq.backlog(now);
            let room = self.hosts[h].nic.flow.as_deref().map(|f| f.sender_room(src, at_sender));
            if room == Some(SenderRoom::Full) {
                self.frames.drops.tx_queue_paused += 1;
                self.free_frame(frame);
                return;
            }
        }
        let nic = &mut self.hosts[h].nic;
        let received = nic.fw_rx_frames;
        if nic.flow.as_deref_mut().is_some_and(|f| f.giving_up(received)) {
            // The stop gave up and the host has taken nothing since: the
            // firmware drops, as without flow control.
            self.drop_at_full_ring(now, h, qi, frame);
            return;
        }
        let small = nic.is_small(len);
        let bufs = if small { 1 } else { Nic::big_bufs(len) };
        let held = Held { frame, src, q: qi as u8, small, bufs, since: now };
        // A frame no ring could ever hold would stop the link for good.
        let hold = if bufs as usize <= nic.ring_slots { nic.flow_hold(held) } else { None };
        match hold {
            Some(Hold::Stopped) => {
                if let Some(t) = self.trace.as_deref_mut() {
                    t.nic(h, qi, now, What::LinkStopped, 0);
                }
                if let Some(at) = self.hosts[h].nic.flow.as_deref_mut().and_then(FlowControl::check_due) {
                    self.q.push(at, h as u32, Ev::FlowLimit { host: h as u16 });
                }
            }
            Some(Hold::Queued) => {}
            Some(Hold::Overflow) | None => {
                self.drop_at_full_ring(now, h, qi, frame);
            }
        }
    }

    /// Ring space may have freed on host `h` (a take, a restock, a DMA
    /// completion): if frames wait at its stopped link, an admission
    /// attempt runs once this event is done (`Ev::FlowResume`). One check
    /// when nothing waits.
    #[inline(always)]
    pub(super) fn flow_kick(&mut self, now: Instant, h: usize) {
        if self.hosts[h].nic.flow_waiting() {
            self.flow_schedule(now, h);
        }
    }

    #[cold]
    #[inline(never)]
    fn flow_schedule(&mut self, now: Instant, h: usize) {
        if let Some(f) = self.hosts[h].nic.flow.as_deref_mut() {
            if f.want_resume() {
                self.q.push(now, h as u32, Ev::FlowResume { host: h as u16 });
            }
        }
    }

    /// `Ev::FlowResume`: the frames at the head of the stopped link enter
    /// the NIC in arrival order while their rings have room (each through
    /// `nic_accept`: its DMA starts and the coalescing policy sees it now);
    /// the link restarts when none waits.
    pub(super) fn flow_resume(&mut self, now: Instant, h: usize) {
        let Some(f) = self.hosts[h].nic.flow.as_deref_mut() else { return };
        f.resume_fired();
        let mut q = 0;
        while let Some((frame, qi)) = self.hosts[h].nic.flow_admit(now) {
            self.nic_accept(now, h, frame, qi);
            q = qi;
        }
        if !self.hosts[h].nic.flow_waiting() {
            if let Some(t) = self.trace.as_deref_mut() {
                t.nic(h, q, now, What::LinkRestarted, 0);
            }
        }
    }

    /// Frame `frame`, bound for queue `qi` of host `h`, is dropped at its
    /// full ring (`dropped_ring_full`) by the link's flow control: past
    /// its FIFO's bound, or once a stop gave up.
    #[cold]
    #[inline(never)]
    fn drop_at_full_ring(&mut self, now: Instant, h: usize, qi: usize, frame: u32) {
        self.frames.drops.ring_full += 1;
        self.hosts[h].nic.ring_drop_at = Some(now);
        if self.trace.is_some() {
            self.trace_ring_drop(now, h, qi, frame);
        }
        self.free_frame(frame);
    }

    /// `Ev::FlowLimit`: the hold limit of host `h`'s stopped link
    /// (`nic.flow_control_hold_us`). If no frame was admitted for the
    /// limit, the stop gives up: the waiting frames are dropped at their
    /// full rings (with the stop reaching the sender, what its send ring
    /// and qdisc held goes out and finds them full), and the NIC drops
    /// each frame that finds its ring full until the host takes one
    /// (`flow_hold`). Otherwise the next check is due the limit after the
    /// last admission.
    #[cold]
    #[inline(never)]
    pub(super) fn flow_limit(&mut self, now: Instant, h: usize) {
        let nic = &mut self.hosts[h].nic;
        let received = nic.fw_rx_frames;
        let Some(f) = nic.flow.as_deref_mut() else { return };
        match f.check(now, received) {
            LimitCheck::Idle => {}
            LimitCheck::Again(at) => self.q.push(at, h as u32, Ev::FlowLimit { host: h as u16 }),
            LimitCheck::GiveUp => {
                while let Some(held) = self.hosts[h].nic.flow_drop_waiting() {
                    self.drop_at_full_ring(now, h, held.q as usize, held.frame);
                }
            }
        }
    }

    /// The irq_suspend_timeout timer of queue `q` fired (`Ev::SuspendTimer`):
    /// the queue's suspension decides (`crate::nic::suspend`: it lasts while
    /// a poll keeps finding work or runs, and is parked without a timer
    /// while a process busy polls the empty queue, which sees every new
    /// descriptor: `dma_done` wakes it, and its next poll starts the timer
    /// again). Its next timer is scheduled here, and when it ends the
    /// interrupt enabled again (raised at once if frames wait).
    pub(super) fn suspend_timer(&mut self, now: Instant, h: usize, q: usize) {
        let hs = &mut self.hosts[h];
        let polled = hs.poller_of(q).is_some();
        let (next, out) = hs.nic.queues[q].suspend_timer(now, self.env.c.irq_suspend, polled);
        if let Some(at) = next {
            self.q.push(at, h as u32, Ev::SuspendTimer { host: h as u16, q: q as u8 });
        }
        self.nic_outcome(now, h, q, out);
    }
}
