//! Tests of the frame codec: every packet type round-trips through its fixture bytes, and malformed frames are refused.

use super::*;
use crate::wire::testutil::Gen;
use crate::wire::{host_mac, pull_magic};

/// (name, header fixture bytes, expected repr) for every packet type.
fn fixtures() -> Vec<(&'static str, &'static [u8], FrameRepr)> {
    vec![
        ("tiny", &msg::fixture::TINY[..], msg::fixture::tiny()),
        ("small", &msg::fixture::SMALL[..], msg::fixture::small()),
        ("medium", &medium::fixture::MEDIUM[..], medium::fixture::medium()),
        ("rndv", &rndv::fixture::RNDV[..], rndv::fixture::rndv()),
        ("pull", &pull::fixture::PULL[..], pull::fixture::pull()),
        ("pull_reply", &pull_reply::fixture::PULL_REPLY[..], pull_reply::fixture::pull_reply()),
        ("notify", &notify::fixture::NOTIFY[..], notify::fixture::notify()),
        ("ack", &ack::fixture::ACK[..], ack::fixture::ack()),
    ]
}

/// The fixture completed into a whole frame: zero payload and padding
/// where the fixture stops.
fn whole(fixture: &[u8], r: &FrameRepr) -> Vec<u8> {
    let mut v = fixture.to_vec();
    v.resize(r.frame_len(), 0);
    v
}

#[test]
fn test_parse() {
    for (name, fx, want) in fixtures() {
        let frame = whole(fx, &want);
        assert_eq!(FrameRepr::parse(&frame), Ok(want), "{name}");
        assert_eq!(want.kind().to_string(), name);
    }
}

#[test]
fn test_emit() {
    for (name, fx, r) in fixtures() {
        let mut buf = vec![0xeeu8; r.header_len()];
        r.emit(&mut buf);
        assert_eq!(&buf[..], &fx[..r.header_len()], "{name}");
    }
    // The tiny fixture includes its payload: emit leaves it to the caller.
    let r = msg::fixture::tiny();
    let mut buf = [0u8; 45];
    buf[40..].copy_from_slice(b"hello");
    r.emit(&mut buf);
    assert_eq!(buf, msg::fixture::TINY);
}

#[test]
fn test_check_len() {
    // Every prefix of every whole fixture frame: an error naming the
    // missing length until header + payload are present, then success.
    for (name, fx, r) in fixtures() {
        let frame = whole(fx, &r);
        let need = r.header_len() + r.body.payload_len();
        for n in 0..=frame.len() {
            let got = FrameRepr::parse(&frame[..n]);
            if n < need {
                match got {
                    Err(Error::Truncated { need: k, have }) => {
                        assert_eq!(have, n, "{name} prefix {n}");
                        assert!(k > n && k <= need, "{name} prefix {n}: need {k}");
                    }
                    other => panic!("{name} prefix {n}: {other:?}"),
                }
            } else {
                assert_eq!(got, Ok(r), "{name} prefix {n}");
            }
        }
    }
}

#[test]
fn lengths_per_type() {
    let want = [
        ("tiny", 40, 60),
        ("small", 40, 168),
        ("medium", 48, 48 + 824),
        ("rndv", 48, 60),
        ("pull", 60, 60),
        ("pull_reply", 32, 32 + 1468),
        ("notify", 40, 60),
        ("ack", 44, 60),
    ];
    for ((name, _, r), (wname, hdr, frame)) in fixtures().into_iter().zip(want) {
        assert_eq!(name, wname);
        assert_eq!(r.header_len(), hdr, "{name}");
        assert_eq!(r.frame_len(), frame, "{name}");
        assert_eq!(r.to_bytes().len(), frame, "{name}");
    }
}

#[test]
fn steering_endpoint() {
    assert_eq!(msg::fixture::tiny().body.dst_endpoint(), 3);
    assert_eq!(pull::fixture::pull().body.dst_endpoint(), 1);
    assert_eq!(pull_reply::fixture::pull_reply().body.dst_endpoint(), 1);
    for (name, fx, r) in fixtures() {
        if r.kind() != PacketKind::PullReply {
            assert_eq!(fx[17], r.body.dst_endpoint(), "{name}: byte 18");
        } else {
            assert_eq!(fx[31] ^ 0x80, r.body.dst_endpoint(), "{name}: byte 32");
        }
    }
}

#[test]
fn limits_are_checked_with_offsets() {
    let mut f = whole(&msg::fixture::TINY, &msg::fixture::tiny());
    f[21] = 33;
    f.resize(100, 0);
    assert_eq!(FrameRepr::parse(&f), Err(Error::Malformed { offset: 20, what: "tiny length exceeds 32 bytes" }));
    let mut f = whole(&msg::fixture::SMALL, &msg::fixture::small());
    f[21] = 129;
    f.resize(200, 0);
    assert_eq!(FrameRepr::parse(&f).unwrap_err().offset(), 20);
    let mut f = whole(&medium::fixture::MEDIUM, &medium::fixture::medium());
    f[42] = 32;
    assert_eq!(FrameRepr::parse(&f).unwrap_err().offset(), 42);
    let mut f = whole(&pull::fixture::PULL, &pull::fixture::pull());
    f[12] = 0x08;
    f[13] = 0x00;
    assert_eq!(FrameRepr::parse(&f), Err(Error::NotOpenMx { ethertype: 0x0800 }));
    f[12] = 0x86;
    f[13] = 0xdf;
    f[16] = 0x24 | 0x80;
    assert_eq!(FrameRepr::parse(&f), Err(Error::UnsupportedType { ptype: 0x24 }));
}

fn random_frame(g: &mut Gen) -> FrameRepr {
    let body = match g.upto(7) {
        0 => OmxBody::Tiny {
            dst_ep: g.u8(),
            src_ep: g.u8(),
            session: g.u32(),
            seq: g.u16(),
            piggy_ack: g.u16(),
            match_info: g.u64(),
            length: g.edgy(TINY_MAX as u64) as u8,
        },
        1 => OmxBody::Small {
            dst_ep: g.u8(),
            src_ep: g.u8(),
            session: g.u32(),
            seq: g.u16(),
            piggy_ack: g.u16(),
            match_info: g.u64(),
            length: g.edgy(SMALL_MAX as u64) as u16,
        },
        2 => {
            let msg_length = g.edgy(1 << 20) as u32;
            OmxBody::Medium {
                dst_ep: g.u8(),
                src_ep: g.u8(),
                session: g.u32(),
                seq: g.u16(),
                piggy_ack: g.u16(),
                match_info: g.u64(),
                msg_length,
                frag_seq: g.edgy(MEDIUM_MAX_FRAGS as u64 - 1) as u8,
                frag_pipeline: g.u8(),
                frag_length: g.edgy(u64::from(msg_length.min(8192))) as u16,
            }
        }
        3 => OmxBody::Rndv {
            dst_ep: g.u8(),
            src_ep: g.u8(),
            session: g.u32(),
            seq: g.u16(),
            piggy_ack: g.u16(),
            match_info: g.u64(),
            msg_length: g.u32(),
            rdma_id: g.u8(),
            rdma_seqnum: g.u8(),
            rdma_offset: g.u16(),
        },
        4 => OmxBody::Pull {
            dst_ep: g.u8(),
            src_ep: g.u8(),
            session: g.u32(),
            total_length: g.u32(),
            block_length: g.u32(),
            first_frame_offset: g.u32(),
            frame_index: g.u32(),
            pulled_rdma_id: g.u8(),
            src_pull_handle: g.u32(),
            src_magic: pull_magic(g.u8()),
        },
        5 => OmxBody::PullReply {
            frame_seqnum: g.u8(),
            frame_length: g.edgy(8968) as u16,
            msg_offset: g.u32(),
            dst_pull_handle: g.u32(),
            dst_magic: g.u32(),
        },
        6 => OmxBody::Notify {
            dst_ep: g.u8(),
            src_ep: g.u8(),
            session: g.u32(),
            seq: g.u16(),
            piggy_ack: g.u16(),
            total_length: g.u32(),
            puller_rdma_id: g.u8(),
            puller_rdma_seqnum: g.u8(),
        },
        _ => OmxBody::Ack {
            dst_ep: g.u8(),
            src_ep: g.u8(),
            session: g.u32(),
            lib_seqnum: g.u16(),
            lib_piggyack: g.u16(),
        },
    };
    FrameRepr {
        dst_mac: host_mac(g.u16()),
        src_mac: if g.bool() {
            host_mac(g.u16())
        } else {
            let b = g.bytes(6);
            [b[0], b[1], b[2], b[3], b[4], b[5]]
        },
        src_peer: g.u16(),
        marked: g.bool(),
        body,
    }
}

#[test]
fn round_trip_many() {
    let mut g = Gen::new(0x0111);
    for _ in 0..20_000 {
        let r = random_frame(&mut g);
        let bytes = r.to_bytes();
        assert_eq!(bytes.len(), r.frame_len());
        assert!(bytes.len() >= MIN_FRAME_LEN);
        assert_eq!(FrameRepr::parse(&bytes), Ok(r));
        // The steering bytes a NIC reads match the repr.
        assert_eq!(bytes[16] & 0x7f, r.kind().ptype());
        assert_eq!(bytes[16] & 0x80 != 0, r.marked);
        if r.kind() == PacketKind::PullReply {
            assert_eq!(bytes[31] ^ 0x80, r.body.dst_endpoint());
        } else {
            assert_eq!(bytes[17], r.body.dst_endpoint());
        }
    }
}

#[test]
fn garbage_never_panics() {
    let mut g = Gen::new(0xbad);
    let mut ok = 0usize;
    for i in 0..200_000 {
        let len = g.upto(160) as usize;
        let mut b = g.bytes(len);
        // Steer most inputs past the early checks so the bodies get fuzzed.
        if i % 4 != 0 && len > 16 {
            b[12] = 0x86;
            b[13] = 0xdf;
            let kinds = PacketKind::ALL;
            b[16] = kinds[g.upto(7) as usize].ptype() | (g.u8() & 0x80);
            if i % 3 == 0 && len > 43 {
                b[28] = 0x55; // liback type, so acks parse sometimes
                b[20] = 16;
                b[21] &= 0x1f; // small lengths, so tiny/small parse sometimes
                b[42] &= 0x1f;
            }
        }
        match FrameRepr::parse(&b) {
            Ok(r) => {
                ok += 1;
                assert!(r.header_len() + r.body.payload_len() <= b.len());
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    assert!(ok > 100, "generator should reach successful parses, got {ok}");
}

#[test]
fn mutated_fixtures_never_panic() {
    let mut g = Gen::new(0xf1f0);
    for (_, fx, r) in fixtures() {
        let base = whole(fx, &r);
        for _ in 0..5_000 {
            let mut b = base.clone();
            for _ in 0..=g.upto(3) {
                let i = g.upto(b.len() as u64 - 1) as usize;
                b[i] = g.u8();
            }
            let cut = g.upto(b.len() as u64) as usize;
            let _ = FrameRepr::parse(&b[..cut]);
            let _ = FrameRepr::parse(&b);
        }
    }
}

#[test]
#[should_panic(expected = "pull header needs 60")]
fn emit_into_short_buffer_panics() {
    pull::fixture::pull().emit(&mut [0u8; 59]);
}
