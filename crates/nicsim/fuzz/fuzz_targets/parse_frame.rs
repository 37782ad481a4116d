//! Fuzz target `parse_frame`: arbitrary bytes through the frame and pcap
//! parsers. Owns nothing but the harness; the invariants checked are the
//! wire module's (no panics; a parsed frame re-emits to bytes that parse to
//! the same frame).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nicsim::wire::{FrameRepr, PcapReader};

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = FrameRepr::parse(data) {
        assert!(frame.header_len() + frame.body.payload_len() <= data.len());
        let bytes = frame.to_bytes();
        assert_eq!(FrameRepr::parse(&bytes), Ok(frame));
    }
    if let Ok(mut reader) = PcapReader::new(data) {
        while let Ok(Some(_)) = reader.next_frame() {}
    }
});
