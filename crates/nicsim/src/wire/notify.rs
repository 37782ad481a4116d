//! NOTIFY header: `struct omx_pkt_notify` (24 bytes at frame offset 16). No
//! payload.
//!
//! This file owns the bytes of the message the receiver of a large message
//! sends back once its pull is complete, so that the sender can release its
//! RDMA window. It does not own when that happens (`crate::proto`).
//!
//! Source: Open-MX `common/omx_wire.h`, `struct omx_pkt_notify { ptype;
//! dst_endpoint; src_endpoint; src_generation; uint32_t session; uint32_t
//! total_length; uint8_t pulled_rdma_id; uint8_t pulled_rdma_seqnum; uint16_t
//! pad1; uint16_t pad2; uint16_t lib_seqnum; uint16_t lib_piggyack; uint16_t
//! pad3; }`.

use super::{body_truncated, get_u16, get_u32, set_u16, set_u32, Result};

/// Body offsets of `struct omx_pkt_notify`.
pub mod field {
    use crate::wire::Field;

    pub const PTYPE: usize = 0;
    pub const DST_ENDPOINT: usize = 1;
    pub const SRC_ENDPOINT: usize = 2;
    pub const SRC_GENERATION: usize = 3;
    pub const SESSION: Field = 4..8;
    pub const TOTAL_LENGTH: Field = 8..12;
    pub const PULLED_RDMA_ID: usize = 12;
    pub const PULLED_RDMA_SEQNUM: usize = 13;
    /// `pad1` and `pad2`.
    pub const PAD12: Field = 14..18;
    pub const LIB_SEQNUM: Field = 18..20;
    pub const LIB_PIGGYACK: Field = 20..22;
    pub const PAD3: Field = 22..24;
}

/// `sizeof(struct omx_pkt_notify)`.
pub const HEADER_LEN: usize = 24;

/// A view of a NOTIFY body (starts at the type byte).
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

    pub fn session(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::SESSION)
    }

    pub fn total_length(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::TOTAL_LENGTH)
    }

    pub fn pulled_rdma_id(&self) -> u8 {
        self.buffer.as_ref()[field::PULLED_RDMA_ID]
    }

    pub fn pulled_rdma_seqnum(&self) -> u8 {
        self.buffer.as_ref()[field::PULLED_RDMA_SEQNUM]
    }

    pub fn lib_seqnum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::LIB_SEQNUM)
    }

    pub fn lib_piggyack(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::LIB_PIGGYACK)
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

    pub fn set_session(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::SESSION, v);
    }

    pub fn set_total_length(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::TOTAL_LENGTH, v);
    }

    pub fn set_pulled_rdma_id(&mut self, v: u8) {
        self.buffer.as_mut()[field::PULLED_RDMA_ID] = v;
    }

    pub fn set_pulled_rdma_seqnum(&mut self, v: u8) {
        self.buffer.as_mut()[field::PULLED_RDMA_SEQNUM] = v;
    }

    pub fn set_lib_seqnum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::LIB_SEQNUM, v);
    }

    pub fn set_lib_piggyack(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::LIB_PIGGYACK, v);
    }

    pub fn clear_pads(&mut self) {
        let b = self.buffer.as_mut();
        b[field::PAD12].fill(0);
        b[field::PAD3].fill(0);
    }
}

/// High-level NOTIFY header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub dst_ep: u8,
    pub src_ep: u8,
    pub session: u32,
    pub seq: u16,
    pub piggy_ack: u16,
    pub total_length: u32,
    pub puller_rdma_id: u8,
    pub puller_rdma_seqnum: u8,
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
            total_length: p.total_length(),
            puller_rdma_id: p.pulled_rdma_id(),
            puller_rdma_seqnum: p.pulled_rdma_seqnum(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes body bytes 1..24 (pads zeroed); the type byte is the head's.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        p.set_dst_endpoint(self.dst_ep);
        p.set_src_endpoint(self.src_ep);
        p.set_src_generation(0);
        p.set_session(self.session);
        p.set_total_length(self.total_length);
        p.set_pulled_rdma_id(self.puller_rdma_id);
        p.set_pulled_rdma_seqnum(self.puller_rdma_seqnum);
        p.set_lib_seqnum(self.seq);
        p.set_lib_piggyack(self.piggy_ack);
        p.clear_pads();
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    use crate::wire::{host_mac, FrameRepr, OmxBody};

    /// A marked NOTIFY from the puller (host 1, endpoint 1) back to the sender.
    pub static NOTIFY: [u8; 40] = [
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x00, // dst mac = host 0
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x01, // src mac = host 1
        0x86, 0xdf, // ethertype
        0x00, 0x00, // sender peer index 0
        0xab, // NOTIFY (0x2b) | marker
        0x00, // dst endpoint
        0x01, // src endpoint
        0x00, // src generation
        0x00, 0x00, 0x00, 0x07, // session
        0x00, 0x10, 0x00, 0x00, // total length 1 MiB
        0x05, // pulled rdma id
        0x01, // pulled rdma seqnum
        0x00, 0x00, // pad1
        0x00, 0x00, // pad2
        0x00, 0x09, // lib seqnum
        0x00, 0x03, // lib piggyack
        0x00, 0x00, // pad3
    ];

    pub fn notify() -> FrameRepr {
        FrameRepr {
            dst_mac: host_mac(0),
            src_mac: host_mac(1),
            src_peer: 0,
            marked: true,
            body: OmxBody::Notify {
                dst_ep: 0,
                src_ep: 1,
                session: 7,
                seq: 9,
                piggy_ack: 3,
                total_length: 1 << 20,
                puller_rdma_id: 5,
                puller_rdma_seqnum: 1,
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
        &fixture::NOTIFY[16..]
    }

    fn repr() -> Repr {
        Repr {
            dst_ep: 0,
            src_ep: 1,
            session: 7,
            seq: 9,
            piggy_ack: 3,
            total_length: 1 << 20,
            puller_rdma_id: 5,
            puller_rdma_seqnum: 1,
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
            assert_eq!(Packet::new_checked(&body()[..n]).unwrap_err(), Error::Truncated { need: 40, have: 16 + n });
        }
    }

    #[test]
    fn round_trip_many() {
        let mut g = Gen::new(6);
        for _ in 0..2000 {
            let r = Repr {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                seq: g.u16(),
                piggy_ack: g.u16(),
                total_length: g.u32(),
                puller_rdma_id: g.u8(),
                puller_rdma_seqnum: g.u8(),
            };
            let mut buf = [0u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            assert_eq!(Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap(), r);
        }
    }
}
