//! The invalid-packet flood (SPEC 3): a traffic source on host 0 that sends
//! host 1 Open-MX small frames to an endpoint nobody opened, one every
//! `gap`, which host 1's receive handler drops after parsing.
//!
//! This module owns the source's state ([`Flood`]: frames left, the gap, the
//! frame size) and the frame it builds on each `Ev::FloodTick`; the world
//! only hands it the tick and sends what it returns. It does not own what
//! the wire, the NIC, the kernel or the handler do with a flood frame
//! (`wire_path`, `nic_path`, `kernel`, `crate::kernel`'s handler), nor the metrics of a
//! flood run (`metrics`).

use super::{Ev, World};
use crate::engine::Origin;
use crate::time::{Duration, Instant};
use crate::wire::{FrameRepr, OmxBody};

/// The flood source, wired at build time for `workload.kind = "flood"`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flood {
    /// Frames still to send.
    left: u64,
    /// Frames in all (`workload.packets`).
    packets: u64,
    /// Between two frames (`workload.gap_us`).
    gap: Duration,
    /// Bytes of each frame, header included (`workload.packet_bytes`).
    bytes: u32,
}

impl Flood {
    /// The host that sends the flood; its index is the ticks' event origin.
    pub(crate) const FROM: usize = 0;
    /// The host the flood is sent to.
    pub(crate) const TO: usize = 1;

    /// A source of `packets` frames of `bytes` bytes, `gap` apart.
    pub(crate) fn new(packets: u64, gap: Duration, bytes: u32) -> Self {
        Flood { left: packets, packets, gap, bytes }
    }

    /// The event origin of the source's ticks: the sending host's.
    pub(crate) const fn origin() -> Origin {
        Self::FROM as Origin
    }

    /// Every frame sent.
    pub(crate) fn drained(&self) -> bool {
        self.left == 0
    }

    /// Frames in all.
    pub(crate) fn packets(&self) -> u64 {
        self.packets
    }

    /// A tick at `now`: the frame to send, and when the next tick is due
    /// (`None` after the last frame); `None` once drained.
    pub(crate) fn tick(&mut self, now: Instant) -> Option<(FrameRepr, Option<Instant>)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // An Open-MX small frame to an endpoint nobody opened: the receive
        // handler drops it after parsing (SPEC 3: invalid-packet flood).
        let mut repr = FrameRepr {
            dst_mac: crate::wire::host_mac(Self::TO as u16),
            src_mac: crate::wire::host_mac(Self::FROM as u16),
            src_peer: Self::FROM as u16,
            marked: false,
            body: OmxBody::Small { dst_ep: 200, src_ep: 0, session: 0, seq: 0, piggy_ack: 0, match_info: 0, length: 0 },
        };
        let hl = repr.header_len();
        let payload = (self.bytes as usize).saturating_sub(hl).min(crate::wire::SMALL_MAX) as u16;
        if let OmxBody::Small { length, .. } = &mut repr.body {
            *length = payload;
        }
        let next = (self.left > 0).then(|| now + self.gap);
        Some((repr, next))
    }
}

impl World {
    /// `Ev::FloodTick`: the source's frame leaves its host's NIC, and its
    /// next tick is queued.
    pub(super) fn flood_tick(&mut self, now: Instant) {
        let Some((repr, next)) = self.run.flood.as_mut().and_then(|f| f.tick(now)) else { return };
        let id = self.new_frame(Flood::FROM as u16, Flood::TO as u16, &repr);
        // A packet generator, not a host's kernel: no qdisc in front of it.
        self.transmit_unqueued(now, Flood::FROM, id);
        if let Some(at) = next {
            self.q.push(at, Flood::origin(), Ev::FloodTick);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_sends_its_frames_a_gap_apart_then_stops() {
        let gap = Duration::from_ns(500);
        let mut f = Flood::new(3, gap, 100);
        let t0 = Instant::ZERO;
        let (repr, next) = f.tick(t0).unwrap();
        assert_eq!(repr.header_len() + repr.body.payload_len(), 100);
        assert!(matches!(repr.body, OmxBody::Small { dst_ep: 200, .. }));
        assert_eq!(next, Some(t0 + gap));
        assert_eq!(f.tick(t0 + gap).unwrap().1, Some(t0 + gap + gap));
        assert!(!f.drained());
        assert_eq!(f.tick(t0 + gap + gap).unwrap().1, None);
        assert!(f.drained() && f.tick(t0).is_none());
        assert_eq!(f.packets(), 3);
    }
}
