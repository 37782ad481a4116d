//! The NET_TX softirq's bookkeeping of one host ([`NetTx`]): which
//! transmitted frames carry an Open-MX skb destructor ([`TxDtor`]), the
//! completions of those the NIC reported on each queue and no hard IRQ has
//! reaped yet, and each core's completion queue, which the hard IRQ fills
//! and the core's NET_TX softirq empties.
//!
//! As Linux 2.6.26 runs it for myri10ge: the hard IRQ's `myri10ge_tx_done`
//! only drops each skb's reference (`dev_kfree_skb_irq`, `net/core/dev.c`),
//! which chains the skb on this CPU's `softnet_data.completion_queue` and
//! raises `NET_TX_SOFTIRQ`; at `irq_exit`, `__do_softirq` runs NET_TX (2)
//! before NET_RX (3) (`include/linux/interrupt.h`, `kernel/softirq.c`), and
//! `net_tx_action` frees the skbs, which runs their destructors
//! (`net/core/skbuff.c` `skb_release_all`: a destructor never runs in the
//! hard IRQ). Open-MX 1.0.901 sets two (`driver/linux/omx_send.c`,
//! `omx_pull.c`):
//!
//! * a medium fragment's, `omx_medium_frag_skb_destructor`: it posts
//!   `OMX_EVT_SEND_MEDIUMSQ_FRAG_DONE` into the sender's expected-event
//!   queue (`omx_notify_exp_event`, which wakes the endpoint's waiters),
//!   releases the endpoint and frees the deferred event: one event per
//!   fragment, 23 per 32 KiB message;
//! * a pull reply's, `omx_send_pull_reply_skb_destructor`: it puts the
//!   region's refcount (`omx_user_region_release`), no event.
//!
//! Tiny, small, ack, rendezvous, notify and pull request skbs have none.
//!
//! This module owns the counts only: a destructor is tallied per process
//! (the owner of the sending endpoint), so that what a softirq runs is a
//! few counts, not a list that grows with the frames. The price of a
//! softirq and the events it posts are the world's (`sim/net_tx.rs`).

/// The Open-MX destructor of a transmitted frame's skb (one byte: it rides
/// in the world's transmit-completion event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum TxDtor {
    /// No destructor (tiny, small, ack, rendezvous, notify, pull request).
    None,
    /// `omx_medium_frag_skb_destructor`: a FRAG_DONE event to the sender.
    MediumFrag,
    /// `omx_send_pull_reply_skb_destructor`: the region's refcount put.
    PullReply,
}

/// Destructors waiting, counted per process.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    /// Per process: medium fragments and pull replies.
    frags: Vec<u32>,
    replies: Vec<u32>,
    /// The processes with a count, each once (at most the host's processes).
    procs: Vec<u16>,
}

impl Tally {
    fn new(procs: usize) -> Self {
        Tally { frags: vec![0; procs], replies: vec![0; procs], procs: Vec::with_capacity(procs) }
    }

    fn add(&mut self, p: u16, frags: u32, replies: u32) {
        let i = p as usize;
        if self.frags[i] == 0 && self.replies[i] == 0 {
            self.procs.push(p);
        }
        self.frags[i] += frags;
        self.replies[i] += replies;
    }

    /// Nothing waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.procs.is_empty()
    }

    /// The processes with a count and their counts (medium fragments, pull
    /// replies), in the order they first got one.
    #[cfg(test)]
    fn each(&self) -> impl Iterator<Item = (u16, u32, u32)> + '_ {
        self.procs.iter().map(|&p| (p, self.frags[p as usize], self.replies[p as usize]))
    }

    /// Processes with a count.
    pub(crate) fn len(&self) -> usize {
        self.procs.len()
    }

    /// The `i`-th process with a count and its counts (medium fragments,
    /// pull replies).
    pub(crate) fn get(&self, i: usize) -> (u16, u32, u32) {
        let p = self.procs[i];
        (p, self.frags[p as usize], self.replies[p as usize])
    }

    /// Empties it.
    pub(crate) fn clear(&mut self) {
        for &p in &self.procs {
            self.frags[p as usize] = 0;
            self.replies[p as usize] = 0;
        }
        self.procs.clear();
    }

    /// Moves every count of `from` here.
    fn take_from(&mut self, from: &mut Tally) {
        for &p in &from.procs {
            self.add(p, from.frags[p as usize], from.replies[p as usize]);
        }
        from.clear();
    }
}

/// The NET_TX bookkeeping of one host (see the module's documentation).
#[derive(Clone, Debug, Default)]
pub(crate) struct NetTx {
    /// Per receive queue: the completions with a destructor the NIC
    /// reported on its line and no reap has taken.
    queued: Vec<Tally>,
    /// Per core: its completion queue (`softnet_data.completion_queue`).
    cores: Vec<Tally>,
    /// Per core: NET_TX is raised (1), and its work item queued on the core
    /// (2), or neither (0).
    raised: Vec<u8>,
    /// FRAG_DONE events posted, and region refcounts put.
    pub(crate) frag_done_posted: u64,
    pub(crate) region_puts: u64,
}

impl NetTx {
    pub(crate) fn new(queues: usize, cores: usize, procs: usize) -> Self {
        NetTx {
            queued: vec![Tally::new(procs); queues],
            cores: vec![Tally::new(procs); cores],
            raised: vec![0; cores],
            frag_done_posted: 0,
            region_puts: 0,
        }
    }

    /// The NIC reported on queue `q` the completion of a frame of process
    /// `p` whose skb has destructor `d`.
    #[inline]
    pub(crate) fn completed(&mut self, q: usize, d: TxDtor, p: u16) {
        match d {
            TxDtor::None => {}
            TxDtor::MediumFrag => self.queued[q].add(p, 1, 0),
            TxDtor::PullReply => self.queued[q].add(p, 0, 1),
        }
    }

    /// The hard IRQ on `core` reaped queue `q`'s completions
    /// (`dev_kfree_skb_irq`): their destructors join the core's completion
    /// queue, and NET_TX is raised on the core.
    #[inline]
    pub(crate) fn reap(&mut self, q: usize, core: usize) {
        if self.queued[q].is_empty() {
            return;
        }
        let (queued, cores) = (&mut self.queued[q], &mut self.cores[core]);
        cores.take_from(queued);
        if self.raised[core] == 0 {
            self.raised[core] = 1;
        }
    }

    /// The hard IRQ on `core` ends (`irq_exit`): true if NET_TX is raised
    /// and its work item is to be queued now (once until it runs).
    #[inline]
    pub(crate) fn irq_exit(&mut self, core: usize) -> bool {
        let r = &mut self.raised[core];
        if *r == 1 {
            *r = 2;
            return true;
        }
        false
    }

    /// The NAPI poll on `core` (or a busy poll in the process's context)
    /// reaped queue `q`'s completions itself (`tx_reap = "napi"`) and frees
    /// their skbs there: their destructors run in that item, from the
    /// core's completion queue, with no softirq raised.
    #[inline]
    pub(crate) fn reap_in_poll(&mut self, q: usize, core: usize) {
        if !self.queued[q].is_empty() {
            let (queued, cores) = (&mut self.queued[q], &mut self.cores[core]);
            cores.take_from(queued);
        }
    }

    /// NET_TX runs on `core`: its completion queue (the caller empties it
    /// when the softirq ends).
    pub(crate) fn run(&mut self, core: usize) -> &mut Tally {
        self.raised[core] = 0;
        &mut self.cores[core]
    }

    /// The completion queue of `core`, as NET_TX left it.
    pub(crate) fn queue_of(&mut self, core: usize) -> &mut Tally {
        &mut self.cores[core]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reap_moves_the_queue_s_destructors_to_the_core_and_raises_net_tx_once() {
        let mut n = NetTx::new(2, 4, 3);
        n.completed(0, TxDtor::MediumFrag, 2);
        n.completed(0, TxDtor::None, 1);
        n.completed(0, TxDtor::MediumFrag, 2);
        n.completed(0, TxDtor::PullReply, 0);
        n.completed(1, TxDtor::MediumFrag, 1);
        n.reap(0, 3);
        assert!(n.irq_exit(3), "the first reap raises NET_TX");
        n.completed(0, TxDtor::MediumFrag, 2);
        n.reap(0, 3);
        assert!(!n.irq_exit(3), "queued already: not twice");
        let got: Vec<_> = n.run(3).each().collect();
        assert_eq!(got, vec![(2, 3, 0), (0, 0, 1)]);
        n.queue_of(3).clear();
        assert!(n.queue_of(3).is_empty());
        n.reap(0, 3);
        assert!(!n.irq_exit(3), "nothing left on queue 0: nothing raised");
        // Queue 1 kept its own.
        n.reap(1, 0);
        assert!(n.irq_exit(0));
        assert_eq!(n.run(0).each().collect::<Vec<_>>(), vec![(1, 1, 0)]);
    }
}
