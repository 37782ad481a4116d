//! Frames and the wire: the frame slab, the driver's doorbell (`transmit`),
//! the link out of the NIC, the switch (loss, reordering, jitter) and the
//! link to the destination NIC, or the grid of switches when the platform
//! has one (`net::grid`); and the invalid-packet flood source.
//!
//! This module owns a frame from the moment it is encoded until it reaches
//! the destination NIC (`Ev::NicRx`). It does not own what the NIC does with
//! it (`nic_path`) nor who builds frames (the library, the pull protocol, the
//! echo servers, the flood source).

use super::{Ev, World, NETWORK_ORIGIN};
use crate::time::{Duration, Instant};
use crate::wire::FrameRepr;

/// Maximum header bytes kept per frame (Ethernet + largest Open-MX header).
pub(super) const HDR_CAP: usize = 96;

/// A frame in flight: its header plus the payload length (the payload's
/// contents are never interpreted, so they are not stored).
#[derive(Clone, Copy, Default)]
pub(crate) struct Frame {
    /// The header, as parsing its bytes gives it back (`None`: malformed).
    /// Every hop (NIC firmware, bottom half, receive handler) reads this;
    /// the bytes themselves are encoded only for the few readers that want
    /// them (pcap, the kernel echo), by `header_bytes`. The header never
    /// changes in flight.
    pub(super) parsed: Option<FrameRepr>,
    /// The receive descriptor's copy of the marker (set by the NIC firmware
    /// when the frame arrives: [OMX-COAL] Algorithm 1, line 2).
    pub(super) marked: bool,
    /// Receive queue chosen by steering (set at arrival).
    pub(super) q: u8,
    /// The sending endpoint (its queue gets the transmit completion).
    pub(super) src_ep: u8,
    /// Interrupts the destination host had raised when this frame's DMA
    /// completed: the first interrupt after it is the one that reports it.
    pub(super) irq_stamp: u32,
    pub(super) len: u32,
    pub(super) src: u16,
    pub(super) dst: u16,
}

impl Frame {
    /// Encodes the header into `buf`; returns its length (0: malformed).
    pub(super) fn header_bytes(&self, buf: &mut [u8; HDR_CAP]) -> usize {
        let Some(repr) = self.parsed else { return 0 };
        let hl = repr.header_len();
        repr.emit(&mut buf[..hl]);
        hl
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

    /// A free frame slot (its fields are the caller's to set).
    #[inline]
    pub(crate) fn alloc_frame(&mut self) -> u32 {
        self.live_frames += 1;
        match self.free_frames.pop() {
            Some(i) => i,
            None => {
                self.frames.push(Frame {
                    parsed: None,
                    marked: false,
                    q: 0,
                    src_ep: 0,
                    irq_stamp: 0,
                    len: 0,
                    src: 0,
                    dst: 0,
                });
                (self.frames.len() - 1) as u32
            }
        }
    }

    pub(super) fn free_frame(&mut self, id: u32) {
        self.live_frames -= 1;
        self.free_frames.push(id);
    }

    /// The driver of `host` rang the doorbell for `frame` at `now`.
    pub(crate) fn transmit(&mut self, now: Instant, host: usize, frame: u32) {
        let len = self.frames[frame as usize].len as usize;
        let ready = self.hosts[host].nic.transmit(now, len);
        let d = self.wire_out(host, ready, frame);
        if self.c.tx_done_irq && !self.c.native {
            let ep = self.frames[frame as usize].src_ep;
            let q = self.hosts[host].steering.queue_for(Some(ep), 0) as u8;
            self.q.push(d.end, host as u32, Ev::TxDone { host: host as u16, q });
        }
    }

    /// The NIC of `host` has `frame` ready for the wire at `ready`.
    pub(crate) fn wire_out(&mut self, host: usize, ready: Instant, frame: u32) -> crate::net::Departure {
        let len = self.frames[frame as usize].len as usize;
        let (d, routed) = match self.net.grid.as_mut() {
            None => (self.net.depart(host, ready, len), false),
            Some(grid) => {
                // The grid books the whole path now (`net::grid`): the frame
                // is at its destination NIC when its tail is.
                let dst = self.frames[frame as usize].dst as u32;
                let r = grid.route(host as u32, dst, ready, len as u32);
                self.q.push(r.arrive, NETWORK_ORIGIN, Ev::NicRx { frame });
                (crate::net::Departure { start: r.start, end: r.tail_left, at_switch: r.arrive }, true)
            }
        };
        self.frames_sent += 1;
        self.wire_bytes += len as u64;
        if let Some(t) = self.trace.as_deref_mut() {
            t.wire(host, frame, d.start, d.end, len as u32);
        }
        if let Some(p) = self.pcap.as_deref_mut() {
            if let Err(e) = p.record(self.q.now(), d.start, &self.frames[frame as usize], len as u32) {
                let e = p.write_error(&e);
                self.fail(e.0);
            }
        }
        if routed {
            return d; // booked above
        }
        if self.direct_switch {
            // Nothing can happen to the frame at the switch that depends on
            // what else happens meanwhile: book its output port now.
            self.forward(d.at_switch, frame, Duration::ZERO);
        } else {
            self.q.push(d.at_switch, host as u32, Ev::SwitchIn { frame });
        }
        d
    }

    pub(super) fn switch_in(&mut self, now: Instant, frame: u32) {
        if self.rng.chance(self.loss) {
            self.drops.loss += 1;
            self.free_frame(frame);
            return;
        }
        let len = self.frames[frame as usize].len as usize;
        let mut extra = if self.rng.chance(self.reorder) {
            // Held back behind up to four later frames of this size.
            self.net.serialization(len).times(1 + self.rng.below(4))
        } else {
            Duration::ZERO
        };
        if !self.jitter.is_zero() {
            // Arrival jitter (seeded): the switch port keeps frames in order.
            extra += Duration::from_ps(self.rng.below(self.jitter.as_ps() + 1));
        }
        self.forward(now, frame, extra);
    }

    /// `frame` reached the switch at `now`: book the port towards its
    /// destination and schedule its arrival at the destination NIC.
    pub(super) fn forward(&mut self, now: Instant, frame: u32, extra: Duration) {
        let (len, dst) = (self.frames[frame as usize].len as usize, self.frames[frame as usize].dst as usize);
        let (_, at) = self.net.forward(dst, now, len, extra);
        self.q.push(at, NETWORK_ORIGIN, Ev::NicRx { frame });
    }
}
