//! Whole frames: [`FrameRepr`] (head + one typed body) and [`OmxBody`].
//!
//! This file owns the assembly of a frame from the head (`head.rs`) and the
//! per-type bodies (one file each), the cross-field checks that need both
//! (TINY/SMALL size limits, announced payload present), and the simulator's
//! view of a frame: kind, steering endpoint, header and frame lengths. It
//! does not own the byte layout of any header (the per-type files do) nor
//! payload contents (the caller's).

use super::head::{self, PacketKind, BODY_OFFSET};
use super::{ack, medium, msg, notify, pull, pull_reply, rndv};
use super::{endpoint_from_pull_magic, Error, Result, MEDIUM_MAX_FRAGS, MIN_FRAME_LEN, SMALL_MAX, TINY_MAX};

/// The decoded Open-MX part of a frame, one variant per simulated type.
///
/// Fields carry the names of `common/omx_wire.h` where they differ from the
/// short names here: `seq` = `lib_seqnum`, `piggy_ack` = `lib_piggyack`,
/// `rdma_*` = `pulled_rdma_*`. Open-MX fields nicsim does not use are emitted
/// as zero (PULL `pulled_rdma_seqnum`/`pulled_rdma_offset`, ACK `acknum`);
/// the per-type `Repr`s expose them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OmxBody {
    /// `length` ≤ [`TINY_MAX`] payload bytes follow the header.
    Tiny { dst_ep: u8, src_ep: u8, session: u32, seq: u16, piggy_ack: u16, match_info: u64, length: u8 },
    /// `length` ≤ [`SMALL_MAX`] payload bytes follow the header.
    Small { dst_ep: u8, src_ep: u8, session: u32, seq: u16, piggy_ack: u16, match_info: u64, length: u16 },
    /// Fragment `frag_seq` (< [`MEDIUM_MAX_FRAGS`]) of a `msg_length`-byte
    /// message; `frag_length` payload bytes follow.
    Medium {
        dst_ep: u8,
        src_ep: u8,
        session: u32,
        seq: u16,
        piggy_ack: u16,
        match_info: u64,
        msg_length: u32,
        frag_seq: u8,
        frag_pipeline: u8,
        frag_length: u16,
    },
    /// Rendezvous for a large message in the sender's RDMA window `rdma_id`.
    Rndv {
        dst_ep: u8,
        src_ep: u8,
        session: u32,
        seq: u16,
        piggy_ack: u16,
        match_info: u64,
        msg_length: u32,
        rdma_id: u8,
        rdma_seqnum: u8,
        rdma_offset: u16,
    },
    /// Request for one block of replies, starting at reply `frame_index`.
    Pull {
        dst_ep: u8,
        src_ep: u8,
        session: u32,
        total_length: u32,
        block_length: u32,
        first_frame_offset: u32,
        frame_index: u32,
        pulled_rdma_id: u8,
        src_pull_handle: u32,
        src_magic: u32,
    },
    /// One reply of a block; `frame_length` payload bytes follow. The
    /// destination endpoint is in `dst_magic` (see [`super::pull_magic`]).
    PullReply { frame_seqnum: u8, frame_length: u16, msg_offset: u32, dst_pull_handle: u32, dst_magic: u32 },
    /// Pull complete: the sender may release its RDMA window.
    Notify {
        dst_ep: u8,
        src_ep: u8,
        session: u32,
        seq: u16,
        piggy_ack: u16,
        total_length: u32,
        puller_rdma_id: u8,
        puller_rdma_seqnum: u8,
    },
    /// Explicit library ack (TRUC liback). `lib_piggyack` is the cumulative
    /// ack (`liback.lib_seqnum` on the wire), `lib_seqnum` the acker's own
    /// send sequence number (`liback.send_seq`); see `ack.rs`.
    Ack { dst_ep: u8, src_ep: u8, session: u32, lib_seqnum: u16, lib_piggyack: u16 },
}

impl OmxBody {
    pub fn kind(&self) -> PacketKind {
        match self {
            OmxBody::Tiny { .. } => PacketKind::Tiny,
            OmxBody::Small { .. } => PacketKind::Small,
            OmxBody::Medium { .. } => PacketKind::Medium,
            OmxBody::Rndv { .. } => PacketKind::Rndv,
            OmxBody::Pull { .. } => PacketKind::Pull,
            OmxBody::PullReply { .. } => PacketKind::PullReply,
            OmxBody::Notify { .. } => PacketKind::Notify,
            OmxBody::Ack { .. } => PacketKind::Ack,
        }
    }

    /// Sending endpoint, where the header carries one (all but PULL_REPLY).
    pub fn src_endpoint(&self) -> Option<u8> {
        match *self {
            OmxBody::Tiny { src_ep, .. }
            | OmxBody::Small { src_ep, .. }
            | OmxBody::Medium { src_ep, .. }
            | OmxBody::Rndv { src_ep, .. }
            | OmxBody::Pull { src_ep, .. }
            | OmxBody::Notify { src_ep, .. }
            | OmxBody::Ack { src_ep, .. } => Some(src_ep),
            OmxBody::PullReply { .. } => None,
        }
    }

    /// Destination endpoint for steering; PULL_REPLY decodes it from
    /// `dst_magic` (low byte, frame byte 32).
    pub fn dst_endpoint(&self) -> u8 {
        match *self {
            OmxBody::Tiny { dst_ep, .. }
            | OmxBody::Small { dst_ep, .. }
            | OmxBody::Medium { dst_ep, .. }
            | OmxBody::Rndv { dst_ep, .. }
            | OmxBody::Pull { dst_ep, .. }
            | OmxBody::Notify { dst_ep, .. }
            | OmxBody::Ack { dst_ep, .. } => dst_ep,
            OmxBody::PullReply { dst_magic, .. } => endpoint_from_pull_magic(dst_magic),
        }
    }

    /// Payload bytes carried after the header (tiny/small `length`, medium
    /// `frag_length`, pull reply `frame_length`; 0 otherwise).
    pub fn payload_len(&self) -> usize {
        match *self {
            OmxBody::Tiny { length, .. } => usize::from(length),
            OmxBody::Small { length, .. } => usize::from(length),
            OmxBody::Medium { frag_length, .. } => usize::from(frag_length),
            OmxBody::PullReply { frame_length, .. } => usize::from(frame_length),
            OmxBody::Rndv { .. } | OmxBody::Pull { .. } | OmxBody::Notify { .. } => 0,
            OmxBody::Ack { .. } => 0,
        }
    }

    /// Length of this type's body header (`sizeof(struct omx_pkt_*)`).
    pub fn body_len(&self) -> usize {
        match self.kind() {
            PacketKind::Tiny | PacketKind::Small => msg::HEADER_LEN,
            PacketKind::Medium => medium::HEADER_LEN,
            PacketKind::Rndv => rndv::HEADER_LEN,
            PacketKind::Pull => pull::HEADER_LEN,
            PacketKind::PullReply => pull_reply::HEADER_LEN,
            PacketKind::Notify => notify::HEADER_LEN,
            PacketKind::Ack => ack::HEADER_LEN,
        }
    }
}

/// A whole Open-MX frame: Ethernet addresses, sender peer index, marker and
/// typed body. Payload bytes are not part of the representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRepr {
    pub dst_mac: [u8; 6],
    pub src_mac: [u8; 6],
    /// Sender's peer index (`omx_pkt_head.dst_src_peer_index`).
    pub src_peer: u16,
    /// Latency-sensitive marker ([OMX-COAL]); bit 0x80 of the type byte.
    pub marked: bool,
    pub body: OmxBody,
}

impl FrameRepr {
    pub fn kind(&self) -> PacketKind {
        self.body.kind()
    }

    /// Ethernet 14 + peer index 2 + this type's Open-MX body header.
    pub fn header_len(&self) -> usize {
        BODY_OFFSET + self.body.body_len()
    }

    /// Same as [`header_len`](Self::header_len) (smoltcp's name).
    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Bytes on the wire without FCS: header + payload, padded to the
    /// Ethernet minimum of 60.
    pub fn frame_len(&self) -> usize {
        (self.header_len() + self.body.payload_len()).max(MIN_FRAME_LEN)
    }

    /// Writes the header bytes (`buf[..header_len()]`); payload and padding
    /// bytes are the caller's.
    ///
    /// # Panics
    /// If `buf.len() < self.header_len()`.
    pub fn emit(&self, buf: &mut [u8]) {
        assert!(
            buf.len() >= self.header_len(),
            "FrameRepr::emit: buffer of {} bytes, {} header needs {}",
            buf.len(),
            self.kind(),
            self.header_len()
        );
        head::Repr {
            dst_mac: self.dst_mac,
            src_mac: self.src_mac,
            src_peer: self.src_peer,
            kind: self.kind(),
            marked: self.marked,
        }
        .emit(&mut head::Packet::new_unchecked(&mut *buf));
        let b = &mut buf[BODY_OFFSET..];
        match self.body {
            OmxBody::Tiny { dst_ep, src_ep, session, seq, piggy_ack, match_info, length } => {
                msg::Repr { dst_ep, src_ep, session, seq, piggy_ack, match_info, length: u16::from(length) }
                    .emit(&mut msg::Packet::new_unchecked(b))
            }
            OmxBody::Small { dst_ep, src_ep, session, seq, piggy_ack, match_info, length } => {
                msg::Repr { dst_ep, src_ep, session, seq, piggy_ack, match_info, length }
                    .emit(&mut msg::Packet::new_unchecked(b))
            }
            OmxBody::Medium {
                dst_ep,
                src_ep,
                session,
                seq,
                piggy_ack,
                match_info,
                msg_length,
                frag_seq,
                frag_pipeline,
                frag_length,
            } => medium::Repr {
                dst_ep,
                src_ep,
                session,
                seq,
                piggy_ack,
                match_info,
                msg_length,
                frag_seq,
                frag_pipeline,
                frag_length,
            }
            .emit(&mut medium::Packet::new_unchecked(b)),
            OmxBody::Rndv {
                dst_ep,
                src_ep,
                session,
                seq,
                piggy_ack,
                match_info,
                msg_length,
                rdma_id,
                rdma_seqnum,
                rdma_offset,
            } => rndv::Repr {
                dst_ep,
                src_ep,
                session,
                seq,
                piggy_ack,
                match_info,
                msg_length,
                rdma_id,
                rdma_seqnum,
                rdma_offset,
            }
            .emit(&mut rndv::Packet::new_unchecked(b)),
            OmxBody::Pull {
                dst_ep,
                src_ep,
                session,
                total_length,
                block_length,
                first_frame_offset,
                frame_index,
                pulled_rdma_id,
                src_pull_handle,
                src_magic,
            } => pull::Repr {
                dst_ep,
                src_ep,
                session,
                total_length,
                pulled_rdma_id,
                pulled_rdma_seqnum: 0,
                pulled_rdma_offset: 0,
                src_pull_handle,
                src_magic,
                first_frame_offset,
                block_length,
                frame_index,
            }
            .emit(&mut pull::Packet::new_unchecked(b)),
            OmxBody::PullReply { frame_seqnum, frame_length, msg_offset, dst_pull_handle, dst_magic } => {
                pull_reply::Repr { frame_seqnum, frame_length, msg_offset, dst_pull_handle, dst_magic }
                    .emit(&mut pull_reply::Packet::new_unchecked(b))
            }
            OmxBody::Notify {
                dst_ep,
                src_ep,
                session,
                seq,
                piggy_ack,
                total_length,
                puller_rdma_id,
                puller_rdma_seqnum,
            } => notify::Repr {
                dst_ep,
                src_ep,
                session,
                seq,
                piggy_ack,
                total_length,
                puller_rdma_id,
                puller_rdma_seqnum,
            }
            .emit(&mut notify::Packet::new_unchecked(b)),
            OmxBody::Ack { dst_ep, src_ep, session, lib_seqnum, lib_piggyack } => ack::Repr {
                dst_ep,
                src_ep,
                session,
                ack_upto: lib_piggyack,
                send_seq: lib_seqnum,
                acknum: 0,
                resent: false,
            }
            .emit(&mut ack::Packet::new_unchecked(b)),
        }
    }

    /// A whole frame of [`frame_len`](Self::frame_len) bytes: header, zeroed
    /// payload, zero padding. For traces and tests.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.frame_len()];
        self.emit(&mut v);
        v
    }

    /// Parses a frame: ethertype, type byte, header length, per-type limits,
    /// and that the announced payload is present (Ethernet padding after it
    /// is ignored). Errors carry frame byte offsets.
    pub fn parse(bytes: &[u8]) -> Result<FrameRepr> {
        let frame = Self::parse_header(bytes)?;
        let need = frame.header_len() + frame.body.payload_len();
        if bytes.len() < need {
            return Err(Error::Truncated { need, have: bytes.len() });
        }
        Ok(frame)
    }

    /// Parses the headers only (everything `parse` checks except that the
    /// announced payload is present). The simulator keeps header bytes only:
    /// payload contents are never interpreted, so they are not stored.
    pub fn parse_header(bytes: &[u8]) -> Result<FrameRepr> {
        let h = head::Repr::parse(&head::Packet::new_checked(bytes)?)?;
        let b = &bytes[BODY_OFFSET..];
        let body = match h.kind {
            PacketKind::Tiny | PacketKind::Small => {
                let m = msg::Repr::parse(&msg::Packet::new_checked(b)?)?;
                let (max, what) = if h.kind == PacketKind::Tiny {
                    (TINY_MAX, "tiny length exceeds 32 bytes")
                } else {
                    (SMALL_MAX, "small length exceeds 128 bytes")
                };
                if usize::from(m.length) > max {
                    return Err(Error::Malformed { offset: BODY_OFFSET + msg::field::LENGTH.start, what });
                }
                if h.kind == PacketKind::Tiny {
                    OmxBody::Tiny {
                        dst_ep: m.dst_ep,
                        src_ep: m.src_ep,
                        session: m.session,
                        seq: m.seq,
                        piggy_ack: m.piggy_ack,
                        match_info: m.match_info,
                        length: m.length as u8,
                    }
                } else {
                    OmxBody::Small {
                        dst_ep: m.dst_ep,
                        src_ep: m.src_ep,
                        session: m.session,
                        seq: m.seq,
                        piggy_ack: m.piggy_ack,
                        match_info: m.match_info,
                        length: m.length,
                    }
                }
            }
            PacketKind::Medium => {
                let r = medium::Repr::parse(&medium::Packet::new_checked(b)?)?;
                if usize::from(r.frag_seq) >= MEDIUM_MAX_FRAGS {
                    return Err(Error::Malformed {
                        offset: BODY_OFFSET + medium::field::FRAG_SEQNUM,
                        what: "medium fragment number not below 32",
                    });
                }
                OmxBody::Medium {
                    dst_ep: r.dst_ep,
                    src_ep: r.src_ep,
                    session: r.session,
                    seq: r.seq,
                    piggy_ack: r.piggy_ack,
                    match_info: r.match_info,
                    msg_length: r.msg_length,
                    frag_seq: r.frag_seq,
                    frag_pipeline: r.frag_pipeline,
                    frag_length: r.frag_length,
                }
            }
            PacketKind::Rndv => {
                let r = rndv::Repr::parse(&rndv::Packet::new_checked(b)?)?;
                OmxBody::Rndv {
                    dst_ep: r.dst_ep,
                    src_ep: r.src_ep,
                    session: r.session,
                    seq: r.seq,
                    piggy_ack: r.piggy_ack,
                    match_info: r.match_info,
                    msg_length: r.msg_length,
                    rdma_id: r.rdma_id,
                    rdma_seqnum: r.rdma_seqnum,
                    rdma_offset: r.rdma_offset,
                }
            }
            PacketKind::Pull => {
                let r = pull::Repr::parse(&pull::Packet::new_checked(b)?)?;
                OmxBody::Pull {
                    dst_ep: r.dst_ep,
                    src_ep: r.src_ep,
                    session: r.session,
                    total_length: r.total_length,
                    block_length: r.block_length,
                    first_frame_offset: r.first_frame_offset,
                    frame_index: r.frame_index,
                    pulled_rdma_id: r.pulled_rdma_id,
                    src_pull_handle: r.src_pull_handle,
                    src_magic: r.src_magic,
                }
            }
            PacketKind::PullReply => {
                let r = pull_reply::Repr::parse(&pull_reply::Packet::new_checked(b)?)?;
                OmxBody::PullReply {
                    frame_seqnum: r.frame_seqnum,
                    frame_length: r.frame_length,
                    msg_offset: r.msg_offset,
                    dst_pull_handle: r.dst_pull_handle,
                    dst_magic: r.dst_magic,
                }
            }
            PacketKind::Notify => {
                let r = notify::Repr::parse(&notify::Packet::new_checked(b)?)?;
                OmxBody::Notify {
                    dst_ep: r.dst_ep,
                    src_ep: r.src_ep,
                    session: r.session,
                    seq: r.seq,
                    piggy_ack: r.piggy_ack,
                    total_length: r.total_length,
                    puller_rdma_id: r.puller_rdma_id,
                    puller_rdma_seqnum: r.puller_rdma_seqnum,
                }
            }
            PacketKind::Ack => {
                let r = ack::Repr::parse(&ack::Packet::new_checked(b)?)?;
                OmxBody::Ack {
                    dst_ep: r.dst_ep,
                    src_ep: r.src_ep,
                    session: r.session,
                    lib_seqnum: r.send_seq,
                    lib_piggyack: r.ack_upto,
                }
            }
        };
        Ok(FrameRepr { dst_mac: h.dst_mac, src_mac: h.src_mac, src_peer: h.src_peer, marked: h.marked, body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testutil::Gen;
    use crate::wire::{host_mac, pull_magic};

    /// (name, header fixture bytes, expected repr) for every packet type.
    fn fixtures() -> Vec<(&'static str, &'static [u8], FrameRepr)> {
        vec![
            ("tiny", &msg::fixture::TINY[..], msg::fixture::tiny()),
            ("small", &msg::fixture::SMALL[..], msg::fixture::small()),
            ("medium", &medium::fixture::MEDIUM[..], medium::fixture::medium()),
            ("rndv", &rndv::fixture::RNDV[..], rndv::fixture::rndv()),
            ("pull", &pull::fixture::PULL[..], pull::fixture::pull()),
            ("pull_reply", &pull_reply::fixture::PULL_REPLY[..], pull_reply::fixture::pull_reply()),
            ("notify", &notify::fixture::NOTIFY[..], notify::fixture::notify()),
            ("ack", &ack::fixture::ACK[..], ack::fixture::ack()),
        ]
    }

    /// The fixture completed into a whole frame: zero payload and padding
    /// where the fixture stops.
    fn whole(fixture: &[u8], r: &FrameRepr) -> Vec<u8> {
        let mut v = fixture.to_vec();
        v.resize(r.frame_len(), 0);
        v
    }

    #[test]
    fn test_parse() {
        for (name, fx, want) in fixtures() {
            let frame = whole(fx, &want);
            assert_eq!(FrameRepr::parse(&frame), Ok(want), "{name}");
            assert_eq!(want.kind().to_string(), name);
        }
    }

    #[test]
    fn test_emit() {
        for (name, fx, r) in fixtures() {
            let mut buf = vec![0xeeu8; r.header_len()];
            r.emit(&mut buf);
            assert_eq!(&buf[..], &fx[..r.header_len()], "{name}");
        }
        // The tiny fixture includes its payload: emit leaves it to the caller.
        let r = msg::fixture::tiny();
        let mut buf = [0u8; 45];
        buf[40..].copy_from_slice(b"hello");
        r.emit(&mut buf);
        assert_eq!(buf, msg::fixture::TINY);
    }

    #[test]
    fn test_check_len() {
        // Every prefix of every whole fixture frame: an error naming the
        // missing length until header + payload are present, then success.
        for (name, fx, r) in fixtures() {
            let frame = whole(fx, &r);
            let need = r.header_len() + r.body.payload_len();
            for n in 0..=frame.len() {
                let got = FrameRepr::parse(&frame[..n]);
                if n < need {
                    match got {
                        Err(Error::Truncated { need: k, have }) => {
                            assert_eq!(have, n, "{name} prefix {n}");
                            assert!(k > n && k <= need, "{name} prefix {n}: need {k}");
                        }
                        other => panic!("{name} prefix {n}: {other:?}"),
                    }
                } else {
                    assert_eq!(got, Ok(r), "{name} prefix {n}");
                }
            }
        }
    }

    #[test]
    fn lengths_per_type() {
        let want = [
            ("tiny", 40, 60),
            ("small", 40, 168),
            ("medium", 48, 48 + 824),
            ("rndv", 48, 60),
            ("pull", 60, 60),
            ("pull_reply", 32, 32 + 1468),
            ("notify", 40, 60),
            ("ack", 44, 60),
        ];
        for ((name, _, r), (wname, hdr, frame)) in fixtures().into_iter().zip(want) {
            assert_eq!(name, wname);
            assert_eq!(r.header_len(), hdr, "{name}");
            assert_eq!(r.frame_len(), frame, "{name}");
            assert_eq!(r.to_bytes().len(), frame, "{name}");
        }
    }

    #[test]
    fn steering_endpoint() {
        assert_eq!(msg::fixture::tiny().body.dst_endpoint(), 3);
        assert_eq!(pull::fixture::pull().body.dst_endpoint(), 1);
        assert_eq!(pull_reply::fixture::pull_reply().body.dst_endpoint(), 1);
        for (name, fx, r) in fixtures() {
            if r.kind() != PacketKind::PullReply {
                assert_eq!(fx[17], r.body.dst_endpoint(), "{name}: byte 18");
            } else {
                assert_eq!(fx[31] ^ 0x80, r.body.dst_endpoint(), "{name}: byte 32");
            }
        }
    }

    #[test]
    fn limits_are_checked_with_offsets() {
        let mut f = whole(&msg::fixture::TINY, &msg::fixture::tiny());
        f[21] = 33;
        f.resize(100, 0);
        assert_eq!(FrameRepr::parse(&f), Err(Error::Malformed { offset: 20, what: "tiny length exceeds 32 bytes" }));
        let mut f = whole(&msg::fixture::SMALL, &msg::fixture::small());
        f[21] = 129;
        f.resize(200, 0);
        assert_eq!(FrameRepr::parse(&f).unwrap_err().offset(), 20);
        let mut f = whole(&medium::fixture::MEDIUM, &medium::fixture::medium());
        f[42] = 32;
        assert_eq!(FrameRepr::parse(&f).unwrap_err().offset(), 42);
        let mut f = whole(&pull::fixture::PULL, &pull::fixture::pull());
        f[12] = 0x08;
        f[13] = 0x00;
        assert_eq!(FrameRepr::parse(&f), Err(Error::NotOpenMx { ethertype: 0x0800 }));
        f[12] = 0x86;
        f[13] = 0xdf;
        f[16] = 0x24 | 0x80;
        assert_eq!(FrameRepr::parse(&f), Err(Error::UnsupportedType { ptype: 0x24 }));
    }

    fn random_frame(g: &mut Gen) -> FrameRepr {
        let body = match g.upto(7) {
            0 => OmxBody::Tiny {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                seq: g.u16(),
                piggy_ack: g.u16(),
                match_info: g.u64(),
                length: g.edgy(TINY_MAX as u64) as u8,
            },
            1 => OmxBody::Small {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                seq: g.u16(),
                piggy_ack: g.u16(),
                match_info: g.u64(),
                length: g.edgy(SMALL_MAX as u64) as u16,
            },
            2 => {
                let msg_length = g.edgy(1 << 20) as u32;
                OmxBody::Medium {
                    dst_ep: g.u8(),
                    src_ep: g.u8(),
                    session: g.u32(),
                    seq: g.u16(),
                    piggy_ack: g.u16(),
                    match_info: g.u64(),
                    msg_length,
                    frag_seq: g.edgy(MEDIUM_MAX_FRAGS as u64 - 1) as u8,
                    frag_pipeline: g.u8(),
                    frag_length: g.edgy(u64::from(msg_length.min(8192))) as u16,
                }
            }
            3 => OmxBody::Rndv {
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
            },
            4 => OmxBody::Pull {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                total_length: g.u32(),
                block_length: g.u32(),
                first_frame_offset: g.u32(),
                frame_index: g.u32(),
                pulled_rdma_id: g.u8(),
                src_pull_handle: g.u32(),
                src_magic: pull_magic(g.u8()),
            },
            5 => OmxBody::PullReply {
                frame_seqnum: g.u8(),
                frame_length: g.edgy(8968) as u16,
                msg_offset: g.u32(),
                dst_pull_handle: g.u32(),
                dst_magic: g.u32(),
            },
            6 => OmxBody::Notify {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                seq: g.u16(),
                piggy_ack: g.u16(),
                total_length: g.u32(),
                puller_rdma_id: g.u8(),
                puller_rdma_seqnum: g.u8(),
            },
            _ => OmxBody::Ack {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                lib_seqnum: g.u16(),
                lib_piggyack: g.u16(),
            },
        };
        FrameRepr {
            dst_mac: host_mac(g.u16()),
            src_mac: if g.bool() {
                host_mac(g.u16())
            } else {
                let b = g.bytes(6);
                [b[0], b[1], b[2], b[3], b[4], b[5]]
            },
            src_peer: g.u16(),
            marked: g.bool(),
            body,
        }
    }

    #[test]
    fn round_trip_many() {
        let mut g = Gen::new(0x0111);
        for _ in 0..20_000 {
            let r = random_frame(&mut g);
            let bytes = r.to_bytes();
            assert_eq!(bytes.len(), r.frame_len());
            assert!(bytes.len() >= MIN_FRAME_LEN);
            assert_eq!(FrameRepr::parse(&bytes), Ok(r));
            // The steering bytes a NIC reads match the repr.
            assert_eq!(bytes[16] & 0x7f, r.kind().ptype());
            assert_eq!(bytes[16] & 0x80 != 0, r.marked);
            if r.kind() == PacketKind::PullReply {
                assert_eq!(bytes[31] ^ 0x80, r.body.dst_endpoint());
            } else {
                assert_eq!(bytes[17], r.body.dst_endpoint());
            }
        }
    }

    #[test]
    fn garbage_never_panics() {
        let mut g = Gen::new(0xbad);
        let mut ok = 0usize;
        for i in 0..200_000 {
            let len = g.upto(160) as usize;
            let mut b = g.bytes(len);
            // Steer most inputs past the early checks so the bodies get fuzzed.
            if i % 4 != 0 && len > 16 {
                b[12] = 0x86;
                b[13] = 0xdf;
                let kinds = PacketKind::ALL;
                b[16] = kinds[g.upto(7) as usize].ptype() | (g.u8() & 0x80);
                if i % 3 == 0 && len > 43 {
                    b[28] = 0x55; // liback type, so acks parse sometimes
                    b[20] = 16;
                    b[21] &= 0x1f; // small lengths, so tiny/small parse sometimes
                    b[42] &= 0x1f;
                }
            }
            match FrameRepr::parse(&b) {
                Ok(r) => {
                    ok += 1;
                    assert!(r.header_len() + r.body.payload_len() <= b.len());
                }
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
        assert!(ok > 100, "generator should reach successful parses, got {ok}");
    }

    #[test]
    fn mutated_fixtures_never_panic() {
        let mut g = Gen::new(0xf1f0);
        for (_, fx, r) in fixtures() {
            let base = whole(fx, &r);
            for _ in 0..5_000 {
                let mut b = base.clone();
                for _ in 0..=g.upto(3) {
                    let i = g.upto(b.len() as u64 - 1) as usize;
                    b[i] = g.u8();
                }
                let cut = g.upto(b.len() as u64) as usize;
                let _ = FrameRepr::parse(&b[..cut]);
                let _ = FrameRepr::parse(&b);
            }
        }
    }

    #[test]
    #[should_panic(expected = "pull header needs 60")]
    fn emit_into_short_buffer_panics() {
        pull::fixture::pull().emit(&mut [0u8; 59]);
    }
}
