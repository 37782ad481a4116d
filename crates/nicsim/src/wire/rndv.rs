//! RNDV (rendezvous) header: `struct omx_pkt_rndv` (32 bytes at frame offset
//! 16). No payload.
//!
//! This file owns the rendezvous fields after the embedded message header
//! (`msg.rs`): the large message's length and the sender's RDMA window id,
//! seqnum and offset the receiver will pull from. It does not own the pull
//! that follows (`pull.rs`, `crate::proto`).
//!
//! Source: Open-MX `common/omx_wire.h`, `struct omx_pkt_rndv { struct
//! omx_pkt_msg msg; uint32_t msg_length; uint8_t pulled_rdma_id; uint8_t
//! pulled_rdma_seqnum; uint16_t pulled_rdma_offset; }`; the driver sets
//! `msg.length = OMX_PKT_RNDV_DATA_LENGTH` = 8, the size of these rndv fields
//! (`driver/linux/omx_send.c`).

use super::msg;
use super::{body_truncated, get_u16, get_u32, set_u16, set_u32, Result};

/// Body offsets of `struct omx_pkt_rndv` after the message header.
pub mod field {
    use crate::wire::Field;

    pub const MSG_LENGTH: Field = 24..28;
    pub const PULLED_RDMA_ID: usize = 28;
    pub const PULLED_RDMA_SEQNUM: usize = 29;
    pub const PULLED_RDMA_OFFSET: Field = 30..32;
}

/// `sizeof(struct omx_pkt_rndv)`.
pub const HEADER_LEN: usize = 32;

/// `OMX_PKT_RNDV_DATA_LENGTH`: what RNDV carries in `msg.length`.
pub const RNDV_DATA_LENGTH: u16 = 8;

/// A view of a RNDV body (starts at the type byte).
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

    pub fn msg_length(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::MSG_LENGTH)
    }

    pub fn pulled_rdma_id(&self) -> u8 {
        self.buffer.as_ref()[field::PULLED_RDMA_ID]
    }

    pub fn pulled_rdma_seqnum(&self) -> u8 {
        self.buffer.as_ref()[field::PULLED_RDMA_SEQNUM]
    }

    pub fn pulled_rdma_offset(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::PULLED_RDMA_OFFSET)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn msg_mut(&mut self) -> msg::Packet<&mut [u8]> {
        msg::Packet::new_unchecked(self.buffer.as_mut())
    }

    pub fn set_msg_length(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::MSG_LENGTH, v);
    }

    pub fn set_pulled_rdma_id(&mut self, v: u8) {
        self.buffer.as_mut()[field::PULLED_RDMA_ID] = v;
    }

    pub fn set_pulled_rdma_seqnum(&mut self, v: u8) {
        self.buffer.as_mut()[field::PULLED_RDMA_SEQNUM] = v;
    }

    pub fn set_pulled_rdma_offset(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::PULLED_RDMA_OFFSET, v);
    }
}

/// High-level RNDV header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub dst_ep: u8,
    pub src_ep: u8,
    pub session: u32,
    pub seq: u16,
    pub piggy_ack: u16,
    pub match_info: u64,
    pub msg_length: u32,
    pub rdma_id: u8,
    pub rdma_seqnum: u8,
    pub rdma_offset: u16,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        let m = msg::Repr::parse(&p.msg())?;
        Ok(Repr {
            dst_ep: m.dst_ep,
            src_ep: m.src_ep,
            session: m.session,
            seq: m.seq,
            piggy_ack: m.piggy_ack,
            match_info: m.match_info,
            msg_length: p.msg_length(),
            rdma_id: p.pulled_rdma_id(),
            rdma_seqnum: p.pulled_rdma_seqnum(),
            rdma_offset: p.pulled_rdma_offset(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes body bytes 1..32; the type byte is the head's.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        msg::Repr {
            dst_ep: self.dst_ep,
            src_ep: self.src_ep,
            session: self.session,
            seq: self.seq,
            piggy_ack: self.piggy_ack,
            match_info: self.match_info,
            length: RNDV_DATA_LENGTH,
        }
        .emit(&mut p.msg_mut());
        p.set_msg_length(self.msg_length);
        p.set_pulled_rdma_id(self.rdma_id);
        p.set_pulled_rdma_seqnum(self.rdma_seqnum);
        p.set_pulled_rdma_offset(self.rdma_offset);
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    use crate::wire::{host_mac, FrameRepr, OmxBody};

    /// A marked RNDV for a 1 MiB message, RDMA window 5, seqnum 1, offset 64.
    pub static RNDV: [u8; 48] = [
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x01, // dst mac = host 1
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x00, // src mac = host 0
        0x86, 0xdf, // ethertype
        0x00, 0x01, // sender peer index 1
        0xa8, // RNDV (0x28) | marker
        0x00, // dst endpoint
        0x01, // src endpoint
        0x00, // src generation
        0x00, 0x08, // msg.length = rndv data length 8
        0x00, 0x00, // pad1
        0x00, 0x03, // lib seqnum
        0x00, 0x02, // lib piggyack
        0xca, 0xfe, 0x00, 0x00, // match_a
        0x00, 0x00, 0xba, 0xbe, // match_b
        0x00, 0x00, 0x00, 0x07, // session
        0x00, 0x10, 0x00, 0x00, // msg length 1 MiB
        0x05, // pulled rdma id
        0x01, // pulled rdma seqnum
        0x00, 0x40, // pulled rdma offset 64
    ];

    pub fn rndv() -> FrameRepr {
        FrameRepr {
            dst_mac: host_mac(1),
            src_mac: host_mac(0),
            src_peer: 1,
            marked: true,
            body: OmxBody::Rndv {
                dst_ep: 0,
                src_ep: 1,
                session: 7,
                seq: 3,
                piggy_ack: 2,
                match_info: 0xcafe_0000_0000_babe,
                msg_length: 1 << 20,
                rdma_id: 5,
                rdma_seqnum: 1,
                rdma_offset: 64,
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
        &fixture::RNDV[16..]
    }

    fn repr() -> Repr {
        Repr {
            dst_ep: 0,
            src_ep: 1,
            session: 7,
            seq: 3,
            piggy_ack: 2,
            match_info: 0xcafe_0000_0000_babe,
            msg_length: 1 << 20,
            rdma_id: 5,
            rdma_seqnum: 1,
            rdma_offset: 64,
        }
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(body()).unwrap();
        assert_eq!(p.msg().length(), RNDV_DATA_LENGTH);
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
    fn round_trip_many() {
        let mut g = Gen::new(3);
        for _ in 0..2000 {
            let r = Repr {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                seq: g.u16(),
                piggy_ack: g.u16(),
                match_info: g.u64(),
                msg_length: g.u32(),
                rdma_id: g.u8(),
                rdma_seqnum: g.u8(),
                rdma_offset: g.u16(),
            };
            let mut buf = [0u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            assert_eq!(Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap(), r);
        }
    }
}
