//! How a caller watches a run and stops it early: the interrupt check.
//!
//! This module owns the contract between a run and its caller, and nothing
//! else: the world's event loop (`crate::sim`, whichever stack its hosts
//! run) calls a [`Check`] every [`CHECK_EVERY`] events with the run's
//! [`Progress`], and ends with [`SimError::interrupted`] when it answers `true`. What the check
//! looks at (a pending Ctrl-C, a deadline, the process's memory against a
//! [`crate::memory::Limit`], a progress display) is the caller's business:
//! the core reads no clock and knows no signal. The Python binding's check
//! compares the memory with its limit and re-takes the GIL to run
//! `Python::check_signals` and to report progress.

use crate::time::Instant;
use crate::SimError;

/// Events between two calls of a run's interrupt check.
///
/// The loop tests the event count after each pop (see `due`), so the hot
/// path pays one test and a branch that is almost never taken; the Open-MX
/// world runs its stall bound at the same point instead of on every event,
/// so its per-event work is what it was without the check. At the 10-30
/// million events per second of the core this is a check every 35-100 µs of
/// wall time: a stop request is seen long before a person notices, and the
/// memory a run allocates between two checks stays small even when all its
/// processes grow their tables at once (see [`crate::memory::Guard`]). A
/// check that reads a clock adds 0.03 % to a ping-pong's instructions
/// (`examples/run`); one that does more (taking the GIL, reading `/proc`)
/// paces itself by that clock.
pub const CHECK_EVERY: u32 = 1024;
const _: () = assert!(CHECK_EVERY.is_power_of_two(), "`due` is a mask test");

/// Where a run is when its check is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Simulated time of the event just handled (never decreases).
    pub now: Instant,
    /// Events handled so far.
    pub events: u64,
}

/// A run's interrupt check: called every [`CHECK_EVERY`] events; `true`
/// stops the run with [`SimError::interrupted`].
pub type Check<'a> = &'a mut dyn FnMut(Progress) -> bool;

/// The check of a run nobody stops.
pub fn never(_: Progress) -> bool {
    false
}

/// Whether the loop runs its periodic checks (the caller's [`ask`] among
/// them) after `events` events: on every [`CHECK_EVERY`]-th. The event
/// queue counts the events it hands out anyway, and the count is in a
/// register right after a pop: one test and a branch that is almost never
/// taken.
#[inline(always)]
pub(crate) fn due(events: u64) -> bool {
    events.is_multiple_of(CHECK_EVERY as u64)
}

/// Calls the check; its `true` becomes [`SimError::interrupted`]. Kept out
/// of the event loop's code: it runs once per [`CHECK_EVERY`] events.
#[cold]
#[inline(never)]
pub(crate) fn ask(check: &mut Check<'_>, at: Progress) -> Result<(), SimError> {
    if check(at) {
        Err(SimError::interrupted())
    } else {
        Ok(())
    }
}
