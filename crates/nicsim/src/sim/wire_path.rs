//! Frames and the wire: the frame slab, the driver's doorbell (`transmit`),
//! the link out of the NIC, the switch (loss, reordering, jitter) and the
//! link to the destination NIC, or the grid of switches when the platform
//! has one (`net::grid`); and the invalid-packet flood source.
//!
//! This module owns a frame from the moment it is encoded until it reaches
//! the destination NIC (`Ev::NicRx`). It does not own what the NIC does with
//! it (`nic_path`) nor who builds frames (the library, the pull protocol, the
//! echo servers, the flood source).

pub(super) use super::frame::{Frame, HDR_CAP};
use super::pcap_sink::PcapSink;
use super::{Drops, Ev, World, NETWORK_ORIGIN};
use crate::engine::slab::Slab;
use crate::engine::SimRng;
use crate::net::Network;
use crate::time::{Duration, Instant};
use crate::wire::FrameRepr;

/// The wire: the network (links, switch or grid) and what happens to a
/// frame on it besides (loss, reordering and jitter from the scenario's
/// seed), and the capture that records every frame.
pub(crate) struct Wire {
    pub net: Network,
    pub rng: SimRng,
    pub loss: f64,
    pub reorder: f64,
    pub jitter: Duration,
    /// Two hosts, no loss, reordering or jitter: each switch port has a single
    /// source, so a frame's switch traversal is known when it departs and
    /// needs no event of its own.
    pub direct_switch: bool,
    /// The capture file being written (`pcap_sink`), when the scenario
    /// names one and the world was made by [`World::build`].
    pub pcap: Option<Box<PcapSink>>,
}

/// The frames in flight, a slab indexed by frame id (`frames[id]`,
/// unbounded: what bounds the frames in flight is the senders' windows and
/// queues), and the counts of packet conservation: sent = handled +
/// dropped + live.
pub(crate) struct Frames {
    slab: Slab<Frame>,
    /// Frames allocated and not freed.
    pub live: u64,
    pub sent: u64,
    pub handled: u64,
    /// Bytes put on the wire.
    pub wire_bytes: u64,
    /// Frames dropped, by reason.
    pub drops: Drops,
}

impl Frames {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Frames { slab: Slab::new(n, u32::MAX), live: 0, sent: 0, handled: 0, wire_bytes: 0, drops: Drops::default() }
    }

    /// A free frame slot (its fields are the caller's to set).
    #[inline]
    pub(crate) fn alloc(&mut self) -> u32 {
        self.live += 1;
        self.slab.alloc().expect("a frame id is a u32")
    }

    /// Frame `id` is gone (handled or dropped): its slot is free.
    pub(crate) fn free(&mut self, id: u32) {
        self.live -= 1;
        self.slab.free(id);
    }

    /// A frame of `len` bytes went on the wire.
    #[inline]
    pub(crate) fn count_sent(&mut self, len: usize) {
        self.sent += 1;
        self.wire_bytes += len as u64;
    }

    /// Slots made: the most frames live at once.
    pub(crate) fn slots(&self) -> usize {
        self.slab.slots()
    }
}

impl std::ops::Index<usize> for Frames {
    type Output = Frame;

    #[inline]
    fn index(&self, id: usize) -> &Frame {
        &self.slab[id]
    }
}

impl std::ops::IndexMut<usize> for Frames {
    #[inline]
    fn index_mut(&mut self, id: usize) -> &mut Frame {
        &mut self.slab[id]
    }
}

impl World {
    /// Encodes `repr` into a new frame slot.
    pub(crate) fn new_frame(&mut self, src: u16, dst: u16, repr: &FrameRepr) -> u32 {
        let id = self.alloc_frame();
        let f = &mut self.frames[id as usize];
        // `repr` is what parsing its bytes gives back (the wire tests check
        // the round trip; the debug build checks it for every frame).
        f.parsed = Some(*repr);
        #[cfg(debug_assertions)]
        {
            let mut buf = [0; HDR_CAP];
            let hl = f.header_bytes(&mut buf);
            debug_assert!(hl <= HDR_CAP);
            debug_assert_eq!(FrameRepr::parse_header(&buf[..hl]).ok(), f.parsed);
        }
        f.marked = false;
        f.src_ep = repr.body.src_endpoint().unwrap_or(0); // pull replies: set by the pull server
        f.len = repr.frame_len() as u32;
        f.src = src;
        f.dst = dst;
        id
    }

    /// The driver of host `h` sends a new frame to host `dst` at `now`:
    /// `repr` encoded ([`World::new_frame`]), then its doorbell
    /// ([`World::transmit`]).
    #[inline(always)]
    pub(crate) fn send_frame(&mut self, now: Instant, h: usize, dst: u16, repr: &FrameRepr) {
        let f = self.new_frame(h as u16, dst, repr);
        self.transmit(now, h, f);
    }

    /// A free frame slot (its fields are the caller's to set).
    #[inline]
    pub(crate) fn alloc_frame(&mut self) -> u32 {
        self.frames.alloc()
    }

    pub(super) fn free_frame(&mut self, id: u32) {
        self.frames.free(id);
    }

    /// The driver of `host` rang the doorbell for `frame` at `now`; a
    /// transmit path already holding its bound of frames drops it
    /// (`crate::host::TxBacklog`: the sender's qdisc and send ring).
    pub(crate) fn transmit(&mut self, now: Instant, host: usize, frame: u32) {
        if self.hosts[host].txq.full(now) {
            self.frames.drops.tx_queue += 1;
            // The dropped skb is freed and its destructor runs: Linux runs it
            // at once in the sender's context (`qdisc_drop` -> `kfree_skb`);
            // here it joins the queue's completions and runs at the next
            // reap, so a medium fragment's FRAG_DONE still reaches the
            // library and its expected-event slot is given back.
            let (dtor, ep) = self.tx_dtor(host, frame);
            if dtor != crate::kernel::TxDtor::None {
                let q = self.hosts[host].steering.queue_for(Some(ep), 0);
                if let Some(p) = self.hosts[host].eps.get(ep as usize).copied().flatten() {
                    self.hosts[host].net_tx.completed(q, dtor, p);
                }
            }
            self.free_frame(frame);
            return;
        }
        let end = self.transmit_unqueued(now, host, frame);
        self.hosts[host].txq.push(end);
    }

    /// `frame` goes to the NIC of `host` at `now` past any queueing
    /// discipline (a traffic generator's, the flood source's); returns when
    /// its last bit leaves.
    #[inline(always)]
    pub(crate) fn transmit_unqueued(&mut self, now: Instant, host: usize, frame: u32) -> Instant {
        let len = self.frames[frame as usize].len as usize;
        let ready = self.hosts[host].nic.transmit(now, len);
        let d = self.wire_out(host, ready, frame);
        if self.env.c.tx_done_irq && !self.env.c.native {
            let ep = self.frames[frame as usize].src_ep;
            let q = self.hosts[host].steering.queue_for(Some(ep), 0) as u8;
            let (dtor, ep) = self.tx_dtor(host, frame);
            let bytes = super::frame::wire_bytes(len as u32);
            self.q.push(d.end, host as u32, Ev::TxDone { host: host as u16, q, dtor, ep, bytes });
        }
        d.end
    }

    /// The NIC of `host` has `frame` ready for the wire at `ready`.
    /// Inlined in its callers (every frame sent): the call and its spills
    /// were 4 instructions of each frame.
    #[inline(always)]
    pub(crate) fn wire_out(&mut self, host: usize, ready: Instant, frame: u32) -> crate::net::Departure {
        let len = self.frames[frame as usize].len as usize;
        let (d, routed) = match self.wire.net.grid.as_mut() {
            None => (self.wire.net.depart(host, ready, len), false),
            Some(grid) => {
                // The grid books the whole path now (`net::grid`): the frame
                // is at its destination NIC when its tail is.
                let dst = self.frames[frame as usize].dst as u32;
                let r = grid.route(host as u32, dst, ready, len as u32);
                self.q.push(r.arrive, NETWORK_ORIGIN, Ev::NicRx { frame });
                (crate::net::Departure { start: r.start, end: r.tail_left, at_switch: r.arrive }, true)
            }
        };
        self.frames.count_sent(len);
        if let Some(t) = self.trace.as_deref_mut() {
            t.wire(host, frame, d.start, d.end, len as u32);
        }
        if let Some(p) = self.wire.pcap.as_deref_mut() {
            if let Err(e) = p.record(self.q.now(), d.start, &self.frames[frame as usize], len as u32) {
                let e = p.write_error(&e);
                self.fail(e.0);
            }
        }
        if routed {
            return d; // booked above
        }
        if self.wire.direct_switch {
            // Nothing can happen to the frame at the switch that depends on
            // what else happens meanwhile: book its output port now.
            self.forward(d.at_switch, frame, Duration::ZERO);
        } else {
            self.q.push(d.at_switch, host as u32, Ev::SwitchIn { frame });
        }
        d
    }

    pub(super) fn switch_in(&mut self, now: Instant, frame: u32) {
        if self.wire.rng.chance(self.wire.loss) {
            self.frames.drops.loss += 1;
            self.free_frame(frame);
            return;
        }
        let len = self.frames[frame as usize].len as usize;
        let mut extra = if self.wire.rng.chance(self.wire.reorder) {
            // Held back behind up to four later frames of this size.
            self.wire.net.serialization(len).times(1 + self.wire.rng.below(4))
        } else {
            Duration::ZERO
        };
        if !self.wire.jitter.is_zero() {
            // Arrival jitter (seeded): the switch port keeps frames in order.
            extra += Duration::from_ps(self.wire.rng.below(self.wire.jitter.as_ps() + 1));
        }
        self.forward(now, frame, extra);
    }

    /// `frame` reached the switch at `now`: book the port towards its
    /// destination and schedule its arrival at the destination NIC.
    pub(super) fn forward(&mut self, now: Instant, frame: u32, extra: Duration) {
        let (len, dst) = (self.frames[frame as usize].len as usize, self.frames[frame as usize].dst as usize);
        let (_, at) = self.wire.net.forward(dst, now, len, extra);
        self.q.push(at, NETWORK_ORIGIN, Ev::NicRx { frame });
    }
}
