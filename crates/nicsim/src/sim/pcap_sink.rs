//! The capture of a run (`pcap = FILE`), streamed to its file as the run
//! goes.
//!
//! This module owns the capture file while a run writes it: opening it when
//! the world is built, holding each frame the wire takes until every frame
//! that could come before it in time is known, and writing the frames in
//! time order (ties in the order they were recorded) through a buffered
//! writer. It does not own the file format (`crate::wire::pcap`), what a
//! frame's bytes are (`wire_path` encodes them), nor the file's fate after a
//! run: it writes at the path it is given, never removes, renames nor
//! replaces anything.
//!
//! A frame is stamped with its first bit on the wire, which the world knows
//! when the NIC books the link, often after the event that books it. Every
//! frame recorded later starts at or after that later event's time, so a
//! frame stamped at or before the current event's time can be written: the
//! sink holds only the frames booked ahead of the clock (the frames in
//! flight, bounded by the protocol's windows and the NICs' queues), never
//! the run's. It keeps of each frame the bytes that carry information, its
//! header (at most [`HDR_CAP`] bytes) and its length: the payload is written
//! as zeros, as the simulator keeps no payload contents. The held frames sit
//! in one binary heap whose storage is reused, so recording a frame
//! allocates nothing once the heap has grown to the frames in flight.
//!
//! A run that fails or is stopped leaves the frames written so far at the
//! path, the last record possibly cut: the caller that wants a capture
//! written whole or not at all gives a temporary path and renames it after
//! a successful run (`nicsim run` does, for a regular file; a device or a
//! FIFO is written in place).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufWriter};

use super::frame::{Frame, HDR_CAP};
use crate::time::Instant;
use crate::wire::PcapWriter;
use crate::SimError;

/// Bytes buffered before a write to the file.
const WRITE_BUFFER: usize = 1 << 16;

/// A frame held until its turn: its time, its place among the frames
/// recorded, its length and its header bytes.
struct Held {
    at: Instant,
    seq: u64,
    len: u32,
    head_len: u8,
    head: [u8; HDR_CAP],
}

impl Held {
    fn key(&self) -> (Instant, u64) {
        (self.at, self.seq)
    }
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Held {
    /// Reversed: the heap's top is the earliest frame, the first recorded
    /// at a tie.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// The capture file of a run and the frames held for it.
pub(crate) struct PcapSink {
    out: PcapWriter<BufWriter<File>>,
    /// The path given, for errors.
    path: String,
    held: BinaryHeap<Held>,
    recorded: u64,
    /// The most frames held at once.
    peak_held: usize,
    /// Every frame recorded, in order (tests compare the file with it).
    #[cfg(test)]
    pub(super) log: Vec<(Instant, Vec<u8>)>,
}

impl PcapSink {
    /// Opens (creating or truncating) the capture file at `path` and writes
    /// its global header. A device or a FIFO is opened for writing as it
    /// is.
    pub(crate) fn create(path: &str) -> Result<Self, SimError> {
        let file = File::create(path).map_err(|e| SimError(format!("pcap: cannot create {path:?}: {e}")))?;
        let out = PcapWriter::new(BufWriter::with_capacity(WRITE_BUFFER, file))
            .map_err(|e| SimError(format!("pcap: cannot write {path:?}: {e}")))?;
        Ok(PcapSink {
            out,
            path: path.to_owned(),
            held: BinaryHeap::new(),
            recorded: 0,
            peak_held: 0,
            #[cfg(test)]
            log: Vec::new(),
        })
    }

    /// Records `frame` (`len` bytes on the wire), whose first bit is on the
    /// wire at `at`, in the event at `now`; first writes every frame held
    /// that starts at or before `now`. `at` is not before `now`.
    #[inline]
    pub(crate) fn record(&mut self, now: Instant, at: Instant, frame: &Frame, len: u32) -> io::Result<()> {
        debug_assert!(at >= now, "a frame stamped {at} recorded at {now}");
        self.write_upto(now)?;
        let mut h = Held { at, seq: self.recorded, len, head_len: 0, head: [0; HDR_CAP] };
        h.head_len = frame.header_bytes(&mut h.head) as u8;
        #[cfg(test)]
        {
            let mut bytes = vec![0u8; len as usize];
            bytes[..h.head_len as usize].copy_from_slice(&h.head[..h.head_len as usize]);
            self.log.push((at, bytes));
        }
        self.recorded += 1;
        self.held.push(h);
        self.peak_held = self.peak_held.max(self.held.len());
        Ok(())
    }

    /// Writes the frames held that start at or before `now`, in order.
    fn write_upto(&mut self, now: Instant) -> io::Result<()> {
        while self.held.peek().is_some_and(|h| h.at <= now) {
            if let Some(h) = self.held.pop() {
                self.out.write_frame_head(h.at, &h.head[..h.head_len as usize], h.len as usize)?;
            }
        }
        Ok(())
    }

    /// The run is over: writes every frame still held and flushes the file.
    pub(crate) fn finish(&mut self) -> Result<(), SimError> {
        self.write_upto(Instant::MAX).and_then(|()| self.out.flush()).map_err(|e| self.write_error(&e))
    }

    /// The error of a failed write, naming the file.
    pub(crate) fn write_error(&self, e: &io::Error) -> SimError {
        SimError(format!("pcap: cannot write {:?}: {e}", self.path))
    }

    /// The most frames the sink held at once.
    #[cfg(test)]
    pub(crate) fn peak_held(&self) -> usize {
        self.peak_held
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::PcapWriter;

    /// Runs a stream of `messages` messages of 64 KiB (46 frames each) with
    /// a capture; checks that the file holds the bytes of every frame
    /// recorded, sorted by time (stably) and written at once; returns the
    /// frames and the most held at once.
    fn stream(messages: u32) -> (usize, usize) {
        let dir = std::env::temp_dir().join(format!("nicsim-pcap-sink-{}-{messages}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("stream.pcap");
        let s = crate::Scenario::from_toml(&format!(
            "pcap = {:?}\n[platform.library]\nmpi_path = \"mtl\"\n\
             [workload]\nkind = \"stream\"\nsize_bytes = 65536\nmessages = {messages}\nwarmup = 0\n",
            path.to_str().unwrap()
        ))
        .unwrap();
        let mut w = super::super::World::build(&s, None, None).unwrap();
        w.run().unwrap();
        let sink = w.wire.pcap.as_deref_mut().unwrap();
        sink.finish().unwrap();
        let (frames, peak) = (sink.log.len(), sink.peak_held());
        let mut all = std::mem::take(&mut sink.log);
        all.sort_by_key(|(t, _)| *t);
        let mut whole = PcapWriter::new(Vec::new()).unwrap();
        for (t, b) in &all {
            whole.write_frame(*t, b).unwrap();
        }
        drop(w);
        let file = std::fs::read(&path).unwrap();
        assert!(file == whole.into_inner(), "the streamed capture differs from the sorted frames");
        std::fs::remove_dir_all(&dir).ok();
        (frames, peak)
    }

    /// The sink holds the frames booked ahead of the clock, the stream's
    /// window of messages (16 of 46 frames: one Open-MX message each, the
    /// MTL path's) at most, however long the run;
    /// its file is the one the whole run's frames, sorted, make.
    #[test]
    fn a_long_stream_is_written_as_it_goes_in_time_order() {
        let (short, short_peak) = stream(100);
        let (long, long_peak) = stream(800);
        assert!(long > 36_000 && long > 6 * short, "{short} and {long} frames");
        let window = crate::workload::STREAM_WINDOW as usize * 46;
        assert!((1..=window).contains(&short_peak), "held {short_peak} frames at once (window {window})");
        assert!(long_peak <= short_peak + 46, "held {long_peak} frames of {long}, {short_peak} of {short}");
    }

    /// Frames recorded out of time order among those held come out in time
    /// order, ties in the order recorded; a frame at the current time is
    /// written before a later one is recorded.
    #[test]
    fn held_frames_leave_by_time_then_recording_order() {
        use crate::time::Instant;
        use crate::wire::{msg, FrameRepr};
        let dir = std::env::temp_dir().join(format!("nicsim-pcap-order-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("order.pcap");
        let mut sink = super::PcapSink::create(path.to_str().unwrap()).unwrap();
        let frame = |len: u32| crate::sim::Frame {
            parsed: Some(FrameRepr::parse_header(&msg::fixture::TINY).unwrap()),
            len,
            ..Default::default()
        };
        let t = |ns: u64| Instant::from_ps(ns * 1_000);
        // (now, at, len): lengths tell the frames apart in the file.
        for (now, at, len) in [(0, 500, 61), (0, 300, 62), (100, 300, 63), (300, 300, 64), (300, 900, 65)] {
            sink.record(t(now), t(at), &frame(len), len).unwrap();
        }
        assert_eq!(sink.held.len(), 2, "the frames at 300 left when the frame at 300 was recorded at 300");
        sink.finish().unwrap();
        let file = std::fs::read(&path).unwrap();
        let mut r = crate::wire::PcapReader::new(&file[..]).unwrap();
        let mut got = Vec::new();
        while let Some((at, bytes)) = r.next_frame().unwrap() {
            got.push((at.as_ps() / 1_000, bytes.len()));
        }
        assert_eq!(got, [(300, 62), (300, 63), (300, 64), (500, 61), (900, 65)]);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_path_that_cannot_be_created_is_named() {
        let e = super::PcapSink::create("/nonexistent-dir/x.pcap").err().unwrap();
        assert!(e.0.starts_with("pcap: cannot create \"/nonexistent-dir/x.pcap\": "), "{e}");
    }
}
