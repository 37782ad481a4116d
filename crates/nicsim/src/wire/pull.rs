//! PULL request header: `struct omx_pkt_pull_request` (44 bytes at frame
//! offset 16, native Open-MX layout). No payload.
//!
//! This file owns the bytes of a pull request: which RDMA window and block of
//! the sender's message the receiver asks for, and the puller's handle and
//! endpoint magic that the replies echo back. It does not own pull state
//! (blocks outstanding, re-requests: `crate::proto`) nor the block arithmetic
//! (`frag.rs`).
//!
//! Source: Open-MX `common/omx_wire.h`, `struct omx_pkt_pull_request`, the
//! `!OMX_MX_WIRE_COMPAT` variant (32-bit `pulled_rdma_id`, 32-bit offsets,
//! `first_frame_offset`/`block_length`/`frame_index` at 32/36/40);
//! `src_magic = endpoint ^ OMX_ENDPOINT_PULL_MAGIC_XOR`
//! (`driver/linux/omx_pull.c`, see [`crate::wire::pull_magic`]).
//!
//! `pulled_rdma_id` is 32 bits on the wire but RDMA window ids are 8 bits
//! (`omx_user_region_id_t`, `common/omx_io.h`); parse rejects larger values.

use super::{body_malformed, body_truncated, get_u32, set_u32, Result};

/// Body offsets of `struct omx_pkt_pull_request`.
pub mod field {
    use crate::wire::Field;

    pub const PTYPE: usize = 0;
    pub const DST_ENDPOINT: usize = 1;
    pub const SRC_ENDPOINT: usize = 2;
    pub const SRC_GENERATION: usize = 3;
    pub const SESSION: Field = 4..8;
    /// Total pull length.
    pub const TOTAL_LENGTH: Field = 8..12;
    pub const PULLED_RDMA_ID: Field = 12..16;
    pub const PULLED_RDMA_SEQNUM: usize = 16;
    pub const PAD1: Field = 17..20;
    pub const PULLED_RDMA_OFFSET: Field = 20..24;
    /// Puller's handle id (echoed as PULL_REPLY `dst_pull_handle`).
    pub const SRC_PULL_HANDLE: Field = 24..28;
    /// Puller's endpoint magic (echoed as PULL_REPLY `dst_magic`).
    pub const SRC_MAGIC: Field = 28..32;
    pub const FIRST_FRAME_OFFSET: Field = 32..36;
    pub const BLOCK_LENGTH: Field = 36..40;
    /// Index of the first reply frame of this block.
    pub const FRAME_INDEX: Field = 40..44;
}

/// `sizeof(struct omx_pkt_pull_request)` (native layout).
pub const HEADER_LEN: usize = 44;

/// A view of a PULL body (starts at the type byte).
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

    fn u32_at(&self, f: crate::wire::Field) -> u32 {
        get_u32(self.buffer.as_ref(), f)
    }

    pub fn dst_endpoint(&self) -> u8 {
        self.buffer.as_ref()[field::DST_ENDPOINT]
    }

    pub fn src_endpoint(&self) -> u8 {
        self.buffer.as_ref()[field::SRC_ENDPOINT]
    }

    pub fn session(&self) -> u32 {
        self.u32_at(field::SESSION)
    }

    pub fn total_length(&self) -> u32 {
        self.u32_at(field::TOTAL_LENGTH)
    }

    pub fn pulled_rdma_id(&self) -> u32 {
        self.u32_at(field::PULLED_RDMA_ID)
    }

    pub fn pulled_rdma_seqnum(&self) -> u8 {
        self.buffer.as_ref()[field::PULLED_RDMA_SEQNUM]
    }

    pub fn pulled_rdma_offset(&self) -> u32 {
        self.u32_at(field::PULLED_RDMA_OFFSET)
    }

    pub fn src_pull_handle(&self) -> u32 {
        self.u32_at(field::SRC_PULL_HANDLE)
    }

    pub fn src_magic(&self) -> u32 {
        self.u32_at(field::SRC_MAGIC)
    }

    pub fn first_frame_offset(&self) -> u32 {
        self.u32_at(field::FIRST_FRAME_OFFSET)
    }

    pub fn block_length(&self) -> u32 {
        self.u32_at(field::BLOCK_LENGTH)
    }

    pub fn frame_index(&self) -> u32 {
        self.u32_at(field::FRAME_INDEX)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u32_at(&mut self, f: crate::wire::Field, v: u32) {
        set_u32(self.buffer.as_mut(), f, v);
    }

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
        self.set_u32_at(field::SESSION, v);
    }

    pub fn set_total_length(&mut self, v: u32) {
        self.set_u32_at(field::TOTAL_LENGTH, v);
    }

    pub fn set_pulled_rdma_id(&mut self, v: u32) {
        self.set_u32_at(field::PULLED_RDMA_ID, v);
    }

    pub fn set_pulled_rdma_seqnum(&mut self, v: u8) {
        self.buffer.as_mut()[field::PULLED_RDMA_SEQNUM] = v;
    }

    pub fn clear_pad1(&mut self) {
        self.buffer.as_mut()[field::PAD1].fill(0);
    }

    pub fn set_pulled_rdma_offset(&mut self, v: u32) {
        self.set_u32_at(field::PULLED_RDMA_OFFSET, v);
    }

    pub fn set_src_pull_handle(&mut self, v: u32) {
        self.set_u32_at(field::SRC_PULL_HANDLE, v);
    }

    pub fn set_src_magic(&mut self, v: u32) {
        self.set_u32_at(field::SRC_MAGIC, v);
    }

    pub fn set_first_frame_offset(&mut self, v: u32) {
        self.set_u32_at(field::FIRST_FRAME_OFFSET, v);
    }

    pub fn set_block_length(&mut self, v: u32) {
        self.set_u32_at(field::BLOCK_LENGTH, v);
    }

    pub fn set_frame_index(&mut self, v: u32) {
        self.set_u32_at(field::FRAME_INDEX, v);
    }
}

/// High-level PULL header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub dst_ep: u8,
    pub src_ep: u8,
    pub session: u32,
    pub total_length: u32,
    pub pulled_rdma_id: u8,
    pub pulled_rdma_seqnum: u8,
    pub pulled_rdma_offset: u32,
    pub src_pull_handle: u32,
    pub src_magic: u32,
    pub first_frame_offset: u32,
    pub block_length: u32,
    pub frame_index: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        let pulled_rdma_id = u8::try_from(p.pulled_rdma_id())
            .map_err(|_| body_malformed(field::PULLED_RDMA_ID.start, "pull rdma window id exceeds 255"))?;
        Ok(Repr {
            dst_ep: p.dst_endpoint(),
            src_ep: p.src_endpoint(),
            session: p.session(),
            total_length: p.total_length(),
            pulled_rdma_id,
            pulled_rdma_seqnum: p.pulled_rdma_seqnum(),
            pulled_rdma_offset: p.pulled_rdma_offset(),
            src_pull_handle: p.src_pull_handle(),
            src_magic: p.src_magic(),
            first_frame_offset: p.first_frame_offset(),
            block_length: p.block_length(),
            frame_index: p.frame_index(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes body bytes 1..44 (pads zeroed); the type byte is the head's.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        p.set_dst_endpoint(self.dst_ep);
        p.set_src_endpoint(self.src_ep);
        p.set_src_generation(0);
        p.set_session(self.session);
        p.set_total_length(self.total_length);
        p.set_pulled_rdma_id(u32::from(self.pulled_rdma_id));
        p.set_pulled_rdma_seqnum(self.pulled_rdma_seqnum);
        p.clear_pad1();
        p.set_pulled_rdma_offset(self.pulled_rdma_offset);
        p.set_src_pull_handle(self.src_pull_handle);
        p.set_src_magic(self.src_magic);
        p.set_first_frame_offset(self.first_frame_offset);
        p.set_block_length(self.block_length);
        p.set_frame_index(self.frame_index);
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    use crate::wire::{host_mac, pull_magic, FrameRepr, OmxBody};

    /// A marked PULL for the second block (frames 32..64) of a 1 MiB message
    /// at MTU 1500: 32 replies of 1468 bytes.
    pub static PULL: [u8; 60] = [
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x00, // dst mac = host 0 (the sender)
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x01, // src mac = host 1 (the puller)
        0x86, 0xdf, // ethertype
        0x00, 0x00, // sender peer index 0
        0xa9, // PULL (0x29) | marker
        0x01, // dst endpoint
        0x00, // src endpoint
        0x00, // src generation
        0x00, 0x00, 0x00, 0x07, // session
        0x00, 0x10, 0x00, 0x00, // total length 1 MiB
        0x00, 0x00, 0x00, 0x05, // pulled rdma id 5
        0x00, // pulled rdma seqnum (not in OmxBody: 0)
        0x00, 0x00, 0x00, // pad1
        0x00, 0x00, 0x00, 0x00, // pulled rdma offset (not in OmxBody: 0)
        0x00, 0x00, 0x01, 0x02, // src pull handle 0x102
        0x21, 0x07, 0x19, 0x80, // src magic = pull_magic(0)
        0x00, 0x00, 0x00, 0x00, // first frame offset
        0x00, 0x00, 0xb7, 0x80, // block length 46976 = 32 * 1468
        0x00, 0x00, 0x00, 0x20, // frame index 32
    ];

    pub fn pull() -> FrameRepr {
        FrameRepr {
            dst_mac: host_mac(0),
            src_mac: host_mac(1),
            src_peer: 0,
            marked: true,
            body: OmxBody::Pull {
                dst_ep: 1,
                src_ep: 0,
                session: 7,
                total_length: 1 << 20,
                block_length: 46976,
                first_frame_offset: 0,
                frame_index: 32,
                pulled_rdma_id: 5,
                src_pull_handle: 0x102,
                src_magic: pull_magic(0),
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
        &fixture::PULL[16..]
    }

    fn repr() -> Repr {
        Repr {
            dst_ep: 1,
            src_ep: 0,
            session: 7,
            total_length: 1 << 20,
            pulled_rdma_id: 5,
            pulled_rdma_seqnum: 0,
            pulled_rdma_offset: 0,
            src_pull_handle: 0x102,
            src_magic: 0x2107_1980,
            first_frame_offset: 0,
            block_length: 46976,
            frame_index: 32,
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
            assert_eq!(Packet::new_checked(&body()[..n]).unwrap_err(), Error::Truncated { need: 60, have: 16 + n });
        }
    }

    #[test]
    fn wide_rdma_id_is_malformed() {
        let mut buf = [0u8; HEADER_LEN];
        buf.copy_from_slice(body());
        buf[14] = 0x01; // pulled_rdma_id = 0x105
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap_err(),
            Error::Malformed { offset: 28, what: "pull rdma window id exceeds 255" }
        );
    }

    #[test]
    fn round_trip_many() {
        let mut g = Gen::new(4);
        for _ in 0..2000 {
            let r = Repr {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                total_length: g.u32(),
                pulled_rdma_id: g.u8(),
                pulled_rdma_seqnum: g.u8(),
                pulled_rdma_offset: g.u32(),
                src_pull_handle: g.u32(),
                src_magic: g.u32(),
                first_frame_offset: g.u32(),
                block_length: g.u32(),
                frame_index: g.u32(),
            };
            let mut buf = [0u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            assert_eq!(Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap(), r);
        }
    }
}
