//! The \[EMO] echo server: a component the build wires onto the host that
//! runs it (host 1 of the `echo-nic` / `echo-kernel` workloads), in its NIC
//! firmware or in its kernel receive handler.
//!
//! This module owns turning a received message frame around: the reply
//! header (endpoints swapped, the echoed sequence number acknowledged), its
//! cost (the firmware's byte copy; the kernel's driver and handler work),
//! and handing it to the wire or to the driver's send path. The world asks
//! the host's [`Echo`] at the two places a frame can be turned around (NIC
//! receive, `nic_path`; the bottom half's ring entry, `kernel` and
//! `crate::kernel`'s handler). It does not own the client (a ping-pong rank 0 of
//! `crate::workload`) nor the receive path before the turn-around (`super`).

use super::World;
use crate::config::EchoAt;
use crate::proto::{Kind, Msg};
use crate::time::{Duration, Instant};
use crate::wire::FrameRepr;

/// The host that runs the echo server; host 0 runs the client.
pub(crate) const ECHO_HOST: usize = 1;

/// An echo server: where it runs and what its firmware copy costs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Echo {
    at: EchoAt,
    /// NIC firmware byte copy of the echo (EMO inputs: cycles/byte / clock).
    copy_ns_per_byte: f64,
}

impl Echo {
    /// An echo server at `at`, whose firmware copies `copy_ns_per_byte`.
    pub(crate) fn new(at: EchoAt, copy_ns_per_byte: f64) -> Self {
        Echo { at, copy_ns_per_byte }
    }

    /// Where the server runs.
    #[inline]
    pub(crate) fn at(&self) -> EchoAt {
        self.at
    }

    /// The NIC firmware's turn-around of `repr`: the reply and the byte
    /// copy it costs, or `None` for a frame that is not echoed.
    pub(crate) fn firmware_reply(&self, repr: &FrameRepr) -> Option<(FrameRepr, Duration)> {
        let reply = echo_reply(repr)?;
        Some((reply, Duration::from_ns_f64(repr.body.payload_len() as f64 * self.copy_ns_per_byte)))
    }
}

/// The echo of a message frame, or `None` for frames that are not echoed
/// (explicit acks, pull traffic): those are consumed silently.
pub(crate) fn echo_reply(repr: &FrameRepr) -> Option<FrameRepr> {
    let m = Msg::parse(&repr.body).filter(|m| matches!(m.kind, Kind::Tiny | Kind::Small | Kind::MediumFrag))?;
    // The echo acknowledges the message it returns: piggy_ack is the next
    // expected sequence number (Open-MX semantics, see `crate::library`).
    let piggy = (m.seq as u16).wrapping_add(1);
    let (dst_ep, src_ep) = (repr.body.dst_endpoint(), repr.body.src_endpoint()?);
    Some(FrameRepr {
        dst_mac: repr.src_mac,
        src_mac: repr.dst_mac,
        src_peer: crate::wire::mac_host(repr.dst_mac).unwrap_or(0),
        marked: repr.marked,
        body: Msg { piggy: Some(piggy.into()), ..m }.emit(src_ep, dst_ep),
    })
}

impl super::HostState {
    /// The host runs an echo server at `at`.
    #[inline(always)]
    pub(super) fn echoes_at(&self, at: EchoAt) -> bool {
        matches!(self.echo, Some(e) if e.at() == at)
    }
}

impl World {
    /// `echo-nic`: the firmware of host `h`'s NIC copies the payload from
    /// its receive buffer to a send buffer and transmits it; no DMA, no
    /// interrupt, no host work.
    pub(super) fn nic_echo(&mut self, now: Instant, h: usize, frame: u32, repr: &FrameRepr) {
        let (src, dst) = (self.frames[frame as usize].src, self.frames[frame as usize].dst);
        self.free_frame(frame);
        self.frames.handled += 1;
        let hs = &mut self.hosts[h];
        hs.rx.frame_handled();
        let Some((reply, copy)) = hs.echo.and_then(|e| e.firmware_reply(repr)) else { return };
        let ready = hs.nic.firmware_echo(now, copy);
        let id = self.new_frame(dst, src, &reply);
        self.wire_out(h, ready, id);
    }

    /// CPU cost of the kernel echo of one frame: driver receive + handler,
    /// then the driver's send path for the reply (no system call, no copy:
    /// the received buffer is sent back).
    pub(super) fn kernel_echo_cost(&mut self, now: Instant, h: usize, core: usize, frame: u32) -> Duration {
        let c = &self.env.c;
        let mut hdr = [0; super::wire_path::HDR_CAP];
        let hl = self.frames[frame as usize].header_bytes(&mut hdr);
        let Ok(repr) = FrameRepr::parse_header(&hdr[..hl]) else {
            return c.host.driver_rx + c.host.handler_drop;
        };
        if echo_reply(&repr).is_none() {
            return c.host.driver_rx + c.host.handler_drop;
        }
        let send = c.host.driver_rx + c.host.handler + c.host.driver_tx + c.nic.doorbell;
        send + self.tx_touch(now, h, core, send)
    }

    /// `echo-kernel`: the bottom half of host `h` sends the reply.
    pub(super) fn kernel_echo(&mut self, now: Instant, h: usize, repr: &FrameRepr) {
        let Some(reply) = echo_reply(repr) else { return };
        let dst = crate::wire::mac_host(repr.src_mac).unwrap_or(0);
        let id = self.new_frame(h as u16, dst, &reply);
        self.transmit(now, h, id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{host_mac, OmxBody};

    #[test]
    fn echo_swaps_endpoints_and_acks_the_echoed_message() {
        let req = FrameRepr {
            dst_mac: host_mac(1),
            src_mac: host_mac(0),
            src_peer: 0,
            marked: true,
            body: OmxBody::Small { dst_ep: 0, src_ep: 3, session: 0, seq: 7, piggy_ack: 2, match_info: 1, length: 100 },
        };
        let r = echo_reply(&req).unwrap();
        assert_eq!((r.dst_mac, r.src_mac, r.src_peer, r.marked), (host_mac(0), host_mac(1), 1, true));
        assert_eq!(
            r.body,
            OmxBody::Small { dst_ep: 3, src_ep: 0, session: 0, seq: 7, piggy_ack: 8, match_info: 1, length: 100 }
        );
        let ack = FrameRepr {
            body: OmxBody::Ack { dst_ep: 0, src_ep: 0, session: 0, lib_seqnum: 1, lib_piggyack: 0 },
            ..req
        };
        assert!(echo_reply(&ack).is_none());
    }

    #[test]
    fn echo_workloads_parse_and_refuse_large_messages() {
        use crate::config::{EchoAt, Scenario, Workload};
        let s = Scenario::from_toml("preset = \"emo2004\"\n[workload]\nkind = \"echo-kernel\"\nsize_bytes = 8900\n")
            .unwrap();
        assert!(matches!(s.workload, Workload::Echo { at: EchoAt::Kernel, size: 8900, .. }));
        let e = Scenario::from_toml("[workload]\nkind = \"echo-nic\"\nsize_bytes = 100000\n").unwrap_err();
        assert!(e.0.contains("workload.size_bytes") && e.0.contains("100000"), "{e}");
    }

    #[test]
    fn nic_echo_has_no_host_work_and_kernel_echo_no_application() {
        let run = |kind: &str| {
            crate::run_toml(&format!(
                "preset = \"emo2004\"\n[nic]\ncoalescing = \"disabled\"\n[workload]\nkind = \"{kind}\"\nsize_bytes = 1000\niterations = 50\nwarmup = 2\n"
            ))
            .unwrap()
        };
        let nic = run("echo-nic");
        assert_eq!((nic.get("host1_interrupts"), nic.get("host1_kernel_us")), (Some(0.0), Some(0.0)));
        let kernel = run("echo-kernel");
        assert!(kernel.get("host1_interrupts").unwrap() >= 50.0);
        // Every frame sent came back or was consumed: nothing dropped.
        assert_eq!(kernel.get("dropped"), Some(0.0));
        assert!(nic.get("latency_us").unwrap() > 0.0 && kernel.get("latency_us").unwrap() > 0.0);
    }
}
