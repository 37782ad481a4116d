//! Explicit library ACK: a TRUC packet carrying liback data, `struct
//! omx_pkt_truc` with `struct omx_pkt_truc_liback_data` (28 bytes at frame
//! offset 16). No payload.
//!
//! This file owns the bytes of the explicit ack the library sends when acks
//! cannot be piggy-backed (after 4 unacknowledged messages or on the delayed
//! ack timer). It does not own when acks are sent (`crate::proto`).
//!
//! Source: Open-MX `common/omx_wire.h`, `struct omx_pkt_truc { ptype;
//! dst_endpoint; src_endpoint; src_generation; uint8_t length; pad1[3];
//! uint32_t session; union { uint8_t type; struct omx_pkt_truc_liback_data {
//! type; pad; uint16_t lib_seqnum; uint32_t session_id; uint32_t acknum;
//! uint16_t send_seq; uint8_t resent; pad1; } liback; }; }`,
//! `OMX_PKT_TRUC_DATA_TYPE_ACK = 0x55`; the driver sets `length` to
//! `OMX_PKT_TRUC_LIBACK_DATA_LENGTH` (16) and the library fills
//! `liback.lib_seqnum` with the "ack up to" sequence number and
//! `liback.session_id` with the session (`driver/linux/omx_send.c`,
//! `libopen-mx/omx_ack.c`).
//!
//! Mapping to [`crate::wire::OmxBody::Ack`]: `lib_piggyack` (the cumulative
//! ack, the same meaning as a message's piggy-backed ack) is
//! `liback.lib_seqnum`; `lib_seqnum` (the acker's own next send sequence
//! number) is `liback.send_seq` (Open-MX writes the ack value there too, with
//! a FIXME). `acknum` and `resent` exist only in [`Repr`].

use super::{body_malformed, body_truncated, get_u16, get_u32, set_u16, set_u32, Result};

/// Body offsets of `struct omx_pkt_truc` + liback data.
pub mod field {
    use crate::wire::Field;

    pub const PTYPE: usize = 0;
    pub const DST_ENDPOINT: usize = 1;
    pub const SRC_ENDPOINT: usize = 2;
    pub const SRC_GENERATION: usize = 3;
    /// Length of the TRUC data (16 for liback).
    pub const LENGTH: usize = 4;
    pub const PAD1: Field = 5..8;
    pub const SESSION: Field = 8..12;
    /// TRUC data type; 0x55 = ack.
    pub const TRUC_TYPE: usize = 12;
    pub const LIBACK_PAD: usize = 13;
    /// The sequence number acknowledged up to.
    pub const LIBACK_LIB_SEQNUM: Field = 14..16;
    pub const LIBACK_SESSION_ID: Field = 16..20;
    /// Ack counter, lets the receiver ignore stale acks.
    pub const LIBACK_ACKNUM: Field = 20..24;
    pub const LIBACK_SEND_SEQ: Field = 24..26;
    pub const LIBACK_RESENT: usize = 26;
    pub const LIBACK_PAD1: usize = 27;
}

/// `sizeof(struct omx_pkt_truc)` with the liback member.
pub const HEADER_LEN: usize = 28;

/// `OMX_PKT_TRUC_DATA_TYPE_ACK`.
pub const TRUC_DATA_TYPE_ACK: u8 = 0x55;

/// `OMX_PKT_TRUC_LIBACK_DATA_LENGTH`.
pub const LIBACK_DATA_LENGTH: u8 = 16;

/// A view of a TRUC/liback body (starts at the type byte).
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

    pub fn length(&self) -> u8 {
        self.buffer.as_ref()[field::LENGTH]
    }

    pub fn session(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::SESSION)
    }

    pub fn truc_type(&self) -> u8 {
        self.buffer.as_ref()[field::TRUC_TYPE]
    }

    pub fn liback_lib_seqnum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::LIBACK_LIB_SEQNUM)
    }

    pub fn liback_session_id(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::LIBACK_SESSION_ID)
    }

    pub fn liback_acknum(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::LIBACK_ACKNUM)
    }

    pub fn liback_send_seq(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::LIBACK_SEND_SEQ)
    }

    pub fn liback_resent(&self) -> u8 {
        self.buffer.as_ref()[field::LIBACK_RESENT]
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

    pub fn set_length(&mut self, v: u8) {
        self.buffer.as_mut()[field::LENGTH] = v;
    }

    pub fn set_session(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::SESSION, v);
    }

    pub fn set_truc_type(&mut self, v: u8) {
        self.buffer.as_mut()[field::TRUC_TYPE] = v;
    }

    pub fn set_liback_lib_seqnum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::LIBACK_LIB_SEQNUM, v);
    }

    pub fn set_liback_session_id(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::LIBACK_SESSION_ID, v);
    }

    pub fn set_liback_acknum(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::LIBACK_ACKNUM, v);
    }

    pub fn set_liback_send_seq(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::LIBACK_SEND_SEQ, v);
    }

    pub fn set_liback_resent(&mut self, v: u8) {
        self.buffer.as_mut()[field::LIBACK_RESENT] = v;
    }

    pub fn clear_pads(&mut self) {
        let b = self.buffer.as_mut();
        b[field::PAD1].fill(0);
        b[field::LIBACK_PAD] = 0;
        b[field::LIBACK_PAD1] = 0;
    }
}

/// High-level liback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub dst_ep: u8,
    pub src_ep: u8,
    pub session: u32,
    /// `liback.lib_seqnum`: acknowledged up to this sequence number.
    pub ack_upto: u16,
    /// `liback.send_seq`.
    pub send_seq: u16,
    pub acknum: u32,
    pub resent: bool,
}

impl Repr {
    /// Parses; the TRUC data must be a liback (type 0x55, length ≥ 16).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        if p.truc_type() != TRUC_DATA_TYPE_ACK {
            return Err(body_malformed(field::TRUC_TYPE, "TRUC data type is not a library ack (0x55)"));
        }
        if p.length() < LIBACK_DATA_LENGTH {
            return Err(body_malformed(field::LENGTH, "TRUC liback data length below 16"));
        }
        Ok(Repr {
            dst_ep: p.dst_endpoint(),
            src_ep: p.src_endpoint(),
            session: p.session(),
            ack_upto: p.liback_lib_seqnum(),
            send_seq: p.liback_send_seq(),
            acknum: p.liback_acknum(),
            resent: p.liback_resent() != 0,
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes body bytes 1..28 (pads zeroed); the type byte is the head's.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        p.set_dst_endpoint(self.dst_ep);
        p.set_src_endpoint(self.src_ep);
        p.set_src_generation(0);
        p.set_length(LIBACK_DATA_LENGTH);
        p.set_session(self.session);
        p.set_truc_type(TRUC_DATA_TYPE_ACK);
        p.set_liback_lib_seqnum(self.ack_upto);
        p.set_liback_session_id(self.session);
        p.set_liback_acknum(self.acknum);
        p.set_liback_send_seq(self.send_seq);
        p.set_liback_resent(u8::from(self.resent));
        p.clear_pads();
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    use crate::wire::{host_mac, FrameRepr, OmxBody};

    /// An explicit ack (never marked) from host 1 endpoint 3 to endpoint 2,
    /// acknowledging up to sequence number 0x0104.
    pub static ACK: [u8; 44] = [
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x00, // dst mac = host 0
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x01, // src mac = host 1
        0x86, 0xdf, // ethertype
        0x00, 0x00, // sender peer index 0
        0x23, // TRUC, unmarked
        0x02, // dst endpoint
        0x03, // src endpoint
        0x00, // src generation
        0x10, // truc data length 16
        0x00, 0x00, 0x00, // pad1
        0xde, 0xad, 0xbe, 0xef, // session
        0x55, // truc type = ack
        0x00, // pad
        0x01, 0x04, // liback lib seqnum (ack up to)
        0xde, 0xad, 0xbe, 0xef, // liback session id
        0x00, 0x00, 0x00, 0x00, // acknum
        0x00, 0x21, // send seq
        0x00, // resent
        0x00, // pad1
    ];

    pub fn ack() -> FrameRepr {
        FrameRepr {
            dst_mac: host_mac(0),
            src_mac: host_mac(1),
            src_peer: 0,
            marked: false,
            body: OmxBody::Ack { dst_ep: 2, src_ep: 3, session: 0xdead_beef, lib_seqnum: 0x21, lib_piggyack: 0x0104 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testutil::Gen;
    use crate::wire::Error;

    fn body() -> &'static [u8] {
        &fixture::ACK[16..]
    }

    fn repr() -> Repr {
        Repr { dst_ep: 2, src_ep: 3, session: 0xdead_beef, ack_upto: 0x0104, send_seq: 0x21, acknum: 0, resent: false }
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(body()).unwrap();
        assert_eq!(p.liback_session_id(), 0xdead_beef);
        assert_eq!(Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn test_emit() {
        let mut buf = [0xeeu8; HEADER_LEN];
        repr().emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(&buf[1..], &body()[1..]);
    }

    #[test]
    fn test_check_len() {
        for n in 0..HEADER_LEN {
            assert_eq!(Packet::new_checked(&body()[..n]).unwrap_err(), Error::Truncated { need: 44, have: 16 + n });
        }
    }

    #[test]
    fn non_ack_truc_is_malformed() {
        let mut buf = [0u8; HEADER_LEN];
        buf.copy_from_slice(body());
        buf[field::TRUC_TYPE] = 0x56;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap_err().offset(), 28);
        buf[field::TRUC_TYPE] = TRUC_DATA_TYPE_ACK;
        buf[field::LENGTH] = 15;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap_err().offset(), 20);
    }

    #[test]
    fn round_trip_many() {
        let mut g = Gen::new(7);
        for _ in 0..2000 {
            let r = Repr {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                ack_upto: g.u16(),
                send_seq: g.u16(),
                acknum: g.u32(),
                resent: g.bool(),
            };
            let mut buf = [0u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            assert_eq!(Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap(), r);
        }
    }
}
