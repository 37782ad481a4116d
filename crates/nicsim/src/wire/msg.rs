//! TINY and SMALL headers: `struct omx_pkt_msg` (24 bytes at frame offset 16).
//!
//! This file owns the message header shared by TINY and SMALL packets (whose
//! payload follows it) and embedded at the start of MEDIUM and RNDV headers
//! (`medium.rs`, `rndv.rs` reuse [`Packet`] for these bytes). It does not own
//! the type byte (`head.rs`) nor the TINY/SMALL size limits (`frag.rs`,
//! checked when a whole frame is parsed in `frame.rs`).
//!
//! Source: Open-MX `common/omx_wire.h`, `struct omx_pkt_msg`; match info is
//! split as `match_a` = high 32 bits, `match_b` = low 32 bits
//! (`OMX_PKT_MATCH_INFO_FROM`, `driver/linux/omx_wire_access.h`). Offsets
//! below are relative to the body (the C struct), i.e. frame offset − 16.

use super::{body_truncated, get_u16, get_u32, set_u16, set_u32, Result};

/// Body offsets of `struct omx_pkt_msg`.
pub mod field {
    use crate::wire::Field;

    pub const PTYPE: usize = 0;
    pub const DST_ENDPOINT: usize = 1;
    pub const SRC_ENDPOINT: usize = 2;
    /// `src_generation`, "FIXME: unused ?" in Open-MX; emitted as zero.
    pub const SRC_GENERATION: usize = 3;
    /// Payload length (TINY/SMALL), message length (MEDIUM), rndv data length
    /// (RNDV).
    pub const LENGTH: Field = 4..6;
    /// `pad1`; MEDIUM reuses it for the high 16 bits of `msg_length`.
    pub const PAD1: Field = 6..8;
    pub const LIB_SEQNUM: Field = 8..10;
    pub const LIB_PIGGYACK: Field = 10..12;
    pub const MATCH_A: Field = 12..16;
    pub const MATCH_B: Field = 16..20;
    /// The endpoint's session id (0 in the model, which does not reopen
    /// endpoints); bit 31 set is the model's multicast tag, the root's rank
    /// in the low 16 bits (`crate::nic::multicast::tag`).
    pub const SESSION: Field = 20..24;
}

/// `sizeof(struct omx_pkt_msg)`.
pub const HEADER_LEN: usize = 24;

/// A view of a message header body (starts at the type byte).
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Ensures every accessor is in bounds (errors use frame offsets).
    pub fn check_len(&self) -> Result<()> {
        let have = self.buffer.as_ref().len();
        if have < HEADER_LEN {
            return Err(body_truncated(HEADER_LEN, have));
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn dst_endpoint(&self) -> u8 {
        self.buffer.as_ref()[field::DST_ENDPOINT]
    }

    pub fn src_endpoint(&self) -> u8 {
        self.buffer.as_ref()[field::SRC_ENDPOINT]
    }

    pub fn length(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::LENGTH)
    }

    pub fn pad1(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::PAD1)
    }

    pub fn lib_seqnum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::LIB_SEQNUM)
    }

    pub fn lib_piggyack(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::LIB_PIGGYACK)
    }

    /// `match_a << 32 | match_b`.
    pub fn match_info(&self) -> u64 {
        let b = self.buffer.as_ref();
        (u64::from(get_u32(b, field::MATCH_A)) << 32) | u64::from(get_u32(b, field::MATCH_B))
    }

    pub fn session(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::SESSION)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_dst_endpoint(&mut self, v: u8) {
        self.buffer.as_mut()[field::DST_ENDPOINT] = v;
    }

    pub fn set_src_endpoint(&mut self, v: u8) {
        self.buffer.as_mut()[field::SRC_ENDPOINT] = v;
    }

    pub fn set_src_generation(&mut self, v: u8) {
        self.buffer.as_mut()[field::SRC_GENERATION] = v;
    }

    pub fn set_length(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::LENGTH, v);
    }

    pub fn set_pad1(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::PAD1, v);
    }

    pub fn set_lib_seqnum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::LIB_SEQNUM, v);
    }

    pub fn set_lib_piggyack(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::LIB_PIGGYACK, v);
    }

    pub fn set_match_info(&mut self, v: u64) {
        let b = self.buffer.as_mut();
        set_u32(b, field::MATCH_A, (v >> 32) as u32);
        set_u32(b, field::MATCH_B, v as u32);
    }

    pub fn set_session(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::SESSION, v);
    }
}

/// High-level message header. `length` is the raw 16-bit field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub dst_ep: u8,
    pub src_ep: u8,
    pub session: u32,
    pub seq: u16,
    pub piggy_ack: u16,
    pub match_info: u64,
    pub length: u16,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            dst_ep: p.dst_endpoint(),
            src_ep: p.src_endpoint(),
            session: p.session(),
            seq: p.lib_seqnum(),
            piggy_ack: p.lib_piggyack(),
            match_info: p.match_info(),
            length: p.length(),
        })
    }

    /// Header bytes (body, including the type byte `emit` leaves alone).
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes body bytes 1..24 (pads zeroed); the type byte is the head's.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        p.set_dst_endpoint(self.dst_ep);
        p.set_src_endpoint(self.src_ep);
        p.set_src_generation(0);
        p.set_length(self.length);
        p.set_pad1(0);
        p.set_lib_seqnum(self.seq);
        p.set_lib_piggyack(self.piggy_ack);
        p.set_match_info(self.match_info);
        p.set_session(self.session);
    }
}

/// Byte fixtures shared with `frame.rs` tests.
#[cfg(test)]
pub(crate) mod fixture {
    use crate::wire::{host_mac, FrameRepr, OmxBody};

    /// A marked TINY frame, peer 7, endpoint 2 → 3, 5-byte payload "hello".
    pub static TINY: [u8; 45] = [
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x01, // dst mac = host 1
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x00, // src mac = host 0
        0x86, 0xdf, // ethertype
        0x00, 0x07, // sender peer index 7
        0xa5, // TINY (0x25) | marker
        0x03, // dst endpoint
        0x02, // src endpoint
        0x00, // src generation
        0x00, 0x05, // length 5
        0x00, 0x00, // pad1
        0x01, 0x02, // lib seqnum
        0x03, 0x04, // lib piggyack
        0x11, 0x22, 0x33, 0x44, // match_a
        0x55, 0x66, 0x77, 0x88, // match_b
        0xde, 0xad, 0xbe, 0xef, // session
        b'h', b'e', b'l', b'l', b'o', // payload
    ];

    pub fn tiny() -> FrameRepr {
        FrameRepr {
            dst_mac: host_mac(1),
            src_mac: host_mac(0),
            src_peer: 7,
            marked: true,
            body: OmxBody::Tiny {
                dst_ep: 3,
                src_ep: 2,
                session: 0xdead_beef,
                seq: 0x0102,
                piggy_ack: 0x0304,
                match_info: 0x1122_3344_5566_7788,
                length: 5,
            },
        }
    }

    /// An unmarked SMALL frame announcing 128 bytes (payload omitted here).
    pub static SMALL: [u8; 40] = [
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x00, // dst mac = host 0
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x02, // src mac = host 2
        0x86, 0xdf, // ethertype
        0x01, 0x00, // sender peer index 256
        0x26, // SMALL, unmarked
        0xff, // dst endpoint 255
        0x00, // src endpoint 0
        0x00, // src generation
        0x00, 0x80, // length 128
        0x00, 0x00, // pad1
        0xff, 0xff, // lib seqnum
        0x00, 0x00, // lib piggyack
        0x00, 0x00, 0x00, 0x00, // match_a
        0x00, 0x00, 0x00, 0x2a, // match_b
        0x00, 0x00, 0x00, 0x01, // session
    ];

    pub fn small() -> FrameRepr {
        FrameRepr {
            dst_mac: host_mac(0),
            src_mac: host_mac(2),
            src_peer: 256,
            marked: false,
            body: OmxBody::Small {
                dst_ep: 255,
                src_ep: 0,
                session: 1,
                seq: 0xffff,
                piggy_ack: 0,
                match_info: 42,
                length: 128,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testutil::Gen;
    use crate::wire::Error;

    fn body() -> &'static [u8] {
        &fixture::TINY[16..40]
    }

    fn repr() -> Repr {
        Repr {
            dst_ep: 3,
            src_ep: 2,
            session: 0xdead_beef,
            seq: 0x0102,
            piggy_ack: 0x0304,
            match_info: 0x1122_3344_5566_7788,
            length: 5,
        }
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(body()).unwrap();
        assert_eq!(p.match_info(), 0x1122_3344_5566_7788);
        assert_eq!(Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn test_emit() {
        let mut buf = [0xeeu8; HEADER_LEN];
        repr().emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf[0], 0xee, "type byte belongs to the head");
        assert_eq!(&buf[1..], &body()[1..]);
    }

    #[test]
    fn test_check_len() {
        for n in 0..HEADER_LEN {
            assert_eq!(
                Packet::new_checked(&body()[..n]).unwrap_err(),
                Error::Truncated { need: 16 + HEADER_LEN, have: 16 + n }
            );
        }
    }

    #[test]
    fn round_trip_many() {
        let mut g = Gen::new(1);
        for _ in 0..2000 {
            let r = Repr {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                seq: g.u16(),
                piggy_ack: g.u16(),
                match_info: g.u64(),
                length: g.u16(),
            };
            let mut buf = [0u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            assert_eq!(Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap(), r);
        }
    }
}
