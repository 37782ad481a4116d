//! The expected-event queue of a process's endpoint as its medium sends use
//! it ([`ExpEvents`]): the `OMX_EVT_SEND_MEDIUMSQ_FRAG_DONE` events the
//! NET_TX softirq posts, one per medium fragment whose skb it freed
//! (`crate::kernel::net_tx`), what consuming them costs and does, and the
//! queue's slots a medium send needs before it goes.
//!
//! As Open-MX 1.0.901 runs it:
//!
//! * a medium send needs one expected-event slot per fragment
//!   (`libopen-mx/omx_send.c` `omx__submit_isend_medium`:
//!   `ep->avail_exp_events -= frags_nr`, or the request waits in
//!   `need_resources_send_req_q`), of [`EXP_EVENT_SLOTS`];
//! * the library consumes each FRAG_DONE in `omx__progress`
//!   (`libopen-mx/omx_lib.c` `omx__process_event`,
//!   `OMX_EVT_SEND_MEDIUMSQ_FRAG_DONE`: `omx__endpoint_sendq_map_user`,
//!   `ep->avail_exp_events++`, `--frags_pending_nr`), then releases the
//!   slot.
//!
//! nicsim reserves the slots when the send is submitted (and again when its
//! fragments are resent: each resent skb has the same destructor) and
//! frees one as each event is consumed.
//!
//! This file owns that state, its price and its effect; who posts the
//! events is the world's (`sim/net_tx.rs`).

use super::process::{ExpEvents, EXP_EVENT_SLOTS};
use super::Cx;
use super::Proc;
use crate::host::cache::code::Seg;
use crate::host::cache::footprint::LibPath;
use crate::host::{Cpu, Obj, Side};
use crate::time::Duration;
use crate::wire::{self, MessageClass};

impl Proc {
    /// The NET_TX softirq posted `n` FRAG_DONE events into its queue.
    pub(crate) fn frag_done_posted(&mut self, n: u32) {
        self.exp.pending += n;
    }

    /// FRAG_DONE events it consumed.
    pub(crate) fn frag_done_consumed(&self) -> u64 {
        self.exp.consumed
    }

    /// What the core freeing its skbs touches: its endpoint, its
    /// expected-event queue and the objects of its medium sends and pulled
    /// regions.
    pub(crate) fn tx_shared(&mut self) -> (&mut Obj, &mut ExpEvents) {
        (&mut self.ep_obj, &mut self.exp)
    }

    /// Events wait in its expected-event queue.
    pub(super) fn exp_pending(&self) -> bool {
        self.exp.pending > 0
    }

    /// CPU cost of consuming every FRAG_DONE event posted so far on `at`,
    /// and how many: the library's work per event, the event slots (each
    /// its own line, written by the core that posted it) and the endpoint.
    pub(super) fn exp_cost(&mut self, cx: &mut Cx<'_>, at: Cpu) -> (Duration, u32) {
        let (c, cc, topo) = (&cx.env.c, &cx.env.c.cc, &cx.env.topo);
        let k = self.exp.pending;
        // The library's own lines per event (`LibPath::FragDone`), counted
        // (their time is in `frag_done`).
        let own = cx.mem.lines.lib_lines(LibPath::FragDone) * k as u64;
        cc.touch(&mut cx.mem.cache, &mut self.lines.private, at, Side::User, own);
        // And the library's code, run once for the events consumed together
        // (`host/cache/code.rs`).
        if k > 0 {
            cx.mem.lines.code(&mut cx.mem.cache, Seg::LibFragDone, at, Side::User);
        }
        let cost = c.lib.frag_done.times(k as u64)
            + cc.access(topo, &mut cx.mem.cache, &mut self.exp.ring, at, Side::User, k * c.cache.event_lines)
            + cc.access(topo, &mut cx.mem.cache, &mut self.ep_obj, at, Side::User, c.cache.endpoint_lines);
        (cost, k)
    }

    /// Consumes `k` FRAG_DONE events (priced by `exp_cost`): their slots are
    /// free again, and the sends that waited for slots go.
    pub(super) fn exp_consume(&mut self, cx: &mut Cx<'_>, k: u32) {
        let e = &mut self.exp;
        let k = k.min(e.pending);
        e.pending -= k;
        e.held = e.held.saturating_sub(k);
        e.consumed += k as u64;
        if !self.need_region.is_empty() {
            self.submit_waiting_sends(cx);
        }
    }

    /// A message (or its resend) of `frags` medium fragments goes: each
    /// holds a slot until its FRAG_DONE is consumed (only when FRAG_DONE
    /// events are posted: `host.tx_softirq`).
    pub(super) fn exp_reserve(&mut self, cx: &Cx<'_>, frags: u32) {
        if cx.env.c.tx_softirq {
            self.exp.held += frags;
        }
    }

    /// The medium fragments of a message of `size` bytes (0 for any other
    /// class).
    pub(super) fn medium_frags(c: &crate::costs::Costs, size: u64) -> u32 {
        match wire::classify(size as usize, c.rndv_threshold as usize) {
            MessageClass::Medium => Self::frames_of(size, c.rndv_threshold, c.layout),
            _ => 0,
        }
    }

    /// A send of `size` bytes finds too few expected-event slots free for
    /// its fragments (only medium sends need them, and only when FRAG_DONE
    /// events are posted: `host.tx_softirq`).
    pub(super) fn exp_short(&self, cx: &Cx<'_>, size: u64) -> bool {
        let c = &cx.env.c;
        if !c.tx_softirq || wire::classify(size as usize, c.rndv_threshold as usize) != MessageClass::Medium {
            return false;
        }
        self.exp.held + Self::frames_of(size, c.rndv_threshold, c.layout) > EXP_EVENT_SLOTS
    }
}
