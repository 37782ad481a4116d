//! The run's bookkeeping: the run's own state ([`Run`]: its workload and flood source, the counters its metrics and
//! its stall window read, why it failed).
//!
//! It owns these records; it does not own what makes them change (the
//! library's outputs, `lib_io`; the NIC path's interrupts) nor the metrics
//! made from them (`metrics`).

use super::Flood;
use crate::config::Workload;
use crate::time::Duration;
use crate::SimError;

/// The run's workload, its counters and its state.
pub(crate) struct Run {
    pub workload: Workload,
    /// The flood source (`flood`), when the workload is a flood.
    pub flood: Option<Flood>,
    /// Requests completed (the stall window's progress).
    pub completions: u64,
    /// Interrupts raised on every host so far (the sum of the hosts'
    /// `irq_raised`, kept as they are raised: a process's mark reads it,
    /// and summing the hosts there cost a pass over every host per mark).
    pub irq_raised_all: u64,
    /// Medium messages received, and those whose fragments were all in host
    /// memory before any interrupt reported one of them.
    pub medium_msgs: u64,
    pub medium_one_irq: u64,
    /// CPU time (kernel + application + spinning) of hosts 0 and 1 at the
    /// Start and End marks.
    pub busy_at_mark: [[Duration; 2]; 2],
    /// Why the run failed, if a stage gave up (the library on a peer, a
    /// driver on a pull); the run loop ends with it.
    pub failed: Option<SimError>,
    /// Frames dropped at full receive rings when a message last completed
    /// (as seen by the run loop's periodic check).
    pub ring_full_at_progress: u64,
    /// The program the hosts run when they run the \[LCI] stack
    /// (`Scenario::lci`; `lci_stack`): its parts are the hosts'.
    pub lci: Option<Box<crate::lci::Running>>,
}

impl Run {
    pub(crate) fn new(workload: Workload) -> Self {
        Run {
            workload,
            flood: None,
            completions: 0,
            irq_raised_all: 0,
            medium_msgs: 0,
            medium_one_irq: 0,
            busy_at_mark: [[Duration::ZERO; 2]; 2],
            failed: None,
            ring_full_at_progress: 0,
            lci: None,
        }
    }

    /// A stage gave up: the run ends with `why` (the first one given).
    pub(crate) fn fail(&mut self, why: String) {
        if self.failed.is_none() {
            self.failed = Some(SimError(why));
        }
    }
}
