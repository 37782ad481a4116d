//! Packet traces in the classic libpcap file format.
//!
//! This file owns reading and writing pcap files: the 24-byte global header
//! (nanosecond magic `0xa1b23c4d`, version 2.4, snap length 65535,
//! `LINKTYPE_ETHERNET`) and 16-byte record headers, converting simulated
//! [`Instant`]s to and from pcap timestamps at this boundary. Frames are
//! opaque bytes here: it does not decide what is traced (the engine's trace
//! sink) nor decode frames (`FrameRepr::parse`).
//!
//! Source: the pcap file format as documented by tcpdump.org (`pcap-savefile`
//! man page) and draft-ietf-opsawg-pcap; `LINKTYPE_ETHERNET` = 1 from the
//! tcpdump.org link-type list. The reader accepts both byte orders and both
//! microsecond and nanosecond magics, and never panics on corrupt input:
//! every error names the byte offset where the file stops making sense.

use std::io::{self, Read, Write};

use crate::time::Instant;

/// Magic of nanosecond-resolution pcap files.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Magic of classic microsecond-resolution pcap files.
pub const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
/// File format version written (and the major version read).
pub const VERSION: (u16, u16) = (2, 4);
/// Snap length written: frames up to 64 KiB are kept whole.
pub const SNAPLEN: u32 = 65535;
/// `LINKTYPE_ETHERNET`.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Global header length.
pub const GLOBAL_HEADER_LEN: usize = 24;
/// Record header length.
pub const RECORD_HEADER_LEN: usize = 16;
/// Largest record the reader accepts whatever the file's snap length says
/// (Wireshark's limit for Ethernet), so a corrupt length cannot make it
/// allocate gigabytes.
pub const MAX_CAPLEN: u32 = 262_144;

/// Errors from reading a pcap file. `offset` is the file byte offset of the
/// field or record at fault.
#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    #[error("I/O error at byte offset {offset}: {source}")]
    Io {
        offset: u64,
        #[source]
        source: io::Error,
    },
    #[error("not a pcap file: magic {magic:#010x} at byte offset 0")]
    BadMagic { magic: u32 },
    #[error("unsupported pcap version {major}.{minor} at byte offset 4")]
    BadVersion { major: u16, minor: u16 },
    #[error("truncated pcap global header: need {need} bytes, have {have}")]
    TruncatedHeader { need: usize, have: usize },
    #[error("truncated pcap record at byte offset {offset}: need {need} bytes, have {have}")]
    TruncatedRecord { offset: u64, need: usize, have: usize },
    #[error("pcap record at byte offset {offset}: captured length {caplen} exceeds snap length {snaplen}")]
    CapLenTooLarge { offset: u64, caplen: u32, snaplen: u32 },
    #[error("pcap record at byte offset {offset}: {what}")]
    BadTimestamp { offset: u64, what: &'static str },
}

impl PcapError {
    /// File byte offset of the error.
    pub fn offset(&self) -> u64 {
        match *self {
            PcapError::Io { offset, .. }
            | PcapError::TruncatedRecord { offset, .. }
            | PcapError::CapLenTooLarge { offset, .. }
            | PcapError::BadTimestamp { offset, .. } => offset,
            PcapError::BadMagic { .. } => 0,
            PcapError::BadVersion { .. } => 4,
            PcapError::TruncatedHeader { have, .. } => have as u64,
        }
    }
}

/// Writes frames to a nanosecond pcap stream.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    w: W,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header (little-endian, nanosecond magic).
    pub fn new(mut w: W) -> io::Result<Self> {
        let mut h = [0u8; GLOBAL_HEADER_LEN];
        h[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
        h[4..6].copy_from_slice(&VERSION.0.to_le_bytes());
        h[6..8].copy_from_slice(&VERSION.1.to_le_bytes());
        // 8..12 thiszone = 0, 12..16 sigfigs = 0
        h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter { w })
    }

    /// Appends one frame seen at `ts` (truncated to nanoseconds). Frames
    /// longer than [`SNAPLEN`] are cut, keeping their original length.
    pub fn write_frame(&mut self, ts: Instant, bytes: &[u8]) -> io::Result<()> {
        let (secs, nanos) = ts.to_secs_nanos();
        let orig = u32::try_from(bytes.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame longer than 4 GiB"))?;
        let cap = orig.min(SNAPLEN);
        let mut h = [0u8; RECORD_HEADER_LEN];
        h[0..4].copy_from_slice(&secs.to_le_bytes());
        h[4..8].copy_from_slice(&nanos.to_le_bytes());
        h[8..12].copy_from_slice(&cap.to_le_bytes());
        h[12..16].copy_from_slice(&orig.to_le_bytes());
        self.w.write_all(&h)?;
        self.w.write_all(&bytes[..cap as usize])
    }

    /// Appends one frame of `len` bytes seen at `ts` of which only the
    /// first bytes, `head`, are known: the rest of the record is zeros (the
    /// simulator keeps no payload contents). The bytes are those
    /// [`PcapWriter::write_frame`] writes for `head` padded with zeros to
    /// `len`, without making that frame. A `head` longer than `len` is
    /// written whole, `len` taken as its length.
    pub fn write_frame_head(&mut self, ts: Instant, head: &[u8], len: usize) -> io::Result<()> {
        /// Zeros to pad from, a chunk at a time.
        static ZEROS: [u8; 4096] = [0; 4096];
        let len = len.max(head.len());
        let (secs, nanos) = ts.to_secs_nanos();
        let orig =
            u32::try_from(len).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame longer than 4 GiB"))?;
        let cap = orig.min(SNAPLEN) as usize;
        let mut h = [0u8; RECORD_HEADER_LEN];
        h[0..4].copy_from_slice(&secs.to_le_bytes());
        h[4..8].copy_from_slice(&nanos.to_le_bytes());
        h[8..12].copy_from_slice(&(cap as u32).to_le_bytes());
        h[12..16].copy_from_slice(&orig.to_le_bytes());
        self.w.write_all(&h)?;
        let known = head.len().min(cap);
        self.w.write_all(&head[..known])?;
        let mut zeros = cap - known;
        while zeros > 0 {
            let n = zeros.min(ZEROS.len());
            self.w.write_all(&ZEROS[..n])?;
            zeros -= n;
        }
        Ok(())
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// Returns the underlying writer.
    pub fn into_inner(self) -> W {
        self.w
    }
}

/// Reads frames from a pcap stream (either byte order, µs or ns).
#[derive(Debug)]
pub struct PcapReader<R: Read> {
    r: R,
    offset: u64,
    big_endian: bool,
    nanos: bool,
    snaplen: u32,
    linktype: u32,
}

/// Reads until `buf` is full or EOF; returns the bytes read.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8], offset: u64) -> Result<usize, PcapError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(source) => return Err(PcapError::Io { offset: offset + got as u64, source }),
        }
    }
    Ok(got)
}

impl<R: Read> PcapReader<R> {
    /// Reads and checks the global header.
    pub fn new(mut r: R) -> Result<Self, PcapError> {
        let mut h = [0u8; GLOBAL_HEADER_LEN];
        let got = read_full(&mut r, &mut h, 0)?;
        if got >= 4 {
            // Check the magic first so a non-pcap file says so.
            let le = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
            if ![MAGIC_NANOS, MAGIC_MICROS].contains(&le) && ![MAGIC_NANOS, MAGIC_MICROS].contains(&le.swap_bytes()) {
                return Err(PcapError::BadMagic { magic: le });
            }
        }
        if got < GLOBAL_HEADER_LEN {
            return Err(PcapError::TruncatedHeader { need: GLOBAL_HEADER_LEN, have: got });
        }
        let le = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let big_endian = !(le == MAGIC_NANOS || le == MAGIC_MICROS);
        let magic = if big_endian { le.swap_bytes() } else { le };
        let u16_at = |i: usize| {
            let b = [h[i], h[i + 1]];
            if big_endian {
                u16::from_be_bytes(b)
            } else {
                u16::from_le_bytes(b)
            }
        };
        let u32_at = |i: usize| {
            let b = [h[i], h[i + 1], h[i + 2], h[i + 3]];
            if big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        let (major, minor) = (u16_at(4), u16_at(6));
        if major != VERSION.0 {
            return Err(PcapError::BadVersion { major, minor });
        }
        Ok(PcapReader {
            r,
            offset: GLOBAL_HEADER_LEN as u64,
            big_endian,
            nanos: magic == MAGIC_NANOS,
            snaplen: u32_at(16),
            linktype: u32_at(20),
        })
    }

    /// The file's link type (1 = Ethernet).
    pub fn linktype(&self) -> u32 {
        self.linktype
    }

    /// The file's snap length.
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// Whether timestamps are in nanoseconds (else microseconds).
    pub fn is_nanosecond(&self) -> bool {
        self.nanos
    }

    /// The next frame and its timestamp, `None` at a clean end of file.
    pub fn next_frame(&mut self) -> Result<Option<(Instant, Vec<u8>)>, PcapError> {
        let start = self.offset;
        let mut h = [0u8; RECORD_HEADER_LEN];
        let got = read_full(&mut self.r, &mut h, start)?;
        if got == 0 {
            return Ok(None);
        }
        if got < RECORD_HEADER_LEN {
            return Err(PcapError::TruncatedRecord { offset: start, need: RECORD_HEADER_LEN, have: got });
        }
        let u32_at = |i: usize| {
            let b = [h[i], h[i + 1], h[i + 2], h[i + 3]];
            if self.big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        let (secs, frac, caplen) = (u32_at(0), u32_at(4), u32_at(8));
        let limit = if self.snaplen == 0 { MAX_CAPLEN } else { self.snaplen.min(MAX_CAPLEN) };
        if caplen > limit {
            return Err(PcapError::CapLenTooLarge { offset: start + 8, caplen, snaplen: limit });
        }
        let (frac_max, ps_per_frac) = if self.nanos { (1_000_000_000, 1_000) } else { (1_000_000, 1_000_000) };
        if frac >= frac_max {
            return Err(PcapError::BadTimestamp {
                offset: start + 4,
                what: "sub-second timestamp field not below one second",
            });
        }
        let ps = u64::from(secs)
            .checked_mul(1_000_000_000_000)
            .and_then(|s| s.checked_add(u64::from(frac) * ps_per_frac))
            .filter(|&ps| ps <= Instant::LIMIT.as_ps())
            .ok_or(PcapError::BadTimestamp {
                offset: start,
                what: "timestamp beyond the simulated clock's range (at most 100 days)",
            })?;
        let mut data = vec![0u8; caplen as usize];
        let data_off = start + RECORD_HEADER_LEN as u64;
        let got = read_full(&mut self.r, &mut data, data_off)?;
        if got < data.len() {
            return Err(PcapError::TruncatedRecord {
                offset: start,
                need: RECORD_HEADER_LEN + data.len(),
                have: RECORD_HEADER_LEN + got,
            });
        }
        self.offset = data_off + u64::from(caplen);
        Ok(Some((Instant::from_ps(ps), data)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testutil::Gen;
    use crate::wire::{ack, msg, pull_reply, FrameRepr};

    fn three_frames() -> Vec<(Instant, Vec<u8>)> {
        let tiny = msg::fixture::TINY.to_vec();
        let mut reply = pull_reply::fixture::pull_reply().to_bytes();
        for (i, b) in reply[32..].iter_mut().enumerate() {
            *b = i as u8;
        }
        let ack = ack::fixture::ack().to_bytes();
        vec![
            (Instant::from_ps(0), tiny),
            (Instant::from_ps(1_234_567_000), reply),
            (Instant::from_ps(3_000_000_000_001_000), ack),
        ]
    }

    fn write(frames: &[(Instant, Vec<u8>)]) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        for (t, f) in frames {
            w.write_frame(*t, f).unwrap();
        }
        w.flush().unwrap();
        w.into_inner()
    }

    fn read_all(bytes: &[u8]) -> Result<Vec<(Instant, Vec<u8>)>, PcapError> {
        let mut r = PcapReader::new(bytes)?;
        let mut v = Vec::new();
        while let Some(f) = r.next_frame()? {
            v.push(f);
        }
        Ok(v)
    }

    #[test]
    fn global_header_bytes() {
        let file = write(&[]);
        assert_eq!(
            file,
            [
                0x4d, 0x3c, 0xb2, 0xa1, // nanosecond magic, little-endian
                0x02, 0x00, 0x04, 0x00, // version 2.4
                0x00, 0x00, 0x00, 0x00, // thiszone
                0x00, 0x00, 0x00, 0x00, // sigfigs
                0xff, 0xff, 0x00, 0x00, // snaplen 65535
                0x01, 0x00, 0x00, 0x00, // LINKTYPE_ETHERNET
            ]
        );
    }

    #[test]
    fn record_header_bytes() {
        let file = write(&[(Instant::from_ps(2_000_000_005_000), vec![0xab; 3])]);
        assert_eq!(
            &file[24..],
            &[
                0x02, 0x00, 0x00, 0x00, // 2 s
                0x05, 0x00, 0x00, 0x00, // 5 ns
                0x03, 0x00, 0x00, 0x00, // caplen
                0x03, 0x00, 0x00, 0x00, // orig len
                0xab, 0xab, 0xab,
            ]
        );
    }

    #[test]
    fn a_known_head_writes_the_zero_padded_frame() {
        let head = msg::fixture::TINY[..20].to_vec();
        for len in [20, 21, 60, 1500, 4096 + 7, SNAPLEN as usize, SNAPLEN as usize + 3] {
            let mut padded = head.clone();
            padded.resize(len, 0);
            let t = Instant::from_ps(1_234_567_891_000);
            let mut w = PcapWriter::new(Vec::new()).unwrap();
            w.write_frame_head(t, &head, len).unwrap();
            assert_eq!(w.into_inner(), write(&[(t, padded)]), "len {len}");
        }
        // A head longer than the length given: the head, whole.
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write_frame_head(Instant::ZERO, &head, 3).unwrap();
        assert_eq!(w.into_inner(), write(&[(Instant::ZERO, head)]));
    }

    #[test]
    fn three_frames_round_trip() {
        let frames = three_frames();
        let file = write(&frames);
        let r = PcapReader::new(&file[..]).unwrap();
        assert_eq!(r.linktype(), LINKTYPE_ETHERNET);
        assert_eq!(r.snaplen(), SNAPLEN);
        assert!(r.is_nanosecond());
        let back = read_all(&file).unwrap();
        assert_eq!(back, frames);
        // And the frames still decode.
        assert_eq!(FrameRepr::parse(&back[0].1), Ok(msg::fixture::tiny()));
        assert_eq!(FrameRepr::parse(&back[1].1), Ok(pull_reply::fixture::pull_reply()));
        assert_eq!(FrameRepr::parse(&back[2].1), Ok(ack::fixture::ack()));
    }

    #[test]
    fn long_frames_are_cut_at_snaplen() {
        let big = vec![7u8; SNAPLEN as usize + 10];
        let file = write(&[(Instant::ZERO, big)]);
        assert_eq!(&file[24 + 12..24 + 16], &(SNAPLEN + 10).to_le_bytes());
        let back = read_all(&file).unwrap();
        assert_eq!(back[0].1.len(), SNAPLEN as usize);
    }

    #[test]
    fn reads_big_endian_microsecond_files() {
        let mut f = Vec::new();
        f.extend_from_slice(&MAGIC_MICROS.to_be_bytes());
        f.extend_from_slice(&[0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0]);
        f.extend_from_slice(&1500u32.to_be_bytes());
        f.extend_from_slice(&1u32.to_be_bytes());
        f.extend_from_slice(&3u32.to_be_bytes()); // 3 s
        f.extend_from_slice(&250u32.to_be_bytes()); // 250 us
        f.extend_from_slice(&2u32.to_be_bytes());
        f.extend_from_slice(&60u32.to_be_bytes());
        f.extend_from_slice(&[0xaa, 0xbb]);
        let mut r = PcapReader::new(&f[..]).unwrap();
        assert!(!r.is_nanosecond());
        assert_eq!(r.snaplen(), 1500);
        let (t, d) = r.next_frame().unwrap().unwrap();
        assert_eq!(t, Instant::from_ps(3_000_250_000_000));
        assert_eq!(d, vec![0xaa, 0xbb]);
        assert!(r.next_frame().unwrap().is_none());
    }

    #[test]
    fn corrupt_files_name_offsets() {
        let file = write(&three_frames());
        let rec1 = 24 + 16 + 45; // second record starts here

        let mut f = file.clone();
        f[0] = 0;
        let e = PcapReader::new(&f[..]).unwrap_err();
        assert!(matches!(e, PcapError::BadMagic { .. }), "{e}");
        assert!(e.to_string().contains("byte offset 0"), "{e}");

        let mut f = file.clone();
        f[4] = 9;
        let e = PcapReader::new(&f[..]).unwrap_err();
        assert!(matches!(e, PcapError::BadVersion { major: 9, minor: 4 }));
        assert_eq!(e.offset(), 4);

        // caplen > snaplen in the second record.
        let mut f = file.clone();
        f[rec1 + 8..rec1 + 12].copy_from_slice(&70_000u32.to_le_bytes());
        let e = read_all(&f).unwrap_err();
        assert!(matches!(e, PcapError::CapLenTooLarge { caplen: 70_000, snaplen: 65535, .. }), "{e}");
        assert_eq!(e.offset(), rec1 as u64 + 8);
        assert!(e.to_string().contains(&format!("byte offset {}", rec1 + 8)));

        // Nanoseconds field of a second or more.
        let mut f = file.clone();
        f[rec1 + 4..rec1 + 8].copy_from_slice(&1_000_000_000u32.to_le_bytes());
        assert_eq!(read_all(&f).unwrap_err().offset(), rec1 as u64 + 4);

        // Seconds beyond the picosecond clock.
        let mut f = file.clone();
        f[rec1..rec1 + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            read_all(&f).unwrap_err(),
            PcapError::BadTimestamp { offset, .. } if offset == rec1 as u64
        ));

        // Seconds past the simulated clock's limit (100 days), and at it.
        let limit_s = (Instant::LIMIT.as_ps() / 1_000_000_000_000) as u32;
        let mut f = file.clone();
        f[rec1..rec1 + 4].copy_from_slice(&(limit_s + 1).to_le_bytes());
        assert!(matches!(read_all(&f).unwrap_err(), PcapError::BadTimestamp { offset, .. } if offset == rec1 as u64));
        f[rec1..rec1 + 8].copy_from_slice(&[limit_s.to_le_bytes(), [0; 4]].concat());
        assert_eq!(read_all(&f).unwrap()[1].0, Instant::LIMIT);

        // Record data cut short.
        let e = read_all(&file[..rec1 + 20]).unwrap_err();
        assert!(
            matches!(e, PcapError::TruncatedRecord { offset, need, have: 20 }
                if offset == rec1 as u64 && need == 16 + 1500),
            "{e}"
        );

        // Record header cut short.
        let e = read_all(&file[..rec1 + 5]).unwrap_err();
        assert!(matches!(e, PcapError::TruncatedRecord { need: 16, have: 5, .. }));
        assert_eq!(e.offset(), rec1 as u64);
    }

    #[test]
    fn every_prefix_reads_or_errors() {
        let frames = three_frames();
        let file = write(&frames);
        let mut boundaries = vec![24];
        for (_, f) in &frames {
            boundaries.push(boundaries.last().unwrap() + 16 + f.len());
        }
        for n in 0..=file.len() {
            match read_all(&file[..n]) {
                Ok(v) => {
                    let k = boundaries
                        .iter()
                        .position(|&b| b == n)
                        .unwrap_or_else(|| panic!("prefix {n} read cleanly but is not a record boundary"));
                    assert_eq!(v, frames[..k]);
                }
                Err(e) => {
                    assert!(!boundaries.contains(&n), "prefix {n}: {e}");
                    if n < 24 {
                        assert!(matches!(e, PcapError::TruncatedHeader { have, .. } if have == n));
                    }
                }
            }
        }
    }

    #[test]
    fn garbage_never_panics() {
        let mut g = Gen::new(0x9ca9);
        let good = write(&three_frames());
        for i in 0..20_000 {
            let f = if i % 2 == 0 {
                let n = g.upto(300) as usize;
                let mut f = g.bytes(n);
                if n >= 4 {
                    f[..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
                }
                if n >= 6 {
                    f[4] = 2;
                    f[5] = 0;
                }
                f
            } else {
                let mut f = good.clone();
                for _ in 0..=g.upto(4) {
                    let j = g.upto(f.len() as u64 - 1) as usize;
                    f[j] = g.u8();
                }
                f.truncate(g.upto(f.len() as u64) as usize);
                f
            };
            let _ = read_all(&f);
        }
    }

    #[test]
    fn io_errors_carry_offsets() {
        #[derive(Debug)]
        struct Failing(usize);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("disk on fire"));
                }
                let n = buf.len().min(self.0);
                buf[..n].fill(0);
                self.0 -= n;
                Ok(n)
            }
        }
        let e = PcapReader::new(Failing(10)).unwrap_err();
        assert!(matches!(e, PcapError::Io { offset: 10, .. }), "{e}");
        assert!(e.to_string().contains("disk on fire"));
    }
}
