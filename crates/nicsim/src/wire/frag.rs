//! Message classes and fragmentation arithmetic (SPEC §2.1 table).
//!
//! This file owns the pure numbers of the wire protocol: which class a message
//! of a given size belongs to, how many MEDIUM fragments or PULL_REPLY frames
//! it takes at a given MTU, how long each is, and how replies group into pull
//! blocks. It does not own any state (which fragment was sent, which block is
//! outstanding: `crate::proto`) nor header bytes (the per-type files).
//!
//! "MTU" here is Open-MX's `OMX_MTU`: the largest frame Open-MX builds,
//! counted from the first byte of the Ethernet header (no FCS), so a payload
//! is the MTU minus the whole header: MTU − 48 for MEDIUM (16 head + 32
//! `omx_pkt_medium_frag`), MTU − 32 for PULL_REPLY (16 + 16). At the usual
//! MTU 1500 this gives 1452 and 1468 bytes (`common/omx_wire.h`,
//! `OMX_MEDIUM_FRAG_PAYLOAD_SIZE_OF_PACKET`, `OMX_PULL_REPLY_PAYLOAD_SIZE_OF_PACKET`).
//!
//! Pull blocks assume the sender's RDMA offset is 0; Open-MX shortens the
//! first block by that offset (`pull->block_length = ... - rdma_offset`,
//! `common/omx_wire.h` pull protocol comment).

use core::fmt;

use super::{head, medium, pull_reply};

/// Largest TINY message. Source: `common/omx_io.h`, `OMX_TINY_MAX 32`.
pub const TINY_MAX: usize = 32;

/// Largest SMALL message. Source: `common/omx_io.h`, `OMX_SMALL_MAX 128`.
pub const SMALL_MAX: usize = 128;

/// Default rendezvous threshold: messages above it are LARGE. Source:
/// `libopen-mx/omx_init.c` sets `rndv_threshold = OMX_MEDIUM_MAX`, and
/// `common/omx_io.h` has `OMX_MEDIUM_MAX 32768` (`8*4096` in some releases).
pub const DEFAULT_RNDV_THRESHOLD: usize = 32 * 1024;

/// Most fragments of one MEDIUM message. Source: `libopen-mx/omx_types.h`,
/// `OMX_MEDIUM_FRAGS_MAX 32` ("32 are needed if MTU=1500").
pub const MEDIUM_MAX_FRAGS: usize = 32;

/// PULL_REPLY frames per pull block. Source: `common/omx_wire.h`,
/// `OMX_PULL_REPLY_PER_BLOCK 32` (8 only in MX wire-compatible mode).
pub const PULL_BLOCK_REPLIES: usize = 32;

/// Pull blocks a puller keeps requested at once. Source:
/// `driver/linux/omx_common.h`, `OMX_PULL_BLOCK_DESCS_NR 4`.
pub const PULL_BLOCKS_OUTSTANDING: usize = 4;

/// Frame header bytes before a MEDIUM payload (16 head + 32 body).
pub const MEDIUM_HEADER_LEN: usize = head::BODY_OFFSET + medium::HEADER_LEN;

/// Frame header bytes before a PULL_REPLY payload (16 head + 16 body).
pub const PULL_REPLY_HEADER_LEN: usize = head::BODY_OFFSET + pull_reply::HEADER_LEN;

/// Smallest MTU these functions accept. Not an Open-MX number: any MTU above
/// 48 gives positive payloads; 64 keeps every fragment at least 16 bytes.
/// Configuration validation should reject smaller values.
pub const MIN_MTU: usize = 64;

/// Largest MTU these functions accept: PULL_REPLY `frame_length` is 16 bits
/// (and 65535 is the pcap snap length).
pub const MAX_MTU: usize = 65535;

/// The message classes of SPEC §2.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageClass {
    /// ≤ [`TINY_MAX`]: one TINY frame.
    Tiny,
    /// ≤ [`SMALL_MAX`]: one SMALL frame.
    Small,
    /// ≤ rendezvous threshold: MEDIUM fragments.
    Medium,
    /// > threshold: RNDV, PULL/PULL_REPLY blocks, NOTIFY.
    Large,
}

impl fmt::Display for MessageClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MessageClass::Tiny => "tiny",
            MessageClass::Small => "small",
            MessageClass::Medium => "medium",
            MessageClass::Large => "large",
        })
    }
}

/// The class of a `size`-byte message. Tiny and small are decided first, as
/// in Open-MX's send path, so a threshold below 128 only moves the
/// medium/large boundary.
pub fn classify(size: usize, rndv_threshold: usize) -> MessageClass {
    if size <= TINY_MAX {
        MessageClass::Tiny
    } else if size <= SMALL_MAX {
        MessageClass::Small
    } else if size <= rndv_threshold {
        MessageClass::Medium
    } else {
        MessageClass::Large
    }
}

fn check_mtu(mtu: usize) {
    assert!((MIN_MTU..=MAX_MTU).contains(&mtu), "MTU {mtu} outside {MIN_MTU}..={MAX_MTU}");
}

/// Payload bytes of a full MEDIUM fragment. Source: `common/omx_wire.h`,
/// `OMX_MEDIUM_FRAG_LENGTH_MAX`: MTU − 48 while that is ≤ 4096, else 8192 if
/// an 8192-byte fragment fits in the MTU, else 4096 (fragments are copied
/// into page-sized receive-queue slots). So 1452 at MTU 1500, 8192 at 9000.
///
/// # Panics
/// If `mtu` is outside [`MIN_MTU`]`..=`[`MAX_MTU`].
pub fn medium_frag_payload(mtu: usize) -> usize {
    check_mtu(mtu);
    let exact = mtu - MEDIUM_HEADER_LEN;
    if exact <= 4096 {
        exact
    } else if 8192 + MEDIUM_HEADER_LEN > mtu {
        4096
    } else {
        8192
    }
}

/// Payload bytes of a full PULL_REPLY: MTU − 32, uncapped. Source:
/// `common/omx_wire.h`, `OMX_PULL_REPLY_LENGTH_MAX =
/// OMX_PULL_REPLY_PAYLOAD_SIZE_OF_PACKET(OMX_MTU)` ("large message fragments
/// use the full MTU all the time" outside wire-compatible mode).
///
/// # Panics
/// If `mtu` is outside [`MIN_MTU`]`..=`[`MAX_MTU`].
pub fn pull_reply_payload(mtu: usize) -> usize {
    check_mtu(mtu);
    mtu - PULL_REPLY_HEADER_LEN
}

/// MEDIUM fragments for a `size`-byte message; at least 1 (an empty medium
/// message still sends one fragment).
pub fn medium_frag_count(size: usize, mtu: usize) -> usize {
    size.div_ceil(medium_frag_payload(mtu)).max(1)
}

/// Payload of fragment `index` (0-based) of a `size`-byte MEDIUM message: full
/// fragments, then the remainder.
///
/// # Panics
/// If `index >= medium_frag_count(size, mtu)`.
pub fn medium_frag_len(size: usize, mtu: usize, index: usize) -> usize {
    chunk_len(size, medium_frag_payload(mtu), index)
}

/// Largest message whose fragments fit in [`MEDIUM_MAX_FRAGS`] at `mtu`
/// (46464 B at MTU 1500): a rendezvous threshold above it cannot be sent as
/// MEDIUM.
pub fn medium_max_size(mtu: usize) -> usize {
    MEDIUM_MAX_FRAGS * medium_frag_payload(mtu)
}

/// PULL_REPLY frames for a `size`-byte large message; at least 1.
pub fn pull_reply_count(size: usize, mtu: usize) -> usize {
    size.div_ceil(pull_reply_payload(mtu)).max(1)
}

/// Payload of reply `index` (0-based, over the whole message).
///
/// # Panics
/// If `index >= pull_reply_count(size, mtu)`.
pub fn pull_reply_len(size: usize, mtu: usize, index: usize) -> usize {
    chunk_len(size, pull_reply_payload(mtu), index)
}

/// Pull blocks (PULL requests, absent losses) for a `size`-byte message.
pub fn pull_block_count(size: usize, mtu: usize) -> usize {
    pull_reply_count(size, mtu).div_ceil(PULL_BLOCK_REPLIES)
}

/// Replies in block `block` (0-based): [`PULL_BLOCK_REPLIES`] except the last.
///
/// # Panics
/// If `block >= pull_block_count(size, mtu)`.
pub fn pull_block_replies(size: usize, mtu: usize, block: usize) -> usize {
    chunk_len(pull_reply_count(size, mtu), PULL_BLOCK_REPLIES, block)
}

/// Length of chunk `index` when `total` is cut into `chunk`-sized pieces
/// (one empty chunk when `total` is 0).
fn chunk_len(total: usize, chunk: usize, index: usize) -> usize {
    let count = total.div_ceil(chunk).max(1);
    assert!(index < count, "chunk {index} of {count}");
    if index + 1 < count {
        chunk
    } else {
        total - chunk * (count - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_boundaries() {
        let t = DEFAULT_RNDV_THRESHOLD;
        assert_eq!(classify(0, t), MessageClass::Tiny);
        assert_eq!(classify(32, t), MessageClass::Tiny);
        assert_eq!(classify(33, t), MessageClass::Small);
        assert_eq!(classify(128, t), MessageClass::Small);
        assert_eq!(classify(129, t), MessageClass::Medium);
        assert_eq!(classify(t, t), MessageClass::Medium);
        assert_eq!(classify(t + 1, t), MessageClass::Large);
        assert_eq!(classify(4096, 4095), MessageClass::Large);
        assert_eq!(classify(64, 0), MessageClass::Small);
        assert_eq!(classify(129, 0), MessageClass::Large);
        assert_eq!(MessageClass::Large.to_string(), "large");
        assert_eq!(MessageClass::Medium.to_string(), "medium");
    }

    #[test]
    fn payload_sizes() {
        assert_eq!(medium_frag_payload(1500), 1452);
        assert_eq!(medium_frag_payload(9000), 8192);
        assert_eq!(medium_frag_payload(4144), 4096);
        assert_eq!(medium_frag_payload(4145), 4096);
        assert_eq!(medium_frag_payload(8239), 4096);
        assert_eq!(medium_frag_payload(8240), 8192);
        assert_eq!(pull_reply_payload(1500), 1468);
        assert_eq!(pull_reply_payload(9000), 8968);
        assert_eq!(MEDIUM_HEADER_LEN, 48);
        assert_eq!(PULL_REPLY_HEADER_LEN, 32);
    }

    #[test]
    fn medium_32k_at_1500_is_23_fragments() {
        assert_eq!(medium_frag_count(32 * 1024, 1500), 23);
        assert_eq!(medium_frag_len(32 * 1024, 1500, 0), 1452);
        assert_eq!(medium_frag_len(32 * 1024, 1500, 22), 824);
        assert_eq!(medium_frag_count(32 * 1024, 9000), 4);
        assert_eq!(medium_frag_count(129, 1500), 1);
        assert_eq!(medium_frag_count(1452, 1500), 1);
        assert_eq!(medium_frag_count(1453, 1500), 2);
        assert_eq!(medium_frag_count(0, 1500), 1);
        assert_eq!(medium_frag_len(0, 1500, 0), 0);
        assert_eq!(medium_max_size(1500), 46464);
        assert!(medium_frag_count(DEFAULT_RNDV_THRESHOLD, 1500) <= MEDIUM_MAX_FRAGS);
    }

    #[test]
    fn fragments_sum_to_size() {
        for mtu in [MIN_MTU, 1500, 4200, 9000] {
            for size in [0, 1, 129, 1452, 1453, 32768, 46464, 1 << 20, 1_000_003] {
                let n = medium_frag_count(size, mtu);
                let total: usize = (0..n).map(|i| medium_frag_len(size, mtu, i)).sum();
                assert_eq!(total, size, "medium {size} @ {mtu}");
                let n = pull_reply_count(size, mtu);
                let total: usize = (0..n).map(|i| pull_reply_len(size, mtu, i)).sum();
                assert_eq!(total, size, "pull {size} @ {mtu}");
                let blocks = pull_block_count(size, mtu);
                let replies: usize = (0..blocks).map(|b| pull_block_replies(size, mtu, b)).sum();
                assert_eq!(replies, n, "blocks {size} @ {mtu}");
            }
        }
    }

    #[test]
    fn pull_counts() {
        // 1 MiB at MTU 1500: ceil(1048576 / 1468) = 715 replies, 23 blocks.
        assert_eq!(pull_reply_count(1 << 20, 1500), 715);
        assert_eq!(pull_block_count(1 << 20, 1500), 23);
        assert_eq!(pull_block_replies(1 << 20, 1500, 0), 32);
        assert_eq!(pull_block_replies(1 << 20, 1500, 22), 715 - 22 * 32);
        // Just above the threshold: 23 replies, one block.
        assert_eq!(pull_reply_count(32769, 1500), 23);
        assert_eq!(pull_block_count(32769, 1500), 1);
        // Exactly one full block, then one reply more.
        assert_eq!(pull_block_count(32 * 1468, 1500), 1);
        assert_eq!(pull_block_count(32 * 1468 + 1, 1500), 2);
        // MTU 9000: 8968-byte replies.
        assert_eq!(pull_reply_count(1 << 20, 9000), 117);
        assert_eq!(pull_block_count(1 << 20, 9000), 4);
    }

    #[test]
    #[should_panic(expected = "MTU 48 outside")]
    fn tiny_mtu_panics() {
        medium_frag_payload(48);
    }
}
