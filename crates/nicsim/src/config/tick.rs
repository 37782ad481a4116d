//! The kernel's periodic tick on every core (`[host.tick]`): its rate and
//! what one costs the core it interrupts. Read by `crate::sim`'s `tick`.

use super::units::cost_table;
use serde::{Deserialize, Serialize};

/// Ticks per second at most (Linux's `CONFIG_HZ` choices end at 1000).
pub const TICK_HZ_MAX: u32 = 10_000;

cost_table! {
    /// The local APIC timer's tick on each busy core (Linux 2.6.26
    /// `tick_sched_timer` -> `update_process_times` -> `scheduler_tick`,
    /// `kernel/time/tick-sched.c`, `kernel/timer.c`, `kernel/sched.c`).
    /// Absent or `hz = 0`: no tick.
    #[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct TickCfg in "host.tick" as t {
        /// Ticks per second on each core (`CONFIG_HZ`); 0: none. The host's
        /// phase is drawn from the run's seed (the hosts booted at unrelated
        /// times); its cores are skewed by `core * period / (2 * cores)`, as
        /// `tick_setup_sched_timer` sets them up. An idle core does not tick
        /// (`CONFIG_NO_HZ`).
        #[serde(default)]
        pub hz: u32 [0, TICK_HZ_MAX],
        /// What a tick costs the core it interrupts: the timer interrupt, the
        /// scheduler's and the timers' bookkeeping and their softirq.
        #[serde(default)]
        pub cost_ns: f64 [0.0, 1e6],
    }
}
