//! The host's cores, the world's side: what each core runs next and the
//! calls into the two host-side components it runs, with their answers
//! routed. An interrupt's arrival and a deferred NAPI's timer queue the
//! work the host's receive path names (`crate::kernel::RxPath`); the
//! dispatch (`dispatch_at`) picks kernel work before the application and
//! preempts it; a kernel item starts (its price: `kernel_start`) and ends
//! (`finish_kernel`: the receive path's `Done` routed: the next item, a
//! frame to the Open-MX handler, an interrupt outcome to the NIC path, a
//! NAPI timer); a received frame's verdict (`handle_frame`:
//! `RxPath::handle`'s answer routed to the library's ring, the drivers'
//! pulls, the kernel echo or the drop counters).
//!
//! The world's side of the library interface is here too: each call into
//! a process's library (`lib_call`: `Proc::step` when its core runs it,
//! `Proc::segment_done` when the segment ends) is made with its context
//! (`crate::library::Cx`: the time, the costs, the host's cache counters
//! and send path, the rank map) and the outputs it returns are routed in
//! order right after the call (`route`, the one router of both libraries'
//! outputs, `lib_io`'s `lci_lib` calling it for a host's \[LCI] library:
//! frames to the NIC, intra-host copies to the peer's ring, timers to the
//! event queue, pulls to the driver, multicast frames to the NIC, counters
//! to the run's, the LCI library's PIO and its program's news to
//! `lci_stack`); an event's way into a process's ring and the process's
//! wake-up (`post_event`, `notify_proc`), which dispatches its core; the
//! host's record of which processes poll which receive queue
//! (`HostState::start_polling`, `stop_polling`, `poller_of`, over its
//! `pollers`, as a [`ProcSet`] per queue).
//!
//! The cores' own state and the decisions that read only it (the kernel
//! queue, what a core runs, segment numbers, idle and sleep bookkeeping,
//! the wake-up cost) are `crate::host::core`'s, generic over the work item
//! (`crate::kernel::KWork`). It does not own what the handler decides nor
//! its price (`crate::kernel`), nor what the library decides or what a
//! step costs (`crate::library`), nor busy polling (`lib_io`).

use super::{Ev, HostState, RxBy, World, NO_RANK};
use crate::engine::EventQueue;
use crate::host::Segment;
pub(crate) use crate::kernel::KWork;
use crate::kernel::{Done, RxPath, Verdict};
use crate::library::{Action, Cx, LibEv, LibEvent, Notice, Output, PState, Proc, Step};
use crate::nic::RingEntry;
use crate::time::{Duration, Instant};
use crate::wire::{self, FrameRepr, OmxBody};

/// The cores of a host, running this module's work items
/// (`crate::host::core`).
pub(crate) type Core = crate::host::Core<KWork>;
/// What a core is doing.
type Cur = crate::host::Cur<KWork>;

/// Schedules the end of a segment that core `core` of host `h` began.
#[inline(always)]
fn schedule(q: &mut EventQueue<Ev>, h: usize, core: usize, seg: Segment) {
    q.push_inline(seg.end, h as u32, Ev::CoreDone { host: h as u16, core: core as u8, gen: seg.gen });
}

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
    /// The interrupt of queue `q` reaches its core (`Ev::IrqArrive`; `rx`:
    /// it reports received frames). A hard IRQ runs before any pending
    /// bottom-half work of the core (softirqs run with interrupts enabled).
    pub(super) fn irq_arrive(&mut self, now: Instant, h: usize, q: u8, rx: bool) {
        let hs = &mut self.hosts[h];
        let core = hs.steering.irq_core(q as usize) as usize;
        let queue = &hs.nic.queues[q as usize];
        let w = RxPath::irq(q, rx, queue.split_claims(), queue.threaded(self.env.c.napi_threaded));
        hs.cores[core].kq.push_front(w);
        self.kick(now, h, core);
    }

    /// The gro_flush_timeout of a NAPI deferred on `core` expired
    /// (`Ev::NapiTimer`): the hrtimer interrupt re-polls queue `q`, or
    /// wakes its kernel thread (threaded NAPI).
    pub(super) fn napi_timer(&mut self, now: Instant, h: usize, q: u8, core: usize) {
        let hs = &mut self.hosts[h];
        let threaded = hs.nic.queues[q as usize].threaded(self.env.c.napi_threaded);
        hs.cores[core].kq.push_back(RxPath::napi_timer(q, threaded));
        self.kick(now, h, core);
    }

    /// Threaded NAPI: the hard IRQ on `waker` woke queue `q`'s kernel
    /// thread (`Done::Wake`). The scheduler places it
    /// (`crate::host::Core::wake_target`) and it runs its poll there
    /// (`KWork::ThreadNapi`, after the switch into it) as kernel work
    /// before the application: on a core running the application it
    /// preempts it, as wake-up preemption does for a thread that slept
    /// (kernel/sched/fair.c `check_preempt_wakeup_fair`; a SCHED_FIFO
    /// thread always does), and on an idle core the core wakes first.
    #[cold]
    #[inline(never)]
    pub(super) fn wake_napi_thread(&mut self, now: Instant, h: usize, q: u8, waker: usize) {
        let hs = &mut self.hosts[h];
        let prev = hs.rx.thread_core(q).map(usize::from);
        let core = Core::wake_target(&hs.cores, &self.env.topo, waker, prev);
        hs.rx.thread_placed(q, core as u16);
        hs.cores[core].kq.push_back(KWork::ThreadNapi { q });
        if core != waker {
            self.kick(now, h, core);
        }
    }

    /// New kernel work was queued on `core`: preempt the application if it
    /// is running a segment, then dispatch.
    #[inline(always)]
    pub(crate) fn kick(&mut self, now: Instant, h: usize, core: usize) {
        let cs = &mut self.hosts[h].cores[core];
        if let Some(remaining) = cs.preempt(now) {
            if let Some(p) = cs.app {
                self.hosts[h].procs[p as usize].preempt(remaining);
            }
            if let Some(t) = self.trace.as_deref_mut() {
                t.preempt(h, core, now);
            }
        }
        self.dispatch_at(now, h, core);
    }

    pub(super) fn dispatch(&mut self, h: usize, core: usize) {
        let now = self.q.now();
        self.dispatch_at(now, h, core);
    }

    /// Starts the next work item on an idle core: kernel work first, then
    /// the application.
    ///
    /// One item is started per call; the rare items that end at once (the
    /// work vanished, or it takes no time) dispatch again through
    /// `dispatch_again`, out of line. The body is no loop: around a loop,
    /// LLVM computes a dozen of the world's field addresses and index
    /// products ahead of it at every call and keeps them on the stack,
    /// about 45 instructions a call for the ~20 calls of a round trip, most
    /// of which return after one item (docs/performance.md).
    pub(crate) fn dispatch_at(&mut self, now: Instant, h: usize, core: usize) {
        if let Some(seg) = self.dispatch_item(now, h, core) {
            schedule(&mut self.q, h, core, seg);
        }
    }

    /// [`World::dispatch_at`]'s item: the segment it began, whose end the
    /// caller schedules (one push, inlined, for the three kinds of segment).
    #[inline(always)]
    fn dispatch_item(&mut self, now: Instant, h: usize, core: usize) -> Option<Segment> {
        // The checks and the application part below share one lookup of
        // the core (this runs for most events).
        let hs = &mut self.hosts[h];
        let cs = &mut hs.cores[core];
        if !matches!(cs.cur, Cur::Idle) {
            return None;
        }
        if let Some(w) = cs.kq.pop_front() {
            if let Some((cost, w)) = self.start_kernel(now, h, core, w) {
                let hs = &mut self.hosts[h];
                let wake = Core::wake_cost(&mut hs.cores, &self.env.topo, core, &self.env.c.sleep, now);
                let cs = &mut hs.cores[core];
                let cost = cost + std::mem::take(&mut cs.tail);
                if (wake + cost).is_zero() {
                    // Takes no time (e.g. a re-arm that is a posted write):
                    // complete it now instead of scheduling an event (the
                    // core stays idle).
                    self.finish_kernel_out(now, h, core, w);
                    self.dispatch_again(now, h, core);
                    return None;
                }
                // Marked busy here rather than in `start_kernel`: the
                // core is already looked up.
                let (cost, seg) = cs.begin_kernel(w, now + wake, cost);
                hs.kernel_time += cost;
                if self.trace.is_some() {
                    self.trace_kernel(now, h, core, wake, w, cost);
                }
                return Some(seg);
            }
            // The work vanished (e.g. empty ring): try the next.
            self.dispatch_again(now, h, core);
            return None;
        }
        let Some(p) = cs.app else {
            cs.go_idle(now);
            return None;
        };
        let p = p as usize;
        let pr = &mut hs.procs[p];
        match pr.state() {
            PState::Preempted(rem) => {
                pr.resume();
                // A stall owed since is paid now: CPU time like the rest
                // (`rem` was charged when the segment first began).
                let (rem_stall, seg) = cs.begin_app(now, rem);
                hs.app_time += rem_stall - rem;
                let rem = rem_stall;
                if let Some(t) = self.trace.as_deref_mut() {
                    t.app_resume(h, core, now, rem);
                }
                Some(seg)
            }
            PState::Ready | PState::Waking => {
                let extra = if pr.state() == PState::Waking { self.env.c.host.wakeup } else { Duration::ZERO };
                let step = self.lib_step(now, h, p);
                let hs = &mut self.hosts[h];
                match step {
                    Some(cost) => {
                        let wake = Core::wake_cost(&mut hs.cores, &self.env.topo, core, &self.env.c.sleep, now);
                        let (cost, seg) = hs.cores[core].begin_app(now + wake + extra, cost);
                        hs.app_time += extra + cost;
                        if self.trace.is_some() {
                            self.trace_app(now, h, core, wake, extra, cost);
                        }
                        Some(seg)
                    }
                    None => {
                        // Polling, blocked or done: nothing to run.
                        let cs = &mut hs.cores[core];
                        if hs.procs[p].state() == PState::Polling {
                            cs.spin();
                        } else {
                            cs.go_idle(now);
                        }
                        None
                    }
                }
            }
            PState::Polling => {
                cs.spin();
                None
            }
            PState::Running => unreachable!("running process on an idle core"),
            PState::Blocked | PState::Done => {
                cs.go_idle(now);
                None
            }
        }
    }

    /// [`World::dispatch_at`] once more, for its items that ended at once:
    /// a call of its own, so that `dispatch_at` stays free of a loop.
    #[cold]
    #[inline(never)]
    fn dispatch_again(&mut self, now: Instant, h: usize, core: usize) {
        self.dispatch_at(now, h, core);
    }

    /// The segment numbered `gen` of a core ended; stale if the core has
    /// since been preempted (checked here, where the core is looked up
    /// anyway). Inlined into the event loop (its only caller, `handle`).
    #[inline(always)]
    pub(super) fn core_done(&mut self, now: Instant, h: usize, core: usize, gen: u32) {
        let hs = &mut self.hosts[h];
        let cs = &mut hs.cores[core];
        if !cs.is_current(gen) {
            return;
        }
        match cs.end_segment() {
            Cur::Kernel(w) => self.finish_kernel(now, h, core, w),
            Cur::App => {
                if let Some(p) = cs.app {
                    self.lib_segment_done(now, h, p as usize);
                }
            }
            Cur::Idle => {}
        }
        self.dispatch_at(now, h, core);
    }

    /// `finish_kernel` for the rare zero-cost items of `dispatch_at`: kept
    /// out of line there, inlined in `core_done` (every kernel segment).
    #[inline(never)]
    pub(super) fn finish_kernel_out(&mut self, now: Instant, h: usize, core: usize, w: KWork) {
        self.finish_kernel(now, h, core, w);
    }

    #[inline(always)]
    pub(super) fn finish_kernel(&mut self, now: Instant, h: usize, core: usize, w: KWork) {
        let Some(q) = w.rx_queue() else {
            match w {
                KWork::PullReply { serve } => self.send_pull_reply(now, h, RxBy::Core(core), serve),
                KWork::Signal { p } => self.signal_done(now, h, p as usize),
                KWork::NetTx => self.net_tx_done(now, h, core),
                KWork::Tick => {}
                _ => unreachable!("an item of the receive path"),
            }
            return;
        };
        let (rx, mut cx) = self.rx_parts(now, h, q);
        match rx.finish(&mut cx, w) {
            Done::Frame { next, tail, frame } => {
                let cs = &mut self.hosts[h].cores[core];
                cs.kq.push_front(next);
                cs.tail = tail;
                self.handle_frame(now, h, RxBy::Core(core), frame);
            }
            Done::Next(next) => {
                self.hosts[h].cores[core].kq.push_front(next);
                if matches!(w, KWork::EntryTxDone { .. }) && self.env.c.tx_softirq {
                    // The poll freed the skbs it reaped (`poll_dtors`).
                    self.net_tx_done(now, h, core);
                }
            }
            Done::Irq { out, next, claim } => {
                self.nic_outcome(now, h, q as usize, out);
                if let Some(rx) = claim {
                    let at = now + self.env.c.nic.claim_latency;
                    self.q.push(at, h as u32, Ev::ClaimLands { host: h as u16, q, rx });
                }
                let hs = &mut self.hosts[h];
                if let Some(next) = next {
                    hs.cores[core].kq.push_front(next);
                }
                if matches!(w, KWork::HardIrq { .. }) && self.env.c.tx_softirq && hs.net_tx.irq_exit(core) {
                    // irq_exit -> __do_softirq: NET_TX (2) before NET_RX (3).
                    hs.cores[core].kq.push_front(KWork::NetTx);
                }
            }
            Done::Timer { at } => self.q.push(at, h as u32, Ev::NapiTimer { host: h as u16, q, core: core as u8 }),
            Done::Wake { q } => self.wake_napi_thread(now, h, q, core),
        }
    }

    /// The handler takes received frame `frame` on host `h` (`by`: a core's
    /// bottom half or the NIC) and its verdict is routed
    /// (`crate::kernel::RxPath::handle`): an event into its process's ring,
    /// a pull request to serve, a pull reply, the kernel echo, or a drop.
    pub(super) fn handle_frame(&mut self, now: Instant, h: usize, by: RxBy, frame: u32) {
        let f = self.frames[frame as usize];
        if self.replay.is_some() {
            self.replay_handled(now, frame);
        }
        self.free_frame(frame);
        self.frames.handled += 1;
        let hs = &mut self.hosts[h];
        let echo = hs.echoes_at(crate::config::EchoAt::Kernel);
        let ranks = &self.env.ranks;
        let rank_of = |ep: u8| Some(ranks.at(f.src as usize, ep as usize)).filter(|&r| r != NO_RANK);
        let verdict = hs.rx.handle(f.parsed, echo, &hs.eps, rank_of);
        let p = match verdict {
            Verdict::Unranked { p }
            | Verdict::Event { p, .. }
            | Verdict::Pull { p, .. }
            | Verdict::PullReply { p, .. } => p,
            Verdict::NotOmx => {
                // A replayed frame that is not Open-MX is generic traffic,
                // delivered here (`replay`); any other is malformed.
                if self.replay.is_none() {
                    self.frames.drops.malformed += 1;
                }
                return;
            }
            Verdict::Echo(repr) => return self.kernel_echo(now, h, &repr),
            Verdict::NoEndpoint => {
                self.frames.drops.no_endpoint += 1;
                return;
            }
        };
        if by == RxBy::Nic {
            self.hosts[h].procs[p].nic_writes_ring();
        }
        match verdict {
            Verdict::Event { msg, peer, .. } => {
                if self.hosts[h].procs[p].ring_full() {
                    // The library did not release slots fast enough: the
                    // frame is dropped and the sender resends it.
                    self.frames.drops.event_queue_full += 1;
                    return;
                }
                let writer = by.writer(&self.env.topo);
                self.post_event(now, h, p, LibEvent { msg, peer, writer, irq_stamp: f.irq_stamp }, by)
            }
            Verdict::Pull { ep, body, .. } => {
                let OmxBody::Pull {
                    total_length, block_length, first_frame_offset, src_pull_handle, src_magic, ..
                } = body
                else {
                    unreachable!("a pull request's verdict carries its body")
                };
                let size = total_length as u64;
                let (first, len) = (first_frame_offset, block_length);
                self.serve_pull(now, h, by, f.src, ep, size, first, len, src_pull_handle, src_magic);
            }
            Verdict::PullReply { handle, offset, .. } => self.pull_reply_arrived(now, h, by, handle, offset),
            _ => self.frames.drops.no_endpoint += 1,
        }
    }

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

    /// Routes the outputs of a library of host `h` (process `p`'s, 0 for
    /// the LCI library) from `start` on. The outputs of most calls (a
    /// frame, a completion) are routed here and the others by
    /// `route_other`, out of line: the loop then holds no addresses and
    /// constants for them, computed ahead of it at every call (about 4
    /// calls a round trip).
    pub(super) fn route(&mut self, now: Instant, h: usize, p: usize, start: usize) {
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

    /// Routes output `o` of a library of host `h` (any output; called for
    /// those [`World::route`] does not route itself); the \[LCI] library's
    /// PIO and what its program learns go to `lci_stack`.
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

    /// Prices the next segment of process `p` of host `h`, which has its
    /// core and runs the segment (`Proc::step`); `None` if it has nothing
    /// to run (it then polls, sleeps, or is done).
    #[inline(always)]
    pub(crate) fn lib_step(&mut self, now: Instant, h: usize, p: usize) -> Option<Duration> {
        if self.env.c.busy_poll {
            if let Some(step) = self.busy_poll_more(now, h, p) {
                return Some(step);
            }
        }
        match self.lib_call(now, h, p, |pr, cx| pr.step(cx)) {
            // A computation starts: a parked NI clock resumes (`clock`).
            Step::Run(cost, Action::None) if self.clock.is_some() => {
                self.clock_resume(now, h);
                Some(cost)
            }
            Step::Run(cost, _) => Some(cost),
            Step::Idle => None,
            Step::Wait => self.wait_polling(now, h, p),
            Step::Spin => {
                self.hosts[h].start_polling(p, None);
                None
            }
        }
    }

    /// The segment process `p` of host `h` ran ended: the library applies
    /// it (`Proc::segment_done`), or hands back a computation's end or a
    /// busy poll's entry, acted on here.
    #[inline(always)]
    pub(crate) fn lib_segment_done(&mut self, now: Instant, h: usize, p: usize) {
        match self.lib_call(now, h, p, |pr, cx| pr.segment_done(cx)) {
            Some(Action::None) if self.clock.is_some() => self.computed(now, h, p),
            Some(Action::BusyPoll(entry)) => {
                let core = self.hosts[h].procs[p].core() as usize;
                match entry {
                    RingEntry::Rx(frame) => self.handle_frame(now, h, super::RxBy::Core(core), frame),
                    // The busy poll freed the skbs it reaped (`poll_dtors`).
                    RingEntry::TxDone(_) if self.env.c.tx_softirq => self.net_tx_done(now, h, core),
                    RingEntry::TxDone(_) => {}
                }
            }
            _ => {}
        }
    }

    /// The process has something to do: wake it if it polls or sleeps.
    pub(crate) fn notify_proc(&mut self, now: Instant, h: usize, p: usize) {
        let notice = self.hosts[h].procs[p].notice();
        self.noticed(now, h, p, notice);
    }

    /// Process `p` of host `h` noticed something to do (`Proc::notice`): a
    /// poller stops polling and, as a woken sleeper, is dispatched.
    #[inline(always)]
    fn noticed(&mut self, now: Instant, h: usize, p: usize, notice: Notice) {
        let hs = &mut self.hosts[h];
        let pr = &hs.procs[p];
        match notice {
            Notice::Poller(since) => {
                let (core, ep) = (pr.core() as usize, pr.ep());
                if let Some(t0) = since {
                    hs.spin_time += now.since(t0);
                    if let Some(t) = self.trace.as_deref_mut() {
                        t.spin(h, core, t0, now);
                    }
                }
                hs.stop_polling(p);
                // Only busy polling with irq_suspend_timeout suspends a
                // queue's interrupt (`wait_polling`).
                if !self.env.c.irq_suspend.is_zero() {
                    let q = hs.steering.queue_for(Some(ep), 0);
                    self.release_suspension(now, h, q);
                }
                self.dispatch_at(now, h, core);
            }
            Notice::Woken => {
                let core = pr.core() as usize;
                if self.ticks.is_some() {
                    self.restart_tick(now, h, core);
                }
                self.dispatch_at(now, h, core);
            }
            Notice::None => {}
        }
    }

    /// Writes an event into a process's ring and makes it notice; `by` is
    /// what posts it (a core's bottom half pays for waking the process if
    /// it sleeps on another core: `waker_pays`). Inlined: it runs for
    /// every event the handler posts.
    #[inline(always)]
    pub(crate) fn post_event(&mut self, now: Instant, h: usize, p: usize, ev: LibEvent, by: RxBy) {
        let (blocked, notice) = self.hosts[h].procs[p].post(ev);
        if let RxBy::Core(k) = by {
            if blocked && !self.env.c.host.wake_remote.is_zero() {
                self.waker_pays(h, p, k);
            }
        }
        self.noticed(now, h, p, notice);
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
        let w = self.env.c.host.wake_remote;
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
