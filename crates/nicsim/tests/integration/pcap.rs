//! `pcap = FILE` writes every simulated frame; reading it back gives
//! parseable Open-MX frames in time order, one per frame sent.

use nicsim::wire::{FrameRepr, PacketKind, PcapReader};

#[test]
fn pcap_round_trip_frame_by_frame() {
    let dir = std::env::temp_dir().join(format!("nicsim-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pp.pcap");
    let m = super::run(&format!(
        "pcap = {:?}\n[workload]\nkind = \"pingpong\"\nsize_bytes = 100000\niterations = 2\nwarmup = 0\n",
        path.to_str().unwrap()
    ));
    let mut r = PcapReader::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap())).unwrap();
    let (mut n, mut last) = (0u64, None);
    let mut kinds = std::collections::BTreeSet::new();
    while let Some((t, bytes)) = r.next_frame().unwrap() {
        let f = FrameRepr::parse(&bytes).unwrap_or_else(|e| panic!("frame {n}: {e}"));
        assert_eq!(bytes.len(), f.frame_len(), "frame {n} length");
        assert!(last.is_none_or(|l| l <= t), "frame {n} out of time order");
        last = Some(t);
        kinds.insert(format!("{}", f.kind()));
        n += 1;
    }
    assert_eq!(n as f64, m.get("frames").unwrap());
    for k in [PacketKind::Rndv, PacketKind::Pull, PacketKind::PullReply, PacketKind::Notify] {
        assert!(kinds.contains(&format!("{k}")), "{k} missing from {kinds:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
