//! Tests of the LANai firmware's answers: one [`FwOutcome`] per event,
//! whose fields the world does in order, and its transmit step on the
//! NIC (`Nic::lanai_head`, `Nic::lanai_transmit`).

use super::*;
use crate::lci::testing;

/// A two-host stream on `lci2000`, built, not run: the receiver's NIC
/// (host 1's) has neither sent nor received a packet.
fn world() -> crate::sim::World {
    testing::world("[workload]\nkind = \"stream\"\nsize_bytes = 64\nmessages = 1")
}

/// A packet of `payload` bytes from host 1 to `dst`.
fn pkt(dst: u32, payload: u32) -> Packet {
    Packet { src: 1, dst, payload, last: true, msg_bytes: u64::from(payload), ..Packet::default() }
}

/// The host writes `p` into a send buffer: the firmware's `Posted` at `now`.
fn posted(nic: &mut Nic, now: Instant, p: Packet) -> FwOutcome {
    let id = nic.lanai.as_deref_mut().unwrap().packets.put(p).unwrap();
    nic.lanai_event(now, (FwEv::Posted, id), 0)
}

#[test]
fn a_posted_packet_is_taken_and_its_transmit_programmed_once_the_firmware_is_free() {
    let mut w = world();
    let nic = &mut w.hosts[1].nic;
    let t0 = Instant::ZERO;
    let first = posted(nic, t0, pkt(0, 100));
    let (t, ev) = first.steps[0].expect("the idle firmware programs the first");
    assert_eq!((first.taken, ev, first.steps[1]), (true, FwEv::TxReady, None));
    assert!(t > t0, "its send step takes firmware time");
    // A second packet is taken at once; its DMA waits for the firmware.
    let second = posted(nic, t0, pkt(0, 200));
    assert_eq!(second, FwOutcome { taken: true, ..FwOutcome::default() });
    // Programmed: the world is asked to transmit the head, once its destination has a buffer.
    assert_eq!(nic.lanai_event(t, (FwEv::TxReady, 0), 0).transmit, Some(false));
    assert_eq!((nic.lanai_head(false), nic.lanai_head(true)), (Some(0), None));
    // It leaves with its header; the firmware programs the next one after it.
    let header = nic.lanai.as_deref().unwrap().header();
    let (p, bytes, next) = nic.lanai_transmit(t, false);
    assert_eq!((p.payload, bytes), (100, header + 100));
    assert!(next.is_some_and(|n| n > t), "{next:?}");
    let (p, _, next) = nic.lanai_transmit(next.unwrap(), false);
    assert_eq!((p.payload, next, nic.lanai_head(false)), (200, None, None));
    assert_eq!(nic.lanai.as_deref().unwrap().packets_sent, 0, "the host's PIO write counts its packets");
}

#[test]
fn an_arrival_asks_for_its_delivery_and_a_finished_delivery_frees_its_buffer_before_the_next_step() {
    let mut w = world();
    let nic = &mut w.hosts[1].nic;
    let t0 = Instant::ZERO;
    let ni = nic.lanai.as_deref_mut().unwrap();
    let arriving = Packet { src: 0, ..pkt(1, 64) };
    let (a, b) = (ni.packets.put(arriving).unwrap(), ni.packets.put(arriving).unwrap());
    let arrived = nic.lanai_event(t0, (FwEv::Arrive, a), 0);
    let (mut t, ev) = arrived.steps[0].expect("the idle receive engine starts its delivery");
    assert_eq!((ev, arrived.delivered, arrived.freed), (FwEv::RxStep, None, false));
    // The second packet waits for the first's delivery.
    assert_eq!(nic.lanai_event(t0, (FwEv::Arrive, b), 0).steps, [None, None]);
    loop {
        let o = nic.lanai_event(t, (FwEv::RxStep, 0), 0);
        if let Some(p) = o.delivered {
            // Visible to the host, its buffer freed, then the next delivery.
            assert_eq!((p.payload, o.freed), (64, true));
            assert!(matches!(o.steps, [Some((_, FwEv::RxStep)), None]), "{o:?}");
            break;
        }
        t = o.steps[0].expect("the delivery goes on").0;
    }
}
