//! Open-MX-over-Ethernet frames as real bytes.
//!
//! This module owns the on-the-wire format of every frame the simulator puts
//! on a link: the Ethernet header, the Open-MX `omx_pkt_head` (peer index),
//! the packet-type byte and the per-type header bodies (TINY, SMALL, MEDIUM,
//! RNDV, PULL, PULL_REPLY, NOTIFY and the TRUC/liback ACK), the
//! latency-sensitive marker bit, the message-class and fragmentation
//! arithmetic ([`frag`]), which classes get marked ([`marker`]) and the pcap
//! trace format ([`pcap`]).
//!
//! It does **not** own behaviour: sequence numbers, acks, resends and pull
//! state machines live in `crate::proto`; steering, DMA and coalescing
//! decisions live in `crate::nic` (they read frames through [`FrameRepr`] or
//! the per-type `Packet` views); simulated time is `crate::time` and only
//! crosses into this module as a pcap timestamp. Payload bytes are the
//! caller's: headers are encoded here, payload contents are not interpreted.
//!
//! Layout follows smoltcp's `Packet<T: AsRef<[u8]>>` / `Repr` split: each
//! header body has its own file with a `mod field` of byte ranges taken from
//! Open-MX `common/omx_wire.h` (repository j-r-jones/open-mx). All multi-byte
//! fields are big-endian (network order), i.e. Open-MX built with
//! `OMX_ENDIAN_COMPAT` (`driver/linux/omx_wire_access.h`), which is what
//! puts the pull-reply endpoint byte at frame byte 32 as [OMX-MQ] describes.
//!
//! Frame byte map (0-based offsets; "byte N" in the papers is 1-based):
//!
//! ```text
//!  0..6   destination MAC          12..14 ethertype 0x86DF
//!  6..12  source MAC               14..16 dst_src_peer_index (sender's peer index)
//!  16     packet type | 0x80 marker (OMX_PACKET_NEED_IRQ)        = "byte 17"
//!  17     destination endpoint (all types but PULL_REPLY)         = "byte 18"
//!  16..   per-type body (struct omx_pkt_* of omx_wire.h), then payload
//!  28..32 PULL_REPLY dst_magic; low byte (offset 31) = endpoint ^ 0x80 = "byte 32"
//! ```

pub mod ack;
pub mod frag;
mod frame;
pub mod head;
pub mod marker;
pub mod medium;
pub mod msg;
pub mod notify;
pub mod pcap;
pub mod pull;
pub mod pull_reply;
pub mod rndv;
#[cfg(test)]
mod testutil;

pub use frag::{
    classify, Layout, MessageClass, WireMode, DEFAULT_RNDV_THRESHOLD, MEDIUM_MAX_FRAGS, MX_FRAME_PAYLOAD,
    MX_PULL_BLOCK_REPLIES, PULL_BLOCKS_OUTSTANDING, PULL_BLOCK_REPLIES, SMALL_MAX, TINY_MAX,
};
pub use frame::{FrameRepr, OmxBody};
pub use head::PacketKind;
pub use marker::{MarkedClasses, MarkerClass};
pub use pcap::{PcapError, PcapReader, PcapWriter};

/// Open-MX ethertype. Source: `common/omx_wire.h`, `DEFAULT_ETH_P_OMX 0x86DF`.
pub const ETHERTYPE_OMX: u16 = 0x86DF;

/// Ethernet header length (destination MAC, source MAC, ethertype).
pub const ETH_HEADER_LEN: usize = 14;

/// Minimum Ethernet frame length without FCS; shorter frames are padded.
/// Source: IEEE 802.3 (64-byte minimum including the 4-byte FCS).
pub const MIN_FRAME_LEN: usize = 60;

/// Errors from parsing a frame. Offsets and lengths are counted from the first
/// byte of the Ethernet frame, so a message can be matched against a hex dump.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The buffer ends before a header (or the payload it announces) does.
    #[error("truncated frame: need {need} bytes, have {have}")]
    Truncated { need: usize, have: usize },
    /// A field holds a value the format does not allow.
    #[error("malformed frame at byte offset {offset}: {what}")]
    Malformed { offset: usize, what: &'static str },
    /// The ethertype (byte offset 12) is not [`ETHERTYPE_OMX`].
    #[error("not an Open-MX frame: ethertype {ethertype:#06x} at byte offset 12 (expected 0x86df)")]
    NotOpenMx { ethertype: u16 },
    /// The packet type (byte offset 16, marker bit masked) is not one nicsim
    /// simulates (CONNECT, NACK_*, HOST_* and unknown values).
    #[error("unsupported Open-MX packet type {ptype:#04x} at byte offset 16")]
    UnsupportedType { ptype: u8 },
}

impl Error {
    /// The frame byte offset the error points at (for `Truncated`, the first
    /// missing byte).
    pub fn offset(&self) -> usize {
        match *self {
            Error::Truncated { have, .. } => have,
            Error::Malformed { offset, .. } => offset,
            Error::NotOpenMx { .. } => 12,
            Error::UnsupportedType { .. } => head::field::PTYPE,
        }
    }
}

/// Result of parsing wire bytes.
pub type Result<T> = core::result::Result<T, Error>;

/// A byte range inside a header (smoltcp's `Field`).
pub type Field = core::ops::Range<usize>;

/// Locally administered unicast MAC prefix of simulated hosts: `02:4f:4d:58`
/// ("OMX"); the last two bytes are the host index, big-endian.
pub const HOST_MAC_PREFIX: [u8; 4] = [0x02, 0x4f, 0x4d, 0x58];

/// The MAC address of simulated host `host`.
pub fn host_mac(host: u16) -> [u8; 6] {
    let [hi, lo] = host.to_be_bytes();
    let p = HOST_MAC_PREFIX;
    [p[0], p[1], p[2], p[3], hi, lo]
}

/// The simulated host index of `mac`, or `None` if it is not a [`host_mac`].
pub fn mac_host(mac: [u8; 6]) -> Option<u16> {
    (mac[..4] == HOST_MAC_PREFIX).then(|| u16::from_be_bytes([mac[4], mac[5]]))
}

/// Endpoints per host: the endpoint index is one byte of every Open-MX
/// header (`dst_endpoint`/`src_endpoint`, `uint8_t` in `omx_wire.h`).
pub const ENDPOINTS: usize = 1 << 8;

/// Registered regions per endpoint that a rendezvous can name: the region
/// id is one byte (`pulled_rdma_id`, `uint8_t` in `struct omx_pkt_rndv`).
pub const RDMA_REGIONS: usize = 1 << 8;

/// XOR constant of the endpoint pull magic. Source: Open-MX
/// `driver/linux/omx_pull.c` (j-r-jones/open-mx, the 1.0-era tree):
/// `#define OMX_ENDPOINT_PULL_MAGIC_XOR 0x21071980`, and the puller sets
/// `src_magic = endpoint_index ^ OMX_ENDPOINT_PULL_MAGIC_XOR`; PULL_REPLY echoes
/// it as `dst_magic`. (Later Open-MX releases, `omx_endpoint.h`, changed this
/// to `(index << 13) ^ 0x22111867`; nicsim follows the era of the studies,
/// where the endpoint sits in the low byte, frame byte 32.)
pub const PULL_MAGIC_XOR: u32 = 0x2107_1980;

/// The pull magic identifying `endpoint` in PULL and PULL_REPLY headers.
pub fn pull_magic(endpoint: u8) -> u32 {
    u32::from(endpoint) ^ PULL_MAGIC_XOR
}

/// The endpoint encoded in a pull magic (low byte after un-XORing), as a NIC
/// steering on frame byte 32 sees it.
pub fn endpoint_from_pull_magic(magic: u32) -> u8 {
    (magic ^ PULL_MAGIC_XOR) as u8
}

/// Like [`endpoint_from_pull_magic`] but `None` when the high bits do not
/// match the constant (the driver drops such replies as a bad endpoint).
pub fn endpoint_from_pull_magic_checked(magic: u32) -> Option<u8> {
    u8::try_from(magic ^ PULL_MAGIC_XOR).ok()
}

// Big-endian field access shared by the per-type views. Callers have checked
// the length (`check_len`), so out-of-range indexing is a bug and panics, as
// with smoltcp's `new_unchecked` views.

fn get_u16(b: &[u8], f: Field) -> u16 {
    u16::from_be_bytes([b[f.start], b[f.start + 1]])
}

fn get_u32(b: &[u8], f: Field) -> u32 {
    u32::from_be_bytes([b[f.start], b[f.start + 1], b[f.start + 2], b[f.start + 3]])
}

fn set_u16(b: &mut [u8], f: Field, v: u16) {
    b[f].copy_from_slice(&v.to_be_bytes());
}

fn set_u32(b: &mut [u8], f: Field, v: u32) {
    b[f].copy_from_slice(&v.to_be_bytes());
}

/// `Truncated` for a body view: `need`/`have` are body lengths, reported as
/// frame lengths.
fn body_truncated(need: usize, have: usize) -> Error {
    Error::Truncated { need: head::BODY_OFFSET + need, have: head::BODY_OFFSET + have }
}

/// `Malformed` for a body view: `offset` is a body offset, reported as a frame
/// offset.
fn body_malformed(offset: usize, what: &'static str) -> Error {
    Error::Malformed { offset: head::BODY_OFFSET + offset, what }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_mac_round_trip() {
        for host in [0u16, 1, 2, 255, 256, 0x1234, u16::MAX] {
            let mac = host_mac(host);
            assert_eq!(mac[0] & 0x03, 0x02, "locally administered unicast");
            assert_eq!(mac_host(mac), Some(host));
        }
        assert_eq!(host_mac(0x0102), [0x02, 0x4f, 0x4d, 0x58, 0x01, 0x02]);
        assert_eq!(mac_host([0xff; 6]), None);
        assert_eq!(mac_host([0x02, 0x4f, 0x4d, 0x59, 0, 1]), None);
    }

    #[test]
    fn pull_magic_round_trip() {
        assert_eq!(pull_magic(0), 0x2107_1980);
        assert_eq!(pull_magic(3), 0x2107_1983);
        assert_eq!(pull_magic(0x80), 0x2107_1900);
        for ep in 0..=255u8 {
            assert_eq!(endpoint_from_pull_magic(pull_magic(ep)), ep);
            assert_eq!(endpoint_from_pull_magic_checked(pull_magic(ep)), Some(ep));
            // Frame byte 32 (1-based) is the low byte of the big-endian magic.
            assert_eq!(pull_magic(ep).to_be_bytes()[3], ep ^ 0x80);
        }
        assert_eq!(endpoint_from_pull_magic_checked(0xdead_beef), None);
    }

    #[test]
    fn error_messages_name_offsets() {
        let e = Error::Malformed { offset: 20, what: "tiny length exceeds 32 bytes" };
        assert_eq!(e.to_string(), "malformed frame at byte offset 20: tiny length exceeds 32 bytes");
        assert_eq!(e.offset(), 20);
        let e = Error::Truncated { need: 40, have: 17 };
        assert_eq!(e.to_string(), "truncated frame: need 40 bytes, have 17");
        assert!(Error::NotOpenMx { ethertype: 0x0800 }.to_string().contains("0x0800 at byte offset 12"));
        assert!(Error::UnsupportedType { ptype: 0x24 }.to_string().contains("0x24 at byte offset 16"));
    }
}
