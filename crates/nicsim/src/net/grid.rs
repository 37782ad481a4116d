//! A 3D grid (mesh, no wrap-around) of crossbar switches with cut-through
//! routing: the Myrinet network of the \[LCI] cluster.
//!
//! This module owns wire timing of the grid only: which directed channels a
//! packet crosses (dimension-order routing: x, then y, then z), each
//! channel's serialization at the link rate, per-switch routing latency and
//! cable propagation. It does not know what a packet carries nor what an NI
//! does with it (`crate::lci`, or the main world's `sim::wire_path` when a
//! platform has a `grid`).
//!
//! Layout: switch `s` sits at `(s % x, (s / x) % y, s / (x * y))`; host `h`
//! hangs off switch `h / hosts_per_switch`. With 64 hosts and 8-port
//! switches the `lci2000` preset uses 4 x 4 x 2 switches with 2 hosts each:
//! every switch then needs at most 2 + 2 + 1 = 5 grid ports plus 2 host
//! ports (7 of 8), and 32 switches is the fewest 8-port switches that give
//! 64 hosts two ports each plus a 3D neighbourhood.
//!
//! Simplification: virtual cut-through with reservation at injection. A
//! packet's head advances channel by channel; it takes a channel at
//! `max(head arrival, channel free)` and holds it for its serialization
//! time. A blocked head waits in place (the link-level back-pressure of
//! Myrinet) but, unlike true wormhole routing, does not hold the channels
//! behind it while it waits.

use crate::time::{Duration, Instant};

/// Grid geometry and link timing.
#[derive(Debug, Clone, Copy)]
pub struct GridSpec {
    pub dims: [u32; 3],
    pub hosts_per_switch: u32,
    pub bytes_per_s: u64,
    pub overhead_bytes: u32,
    pub switch_latency: Duration,
    pub propagation: Duration,
}

/// Channel occupancy of the whole grid.
#[derive(Debug)]
pub struct Grid {
    spec: GridSpec,
    hosts: u32,
    /// host -> switch channels, then switch -> host, then 6 per switch (+x, -x, +y, -y, +z, -z).
    free: Vec<Instant>,
}

impl Grid {
    pub fn new(spec: GridSpec) -> Self {
        let switches = spec.dims[0] * spec.dims[1] * spec.dims[2];
        let hosts = switches * spec.hosts_per_switch;
        Grid { spec, hosts, free: vec![Instant::ZERO; (2 * hosts + 6 * switches) as usize] }
    }

    /// The grid's geometry and link timing.
    pub fn spec(&self) -> &GridSpec {
        &self.spec
    }

    /// Number of hosts.
    pub fn hosts(&self) -> u32 {
        self.hosts
    }

    /// Coordinates of switch `s`.
    pub fn coords(&self, s: u32) -> [u32; 3] {
        let [x, y, _] = self.spec.dims;
        [s % x, (s / x) % y, s / (x * y)]
    }

    fn switch_at(&self, c: [u32; 3]) -> u32 {
        let [x, y, _] = self.spec.dims;
        c[0] + x * (c[1] + y * c[2])
    }

    /// Switches a packet from `src` to `dst` crosses (1 if they share one).
    pub fn switch_hops(&self, src: u32, dst: u32) -> u32 {
        let a = self.coords(src / self.spec.hosts_per_switch);
        let b = self.coords(dst / self.spec.hosts_per_switch);
        1 + (0..3).map(|i| a[i].abs_diff(b[i])).sum::<u32>()
    }

    /// Serialization time of a packet of `bytes` (overhead included).
    pub fn serialization(&self, bytes: u32) -> Duration {
        Duration::for_bytes(bytes as u64 + self.spec.overhead_bytes as u64, self.spec.bytes_per_s)
    }

    /// Injects a packet of `bytes` from host `src` to host `dst` whose first
    /// byte is ready at `ready`; books every channel on its path and returns
    /// (time its tail has left `src`'s NI, time its tail is in `dst`'s NI).
    pub fn send(&mut self, src: u32, dst: u32, ready: Instant, bytes: u32) -> (Instant, Instant) {
        let r = self.route(src, dst, ready, bytes);
        (r.tail_left, r.arrive)
    }

    /// [`Grid::send`], with the time the packet's first byte leaves `src`'s
    /// NI (the main world's trace and pcap stamp a frame with it).
    pub fn route(&mut self, src: u32, dst: u32, ready: Instant, bytes: u32) -> Route {
        let ser = self.serialization(bytes);
        let sw_lat = self.spec.switch_latency;
        let prop = self.spec.propagation;
        let hosts = self.hosts;
        // Uplink host -> first switch.
        let up = src as usize;
        let start = ready.max(self.free[up]);
        self.free[up] = start + ser;
        let tail_left = start + ser;
        let mut head = start + prop + sw_lat;
        let mut here = self.coords(src / self.spec.hosts_per_switch);
        let there = self.coords(dst / self.spec.hosts_per_switch);
        for dim in 0..3 {
            while here[dim] != there[dim] {
                let s = self.switch_at(here);
                let dir = if there[dim] > here[dim] { 0 } else { 1 };
                let ch = (2 * hosts + 6 * s + 2 * dim as u32 + dir) as usize;
                let st = head.max(self.free[ch]);
                self.free[ch] = st + ser;
                head = st + prop + sw_lat;
                if dir == 0 {
                    here[dim] += 1;
                } else {
                    here[dim] -= 1;
                }
            }
        }
        // Downlink last switch -> host.
        let down = (hosts + dst) as usize;
        let st = head.max(self.free[down]);
        self.free[down] = st + ser;
        Route { start, tail_left, arrive: st + ser + prop }
    }
}

/// One packet's booking on the grid ([`Grid::route`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// Its first byte leaves the sending NI.
    pub start: Instant,
    /// Its tail has left the sending NI.
    pub tail_left: Instant,
    /// Its tail is in the destination NI.
    pub arrive: Instant,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        Grid::new(GridSpec {
            dims: [4, 4, 2],
            hosts_per_switch: 2,
            bytes_per_s: 160_000_000,
            overhead_bytes: 0,
            switch_latency: Duration::from_ns(300),
            propagation: Duration::from_ns(50),
        })
    }

    #[test]
    fn hops_follow_manhattan_distance() {
        let g = grid();
        assert_eq!(g.hosts(), 64);
        assert_eq!(g.switch_hops(0, 1), 1);
        assert_eq!(g.switch_hops(0, 2), 2);
        assert_eq!(g.switch_hops(0, 63), 1 + 3 + 3 + 1);
    }

    #[test]
    fn cut_through_latency_adds_per_hop_not_per_byte() {
        let mut g = grid();
        let (_, near) = g.send(0, 1, Instant::ZERO, 160);
        let mut g = grid();
        let (_, far) = g.send(0, 63, Instant::ZERO, 160);
        // 160 B at 160 MB/s = 1 us once; each extra switch adds 300 + 50 ns.
        assert_eq!(near.as_ps(), 1_000_000 + 2 * 50_000 + 300_000);
        assert_eq!(far.since(Instant::ZERO) - near.since(Instant::ZERO), Duration::from_ns(7 * 350));
    }

    #[test]
    fn a_busy_channel_delays_the_next_packet() {
        let mut g = grid();
        let (l1, a1) = g.send(0, 1, Instant::ZERO, 160);
        let (l2, a2) = g.send(0, 1, Instant::ZERO, 160);
        assert_eq!(l2.since(l1), Duration::from_us(1));
        assert_eq!(a2.since(a1), Duration::from_us(1));
    }
}
