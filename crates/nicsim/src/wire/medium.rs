//! MEDIUM fragment header: `struct omx_pkt_medium_frag` (32 bytes at frame
//! offset 16), followed by `frag_length` payload bytes.
//!
//! This file owns the fragment fields that follow the embedded message header
//! (which `msg.rs` owns). It does not decide how a message is cut into
//! fragments (`frag.rs`) nor which fragment is marked (`marker.rs`).
//!
//! Source: Open-MX `common/omx_wire.h`, `struct omx_pkt_medium_frag { struct
//! omx_pkt_msg msg; uint16_t frag_length; uint8_t frag_seqnum; uint8_t
//! frag_pipeline /* pad1 unless OMX_MX_WIRE_COMPAT */; uint32_t pad2; }`; the
//! driver fills `msg.length` with the whole message length
//! (`driver/linux/omx_send.c`).
//!
//! **Extension.** `msg.length` is 16 bits; Open-MX media never exceed 32 KiB
//! (`OMX_MEDIUM_MAX`), but nicsim's rendezvous threshold is configurable, so
//! the high 16 bits of `msg_length` go into `msg.pad1` (zero, hence
//! byte-identical to Open-MX, for every length below 64 KiB).

use super::msg;
use super::{body_malformed, body_truncated, get_u16, set_u16, set_u32, Result};

/// Body offsets of `struct omx_pkt_medium_frag` after the message header.
pub mod field {
    use crate::wire::Field;

    /// High 16 bits of the message length (nicsim extension in `msg.pad1`).
    pub const MSG_LENGTH_HI: Field = crate::wire::msg::field::PAD1;
    pub const FRAG_LENGTH: Field = 24..26;
    pub const FRAG_SEQNUM: usize = 26;
    /// `frag_pipeline` (MX wire-compat name; `pad1` otherwise): log2 of the
    /// fragment size class, carried for fidelity, unused by nicsim.
    pub const FRAG_PIPELINE: usize = 27;
    pub const PAD2: Field = 28..32;
}

/// `sizeof(struct omx_pkt_medium_frag)`.
pub const HEADER_LEN: usize = 32;

/// A view of a MEDIUM body (starts at the type byte).
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

    /// The embedded message header.
    pub fn msg(&self) -> msg::Packet<&[u8]> {
        msg::Packet::new_unchecked(self.buffer.as_ref())
    }

    /// Whole message length (`msg.length`, plus the high bits in `msg.pad1`).
    pub fn msg_length(&self) -> u32 {
        let m = self.msg();
        (u32::from(m.pad1()) << 16) | u32::from(m.length())
    }

    pub fn frag_length(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::FRAG_LENGTH)
    }

    pub fn frag_seqnum(&self) -> u8 {
        self.buffer.as_ref()[field::FRAG_SEQNUM]
    }

    pub fn frag_pipeline(&self) -> u8 {
        self.buffer.as_ref()[field::FRAG_PIPELINE]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn msg_mut(&mut self) -> msg::Packet<&mut [u8]> {
        msg::Packet::new_unchecked(self.buffer.as_mut())
    }

    pub fn set_msg_length(&mut self, v: u32) {
        let mut m = self.msg_mut();
        m.set_length(v as u16);
        m.set_pad1((v >> 16) as u16);
    }

    pub fn set_frag_length(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::FRAG_LENGTH, v);
    }

    pub fn set_frag_seqnum(&mut self, v: u8) {
        self.buffer.as_mut()[field::FRAG_SEQNUM] = v;
    }

    pub fn set_frag_pipeline(&mut self, v: u8) {
        self.buffer.as_mut()[field::FRAG_PIPELINE] = v;
    }

    fn clear_pad2(&mut self) {
        set_u32(self.buffer.as_mut(), field::PAD2, 0);
    }
}

/// High-level MEDIUM header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub dst_ep: u8,
    pub src_ep: u8,
    pub session: u32,
    pub seq: u16,
    pub piggy_ack: u16,
    pub match_info: u64,
    pub msg_length: u32,
    pub frag_seq: u8,
    pub frag_pipeline: u8,
    pub frag_length: u16,
}

impl Repr {
    /// Parses the header; a fragment longer than its message is malformed.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        let m = msg::Repr::parse(&p.msg())?;
        let r = Repr {
            dst_ep: m.dst_ep,
            src_ep: m.src_ep,
            session: m.session,
            seq: m.seq,
            piggy_ack: m.piggy_ack,
            match_info: m.match_info,
            msg_length: p.msg_length(),
            frag_seq: p.frag_seqnum(),
            frag_pipeline: p.frag_pipeline(),
            frag_length: p.frag_length(),
        };
        if u32::from(r.frag_length) > r.msg_length {
            return Err(body_malformed(field::FRAG_LENGTH.start, "medium fragment longer than its message"));
        }
        Ok(r)
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes body bytes 1..32 (pads zeroed); the type byte is the head's.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        msg::Repr {
            dst_ep: self.dst_ep,
            src_ep: self.src_ep,
            session: self.session,
            seq: self.seq,
            piggy_ack: self.piggy_ack,
            match_info: self.match_info,
            length: 0,
        }
        .emit(&mut p.msg_mut());
        p.set_msg_length(self.msg_length);
        p.set_frag_length(self.frag_length);
        p.set_frag_seqnum(self.frag_seq);
        p.set_frag_pipeline(self.frag_pipeline);
        p.clear_pad2();
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    use crate::wire::{host_mac, FrameRepr, OmxBody};

    /// The last (23rd) fragment of a 32 KiB message at MTU 1500, marked:
    /// 32768 − 22·1452 = 824 payload bytes (omitted here).
    pub static MEDIUM: [u8; 48] = [
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x01, // dst mac = host 1
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x00, // src mac = host 0
        0x86, 0xdf, // ethertype
        0x00, 0x00, // sender peer index 0
        0xa7, // MEDIUM (0x27) | marker
        0x01, // dst endpoint
        0x04, // src endpoint
        0x00, // src generation
        0x80, 0x00, // msg length 32768 (low 16 bits)
        0x00, 0x00, // pad1 = msg length high bits
        0x00, 0x10, // lib seqnum 16
        0x00, 0x0f, // lib piggyack 15
        0x00, 0x00, 0x00, 0x00, // match_a
        0x00, 0x00, 0x00, 0x09, // match_b
        0x12, 0x34, 0x56, 0x78, // session
        0x03, 0x38, // frag length 824
        0x16, // frag seqnum 22
        0x0b, // frag pipeline 11
        0x00, 0x00, 0x00, 0x00, // pad2
    ];

    pub fn medium() -> FrameRepr {
        FrameRepr {
            dst_mac: host_mac(1),
            src_mac: host_mac(0),
            src_peer: 0,
            marked: true,
            body: OmxBody::Medium {
                dst_ep: 1,
                src_ep: 4,
                session: 0x1234_5678,
                seq: 16,
                piggy_ack: 15,
                match_info: 9,
                msg_length: 32768,
                frag_seq: 22,
                frag_pipeline: 11,
                frag_length: 824,
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
        &fixture::MEDIUM[16..]
    }

    fn repr() -> Repr {
        Repr {
            dst_ep: 1,
            src_ep: 4,
            session: 0x1234_5678,
            seq: 16,
            piggy_ack: 15,
            match_info: 9,
            msg_length: 32768,
            frag_seq: 22,
            frag_pipeline: 11,
            frag_length: 824,
        }
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(body()).unwrap();
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
            assert_eq!(Packet::new_checked(&body()[..n]).unwrap_err(), Error::Truncated { need: 48, have: 16 + n });
        }
    }

    #[test]
    fn large_msg_length_uses_pad1() {
        let mut r = repr();
        r.msg_length = 0x0001_0400;
        let mut buf = [0u8; HEADER_LEN];
        r.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(&buf[4..8], &[0x04, 0x00, 0x00, 0x01]);
        assert_eq!(Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap(), r);
    }

    #[test]
    fn fragment_longer_than_message_is_malformed() {
        let mut r = repr();
        r.msg_length = 100;
        r.frag_length = 101;
        let mut buf = [0u8; HEADER_LEN];
        r.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap_err(),
            Error::Malformed { offset: 40, what: "medium fragment longer than its message" }
        );
    }

    #[test]
    fn round_trip_many() {
        let mut g = Gen::new(2);
        for _ in 0..2000 {
            let msg_length = g.u32();
            let r = Repr {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                seq: g.u16(),
                piggy_ack: g.u16(),
                match_info: g.u64(),
                msg_length,
                frag_seq: g.u8(),
                frag_pipeline: g.u8(),
                frag_length: g.upto(u64::from(msg_length.min(0xffff))) as u16,
            };
            let mut buf = [0u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            assert_eq!(Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap(), r);
        }
    }
}
