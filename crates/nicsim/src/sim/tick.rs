//! The kernel's periodic tick on every busy core (`[host.tick]`): Linux
//! 2.6.26's local APIC timer interrupt, `tick_sched_timer` ->
//! `update_process_times` (`account_process_tick`, `run_local_timers`,
//! `rcu_check_callbacks`, `scheduler_tick`) and the timer and scheduler
//! softirqs it raises (`kernel/time/tick-sched.c`, `kernel/timer.c`,
//! `kernel/sched.c`); and the jiffy grid it keeps, on which Open-MX's pull
//! timer expires.
//!
//! Each core ticks every `1 / hz`. The cores of a host are skewed as
//! `tick_setup_sched_timer` sets them up (2.6.2x: `offset = tick_period / 2
//! / num_possible_cpus() * smp_processor_id()`, unconditional before
//! Linux 3.2's `sched_skew_tick` made it a boot option), from the host's
//! jiffy phase (`tick_init_jiffy_update`), which depends on when the host
//! booted: drawn from the run's seed, one per host. So two runs with other
//! seeds see the ticks at other points of their traffic, as two runs of the
//! real hosts did.
//!
//! Tickless idle (`host.tick.nohz`, `CONFIG_NO_HZ`): a core whose process
//! sleeps (or that has none) runs the idle loop, which stops its tick
//! (`cpu_idle` -> `tick_nohz_stop_sched_tick`); an interrupt served there
//! does not restart it (`irq_enter` only brings `jiffies` up to date,
//! `irq_exit` stops the tick again, `kernel/softirq.c`); the tick restarts,
//! on its grid, when a task runs there again (`tick_nohz_restart_sched_tick`,
//! here: when the core's process is woken). Such a core has no tick event
//! at all. Not modelled: the idle core's wake-up for a timer of its own
//! (its timers run at their jiffy, `get_next_timer_interrupt`), and Open-MX's
//! driver timer that writes `jiffies` into the page the library reads,
//! re-armed every jiffy on one core of each host
//! (`omx_driver_userdesc_update_handler`, driver/linux `omx_main.c`), which
//! keeps that core's tick running: a 1 us kernel item on an otherwise idle
//! core every jiffy. With `nohz = false` every core ticks every period, busy
//! or idle.
//!
//! A tick is kernel work on its core (`KWork::Tick`): it preempts the
//! process there as an interrupt does and runs after the kernel item under
//! way (the hard IRQ would cut into a NAPI poll; the poll's next frame then
//! waits as long). The world runs no tick event when `hz = 0`.
//!
//! Each host has at most one tick event queued: the next slot of its
//! ticking cores (more than one pending event per core would move a busy
//! run's queue out of its small sorted layout). An event whose slot a
//! restarted core has since taken is stale and ends at once.

use super::{Ev, KWork, World};
use crate::config::TickCfg;
use crate::engine::SimRng;
use crate::library::PState;
use crate::time::{Duration, Instant};

/// The ticks of a world's hosts: their period and cost, each host's grid
/// and queued tick, and how many ran.
pub(crate) struct Ticks {
    period: Duration,
    pub(super) cost: Duration,
    pub(super) ran: u64,
    /// Idle cores do not tick (`CONFIG_NO_HZ`).
    nohz: bool,
    /// Open-MX's pull timer expires on the jiffy grid (`mod_timer`).
    pub(super) jiffy_timers: bool,
    hosts: Vec<HostTick>,
}

/// One host's tick grid and its queued tick event.
struct HostTick {
    /// When its jiffies advance (core 0's slot), within the first period.
    phase: Duration,
    /// The skew between its cores' slots.
    skew: Duration,
    /// The slot and core of its queued tick event (`None`: no core ticks).
    pending: Option<(Instant, u8)>,
}

/// Keeps the tick's phases apart from the wire's draws of the same seed.
const PHASE_STREAM: u64 = 0x7469_636b_2d68_7a00;

impl Ticks {
    /// Core `core`'s first slot of host `h` after `after`.
    fn slot_after(&self, h: usize, core: usize, after: Instant) -> Instant {
        let ht = &self.hosts[h];
        let off = (ht.phase + ht.skew.times(core as u64)).as_ps();
        let (t, p) = (after.as_ps(), self.period.as_ps());
        let at = if t < off { off } else { off + ((t - off) / p + 1) * p };
        Instant::from_ps(at)
    }

    /// When a kernel timer host `h` arms at `at` for `timeout` expires:
    /// `mod_timer(timer, jiffies + J)` with `J` the timeout in whole jiffies
    /// (`OMX_PULL_RETRANSMIT_TIMEOUT_MS * HZ / 1000`, driver/linux
    /// `omx_pull.c`), run by the timer softirq at the tick whose jiffies
    /// update reaches it (`run_timer_softirq`, `kernel/timer.c`): the
    /// `J`-th jiffy after `at`'s. On the host's jiffy grid; the arming
    /// core's own skew is not added.
    pub(super) fn jiffy_expiry(&self, h: usize, at: Instant, timeout: Duration) -> Instant {
        let p = self.period.as_ps();
        let jiffies = timeout.as_ps() / p;
        let phase = self.hosts[h].phase.as_ps();
        let t = at.as_ps();
        // Jiffy updates come at `phase + k * period`; `jiffies` counts them.
        let now_jiffy = if t < phase { 0 } else { (t - phase) / p + 1 };
        Instant::from_ps(phase + (now_jiffy + jiffies.max(1) - 1) * p)
    }
}

impl World {
    /// Starts every busy core's tick when `cfg` asks for one: host `h`'s
    /// phase is drawn from `seed`, its cores skewed from it. Called once
    /// the processes are placed.
    pub(super) fn start_ticks(&mut self, cfg: &TickCfg, seed: u64) {
        if cfg.hz == 0 || self.hosts.is_empty() {
            return;
        }
        let period = Duration::from_ps(1_000_000_000_000 / u64::from(cfg.hz));
        let mut rng = SimRng::new(seed ^ PHASE_STREAM);
        let hosts = self
            .hosts
            .iter()
            .map(|hs| HostTick {
                phase: Duration::from_ps(rng.below(period.as_ps())),
                skew: Duration::from_ps(period.as_ps() / 2 / hs.cores.len().max(1) as u64),
                pending: None,
            })
            .collect();
        self.ticks = Some(Box::new(Ticks {
            period,
            cost: Duration::from_ns_f64(cfg.cost_ns),
            ran: 0,
            nohz: cfg.nohz,
            jiffy_timers: cfg.jiffy_timers,
            hosts,
        }));
        for h in 0..self.hosts.len() {
            self.arm_tick(h, Instant::ZERO);
        }
    }

    /// Whether core `core` of host `h` ticks: always without `nohz`; with
    /// it, while a task runs there (its process is not asleep nor done).
    fn core_ticks(&self, h: usize, core: usize) -> bool {
        let Some(t) = self.ticks.as_deref() else { return false };
        if !t.nohz {
            return true;
        }
        let hs = &self.hosts[h];
        hs.cores[core].app.is_some_and(|p| !matches!(hs.procs[p as usize].state(), PState::Blocked | PState::Done))
    }

    /// Queues host `h`'s next tick after `after`: the earliest slot of its
    /// ticking cores (none queued when no core ticks).
    fn arm_tick(&mut self, h: usize, after: Instant) {
        let Some(t) = self.ticks.as_deref() else { return };
        let next = (0..self.hosts[h].cores.len())
            .filter(|&c| self.core_ticks(h, c))
            .map(|c| (t.slot_after(h, c, after), c as u8))
            .min();
        let t = self.ticks.as_deref_mut().expect("ticks");
        t.hosts[h].pending = next;
        if let Some((at, core)) = next {
            self.q.push(at, h as u32, Ev::KernelTick { host: h as u16, core });
        }
    }

    /// Core `core` of host `h` ticks (`Ev::KernelTick`): a ticking core
    /// runs the tick's kernel work first; then the host's next tick is
    /// queued. A stale event (its slot since taken by a restarted core's
    /// earlier one) does nothing.
    pub(super) fn kernel_tick(&mut self, now: Instant, h: usize, core: usize) {
        let Some(t) = self.ticks.as_deref() else { return };
        if t.hosts[h].pending != Some((now, core as u8)) {
            return;
        }
        if self.core_ticks(h, core) {
            self.ticks.as_deref_mut().expect("ticks").ran += 1;
            self.hosts[h].cores[core].kq.push_front(KWork::Tick);
            self.kick(now, h, core);
        }
        self.arm_tick(h, now);
    }

    /// Core `core` of host `h` runs a task again (its process was woken):
    /// with `nohz` its tick restarts on its grid
    /// (`tick_nohz_restart_sched_tick`), queued if earlier than the host's.
    #[cold]
    pub(super) fn restart_tick(&mut self, now: Instant, h: usize, core: usize) {
        let Some(t) = self.ticks.as_deref_mut() else { return };
        if !t.nohz {
            return;
        }
        let at = t.slot_after(h, core, now);
        if t.hosts[h].pending.is_none_or(|(queued, _)| at < queued) {
            t.hosts[h].pending = Some((at, core as u8));
            self.q.push(at, h as u32, Ev::KernelTick { host: h as u16, core: core as u8 });
        }
    }

    /// What a tick costs its core.
    pub(super) fn tick_cost(&self) -> Duration {
        self.ticks.as_deref().map_or(Duration::ZERO, |t| t.cost)
    }
}

#[cfg(test)]
mod tests {
    use super::super::World;
    use crate::time::{Duration, Instant};
    use crate::Scenario;

    fn world(extra: &str) -> World {
        World::new(
            &Scenario::from_toml(&format!("preset = \"omx2009\"\nseed = 7\n[workload]\nkind = \"pingpong\"\n{extra}"))
                .unwrap(),
        )
    }

    fn ticks(m: &crate::Metrics) -> f64 {
        m.get("kernel_ticks").unwrap_or(0.0)
    }

    /// `mod_timer(timer, jiffies + 250)` at 250 Hz: the timer runs at the
    /// 250th jiffy update after its arming, so between 996 and 1,000 ms
    /// later and always on the host's grid; two armings within one jiffy
    /// expire together. With `jiffy_timers = false`, exactly 1 s later.
    #[test]
    fn a_pull_timer_expires_on_the_hosts_jiffy_grid() {
        let w = world("");
        let t = w.ticks.as_deref().expect("omx2009 ticks");
        let (p, phase) = (t.period, t.hosts[0].phase);
        assert_eq!(p, Duration::from_us(4000));
        let second = Duration::from_us(1_000_000);
        let mut dues = Vec::new();
        for k in 0..50u64 {
            let armed = Instant::ZERO + Duration::from_ps(k * 1_234_567_891 + 17);
            let due = w.pull_due(0, armed);
            let wait = due.since(armed);
            assert!(wait > second - p && wait <= second, "armed {armed:?}: waits {wait:?}");
            assert_eq!((due.as_ps() - phase.as_ps()) % p.as_ps(), 0, "on the grid");
            dues.push(due);
        }
        let armed = Instant::ZERO + phase + Duration::from_us(8_000) + Duration::from_ps(1);
        assert_eq!(w.pull_due(0, armed), w.pull_due(0, armed + Duration::from_us(3_999)));
        assert_eq!(w.pull_due(0, armed) + p, w.pull_due(0, armed + Duration::from_us(4_000)));
        let exact = world("[platform.host.tick]\njiffy_timers = false\n");
        assert_eq!(exact.pull_due(0, armed), armed + second);
        let untimed = world("[platform.host.tick]\nhz = 0\n");
        assert_eq!(untimed.pull_due(0, armed), armed + second);
    }

    /// A polling ping-pong: one process a host, on core 0; the hosts'
    /// other seven cores have none. Tickless (`nohz`), only the two
    /// polling cores tick, once a period each; without it all sixteen do,
    /// busy or idle.
    #[test]
    fn only_the_cores_whose_process_runs_tick() {
        let pp = |nohz: bool| {
            crate::run_toml(&format!(
                "preset = \"omx2009\"\n[host]\nwait = \"poll\"\n[workload]\nkind = \"pingpong\"\n\
                 iterations = 20000\nwarmup = 0\n[platform.host.tick]\nnohz = {nohz}\n"
            ))
            .unwrap()
        };
        let (on, off) = (pp(true), pp(false));
        let periods = |m: &crate::Metrics| m.get("sim_time_us").unwrap() / 4000.0;
        let (n_on, n_off) = (periods(&on), periods(&off));
        assert!((2.0 * n_on - ticks(&on)).abs() <= 4.0, "{} ticks in {n_on} periods", ticks(&on));
        assert!((16.0 * n_off - ticks(&off)).abs() <= 32.0, "{} ticks in {n_off} periods", ticks(&off));
    }

    /// A sleeping process's core stops ticking and restarts on its grid
    /// when the process is woken: a ping-pong whose processes sleep in
    /// the wait ioctl between messages (its cores run a task a few
    /// percent of the time, so few slots find one) ticks far less than one
    /// polling; without tickless idle every core ticks every period.
    #[test]
    fn a_sleeping_process_stops_its_cores_tick_until_it_wakes() {
        let pp = |wait: &str, nohz: bool| {
            crate::run_toml(&format!(
                "preset = \"omx2009\"\n[host]\nwait = \"{wait}\"\n[nic]\ncoalescing = \"timeout\"\n\
                 [workload]\nkind = \"pingpong\"\niterations = 20000\nwarmup = 0\n\
                 [platform.host.tick]\nnohz = {nohz}\n"
            ))
            .unwrap()
        };
        let per_period = |m: &crate::Metrics| ticks(m) / (m.get("sim_time_us").unwrap() / 4000.0);
        let (sleep, poll, idle) = (pp("block", true), pp("poll", true), pp("block", false));
        assert!(per_period(&sleep) < 0.5 * per_period(&poll), "{} {}", per_period(&sleep), per_period(&poll));
        assert!(per_period(&idle) > 15.0, "{}", per_period(&idle));
    }
}
