//! Tests of the NIC's receive queues: buffer classes and ring occupancy,
//! jumbo frames across page buffers, and the DMAs of both directions on a
//! shared host bus.

use super::*;
use crate::config::{preset_text, Platform, Times};

/// The omx2009 NIC with one queue, its rings of `slots` entries.
fn nic(small_bytes: u32, fill_thresh: u32, slots: u32) -> Nic {
    let mut p = Platform::from_toml(preset_text("omx2009").unwrap()).unwrap();
    (p.nic.small_bytes, p.nic.fill_thresh, p.nic.ring_slots) = (small_bytes, fill_thresh, slots);
    let queue = RxQueue::new(Box::new(coalesce::Disabled), slots as usize, fill_thresh);
    Nic::new(&p.nic, &Times::of(&p).nic, vec![queue], Duration::ZERO, None)
}

/// Fills queue 0 with `n` frames of `len` bytes, as the firmware does.
fn fill(nic: &mut Nic, n: u32, len: usize) -> u32 {
    let mut taken = 0;
    for f in 0..n {
        let small = nic.is_small(len);
        let bufs = if small { 1 } else { Nic::big_bufs(len) };
        if !nic.ring_full(0, small, bufs) {
            nic.queues[0].push_rx(f, small, bufs);
            taken += 1;
        }
    }
    taken
}

#[test]
fn a_small_frame_takes_a_buffer_of_its_own_ring_when_data_fill_the_other() {
    let mut two = nic(126, 0, 32);
    assert_eq!(fill(&mut two, 40, 1514), 32, "the big ring holds 32");
    assert!(two.ring_full(0, false, 1) && !two.ring_full(0, true, 1));
    assert_eq!(fill(&mut two, 5, 60), 5, "acks and pull requests still get in");
    // Processed in arrival order, each giving its buffer back to its ring.
    assert_eq!(two.queues[0].take(), Some(RingEntry::Rx(0)));
    assert_eq!((two.queues[0].small_in_ring, two.ring_full(0, false, 1)), (5, false));
    let mut one = nic(0, 0, 32);
    assert_eq!(fill(&mut one, 40, 1514), 32);
    assert_eq!(fill(&mut one, 5, 60), 0, "one ring: a 60 B frame is dropped too");
}

#[test]
fn with_a_fill_threshold_buffers_come_back_only_when_a_poll_restocks() {
    let mut nic = nic(0, 16, 32);
    assert_eq!(fill(&mut nic, 32, 1514), 32);
    for _ in 0..20 {
        nic.queues[0].take();
    }
    // 12 frames wait, 12 buffers posted: no room until a restock.
    assert!(nic.ring_full(0, false, 1));
    nic.queues[0].restock();
    assert_eq!(nic.queues[0].posted[0], 32);
    assert_eq!(fill(&mut nic, 40, 1514), 20);
    // Above the threshold a restock gives nothing back.
    nic.queues[0].take();
    nic.queues[0].restock();
    assert_eq!(nic.queues[0].posted[0], 31);
    // Without a threshold every processed frame frees its buffer at once.
    let mut eager = self::nic(0, 0, 32);
    fill(&mut eager, 32, 1514);
    eager.queues[0].take();
    assert!(!eager.ring_full(0, false, 1));
}

/// The queue's view of the watchdog, packet by packet: the policy's
/// raise waits for an expiry; a frame polled up meanwhile makes it
/// unnecessary, a frame nobody takes lets it out.
/// A jumbo frame fills several page-sized buffers, so a ring holds
/// fewer of them; each gives all its buffers back when processed.
#[test]
fn a_frame_longer_than_a_page_fills_several_buffers() {
    assert_eq!(Nic::big_bufs(1514), 1);
    assert_eq!(Nic::big_bufs(4094), 1);
    assert_eq!(Nic::big_bufs(4095), 2, "the pad pushes it over a page");
    assert_eq!(Nic::big_bufs(4144), 2, "an MX-wire 4 KiB reply");
    assert_eq!(Nic::big_bufs(9014), 3);
    let mut nic = nic(1518, 0, 32);
    assert_eq!(fill(&mut nic, 40, 4144), 16, "32 buffers, two a frame");
    assert_eq!(nic.queues[0].big_in_ring, 32);
    assert!(!nic.ring_full(0, true, 1), "a 1518-byte frame goes to the small ring");
    assert_eq!(nic.queues[0].take(), Some(RingEntry::Rx(0)));
    assert_eq!(nic.queues[0].big_in_ring, 30);
    assert!(!nic.ring_full(0, false, 2) && nic.ring_full(0, false, 3));
}

#[test]
fn on_a_shared_bus_a_receive_dma_waits_for_the_transmit_dma_holding_it() {
    // lci2000 on the Open-MX path: one 32-bit PCI bus per host.
    let p = crate::config::load_platform("lci2000", None).unwrap();
    let t = Times::of(&p).nic;
    let queue = RxQueue::new(Box::new(coalesce::Disabled), p.nic.ring_slots as usize, 0);
    let mut nic = Nic::new(&p.nic, &t, vec![queue], Duration::ZERO, p.pci.as_ref());
    let len = 1024;
    let xfer = t.dma_startup + Duration::for_bytes(len as u64, t.dma_bytes_per_s);
    let setup = t.tx_dma_startup - t.dma_startup;
    assert!(setup > Duration::ZERO, "the LANai's DMA set-up");
    // The set-up is firmware work before the read; the bus holds the read.
    let t0 = Instant::ZERO;
    let read_end = t0 + setup + xfer;
    assert_eq!(nic.transmit(t0, len), read_end + t.fw_tx);
    // A frame arriving meanwhile: its firmware is done before the read ends,
    // so its DMA waits for the bus and then holds it for its own transfer.
    let fw_done = t0 + t.fw_rx;
    assert!(fw_done < read_end);
    assert_eq!(nic.receive(t0, len), read_end + xfer);
    let bus = nic.bus().unwrap();
    assert_eq!((bus.dmas, bus.dma_bytes, bus.pio_reads, bus.pio_writes), (2, 2 * len as u64, 0, 0));
    assert_eq!((bus.wait, bus.busy), (read_end.since(fw_done), xfer + xfer));
    // Without a shared bus the directions do not wait for each other.
    let mut apart = self::nic(0, 0, 32);
    assert!(apart.bus().is_none());
    apart.transmit(t0, len);
    assert!(apart.receive(t0, len) < read_end);
}

/// The polling watchdog's fetch of the host's progress is the NIC's, for
/// the Open-MX queue as for the LANai firmware: on a shared bus it waits
/// for the DMA holding the bus and then holds it for one word; without
/// one it takes the NIC's DMA read latency.
#[test]
fn the_watchdogs_fetch_of_host_words_is_a_dma_on_the_nics_bus() {
    use crate::nic::watchdog::{Raises, Watchdog};
    let p = crate::config::load_platform("lci2000", None).unwrap();
    let t = Times::of(&p).nic;
    let us = Duration::from_us;
    let queue = RxQueue::new(Box::new(coalesce::Disabled), p.nic.ring_slots as usize, 0)
        .with_watchdog(Some(Box::new(Watchdog::new(us(10), Raises::Held))));
    let mut nic = Nic::new(&p.nic, &t, vec![queue], Duration::ZERO, p.pci.as_ref());
    let t0 = Instant::ZERO;
    nic.queues[0].push_rx(0, true, 1);
    let (at, gen) = nic.queues[0].watchdog_delivered(t0).unwrap();
    // A 1 KB receive DMA holds the bus across the expiry.
    let len = 1024;
    let dma_end = nic.receive(t0 + us(9), len);
    assert!(dma_end > at + t.tx_dma_startup, "the DMA outlasts the read latency");
    let (out, next) = nic.watchdog_timer(at, 0, gen, (true, 0));
    let (back, gen) = next.unwrap();
    let word = t.dma_startup + Duration::for_bytes(u64::from(delivery::FLAG_BYTES), t.dma_bytes_per_s);
    assert_eq!((out.raise, back), (false, dma_end + word), "programmed, then after the DMA on the bus");
    assert_eq!(nic.bus().unwrap().dmas, 2);
    // Nobody took the frame and no raise was held: no interrupt, the timer restarts.
    let (out, next) = nic.watchdog_timer(back, 0, gen, (true, 0));
    assert!(!out.raise && next.is_some());
    // Without a shared bus: the read latency, whatever the receive DMAs do.
    let mut apart = self::nic(0, 0, 32);
    let omx = Times::of(&Platform::from_toml(preset_text("omx2009").unwrap()).unwrap()).nic;
    apart.receive(t0, len);
    assert_eq!(apart.fetch_host_words(t0), t0 + omx.tx_dma_startup);
}
