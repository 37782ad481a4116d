//! Message classes and fragmentation arithmetic (SPEC §2.1 table).
//!
//! This file owns the pure numbers of the wire protocol: which class a message
//! of a given size belongs to, and, for one Open-MX build at one MTU (a
//! [`Layout`]), how many MEDIUM fragments or PULL_REPLY frames it takes, how
//! long each is, and how replies group into pull blocks. It does not own any
//! state (which fragment was sent, which block is outstanding:
//! `crate::proto`) nor header bytes (the per-type files).
//!
//! "MTU" here is Open-MX's `OMX_MTU`: the largest frame Open-MX builds,
//! counted from the first byte of the Ethernet header (no FCS), so a payload
//! is the MTU minus the whole header: MTU − 48 for MEDIUM (16 head + 32
//! `omx_pkt_medium_frag`), MTU − 32 for PULL_REPLY (16 + 16)
//! (`common/omx_wire.h`, `OMX_MEDIUM_FRAG_PAYLOAD_SIZE_OF_PACKET`,
//! `OMX_PULL_REPLY_PAYLOAD_SIZE_OF_PACKET`). How much of it a build fills
//! depends on the build ([`WireMode`]).
//!
//! Pull blocks assume the sender's RDMA offset is 0; Open-MX shortens the
//! first block by that offset (`pull->block_length = ... - rdma_offset`,
//! `common/omx_wire.h` pull protocol comment).

use core::fmt;

use serde::{Deserialize, Serialize};

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

/// PULL_REPLY frames per pull block outside MX wire compatibility. Source:
/// `common/omx_wire.h`, `OMX_PULL_REPLY_PER_BLOCK 32` (Open-MX 0.9.2 to
/// 1.5.4).
pub const PULL_BLOCK_REPLIES: usize = 32;

/// PULL_REPLY frames per pull block in MX wire-compatible mode. Source:
/// `common/omx_wire.h`, `OMX_PULL_REPLY_PER_BLOCK 8` under
/// `OMX_MX_WIRE_COMPAT` (Open-MX 0.9.2 to 1.5.4).
pub const MX_PULL_BLOCK_REPLIES: usize = 8;

/// Payload of a MEDIUM fragment and of a PULL_REPLY in MX wire-compatible
/// mode. Source: `common/omx_wire.h`, `OMX_PULL_REPLY_LENGTH_MAX 4096` under
/// `OMX_MX_WIRE_COMPAT`; libopen-mx `omx_init.c`: "Using MX-wire-compatible
/// 4kB medium frags".
pub const MX_FRAME_PAYLOAD: usize = 4096;

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

/// Which Open-MX build cuts the messages into frames (`library.wire`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum WireMode {
    /// `open-mx-1.0`: Open-MX 1.0.x built without MX wire compatibility
    /// (`configure --disable-mx-wire --with-mtu=N`, as [OMX-COAL] §IV-A
    /// configured MTU 1500): fragments and replies fill the MTU exactly,
    /// 32 replies a block. The default.
    #[default]
    #[serde(rename = "open-mx-1.0")]
    OpenMx10,
    /// `open-mx-0.9`: Open-MX 0.9.x built without MX wire compatibility:
    /// MEDIUM fragments of the largest power of two (at most 4 KiB) that
    /// fits the MTU (libopen-mx `omx_init.c`, "Using custom %dB medium
    /// frags"), PULL_REPLY payloads of 1, 2, 4 or 8 KiB below MTU 2000,
    /// 3000, 5000 and above (`common/omx_wire.h`), 32 replies a block.
    #[serde(rename = "open-mx-0.9")]
    OpenMx09,
    /// `mx`: MX wire compatibility, the default build of Open-MX 0.9.2 to
    /// 1.5.4 (`configure.ac`, `enable_mx_wire=yes`): 4 KiB fragments and
    /// replies, 8 replies a block, so an MTU of at least 4144 (`OMX_MTU`).
    #[serde(rename = "mx")]
    Mx,
}

impl WireMode {
    /// The name a scenario gives it.
    pub fn name(self) -> &'static str {
        match self {
            WireMode::OpenMx10 => "open-mx-1.0",
            WireMode::OpenMx09 => "open-mx-0.9",
            WireMode::Mx => "mx",
        }
    }
}

/// How one Open-MX build cuts messages at one MTU: the payload of a full
/// MEDIUM fragment and of a full PULL_REPLY, and the replies of a pull block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub medium_frag: usize,
    pub pull_reply: usize,
    pub block_replies: usize,
}

impl Layout {
    /// The layout of `mode` at `mtu`, or why that build cannot run at that
    /// MTU (its frames would not fit).
    ///
    /// # Panics
    /// If `mtu` is outside [`MIN_MTU`]`..=`[`MAX_MTU`].
    pub fn new(mode: WireMode, mtu: usize) -> Result<Layout, String> {
        check_mtu(mtu);
        let layout = match mode {
            WireMode::OpenMx10 => Layout {
                medium_frag: medium_frag_payload(mtu),
                pull_reply: pull_reply_payload(mtu),
                block_replies: PULL_BLOCK_REPLIES,
            },
            WireMode::OpenMx09 => {
                let pull_reply = match mtu {
                    ..2000 => 1024,
                    2000..3000 => 2048,
                    3000..5000 => 4096,
                    _ => 8192,
                };
                // The largest power of two, at most a 4 KiB queue slot,
                // whose fragment is shorter than the MTU.
                let medium_frag =
                    (0..=12).rev().map(|i| 1usize << i).find(|&p| p + MEDIUM_HEADER_LEN < mtu).unwrap_or(1);
                Layout { medium_frag, pull_reply, block_replies: PULL_BLOCK_REPLIES }
            }
            WireMode::Mx => Layout {
                medium_frag: MX_FRAME_PAYLOAD,
                pull_reply: MX_FRAME_PAYLOAD,
                block_replies: MX_PULL_BLOCK_REPLIES,
            },
        };
        let longest = (layout.medium_frag + MEDIUM_HEADER_LEN).max(layout.pull_reply + PULL_REPLY_HEADER_LEN);
        if longest > mtu {
            return Err(format!(
                "{} sends frames of {longest} bytes, more than the MTU of {mtu}: it needs an MTU of at least {longest}",
                mode.name()
            ));
        }
        Ok(layout)
    }

    /// MEDIUM fragments for a `size`-byte message; at least 1 (an empty
    /// medium message still sends one fragment).
    pub fn medium_frag_count(&self, size: usize) -> usize {
        size.div_ceil(self.medium_frag).max(1)
    }

    /// Payload of fragment `index` (0-based) of a `size`-byte MEDIUM
    /// message: full fragments, then the remainder.
    ///
    /// # Panics
    /// If `index >= self.medium_frag_count(size)`.
    pub fn medium_frag_len(&self, size: usize, index: usize) -> usize {
        chunk_len(size, self.medium_frag, index)
    }

    /// Largest message whose fragments fit in [`MEDIUM_MAX_FRAGS`] (46464 B
    /// at MTU 1500 in Open-MX 1.0): a rendezvous threshold above it cannot
    /// be sent as MEDIUM.
    pub fn medium_max_size(&self) -> usize {
        MEDIUM_MAX_FRAGS * self.medium_frag
    }

    /// PULL_REPLY frames for a `size`-byte large message; at least 1.
    pub fn pull_reply_count(&self, size: usize) -> usize {
        size.div_ceil(self.pull_reply).max(1)
    }

    /// Payload of reply `index` (0-based, over the whole message).
    ///
    /// # Panics
    /// If `index >= self.pull_reply_count(size)`.
    pub fn pull_reply_len(&self, size: usize, index: usize) -> usize {
        chunk_len(size, self.pull_reply, index)
    }

    /// Pull blocks (PULL requests, absent losses) for a `size`-byte message.
    pub fn pull_block_count(&self, size: usize) -> usize {
        self.pull_reply_count(size).div_ceil(self.block_replies)
    }

    /// Replies in block `block` (0-based): a full block except the last.
    ///
    /// # Panics
    /// If `block >= self.pull_block_count(size)`.
    pub fn pull_block_replies(&self, size: usize, block: usize) -> usize {
        chunk_len(self.pull_reply_count(size), self.block_replies, block)
    }
}

/// Payload bytes of a full MEDIUM fragment in Open-MX 1.0 outside MX wire
/// compatibility. Source: `common/omx_wire.h`, `OMX_MEDIUM_FRAG_LENGTH_MAX`:
/// MTU − 48 while that is ≤ 4096, else 8192 if an 8192-byte fragment fits in
/// the MTU, else 4096 (fragments are copied into page-sized receive-queue
/// slots). So 1452 at MTU 1500, 8192 at 9000.
fn medium_frag_payload(mtu: usize) -> usize {
    let exact = mtu - MEDIUM_HEADER_LEN;
    if exact <= 4096 {
        exact
    } else if 8192 + MEDIUM_HEADER_LEN > mtu {
        4096
    } else {
        8192
    }
}

/// Payload bytes of a full PULL_REPLY in Open-MX 1.0 outside MX wire
/// compatibility: MTU − 32, uncapped. Source: `common/omx_wire.h`,
/// `OMX_PULL_REPLY_LENGTH_MAX = OMX_PULL_REPLY_PAYLOAD_SIZE_OF_PACKET(OMX_MTU)`
/// ("large message fragments use the full MTU all the time" outside
/// wire-compatible mode).
fn pull_reply_payload(mtu: usize) -> usize {
    mtu - PULL_REPLY_HEADER_LEN
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

    fn v10(mtu: usize) -> Layout {
        Layout::new(WireMode::OpenMx10, mtu).unwrap()
    }

    #[test]
    fn payload_sizes() {
        assert_eq!(v10(1500).medium_frag, 1452);
        assert_eq!(v10(9000).medium_frag, 8192);
        assert_eq!(v10(4144).medium_frag, 4096);
        assert_eq!(v10(4145).medium_frag, 4096);
        assert_eq!(v10(8239).medium_frag, 4096);
        assert_eq!(v10(8240).medium_frag, 8192);
        assert_eq!(v10(1500).pull_reply, 1468);
        assert_eq!(v10(9000).pull_reply, 8968);
        assert_eq!(MEDIUM_HEADER_LEN, 48);
        assert_eq!(PULL_REPLY_HEADER_LEN, 32);
    }

    /// The three builds' layouts, from `common/omx_wire.h` and libopen-mx
    /// `omx_init.c` of Open-MX 0.9.2 and 1.0.901.
    #[test]
    fn each_build_cuts_its_own_frames() {
        let mx = Layout::new(WireMode::Mx, 9000).unwrap();
        assert_eq!((mx.medium_frag, mx.pull_reply, mx.block_replies), (4096, 4096, 8));
        assert_eq!(Layout::new(WireMode::Mx, 4144), Ok(mx), "OMX_MTU of the MX wire");
        let err = Layout::new(WireMode::Mx, 1500).unwrap_err();
        assert!(err.contains("mx") && err.contains("4144") && err.contains("1500"), "{err}");
        let v09 = |mtu| Layout::new(WireMode::OpenMx09, mtu);
        assert_eq!(v09(1500), Ok(Layout { medium_frag: 1024, pull_reply: 1024, block_replies: 32 }));
        assert_eq!(v09(2500), Ok(Layout { medium_frag: 2048, pull_reply: 2048, block_replies: 32 }));
        assert_eq!(v09(9000), Ok(Layout { medium_frag: 4096, pull_reply: 8192, block_replies: 32 }));
        assert!(v09(6000).is_err(), "8 KiB replies do not fit a 6000-byte MTU");
        assert_eq!(v10(1500).block_replies, 32);
        // 1 MiB: 715 replies in 23 blocks (1.0 at 1500), 256 in 32 (MX).
        assert_eq!((v10(1500).pull_reply_count(1 << 20), v10(1500).pull_block_count(1 << 20)), (715, 23));
        assert_eq!((mx.pull_reply_count(1 << 20), mx.pull_block_count(1 << 20)), (256, 32));
        assert_eq!(mx.medium_frag_count(32 * 1024), 8, "MX's 8 fragments of a 32 KiB medium");
    }

    #[test]
    fn medium_32k_at_1500_is_23_fragments() {
        let (l, l9) = (v10(1500), v10(9000));
        assert_eq!(l.medium_frag_count(32 * 1024), 23);
        assert_eq!(l.medium_frag_len(32 * 1024, 0), 1452);
        assert_eq!(l.medium_frag_len(32 * 1024, 22), 824);
        assert_eq!(l9.medium_frag_count(32 * 1024), 4);
        assert_eq!(l.medium_frag_count(129), 1);
        assert_eq!(l.medium_frag_count(1452), 1);
        assert_eq!(l.medium_frag_count(1453), 2);
        assert_eq!(l.medium_frag_count(0), 1);
        assert_eq!(l.medium_frag_len(0, 0), 0);
        assert_eq!(l.medium_max_size(), 46464);
        assert!(l.medium_frag_count(DEFAULT_RNDV_THRESHOLD) <= MEDIUM_MAX_FRAGS);
    }

    #[test]
    fn fragments_sum_to_size() {
        let layouts = [MIN_MTU, 1500, 4200, 9000]
            .map(v10)
            .into_iter()
            .chain([Layout::new(WireMode::Mx, 9000).unwrap(), Layout::new(WireMode::OpenMx09, 1500).unwrap()]);
        for l in layouts {
            for size in [0, 1, 129, 1452, 1453, 32768, 46464, 1 << 20, 1_000_003] {
                let n = l.medium_frag_count(size);
                let total: usize = (0..n).map(|i| l.medium_frag_len(size, i)).sum();
                assert_eq!(total, size, "medium {size} @ {l:?}");
                let n = l.pull_reply_count(size);
                let total: usize = (0..n).map(|i| l.pull_reply_len(size, i)).sum();
                assert_eq!(total, size, "pull {size} @ {l:?}");
                let blocks = l.pull_block_count(size);
                let replies: usize = (0..blocks).map(|b| l.pull_block_replies(size, b)).sum();
                assert_eq!(replies, n, "blocks {size} @ {l:?}");
            }
        }
    }

    #[test]
    fn pull_counts() {
        let (l, l9) = (v10(1500), v10(9000));
        // 1 MiB at MTU 1500: ceil(1048576 / 1468) = 715 replies, 23 blocks.
        assert_eq!(l.pull_reply_count(1 << 20), 715);
        assert_eq!(l.pull_block_count(1 << 20), 23);
        assert_eq!(l.pull_block_replies(1 << 20, 0), 32);
        assert_eq!(l.pull_block_replies(1 << 20, 22), 715 - 22 * 32);
        // Just above the threshold: 23 replies, one block.
        assert_eq!(l.pull_reply_count(32769), 23);
        assert_eq!(l.pull_block_count(32769), 1);
        // Exactly one full block, then one reply more.
        assert_eq!(l.pull_block_count(32 * 1468), 1);
        assert_eq!(l.pull_block_count(32 * 1468 + 1), 2);
        // MTU 9000: 8968-byte replies.
        assert_eq!(l9.pull_reply_count(1 << 20), 117);
        assert_eq!(l9.pull_block_count(1 << 20), 4);
    }

    #[test]
    #[should_panic(expected = "MTU 48 outside")]
    fn tiny_mtu_panics() {
        let _ = Layout::new(WireMode::OpenMx10, 48);
    }
}
