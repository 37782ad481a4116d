//! The network between NICs: full-duplex links and one switch, or a grid of
//! switches (`grid`) when the platform has one.
//!
//! This module owns wire timing only: serialization at the line rate with the
//! per-frame overhead (preamble, FCS, inter-frame gap), propagation, the
//! switch's forwarding latency (store-and-forward or cut-through) and the
//! FIFO order of each egress link and switch output port. It does not know
//! what a frame contains (`crate::wire`) nor what a NIC does with it
//! (`crate::nic`). Loss and reordering injection happen at the switch (the
//! one-switch network only).

pub mod grid;

use crate::config::{GridCfg, LinkCfg, LinkTimes};
use crate::time::{Duration, Instant, Rate};
use grid::{Grid, GridSpec};

/// Link and switch state of the whole network.
#[derive(Debug)]
pub struct Network {
    bytes_per_s: u64,
    overhead: u32,
    mtu: u32,
    prop: Duration,
    switch_latency: Duration,
    cut_through: bool,
    /// The line rate, one memo per direction (see `Rate`).
    up_rate: Rate,
    down_rate: Rate,
    /// Per host: when its uplink (host -> switch) is free again.
    up_free: Vec<Instant>,
    /// Per host: when the switch port towards it (switch -> host) is free again.
    down_free: Vec<Instant>,
    /// The grid of switches, when the platform has one: it then carries
    /// every frame (`up_free` and `down_free` stay unused).
    pub grid: Option<Grid>,
}

/// When a frame occupies the sender's uplink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Departure {
    /// First bit on the wire (the pcap timestamp).
    pub start: Instant,
    /// Last bit on the wire: the sending NIC may report transmit completion.
    pub end: Instant,
    /// When the frame is at the switch, ready to be forwarded.
    pub at_switch: Instant,
}

impl Network {
    pub fn new(cfg: &LinkCfg, t: &LinkTimes, hosts: usize, grid: Option<&GridCfg>) -> Self {
        let bytes_per_s = t.bytes_per_s;
        let grid = grid.map(|g| {
            Grid::new(GridSpec {
                dims: [g.x, g.y, g.z],
                hosts_per_switch: g.hosts_per_switch,
                bytes_per_s,
                overhead_bytes: cfg.frame_overhead_bytes,
                switch_latency: t.switch_latency,
                propagation: t.propagation,
            })
        });
        Network {
            bytes_per_s,
            up_rate: Rate::new(bytes_per_s),
            down_rate: Rate::new(bytes_per_s),
            overhead: cfg.frame_overhead_bytes,
            mtu: cfg.mtu,
            prop: t.propagation,
            switch_latency: t.switch_latency,
            cut_through: cfg.cut_through,
            up_free: vec![Instant::ZERO; hosts],
            down_free: vec![Instant::ZERO; hosts],
            grid,
        }
    }

    /// The least time a link takes to carry messages (the grid's links are
    /// at the same rate): each frame carries at most `link.mtu` payload
    /// bytes, besides the Ethernet header and `link.frame_overhead_bytes`.
    pub fn link_bound(&self) -> crate::metrics::LinkBound {
        crate::metrics::LinkBound {
            bytes_per_s: self.bytes_per_s as f64,
            frame_extra_bytes: (crate::wire::ETH_HEADER_LEN as u32 + self.overhead) as u64,
            frame_payload: self.mtu as u64,
        }
    }

    /// Time to serialize a frame of `frame_len` bytes (overhead included).
    pub fn serialization(&self, frame_len: usize) -> Duration {
        Duration::for_bytes(frame_len as u64 + self.overhead as u64, self.bytes_per_s)
    }

    /// The NIC of `host` has the frame ready at `ready`: book its uplink.
    pub fn depart(&mut self, host: usize, ready: Instant, frame_len: usize) -> Departure {
        let ser = self.up_rate.time(frame_len as u64 + self.overhead as u64);
        let start = ready.max(self.up_free[host]);
        let end = start + ser;
        self.up_free[host] = end;
        let at_switch = if self.cut_through { start + self.prop } else { end + self.prop };
        Departure { start, end, at_switch }
    }

    /// The frame is at the switch at `now` (plus `extra` injected delay): book
    /// the output port towards `dst` and return when its first and its last
    /// bit reach the destination NIC.
    pub fn forward(&mut self, dst: usize, now: Instant, frame_len: usize, extra: Duration) -> (Instant, Instant) {
        let ser = self.down_rate.time(frame_len as u64 + self.overhead as u64);
        let out = (now + self.switch_latency + extra).max(self.down_free[dst]);
        self.down_free[dst] = out + ser;
        (out + self.prop, out + ser + self.prop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(cut: bool, lat: f64) -> Network {
        let c = cfg(cut, lat);
        Network::new(&c, &LinkTimes::of(&c), 2, None)
    }

    fn cfg(cut: bool, lat: f64) -> LinkCfg {
        LinkCfg {
            rate_gbps: 10.0,
            mtu: 1500,
            frame_overhead_bytes: 24,
            propagation_ns: 10.0,
            switch_latency_ns: lat,
            cut_through: cut,
        }
    }

    #[test]
    fn back_to_back_frames_queue_on_the_uplink() {
        let mut n = net(true, 0.0);
        // 1514 B + 24 B overhead at 10 Gb/s = 1230.4 ns
        let a = n.depart(0, Instant::ZERO, 1514);
        let b = n.depart(0, Instant::ZERO, 1514);
        assert_eq!(a.end - a.start, Duration::from_ps(1_230_400));
        assert_eq!(b.start, a.end);
    }

    #[test]
    fn direct_cable_latency_is_serialization_plus_two_propagations() {
        let mut n = net(true, 0.0);
        let d = n.depart(0, Instant::ZERO, 60);
        let (first, arrive) = n.forward(1, d.at_switch, 60, Duration::ZERO);
        assert_eq!(arrive - Instant::ZERO, n.serialization(60) + Duration::from_ns(20));
        assert_eq!(arrive - first, n.serialization(60));
    }

    #[test]
    fn store_and_forward_adds_a_serialization() {
        let mut n = net(false, 100.0);
        let d = n.depart(0, Instant::ZERO, 1514);
        let (_, arrive) = n.forward(1, d.at_switch, 1514, Duration::ZERO);
        let ser = n.serialization(1514);
        assert_eq!(arrive - Instant::ZERO, ser + ser + Duration::from_ns(120));
    }
}
