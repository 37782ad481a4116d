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
mod tests;
