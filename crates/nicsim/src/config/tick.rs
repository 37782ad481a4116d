//! The kernel's periodic tick on every core (`[host.tick]`): its rate,
//! what one costs the core it interrupts, whether idle cores stop it and
//! whether Open-MX's pull timer expires on its jiffies. Read by
//! `crate::sim`'s `tick` and `pull`.

use super::units::cost_table;
use serde::{Deserialize, Serialize};

/// Ticks per second at most (Linux's `CONFIG_HZ` choices end at 1000).
pub const TICK_HZ_MAX: u32 = 10_000;

cost_table! {
    /// The local APIC timer's tick on each busy core (Linux 2.6.26
    /// `tick_sched_timer` -> `update_process_times` -> `scheduler_tick`,
    /// `kernel/time/tick-sched.c`, `kernel/timer.c`, `kernel/sched.c`).
    /// Absent or `hz = 0`: no tick.
    #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct TickCfg in "host.tick" as t {
        /// Ticks per second on each core (`CONFIG_HZ`); 0: none. The host's
        /// phase is drawn from the run's seed (the hosts booted at unrelated
        /// times); its cores are skewed by `core * period / (2 * cores)`, as
        /// `tick_setup_sched_timer` sets them up.
        #[serde(default)]
        pub hz: u32 [0, TICK_HZ_MAX],
        /// What a tick costs the core it interrupts: the timer interrupt, the
        /// scheduler's and the timers' bookkeeping and their softirq.
        #[serde(default)]
        pub cost_ns: f64 [0.0, 1e6],
        /// Tickless idle (`CONFIG_NO_HZ`, Linux 2.6.21 on): a core whose
        /// process sleeps, or that has none, does not tick (interrupts it
        /// serves do not restart its tick); false: every core ticks every
        /// period, busy or idle. Absent: true.
        #[serde(default = "yes")]
        pub nohz: bool,
        /// Open-MX's pull-retransmit timer expires on the host's jiffy grid
        /// (`mod_timer(&handle->retransmit_timer, get_jiffies_64() +
        /// OMX_PULL_RETRANSMIT_TIMEOUT_JIFFIES)`, driver/linux `omx_pull.c`):
        /// between `J - 1` and `J` periods after it is armed, `J` the timeout
        /// in whole jiffies; false: exactly `library.pull_timeout_us` after.
        /// Absent: true.
        #[serde(default = "yes")]
        pub jiffy_timers: bool,
    }
}

fn yes() -> bool {
    true
}

impl Default for TickCfg {
    /// No tick (`hz = 0`): the other keys then change nothing.
    fn default() -> Self {
        TickCfg { hz: 0, cost_ns: 0.0, nohz: true, jiffy_timers: true }
    }
}
