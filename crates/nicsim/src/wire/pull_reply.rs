//! PULL_REPLY header: `struct omx_pkt_pull_reply` (16 bytes at frame offset
//! 16), followed by `frame_length` payload bytes.
//!
//! This file owns the bytes of one pull reply. Unlike every other type it has
//! no destination-endpoint byte: the puller's endpoint travels in `dst_magic`
//! (frame bytes 28..32, endpoint in the low byte at frame offset 31, "byte
//! 32"), which steering must decode with
//! [`crate::wire::endpoint_from_pull_magic`]. It does not own which reply of a
//! block is the last one (`marker.rs`, `crate::proto`).
//!
//! Source: Open-MX `common/omx_wire.h`, `struct omx_pkt_pull_reply { ptype;
//! uint8_t frame_seqnum; uint16_t frame_length; uint32_t msg_offset; uint32_t
//! dst_pull_handle; uint32_t dst_magic; }`.

use super::{body_truncated, get_u16, get_u32, set_u16, set_u32, Result};

/// Body offsets of `struct omx_pkt_pull_reply`.
pub mod field {
    use crate::wire::Field;

    pub const PTYPE: usize = 0;
    /// Sender's pull index + page number in this frame, mod 256.
    pub const FRAME_SEQNUM: usize = 1;
    pub const FRAME_LENGTH: Field = 2..4;
    pub const MSG_OFFSET: Field = 4..8;
    pub const DST_PULL_HANDLE: Field = 8..12;
    /// Puller's endpoint magic; frame offset 28..32.
    pub const DST_MAGIC: Field = 12..16;
}

/// `sizeof(struct omx_pkt_pull_reply)`.
pub const HEADER_LEN: usize = 16;

/// Frame offset of the magic's low byte, which carries `endpoint ^ 0x80`
/// ([OMX-MQ]'s "byte 32" in 1-based numbering).
pub const MAGIC_ENDPOINT_FRAME_OFFSET: usize = 31;

/// A view of a PULL_REPLY body (starts at the type byte).
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

    pub fn frame_seqnum(&self) -> u8 {
        self.buffer.as_ref()[field::FRAME_SEQNUM]
    }

    pub fn frame_length(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::FRAME_LENGTH)
    }

    pub fn msg_offset(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::MSG_OFFSET)
    }

    pub fn dst_pull_handle(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::DST_PULL_HANDLE)
    }

    pub fn dst_magic(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::DST_MAGIC)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_frame_seqnum(&mut self, v: u8) {
        self.buffer.as_mut()[field::FRAME_SEQNUM] = v;
    }

    pub fn set_frame_length(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::FRAME_LENGTH, v);
    }

    pub fn set_msg_offset(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::MSG_OFFSET, v);
    }

    pub fn set_dst_pull_handle(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::DST_PULL_HANDLE, v);
    }

    pub fn set_dst_magic(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::DST_MAGIC, v);
    }
}

/// High-level PULL_REPLY header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub frame_seqnum: u8,
    pub frame_length: u16,
    pub msg_offset: u32,
    pub dst_pull_handle: u32,
    pub dst_magic: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            frame_seqnum: p.frame_seqnum(),
            frame_length: p.frame_length(),
            msg_offset: p.msg_offset(),
            dst_pull_handle: p.dst_pull_handle(),
            dst_magic: p.dst_magic(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes body bytes 1..16; the type byte is the head's.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        p.set_frame_seqnum(self.frame_seqnum);
        p.set_frame_length(self.frame_length);
        p.set_msg_offset(self.msg_offset);
        p.set_dst_pull_handle(self.dst_pull_handle);
        p.set_dst_magic(self.dst_magic);
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    use crate::wire::{host_mac, pull_magic, FrameRepr, OmxBody};

    /// The last (32nd) reply of the second block, to endpoint 1, marked;
    /// 1468 payload bytes at MTU 1500 (omitted here).
    pub static PULL_REPLY: [u8; 32] = [
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x01, // dst mac = host 1 (the puller)
        0x02, 0x4f, 0x4d, 0x58, 0x00, 0x00, // src mac = host 0
        0x86, 0xdf, // ethertype
        0x00, 0x01, // sender peer index 1
        0xaa, // PULL_REPLY (0x2a) | marker
        0x3f, // frame seqnum 63
        0x05, 0xbc, // frame length 1468
        0x00, 0x01, 0x69, 0x44, // msg offset 63 * 1468 = 92484
        0x00, 0x00, 0x01, 0x02, // dst pull handle
        0x21, 0x07, 0x19, 0x81, // dst magic = pull_magic(1); byte 32 = 0x81
    ];

    pub fn pull_reply() -> FrameRepr {
        FrameRepr {
            dst_mac: host_mac(1),
            src_mac: host_mac(0),
            src_peer: 1,
            marked: true,
            body: OmxBody::PullReply {
                frame_seqnum: 63,
                frame_length: 1468,
                msg_offset: 92484,
                dst_pull_handle: 0x102,
                dst_magic: pull_magic(1),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testutil::Gen;
    use crate::wire::{endpoint_from_pull_magic, Error};

    fn body() -> &'static [u8] {
        &fixture::PULL_REPLY[16..]
    }

    fn repr() -> Repr {
        Repr { frame_seqnum: 63, frame_length: 1468, msg_offset: 92484, dst_pull_handle: 0x102, dst_magic: 0x2107_1981 }
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(body()).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), repr());
        assert_eq!(endpoint_from_pull_magic(p.dst_magic()), 1);
        assert_eq!(fixture::PULL_REPLY[MAGIC_ENDPOINT_FRAME_OFFSET] ^ 0x80, 1);
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
            assert_eq!(Packet::new_checked(&body()[..n]).unwrap_err(), Error::Truncated { need: 32, have: 16 + n });
        }
    }

    #[test]
    fn round_trip_many() {
        let mut g = Gen::new(5);
        for _ in 0..2000 {
            let r = Repr {
                frame_seqnum: g.u8(),
                frame_length: g.u16(),
                msg_offset: g.u32(),
                dst_pull_handle: g.u32(),
                dst_magic: g.u32(),
            };
            let mut buf = [0u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            assert_eq!(Repr::parse(&Packet::new_unchecked(&buf[..])).unwrap(), r);
        }
    }
}
