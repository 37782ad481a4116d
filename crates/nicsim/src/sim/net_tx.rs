//! The world's side of the NET_TX softirq (`crate::kernel::net_tx`, with
//! `host.tx_softirq`): which destructor a transmitted frame's skb carries,
//! what running the destructors costs the core that frees the skbs, and
//! what they do: a medium fragment's posts a FRAG_DONE event into its
//! sender's expected-event queue and wakes the sender
//! (`omx_medium_frag_skb_destructor` → `omx_notify_exp_event` →
//! `omx_wakeup_waiter_list`, Open-MX 1.0.901 `driver/linux/omx_send.c`,
//! `omx_event.c`); a pull reply's puts the region's refcount
//! (`omx_send_pull_reply_skb_destructor`, `omx_pull.c`).
//!
//! Under myri10ge's split claims (`tx_reap = "hard-irq"`) the hard IRQ's
//! reap queues them on its core and the core's NET_TX work item
//! (`KWork::NetTx`) runs them before the NAPI poll; with completions reaped
//! in the poll (`tx_reap = "napi"`) the poll frees the skbs, so their
//! destructors run in the poll's item (or the busy poll's segment) and
//! their events are posted when it ends. Events are posted only when an
//! item ends: a post wakes the sender, whose core may dispatch at once.
//!
//! It does not own the counts (`crate::kernel::NetTx`) nor what the
//! library does with the events (`crate::library`, `exp.rs`).

use super::World;
use crate::host::Side::Kernel;
use crate::kernel::TxDtor;
use crate::time::{Duration, Instant};
use crate::wire::OmxBody;

impl World {
    /// The destructor of frame `frame`'s skb, and the endpoint of host `h`
    /// that sent it (`TxDtor::None` without `host.tx_softirq`, or when no
    /// process owns the endpoint).
    #[inline]
    pub(super) fn tx_dtor(&self, h: usize, frame: u32) -> (TxDtor, u8) {
        if !self.env.c.tx_softirq {
            return (TxDtor::None, 0);
        }
        let f = &self.frames[frame as usize];
        let d = match f.parsed.map(|r| r.body) {
            Some(OmxBody::Medium { .. }) => TxDtor::MediumFrag,
            Some(OmxBody::PullReply { .. }) => TxDtor::PullReply,
            _ => return (TxDtor::None, 0),
        };
        match self.hosts[h].eps.get(f.src_ep as usize).copied().flatten() {
            Some(_) => (d, f.src_ep),
            None => (TxDtor::None, 0),
        }
    }

    /// The NET_TX work item starts on `core`: the price of the destructors
    /// of its completion queue; `None` if it is empty.
    pub(super) fn net_tx_cost(&mut self, h: usize, core: usize) -> Option<Duration> {
        if self.hosts[h].net_tx.run(core).is_empty() {
            return None;
        }
        Some(self.dtor_cost(h, core))
    }

    /// A poll on `core` reaped queue `q`'s completions and frees their
    /// skbs (`tx_reap = "napi"`): their destructors join the item (priced
    /// here, their events posted by `net_tx_done` when it ends).
    pub(super) fn poll_dtors(&mut self, h: usize, core: usize, q: usize) -> Duration {
        let nt = &mut self.hosts[h].net_tx;
        nt.reap_in_poll(q, core);
        if nt.queue_of(core).is_empty() {
            return Duration::ZERO;
        }
        self.dtor_cost(h, core)
    }

    /// What running the destructors of `core`'s completion queue costs it:
    /// per medium fragment, `host.tx_dtor_ns`, its event's slot and the
    /// lines its send wrote (`cache.frag_dtor_lines`), and once per sender
    /// its endpoint (the event queue's offsets and lock, the waiters'
    /// list); for pull replies, once per region its refcount line.
    fn dtor_cost(&mut self, h: usize, core: usize) -> Duration {
        let (c, cc, topo) = (&self.env.c, &self.env.c.cc, &self.env.topo);
        let at = topo.cpu(core as u16);
        let hs = &mut self.hosts[h];
        let tally = hs.net_tx.queue_of(core);
        let mut cost = Duration::ZERO;
        for i in 0..tally.len() {
            let (p, frags, replies) = tally.get(i);
            let (ep, exp) = hs.procs[p as usize].tx_shared();
            let cache = &mut hs.mem.cache;
            if frags > 0 {
                cost += c.host.tx_dtor.times(frags as u64)
                    + cc.access(topo, cache, &mut exp.ring, at, Kernel, frags * c.cache.event_lines)
                    + cc.access(topo, cache, &mut exp.dtor, at, Kernel, frags * c.cache.frag_dtor_lines)
                    + cc.access(topo, cache, ep, at, Kernel, c.cache.endpoint_lines);
            }
            if replies > 0 {
                // kref_put: one atomic decrement, priced by its line.
                cost += cc.access(topo, cache, &mut exp.region, at, Kernel, 1);
            }
        }
        cost
    }

    /// The item on `core` that ran the destructors of its completion queue
    /// ended (NET_TX, or a poll that freed what it reaped): each sender gets
    /// its FRAG_DONE events and is woken; the queue is emptied.
    pub(super) fn net_tx_done(&mut self, now: Instant, h: usize, core: usize) {
        let n = self.hosts[h].net_tx.queue_of(core).len();
        for i in 0..n {
            let hs = &mut self.hosts[h];
            let (p, frags, replies) = hs.net_tx.queue_of(core).get(i);
            hs.net_tx.region_puts += replies as u64;
            if frags > 0 {
                hs.net_tx.frag_done_posted += frags as u64;
                hs.procs[p as usize].frag_done_posted(frags);
                self.notify_proc(now, h, p as usize);
            }
        }
        self.hosts[h].net_tx.queue_of(core).clear();
    }

    /// A pull reply of the region of process `p` is built on `core`
    /// (`omx_recv_pull_request`: `omx_user_region_reacquire`, a `kref_get`
    /// per reply): its refcount line, which the reply's destructor puts
    /// wherever the skb is freed.
    pub(super) fn region_touch(&mut self, h: usize, core: usize, ep: u8) -> Duration {
        if !self.env.c.tx_softirq {
            return Duration::ZERO;
        }
        let at = self.env.topo.cpu(core as u16);
        let hs = &mut self.hosts[h];
        let Some(p) = hs.eps.get(ep as usize).copied().flatten() else { return Duration::ZERO };
        let (_, exp) = hs.procs[p as usize].tx_shared();
        self.env.c.cc.access(&self.env.topo, &mut hs.mem.cache, &mut exp.region, at, Kernel, 1)
    }
}
