//! A kernel work item's start on a core: its price. The receive path's
//! items are the host's `crate::kernel::RxPath`'s to start (`rx_parts`
//! makes their context); the world prices what they take: a received
//! frame's driver and Open-MX handler work (`handler_cost`, with
//! `crate::kernel::handler_price`), the kernel echo's, transmit
//! completions to reap (`reap_cost`, through the send-path state
//! `host::TxPath`: `tx_touch`) and the paths' cache footprints
//! (`path_lines`); and the driver's pull replies, the NI clock's signal and
//! NET_TX, which are the world's items.
//!
//! It does not own what a core runs next nor how an item ends (`kernel`),
//! nor the receive path's decisions (`crate::kernel`).

use super::{HostState, World};
use crate::costs::Costs;
use crate::host::cache::footprint::Path;
use crate::host::Topology;
use crate::kernel::{Cx, HandlerCx, KWork, RxPath, Start};
use crate::nic::RingEntry;
use crate::time::{Duration, Instant};

impl World {
    /// The host's send-path state touched at `now` by `core`, which then
    /// works on it for `hold` (`crate::host::TxPath::touch`): its cost to
    /// `core`, the stall it makes a core of another die owe charged to it.
    /// Inlined: every reap and every pull reply runs it.
    #[inline(always)]
    pub(crate) fn tx_touch(&mut self, now: Instant, h: usize, core: usize, hold: Duration) -> Duration {
        let hs = &mut self.hosts[h];
        let kernel = &mut hs.mem.lines.kernel[core];
        let (cost, owed) = hs.mem.tx.touch(
            &self.env.c.cc,
            &self.env.topo,
            &self.env.c.cache,
            &mut hs.mem.cache,
            kernel,
            now,
            core as u16,
            hold,
        );
        if let Some((other, stall)) = owed {
            hs.cores[other as usize].stall += stall;
        }
        cost
    }

    /// The host's receive path (`crate::kernel::RxPath`) and its context
    /// for work on queue `q` (a pair rather than a call taking a closure:
    /// the closure in the event loop was not inlined).
    #[inline(always)]
    pub(super) fn rx_parts(&mut self, now: Instant, h: usize, q: u8) -> (&mut RxPath, Cx<'_>) {
        let hs = &mut self.hosts[h];
        let cx = Cx {
            now,
            c: &self.env.c,
            cc: &self.env.c.cc,
            topo: &self.env.topo,
            cache: &mut hs.mem.cache,
            queue: &mut hs.nic.queues[q as usize],
        };
        (&mut hs.rx, cx)
    }

    /// Computes the cost of a kernel work item and the item the core then
    /// works on (the caller marks the core busy with it); `None` if the item
    /// turned out to have nothing to do. The receive path's items are the
    /// host's `RxPath`'s to start; the world prices the ring entries they
    /// take (`entry_cost`) and the driver's pull replies and the NI clock's
    /// signals.
    pub(super) fn start_kernel(&mut self, now: Instant, h: usize, core: usize, w: KWork) -> Option<(Duration, KWork)> {
        let Some(q) = w.rx_queue() else {
            let cost = match w {
                KWork::PullReply { serve } => {
                    let s = &self.pulls.serves[serve as usize];
                    if !s.live {
                        return None;
                    }
                    let ep = s.ep;
                    let send = self.env.c.host.driver_tx + self.env.c.nic.doorbell;
                    send + self.tx_touch(now, h, core, send)
                        + self.region_touch(h, core, ep)
                        + self.path_lines(h, core, (Path::OmxSend, 0))
                }
                KWork::Signal { p } => {
                    self.signal_starts(now, h, p as usize);
                    self.signal_cost(h, p as usize)
                }
                KWork::NetTx => self.net_tx_cost(h, core)?,
                KWork::Tick => self.tick_cost(),
                _ => unreachable!("an item of the receive path"),
            };
            return Some((cost, w));
        };
        if w.polls() {
            // The poll takes a frame or restocks: room for a frame waiting
            // at a stopped link (`nic.flow_control`)?
            self.flow_kick(now, h);
        }
        let lines = self.path_lines_at_start(h, core, q, w);
        let (rx, mut cx) = self.rx_parts(now, h, q);
        match rx.start(&mut cx, core as u16, w) {
            Start::Run(cost, w) => Some((cost + lines, w)),
            Start::Entry { cost, entry, w } => {
                let e = self.entry_cost(now, h, core, q, entry);
                Some((RxPath::entry_cost(&self.env.c, cost + lines, entry, e), w))
            }
            Start::Reap { cost, n, w } => {
                let reap = if n > 0 { self.reap_cost(now, h, core, n) } else { Duration::ZERO };
                if n > 0 && self.env.c.tx_softirq {
                    // dev_kfree_skb_irq: the skbs join this core's
                    // completion queue, for its NET_TX softirq.
                    self.hosts[h].net_tx.reap(q as usize, core);
                }
                Some((cost + lines + reap, w))
            }
            Start::Yield(w) => {
                self.hosts[h].cores[core].kq.push_back(w);
                None
            }
        }
    }

    /// Reaping `n` transmit completions on core `core`: freeing the
    /// skbs and touching the send-path state shared with the sender.
    /// Inlined in its three callers: an outlined copy cost each reap its
    /// call and its spills.
    #[inline(always)]
    pub(super) fn reap_cost(&mut self, now: Instant, h: usize, core: usize, n: u32) -> Duration {
        let free = self.env.c.host.tx_done.times(n as u64);
        free + self.tx_touch(now, h, core, free) + self.path_lines(h, core, (Path::TxDone, 0))
    }

    /// The footprint's lines of a path (`host/cache/footprint.rs`) that
    /// receive queue `q`'s work item `w` runs as it starts on `core`: the
    /// hard IRQ (`myri10ge_intr`) for an interrupt, the NAPI poll's for a
    /// poll that begins (a full budget), both for an interrupt that polls;
    /// an interrupt thread woken by the interrupt (not by the timer) runs
    /// the hard IRQ's, a NAPI thread the poll's.
    #[inline(always)]
    fn path_lines_at_start(&mut self, h: usize, core: usize, q: u8, w: KWork) -> Duration {
        let q = q as usize;
        match w {
            KWork::Irq { .. } => {
                let hs = &mut self.hosts[h];
                let at = self.env.topo.cpu(core as u16);
                hs.mem.lines.paths(
                    &self.env.c.cc,
                    &self.env.topo,
                    &mut hs.mem.cache,
                    [(Path::HardIrq, q), (Path::NapiPoll, q)],
                    at,
                )
            }
            KWork::HardIrq { .. } => self.path_lines(h, core, (Path::HardIrq, q)),
            KWork::IrqThread { timer: false, .. } => self.path_lines(h, core, (Path::HardIrq, q)),
            KWork::TimerNapi { .. } | KWork::ThreadNapi { .. } => self.path_lines(h, core, (Path::NapiPoll, q)),
            KWork::Napi { budget, .. } if budget == self.env.c.napi_budget => {
                self.path_lines(h, core, (Path::NapiPoll, q))
            }
            _ => Duration::ZERO,
        }
    }

    /// One run of a path on `core`, `(path, q)` for receive queue `q`: its
    /// footprint's lines through the cache model (`HostLines::path`); the
    /// stall.
    #[inline(always)]
    pub(super) fn path_lines(&mut self, h: usize, core: usize, run: (Path, usize)) -> Duration {
        let hs = &mut self.hosts[h];
        hs.mem.lines.path(&self.env.c.cc, &self.env.topo, &mut hs.mem.cache, run, self.env.topo.cpu(core as u16))
    }

    /// CPU cost of handling one ring entry of queue `q` in the bottom half:
    /// reaping transmit completions (and, with `host.tx_softirq`, their
    /// skbs' destructors: `poll_dtors`), or a received frame's driver and
    /// handler work (`handler_cost`, beside the handler) or the kernel
    /// echo's.
    pub(super) fn entry_cost(&mut self, now: Instant, h: usize, core: usize, q: u8, entry: RingEntry) -> Duration {
        match entry {
            RingEntry::TxDone(n) if self.env.c.tx_softirq => {
                self.reap_cost(now, h, core, n) + self.poll_dtors(h, core, q as usize)
            }
            RingEntry::TxDone(n) => self.reap_cost(now, h, core, n),
            RingEntry::Rx(frame) => {
                if self.hosts[h].echoes_at(crate::config::EchoAt::Kernel) {
                    return self.kernel_echo_cost(now, h, core, frame);
                }
                self.handler_cost(h, core, frame)
            }
        }
    }

    /// The driver's and the Open-MX handler's price of received frame
    /// `frame` on `core` (`crate::kernel::handler_price`), with its context.
    #[inline(always)]
    fn handler_cost(&mut self, h: usize, core: usize, frame: u32) -> Duration {
        let f = &self.frames[frame as usize];
        let cx = self.hosts[h].handler_cx(&self.env.c, &self.env.topo);
        let pulls = &mut self.pulls;
        let per = self.env.c.layout.pull_reply as u32;
        crate::kernel::handler_price(cx, core, f.parsed, f.q as usize, |i, offset| {
            pulls.reply_target(i, h, offset, per)
        })
    }
}

impl HostState {
    /// The Open-MX handler's context on this host
    /// (`crate::kernel::handler_price`): the run's prices `c` and topology
    /// with the host's cache, lines, steering, endpoints and processes.
    pub(crate) fn handler_cx<'a>(&'a mut self, c: &'a Costs, topo: &'a Topology) -> HandlerCx<'a> {
        HandlerCx {
            c,
            topo,
            cache: &mut self.mem.cache,
            lines: &mut self.mem.lines,
            steering: &self.steering,
            eps: &self.eps,
            procs: &mut self.procs,
        }
    }
}
