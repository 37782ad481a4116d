//! A frame in flight ([`Frame`]: its parsed header, the marker the NIC
//! copied, its queue and endpoints, its length) and the header bytes it is
//! encoded into for the few readers that want bytes ([`HDR_CAP`]).
//!
//! A value type below the stages that carry a frame (`wire_path`, its slab
//! and the wire) and the capture that writes it (`pcap_sink`), so neither
//! reads the other.

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

/// A frame's length as `Ev::TxDone` carries it: a wire frame is at most an
/// MTU (9000, `link.mtu`) and its headers, and a replayed super-frame is
/// split into such frames before it reaches the NIC; the clamp only keeps
/// the conversion total.
pub(crate) fn wire_bytes(len: u32) -> u16 {
    u16::try_from(len).unwrap_or(u16::MAX)
}
