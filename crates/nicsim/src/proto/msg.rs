//! What a message frame says to the library ([`Msg`]), and the one mapping
//! between it and the wire's [`OmxBody`]: [`Msg::parse`] on receive,
//! [`Msg::emit`] on send.
//!
//! This file owns that mapping only. It does not own the byte layout of the
//! headers (`crate::wire`) nor what the library does with a message
//! ([`super::Endpoint`], `crate::sim`). PULL and PULL_REPLY frames are the
//! drivers' business and have no [`Msg`] (see `super::pull`).

use crate::nic::multicast::root_of;
use crate::wire::OmxBody;

/// What a library event is: one of the six message kinds on the wire, or one
/// of the two events the library gets without a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Tiny,
    Small,
    MediumFrag,
    Rndv,
    Notify,
    Ack,
    /// The receiver's driver finished pulling a large message.
    PullDone,
    /// A whole message through the intra-host shared-memory path.
    Shm,
    /// A frame with the multicast tag (`crate::nic::multicast`) from the
    /// root, forwarded by the NICs, outside the sender's sequence numbers
    /// and acks (no `seq`, no `piggy`); `rdma` holds the root's rank. A
    /// message of one frame (at most `crate::wire::SMALL_MAX` bytes) is a
    /// TINY or SMALL frame; a larger one (up to the rendezvous threshold)
    /// is MEDIUM fragments, `frag_seq` and `frag_len` as a medium
    /// message's, which the receiving library reassembles.
    Mcast,
}

/// A message header as the library reads and writes it: the fields of a
/// TINY / SMALL / MEDIUM / RNDV / NOTIFY / ACK header the protocol and the
/// matching use (endpoints and the session are the frame's addressing, and
/// stay with the frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    pub kind: Kind,
    /// The sender's sequence number (its 16 low bits on the wire).
    pub seq: u32,
    /// The cumulative ack the frame carries (piggy-backed, or an explicit
    /// ACK's): the next sequence number its sender expects from us.
    pub piggy: Option<u32>,
    /// Match information (`match_info`).
    pub tag: u64,
    /// Message length (medium: the whole message's).
    pub size: u64,
    /// Medium: this fragment's payload and its index.
    pub frag_len: u32,
    pub frag_seq: u8,
    /// RNDV: the sender's region id; NOTIFY: the puller's region id;
    /// PullDone: the sender's region id of the pulled message; Mcast: the
    /// root's rank.
    pub rdma: u32,
}

impl Msg {
    /// A header of kind `kind` with every other field zero.
    pub const fn new(kind: Kind) -> Self {
        Msg { kind, seq: 0, piggy: None, tag: 0, size: 0, frag_len: 0, frag_seq: 0, rdma: 0 }
    }

    /// The library's view of a received body; `None` for the drivers' PULL
    /// and PULL_REPLY.
    pub fn parse(body: &OmxBody) -> Option<Msg> {
        let m = match *body {
            OmxBody::Tiny { session, match_info, length, .. } if root_of(session).is_some() => {
                let root = root_of(session).unwrap_or(0);
                Msg { tag: match_info, size: length.into(), rdma: root.into(), ..Msg::new(Kind::Mcast) }
            }
            OmxBody::Small { session, match_info, length, .. } if root_of(session).is_some() => {
                let root = root_of(session).unwrap_or(0);
                Msg { tag: match_info, size: length.into(), rdma: root.into(), ..Msg::new(Kind::Mcast) }
            }
            OmxBody::Medium { session, match_info, msg_length, frag_seq, frag_length, .. }
                if root_of(session).is_some() =>
            {
                let root = root_of(session).unwrap_or(0);
                Msg {
                    tag: match_info,
                    size: msg_length.into(),
                    frag_len: frag_length.into(),
                    frag_seq,
                    rdma: root.into(),
                    ..Msg::new(Kind::Mcast)
                }
            }
            OmxBody::Tiny { seq, piggy_ack, match_info, length, .. } => Msg {
                seq: seq.into(),
                piggy: Some(piggy_ack.into()),
                tag: match_info,
                size: length.into(),
                ..Msg::new(Kind::Tiny)
            },
            OmxBody::Small { seq, piggy_ack, match_info, length, .. } => Msg {
                seq: seq.into(),
                piggy: Some(piggy_ack.into()),
                tag: match_info,
                size: length.into(),
                ..Msg::new(Kind::Small)
            },
            OmxBody::Medium { seq, piggy_ack, match_info, msg_length, frag_seq, frag_length, .. } => Msg {
                seq: seq.into(),
                piggy: Some(piggy_ack.into()),
                tag: match_info,
                size: msg_length.into(),
                frag_len: frag_length.into(),
                frag_seq,
                ..Msg::new(Kind::MediumFrag)
            },
            OmxBody::Rndv { seq, piggy_ack, match_info, msg_length, rdma_id, .. } => Msg {
                seq: seq.into(),
                piggy: Some(piggy_ack.into()),
                tag: match_info,
                size: msg_length.into(),
                rdma: rdma_id.into(),
                ..Msg::new(Kind::Rndv)
            },
            OmxBody::Notify { seq, piggy_ack, total_length, puller_rdma_id, .. } => Msg {
                seq: seq.into(),
                piggy: Some(piggy_ack.into()),
                size: total_length.into(),
                rdma: puller_rdma_id.into(),
                ..Msg::new(Kind::Notify)
            },
            OmxBody::Ack { lib_piggyack, .. } => Msg { piggy: Some(lib_piggyack.into()), ..Msg::new(Kind::Ack) },
            OmxBody::Pull { .. } | OmxBody::PullReply { .. } => return None,
        };
        Some(m)
    }

    /// The body that carries this header from endpoint `src_ep` to `dst_ep`
    /// (Open-MX session id 0: the model does not simulate endpoint reopening). Wire
    /// fields are the low bits of the header's (sequence numbers 16, sizes
    /// 8 / 16 / 32, region ids 8). An ACK carries `piggy` both as its
    /// cumulative ack and as `lib_seqnum`.
    ///
    /// # Panics
    /// For the library-local kinds (`PullDone`, `Shm`), which never travel.
    pub fn emit(&self, dst_ep: u8, src_ep: u8) -> OmxBody {
        let (seq, piggy_ack, session) = (self.seq as u16, self.piggy.unwrap_or(0) as u16, 0);
        match self.kind {
            Kind::Tiny => {
                OmxBody::Tiny { dst_ep, src_ep, session, seq, piggy_ack, match_info: self.tag, length: self.size as u8 }
            }
            Kind::Small => OmxBody::Small {
                dst_ep,
                src_ep,
                session,
                seq,
                piggy_ack,
                match_info: self.tag,
                length: self.size as u16,
            },
            Kind::MediumFrag => OmxBody::Medium {
                dst_ep,
                src_ep,
                session,
                seq,
                piggy_ack,
                match_info: self.tag,
                msg_length: self.size as u32,
                frag_seq: self.frag_seq,
                frag_pipeline: 0,
                frag_length: self.frag_len as u16,
            },
            Kind::Rndv => OmxBody::Rndv {
                dst_ep,
                src_ep,
                session,
                seq,
                piggy_ack,
                match_info: self.tag,
                msg_length: self.size as u32,
                rdma_id: self.rdma as u8,
                rdma_seqnum: 0,
                rdma_offset: 0,
            },
            Kind::Notify => OmxBody::Notify {
                dst_ep,
                src_ep,
                session,
                seq,
                piggy_ack,
                total_length: self.size as u32,
                puller_rdma_id: self.rdma as u8,
                puller_rdma_seqnum: 0,
            },
            Kind::Ack => OmxBody::Ack { dst_ep, src_ep, session, lib_seqnum: piggy_ack, lib_piggyack: piggy_ack },
            Kind::Mcast => {
                let session = crate::nic::multicast::tag(self.rdma as u16);
                let (match_info, length) = (self.tag, self.size as u16);
                if self.size as usize <= crate::wire::TINY_MAX {
                    OmxBody::Tiny { dst_ep, src_ep, session, seq: 0, piggy_ack: 0, match_info, length: length as u8 }
                } else if self.size as usize <= crate::wire::SMALL_MAX {
                    OmxBody::Small { dst_ep, src_ep, session, seq: 0, piggy_ack: 0, match_info, length }
                } else {
                    OmxBody::Medium {
                        dst_ep,
                        src_ep,
                        session,
                        seq: 0,
                        piggy_ack: 0,
                        match_info,
                        msg_length: self.size as u32,
                        frag_seq: self.frag_seq,
                        frag_pipeline: 0,
                        frag_length: self.frag_len as u16,
                    }
                }
            }
            Kind::PullDone | Kind::Shm => unreachable!("library-local events are never sent"),
        }
    }
}
