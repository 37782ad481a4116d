//! The common frame head: Ethernet header, Open-MX `omx_pkt_head` and the
//! packet-type byte with the latency-sensitive marker bit.
//!
//! This file owns frame bytes 0..17 (what a NIC looks at before it knows the
//! packet type) and the packet-type numbering ([`ptype`], [`PacketKind`]). It
//! does not own the per-type bodies that follow the type byte (one file each:
//! `msg`, `medium`, `rndv`, `pull`, `pull_reply`, `notify`, `ack`) nor the
//! assembly of a whole frame (`frame.rs`).
//!
//! Source: Open-MX `common/omx_wire.h` (j-r-jones/open-mx): `struct
//! omx_pkt_head { struct ethhdr eth; uint16_t dst_src_peer_index; }` (16
//! bytes), `OMX_HDR_PTYPE_OFFSET = sizeof(struct omx_pkt_head)`, and every
//! `struct omx_pkt_*` body starts with its `ptype` byte.
//!
//! **Marker.** Open-MX has no latency-sensitive field; [OMX-COAL] adds one.
//! `omx_wire.h` defines `OMX_PACKET_NEED_IRQ 0x80` next to the packet types
//! (no public driver code uses it), and every Open-MX type is below 0x80, so
//! nicsim carries the marker as bit 0x80 of the type byte (frame offset 16).
//! The type proper is `byte & 0x7f`. This is the only spare bit present in
//! every body: PULL_REPLY has no pad or generation byte.

use core::fmt;

use super::{get_u16, set_u16, Error, Result, ETHERTYPE_OMX};

/// Frame byte offsets of the head.
pub mod field {
    use crate::wire::Field;

    /// Ethernet destination MAC.
    pub const DST_MAC: Field = 0..6;
    /// Ethernet source MAC.
    pub const SRC_MAC: Field = 6..12;
    /// Ethernet type, [`crate::wire::ETHERTYPE_OMX`].
    pub const ETHERTYPE: Field = 12..14;
    /// `omx_pkt_head.dst_src_peer_index` ("MX's sender_peer_index"): the
    /// sender's index in the receiver's peer table.
    pub const PEER_INDEX: Field = 14..16;
    /// Packet type (`OMX_HDR_PTYPE_OFFSET`), marker in bit 0x80. Frame byte 17
    /// in 1-based numbering.
    pub const PTYPE: usize = 16;
}

/// Bytes the head view needs: Ethernet + peer index + type byte.
pub const HEADER_LEN: usize = 17;

/// Where the per-type body (`struct omx_pkt_*`, starting with `ptype`) begins.
pub const BODY_OFFSET: usize = 16;

/// Latency-sensitive marker bit in the type byte (`OMX_PACKET_NEED_IRQ`,
/// `common/omx_wire.h`).
pub const MARKER_BIT: u8 = 0x80;

/// Open-MX packet type numbers. Source: `enum omx_pkt_type` in
/// `common/omx_wire.h` (`OMX_PKT_TYPE_ETHER_UNICAST = 32`, then consecutive).
pub mod ptype {
    /// `OMX_PKT_TYPE_TRUC` (carries the library ack, "liback").
    pub const TRUC: u8 = 0x23;
    /// `OMX_PKT_TYPE_CONNECT` (not simulated).
    pub const CONNECT: u8 = 0x24;
    /// `OMX_PKT_TYPE_TINY`.
    pub const TINY: u8 = 0x25;
    /// `OMX_PKT_TYPE_SMALL`.
    pub const SMALL: u8 = 0x26;
    /// `OMX_PKT_TYPE_MEDIUM`.
    pub const MEDIUM: u8 = 0x27;
    /// `OMX_PKT_TYPE_RNDV`.
    pub const RNDV: u8 = 0x28;
    /// `OMX_PKT_TYPE_PULL`.
    pub const PULL: u8 = 0x29;
    /// `OMX_PKT_TYPE_PULL_REPLY`.
    pub const PULL_REPLY: u8 = 0x2a;
    /// `OMX_PKT_TYPE_NOTIFY`.
    pub const NOTIFY: u8 = 0x2b;
    /// `OMX_PKT_TYPE_NACK_LIB` (not simulated).
    pub const NACK_LIB: u8 = 0x2c;
    /// `OMX_PKT_TYPE_NACK_MCP` (not simulated).
    pub const NACK_MCP: u8 = 0x2d;
}

/// The Open-MX packet types nicsim simulates. `Ack` is a TRUC packet carrying
/// library-ack data (`OMX_PKT_TRUC_DATA_TYPE_ACK`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketKind {
    Tiny,
    Small,
    Medium,
    Rndv,
    Pull,
    PullReply,
    Notify,
    Ack,
}

impl PacketKind {
    /// Every kind, in type-number order of the non-ack kinds, ack last.
    pub const ALL: [PacketKind; 8] = [
        PacketKind::Tiny,
        PacketKind::Small,
        PacketKind::Medium,
        PacketKind::Rndv,
        PacketKind::Pull,
        PacketKind::PullReply,
        PacketKind::Notify,
        PacketKind::Ack,
    ];

    /// The Open-MX type number (without marker).
    pub fn ptype(self) -> u8 {
        match self {
            PacketKind::Tiny => ptype::TINY,
            PacketKind::Small => ptype::SMALL,
            PacketKind::Medium => ptype::MEDIUM,
            PacketKind::Rndv => ptype::RNDV,
            PacketKind::Pull => ptype::PULL,
            PacketKind::PullReply => ptype::PULL_REPLY,
            PacketKind::Notify => ptype::NOTIFY,
            PacketKind::Ack => ptype::TRUC,
        }
    }

    /// The kind of an Open-MX type number (marker already masked off).
    pub fn from_ptype(t: u8) -> Option<PacketKind> {
        Some(match t {
            ptype::TINY => PacketKind::Tiny,
            ptype::SMALL => PacketKind::Small,
            ptype::MEDIUM => PacketKind::Medium,
            ptype::RNDV => PacketKind::Rndv,
            ptype::PULL => PacketKind::Pull,
            ptype::PULL_REPLY => PacketKind::PullReply,
            ptype::NOTIFY => PacketKind::Notify,
            ptype::TRUC => PacketKind::Ack,
            _ => return None,
        })
    }

    /// Lowercase name, as printed by `Display`.
    pub fn name(self) -> &'static str {
        match self {
            PacketKind::Tiny => "tiny",
            PacketKind::Small => "small",
            PacketKind::Medium => "medium",
            PacketKind::Rndv => "rndv",
            PacketKind::Pull => "pull",
            PacketKind::PullReply => "pull_reply",
            PacketKind::Notify => "notify",
            PacketKind::Ack => "ack",
        }
    }
}

impl fmt::Display for PacketKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A read/write view of frame bytes 0..17.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking its length (accessors may panic).
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Ensures every head accessor is in bounds.
    pub fn check_len(&self) -> Result<()> {
        let have = self.buffer.as_ref().len();
        if have < HEADER_LEN {
            return Err(Error::Truncated { need: HEADER_LEN, have });
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn dst_mac(&self) -> [u8; 6] {
        let mut m = [0; 6];
        m.copy_from_slice(&self.buffer.as_ref()[field::DST_MAC]);
        m
    }

    pub fn src_mac(&self) -> [u8; 6] {
        let mut m = [0; 6];
        m.copy_from_slice(&self.buffer.as_ref()[field::SRC_MAC]);
        m
    }

    pub fn ethertype(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::ETHERTYPE)
    }

    /// The sender's peer index (`dst_src_peer_index`).
    pub fn peer_index(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::PEER_INDEX)
    }

    /// The raw type byte, marker included.
    pub fn ptype_byte(&self) -> u8 {
        self.buffer.as_ref()[field::PTYPE]
    }

    /// The Open-MX packet type, marker masked off.
    pub fn ptype(&self) -> u8 {
        self.ptype_byte() & !MARKER_BIT
    }

    /// Whether the latency-sensitive marker bit is set.
    pub fn marked(&self) -> bool {
        self.ptype_byte() & MARKER_BIT != 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_dst_mac(&mut self, mac: [u8; 6]) {
        self.buffer.as_mut()[field::DST_MAC].copy_from_slice(&mac);
    }

    pub fn set_src_mac(&mut self, mac: [u8; 6]) {
        self.buffer.as_mut()[field::SRC_MAC].copy_from_slice(&mac);
    }

    pub fn set_ethertype(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::ETHERTYPE, v);
    }

    pub fn set_peer_index(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::PEER_INDEX, v);
    }

    /// Sets type and marker together.
    pub fn set_ptype(&mut self, ptype: u8, marked: bool) {
        let m = if marked { MARKER_BIT } else { 0 };
        self.buffer.as_mut()[field::PTYPE] = (ptype & !MARKER_BIT) | m;
    }
}

/// High-level head: addresses, sender peer index, kind and marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub dst_mac: [u8; 6],
    pub src_mac: [u8; 6],
    pub src_peer: u16,
    pub kind: PacketKind,
    pub marked: bool,
}

impl Repr {
    /// Parses the head; checks the ethertype and that the type is simulated.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        if p.ethertype() != ETHERTYPE_OMX {
            return Err(Error::NotOpenMx { ethertype: p.ethertype() });
        }
        let kind = PacketKind::from_ptype(p.ptype()).ok_or(Error::UnsupportedType { ptype: p.ptype() })?;
        Ok(Repr { dst_mac: p.dst_mac(), src_mac: p.src_mac(), src_peer: p.peer_index(), kind, marked: p.marked() })
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes frame bytes 0..17.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        p.set_dst_mac(self.dst_mac);
        p.set_src_mac(self.src_mac);
        p.set_ethertype(ETHERTYPE_OMX);
        p.set_peer_index(self.src_peer);
        p.set_ptype(self.kind.ptype(), self.marked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static BYTES: [u8; 17] = [
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x01, // dst mac (host 1)
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x00, // src mac (host 0)
        0x86, 0xdf, // ethertype
        0x01, 0x02, // peer index 0x0102
        0xaa, // PULL_REPLY | marker
    ];

    fn repr() -> Repr {
        Repr {
            dst_mac: crate::wire::host_mac(1),
            src_mac: crate::wire::host_mac(0),
            src_peer: 0x0102,
            kind: PacketKind::PullReply,
            marked: true,
        }
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.ptype(), ptype::PULL_REPLY);
        assert!(p.marked());
        assert_eq!(Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn test_emit() {
        let mut buf = [0u8; 17];
        repr().emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, BYTES);
        let mut unmarked = repr();
        unmarked.marked = false;
        unmarked.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf[16], 0x2a);
    }

    #[test]
    fn test_check_len() {
        for n in 0..HEADER_LEN {
            assert_eq!(Packet::new_checked(&BYTES[..n]).unwrap_err(), Error::Truncated { need: HEADER_LEN, have: n });
        }
        assert!(Packet::new_checked(&BYTES[..]).is_ok());
    }

    #[test]
    fn rejects_other_ethertypes_and_types() {
        let mut b = BYTES;
        b[12] = 0x08;
        b[13] = 0x00;
        let err = Repr::parse(&Packet::new_unchecked(&b[..])).unwrap_err();
        assert_eq!(err, Error::NotOpenMx { ethertype: 0x0800 });
        let mut b = BYTES;
        b[16] = ptype::CONNECT | MARKER_BIT;
        let err = Repr::parse(&Packet::new_unchecked(&b[..])).unwrap_err();
        assert_eq!(err, Error::UnsupportedType { ptype: 0x24 });
    }

    #[test]
    fn kind_numbers_and_names() {
        let expect = [
            (PacketKind::Tiny, 0x25, "tiny"),
            (PacketKind::Small, 0x26, "small"),
            (PacketKind::Medium, 0x27, "medium"),
            (PacketKind::Rndv, 0x28, "rndv"),
            (PacketKind::Pull, 0x29, "pull"),
            (PacketKind::PullReply, 0x2a, "pull_reply"),
            (PacketKind::Notify, 0x2b, "notify"),
            (PacketKind::Ack, 0x23, "ack"),
        ];
        for (k, t, name) in expect {
            assert_eq!(k.ptype(), t);
            assert_eq!(PacketKind::from_ptype(t), Some(k));
            assert_eq!(k.to_string(), name);
        }
        assert_eq!(PacketKind::from_ptype(0), None);
        assert_eq!(PacketKind::from_ptype(ptype::NACK_MCP), None);
    }
}
