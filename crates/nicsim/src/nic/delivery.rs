//! How a NIC lays a received packet into a host receive buffer and how the
//! host learns that it is there: the five arrival-detection strategies of
//! \[LCI] §3 (SPEC §2.4) as a sans-I/O plan. For one packet the plan says
//! which NIC -> host DMAs the firmware issues (offset and length in the
//! host buffer), where the FULL flag lives, and how the host detects the
//! packet; [`Plan::poll_lines`] says how many cache lines the host reads to
//! see the flag and the header.
//!
//! Both stacks use it: the LCI stack's NI (`crate::lci`, `nic.polling`)
//! runs every strategy; the Open-MX NIC (`crate::sim`, `nic.rx_delivery`)
//! maps myri10ge's receive-done ring onto [`Strategy::DoubleDma`] (the
//! frame, then a completion entry apart from it) and `shifted` onto
//! [`Strategy::PacketShifting`].
//!
//! This module owns the per-packet *plan* only. It does not execute it
//! (the LCI NI, `crate::nic::lanai`, or the Open-MX NIC, `crate::nic::Nic`),
//! price it on a bus (`crate::host::bus`, `Nic::receive`) nor poll
//! (`crate::library::lci`, the main world's driver and busy poller).
//!
//! Host receive buffer layout (`B` = header + payload capacity + 4 bytes):
//! the FULL word is the last 4 bytes, `[B - 4, B)`. Unshifted strategies put
//! header + payload at offset 0; packet shifting puts payload, header and
//! FULL word flush against the end, so the header (which carries the
//! displacement) and the flag are at fixed offsets whatever the payload.

use crate::config::{Polling, RxDelivery};
use std::fmt;

pub use crate::config::FLAG_BYTES;

/// How the host learns that a packet arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detect {
    /// PIO read of the NI's delivered-packet counter across the I/O bus.
    NiCounter,
    /// Read of the FULL word in (cached) host memory: hit if unchanged, miss
    /// once the NI's DMA invalidated the line.
    HostFlag,
}

/// An arrival-detection strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Pio,
    DoubleDma,
    FullPacket,
    /// double-dma below `split` payload bytes, full-packet at or above.
    StaticSplit {
        split: u32,
    },
    PacketShifting,
}

/// One NI -> host DMA: `bytes` at `offset` of the host receive buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostDma {
    pub offset: u32,
    pub bytes: u32,
}

/// What the firmware does for one packet: up to two DMAs, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub dmas: [Option<HostDma>; 2],
    /// Offset of the FULL word the host polls (`None` with `pio`).
    pub flag_offset: Option<u32>,
    /// Offset of the packet header in the host buffer.
    pub header_offset: u32,
}

impl Plan {
    /// Number of DMAs.
    pub fn dma_count(&self) -> u32 {
        self.dmas.iter().flatten().count() as u32
    }
    /// Bytes moved to the host.
    pub fn dma_bytes(&self) -> u32 {
        self.dmas.iter().flatten().map(|d| d.bytes).sum()
    }

    /// Cache lines of `line` bytes the host reads to see the packet: the
    /// flag's and the `header` bytes' (one line when they share it). The
    /// buffer starts on a line; the NIC's DMA invalidated every line it
    /// wrote, so each is a miss. `pio` reads the header only (its counter
    /// is in NIC memory).
    pub fn poll_lines(&self, header: u32, line: u32) -> u32 {
        let lines = |from: u32, len: u32| (from / line, (from + len.max(1) - 1) / line);
        let (h0, h1) = lines(self.header_offset, header);
        let Some(flag) = self.flag_offset else { return h1 - h0 + 1 };
        let (f0, f1) = lines(flag, FLAG_BYTES);
        let overlap = (h1.min(f1) + 1).saturating_sub(h0.max(f0));
        (h1 - h0 + 1) + (f1 - f0 + 1) - overlap
    }
}

impl Strategy {
    /// The strategy `nic.polling` names; `split` (`nic.split_bytes`) is
    /// used by static-split only.
    pub fn new(polling: Polling, split: u32) -> Self {
        match polling {
            Polling::Pio => Strategy::Pio,
            Polling::DoubleDma => Strategy::DoubleDma,
            Polling::FullPacket => Strategy::FullPacket,
            Polling::StaticSplit => Strategy::StaticSplit { split },
            Polling::PacketShifting => Strategy::PacketShifting,
        }
    }

    /// The strategy of the Open-MX world's `nic.rx_delivery`: myri10ge's
    /// receive-done ring writes the frame, then a completion entry in a
    /// ring of its own (a second DMA; the flag the driver polls is apart
    /// from the header), as `double-dma`; `shifted` is packet shifting.
    pub fn of_delivery(d: RxDelivery) -> Self {
        match d {
            RxDelivery::Ring => Strategy::DoubleDma,
            RxDelivery::Shifted => Strategy::PacketShifting,
        }
    }

    /// How the host detects arrivals under this strategy.
    pub fn detect(self) -> Detect {
        match self {
            Strategy::Pio => Detect::NiCounter,
            _ => Detect::HostFlag,
        }
    }

    /// The plan for a packet with `header` + `payload` bytes into a host
    /// buffer of `buffer` bytes (header + payload capacity + FULL word).
    pub fn plan(self, header: u32, payload: u32, buffer: u32) -> Plan {
        let flag = buffer - FLAG_BYTES;
        let data = HostDma { offset: 0, bytes: header + payload };
        match self {
            Strategy::Pio => Plan { dmas: [Some(data), None], flag_offset: None, header_offset: 0 },
            Strategy::DoubleDma => Plan {
                dmas: [Some(data), Some(HostDma { offset: flag, bytes: FLAG_BYTES })],
                flag_offset: Some(flag),
                header_offset: 0,
            },
            Strategy::FullPacket => Plan {
                dmas: [Some(HostDma { offset: 0, bytes: buffer }), None],
                flag_offset: Some(flag),
                header_offset: 0,
            },
            Strategy::StaticSplit { split } => {
                if payload < split {
                    Strategy::DoubleDma.plan(header, payload, buffer)
                } else {
                    Strategy::FullPacket.plan(header, payload, buffer)
                }
            }
            Strategy::PacketShifting => {
                let bytes = payload + header + FLAG_BYTES;
                Plan {
                    dmas: [Some(HostDma { offset: buffer - bytes, bytes }), None],
                    flag_offset: Some(flag),
                    header_offset: flag - header,
                }
            }
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Strategy::Pio => "pio",
            Strategy::DoubleDma => "double-dma",
            Strategy::FullPacket => "full-packet",
            Strategy::StaticSplit { .. } => "static-split",
            Strategy::PacketShifting => "packet-shifting",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: u32 = 16;
    const B: u32 = 16 + 1024 + 4;

    #[test]
    fn packet_shifting_is_one_dma_with_the_flag_at_the_buffer_end() {
        for payload in [0, 1, 16, 100, 511, 512, 1023, 1024] {
            let p = Strategy::PacketShifting.plan(H, payload, B);
            assert_eq!(p.dma_count(), 1, "payload {payload}");
            let d = p.dmas[0].unwrap();
            assert_eq!(d.offset + d.bytes, B, "DMA ends at the buffer end");
            assert_eq!(p.flag_offset, Some(B - 4));
            assert_eq!(p.header_offset, B - 4 - H);
            assert_eq!(d.bytes, payload + H + 4);
        }
    }

    #[test]
    fn double_dma_is_two_and_full_packet_moves_the_whole_buffer() {
        let p = Strategy::DoubleDma.plan(H, 64, B);
        assert_eq!(p.dma_count(), 2);
        assert_eq!(p.dma_bytes(), H + 64 + 4);
        for payload in [0, 64, 1024] {
            let p = Strategy::FullPacket.plan(H, payload, B);
            assert_eq!((p.dma_count(), p.dma_bytes()), (1, B));
        }
    }

    #[test]
    fn static_split_switches_at_512() {
        let s = Strategy::StaticSplit { split: crate::config::DEFAULT_SPLIT_BYTES };
        assert_eq!(s.plan(H, 511, B).dma_count(), 2);
        assert_eq!(s.plan(H, 512, B), Strategy::FullPacket.plan(H, 512, B));
    }

    #[test]
    fn the_shifted_flag_shares_the_header_line_and_the_ring_flag_does_not() {
        // An Open-MX frame's headers (Ethernet + Open-MX, 48 B) in a 4 KiB
        // page buffer with 64 B lines: myri10ge's ring reads the completion
        // entry's line and the header's; shifted reads one line.
        let (h, b) = (48, 4096);
        for payload in [0, 8, 1452, 4000] {
            let ring = Strategy::of_delivery(RxDelivery::Ring).plan(h, payload, b);
            let shifted = Strategy::of_delivery(RxDelivery::Shifted).plan(h, payload, b);
            assert_eq!((ring.dma_count(), shifted.dma_count()), (2, 1), "payload {payload}");
            assert_eq!((ring.poll_lines(h, 64), shifted.poll_lines(h, 64)), (2, 1), "payload {payload}");
        }
        // A header that does not fit the flag's line spills into the one before.
        assert_eq!(Strategy::PacketShifting.plan(62, 0, b).poll_lines(62, 64), 2);
        assert_eq!(Strategy::Pio.plan(H, 8, B).poll_lines(H, 64), 1);
    }

    #[test]
    fn pio_has_no_flag_and_names_round_trip() {
        assert_eq!(Strategy::Pio.plan(H, 8, B).flag_offset, None);
        assert_eq!(Strategy::Pio.detect(), Detect::NiCounter);
        // Result tables print the names the parser accepts.
        for n in crate::config::variant_names::<Polling>() {
            let p: Polling = toml::Value::String(n.to_string()).try_into().unwrap();
            assert_eq!(Strategy::new(p, 512).to_string(), *n);
        }
        for n in crate::config::variant_names::<RxDelivery>() {
            let d: RxDelivery = toml::Value::String(n.to_string()).try_into().unwrap();
            assert_eq!(d.to_string(), *n);
        }
    }
}
