//! The library's event format: what the receive handler (or the NIC)
//! writes into an endpoint's shared event ring ([`LibEvent`]), who wrote
//! it ([`Writer`]), and how many events a ring holds ([`EVENT_RING_SLOTS`]).
//!
//! A value type below the process (`process.rs`) and its indexed
//! collections (`indexes.rs`), which both hold events.

use crate::proto::Msg;

/// Who wrote a ring event and its data: the handler on a core of this
/// die (its cache holds them), or the NIC itself, straight to memory
/// (native MX, or a pull the copy engine completed into memory). Two
/// bytes: a host has at most 64 dies (topology validation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Writer {
    Die(u8),
    Memory,
}

impl Writer {
    /// The handler on die `die` wrote it.
    pub(crate) fn die(die: u16) -> Self {
        Writer::Die(die as u8)
    }
}

/// A library event in an endpoint's shared event ring: a message header and
/// where it came from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LibEvent {
    pub msg: Msg,
    /// The sender's rank.
    pub peer: u16,
    /// Where the event and its data are (the handler's die, or memory).
    pub writer: Writer,
    /// The frame's interrupt stamp (see `Frame::irq_stamp`).
    pub irq_stamp: u32,
}

/// Message events an endpoint's ring holds; a message frame that finds it
/// full is dropped (counted as `dropped_event_queue_full`) and recovered
/// by the sender's resend. [fact: `OMX_UNEXP_EVENTQ_ENTRY_NR` = 1024,
/// Open-MX `common/omx_io.h`; the driver's `omx_notify_unexp_event` fails
/// with `UNEXP_EVENTQ_FULL` when the library has not released a slot,
/// `driver/linux/omx_event.c`]
pub(crate) const EVENT_RING_SLOTS: usize = 1024;

// Rings hold these by value: keep them at most six words.
const _: () = assert!(std::mem::size_of::<LibEvent>() <= 48);

impl LibEvent {
    /// The same event with the message's sequence number set to `seq`.
    pub(crate) fn with_seq(self, seq: u32) -> Self {
        LibEvent { msg: Msg { seq, ..self.msg }, ..self }
    }
}
