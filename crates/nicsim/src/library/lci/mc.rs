//! The LCI library's side of the multicast schemes (\[LCI], SPEC §2.4;
//! `crate::lci::multicast` says what each scheme does): posting a
//! broadcast down the host's tree ([`Lib::bcast`]), forwarding what it
//! consumed (`host-message`: the whole message, point to point;
//! `host-packet`: each packet after its upcall, one PIO copy plus one
//! descriptor per child), and its copy counters ([`HostMc`]). The tree shape is
//! `crate::nic::multicast`'s ([`Kary`]), the NI firmware's forwarding (`ni`)
//! `crate::nic::lanai`'s.

use super::{Lib, Outgoing};
use crate::config::Forwarding;
use crate::library::{Cx, LibEv, Output};
use crate::nic::lanai::Packet;
use crate::nic::multicast::Kary;

/// A host's side of the multicast schemes (each host's library holds
/// one): the scheme, the trees it forwards down, and its counters.
#[derive(Debug, Clone, Copy)]
pub struct HostMc {
    pub forwarding: Forwarding,
    pub tree: Kary,
    /// `host-packet`: PIO bytes of one extra descriptor per child.
    pub descriptor_bytes: u32,
    /// Counters.
    pub host_forward_copies: u64,
    pub mc_packets_consumed: u64,
    pub mc_bytes_consumed: u64,
}

impl HostMc {
    pub fn new(forwarding: Forwarding, fanout: u32, hosts: u32, descriptor_bytes: u32) -> Self {
        HostMc {
            forwarding,
            tree: Kary { n: hosts, fanout },
            descriptor_bytes,
            host_forward_copies: 0,
            mc_packets_consumed: 0,
            mc_bytes_consumed: 0,
        }
    }

    /// Extra PIO bytes of host `h`'s write of `pkt`: `host-packet` writes
    /// one more descriptor per extra child.
    pub fn extra_pio_bytes(&self, h: u32, pkt: &Packet) -> u32 {
        match (self.forwarding, pkt.bcast) {
            (Forwarding::HostPacket, Some(root)) => {
                self.tree.child_count(root, h).saturating_sub(1) * self.descriptor_bytes
            }
            _ => 0,
        }
    }
}

impl Lib {
    /// Its program broadcasts `size` bytes with `tag` from this host down
    /// its tree: under `host-message` one point-to-point send (one PIO
    /// copy) per child, MPICH-style; otherwise one copy into the NI,
    /// expanded to one descriptor per child when posted (the NI's
    /// `shared_posts`).
    pub fn bcast(&mut self, size: u64, tag: u64) {
        let (root, tree) = (self.id, self.mc.tree);
        let o = Outgoing { dst: root, size, count: 1, bcast: Some(root), tag };
        match self.mc.forwarding {
            Forwarding::HostMessage => self.outbox.extend(tree.children(root, root).map(|dst| Outgoing { dst, ..o })),
            Forwarding::HostPacket | Forwarding::Ni => {
                let first = tree.children(root, root).next().expect("a root has a child");
                self.outbox.push_back(Outgoing { dst: first, ..o });
            }
        }
    }

    /// The host consumed `pkt` (its upcall ends at `done`) in a program
    /// its upcalls drive: host-level forwarding (the program learns of a
    /// message's last packet after it, `Lib::message`). Returns true if it
    /// armed its next wake-up itself (a `host-packet` forward follows the
    /// upcall).
    pub(super) fn mc_consumed(&mut self, cx: &mut Cx<'_>, pkt: Packet, done: crate::time::Instant) -> bool {
        if !self.upcall_driven() {
            return false;
        }
        let (h, mut took) = (self.id, false);
        if let Some(root) = pkt.bcast {
            self.mc.mc_packets_consumed += 1;
            self.mc.mc_bytes_consumed += pkt.payload as u64;
            let tree = self.mc.tree;
            match self.mc.forwarding {
                Forwarding::HostMessage if pkt.last => {
                    let o = Outgoing { dst: h, size: pkt.msg_bytes, count: 1, bcast: Some(root), tag: pkt.tag };
                    self.outbox.extend(tree.children(root, h).map(|dst| Outgoing { dst, ..o }));
                }
                Forwarding::HostPacket if tree.child_count(root, h) > 0 => {
                    let arg = self.hold(pkt);
                    cx.emit(Output::Timer { at: done, ev: LibEv::McForward, arg });
                    took = true;
                }
                _ => {}
            }
        }
        took
    }

    /// `LibEv::McForward`: the upcall forwards `pkt` (`host-packet`): if
    /// no NI send buffer is known free, it reads the NI's released counter
    /// first; then the send path of the forward.
    pub(crate) fn mc_forward(&mut self, cx: &mut Cx<'_>, pkt: Packet) {
        if self.posted - self.known_sent >= self.send_buffers {
            let arg = self.hold(pkt);
            cx.emit(Output::PioRead { then: LibEv::McSendCounterDone, arg });
        } else {
            let arg = self.hold(pkt);
            cx.emit(Output::Timer { at: cx.now + self.t.send, ev: LibEv::McWrite, arg });
        }
    }

    /// `LibEv::McSendCounterDone`: the read for forwarding `pkt` found
    /// `sent` send buffers released.
    pub(crate) fn mc_send_counter_done(&mut self, cx: &mut Cx<'_>, pkt: Packet, sent: u64) {
        self.known_sent = sent;
        self.mc_forward(cx, pkt);
    }

    /// `LibEv::McWrite`: it writes its forward of `pkt` (to the first
    /// child; the NI expands the descriptors).
    pub(crate) fn mc_write(&mut self, cx: &mut Cx<'_>, pkt: Packet) {
        self.mc.host_forward_copies += 1;
        let first = self.mc.tree.children(pkt.bcast.expect("multicast"), self.id).next().expect("a child");
        self.write(cx, Packet { dst: first, ..pkt });
    }
}
