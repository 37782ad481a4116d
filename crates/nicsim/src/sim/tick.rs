//! The kernel's periodic tick on every busy core (`[host.tick]`): Linux
//! 2.6.26's local APIC timer interrupt, `tick_sched_timer` ->
//! `update_process_times` (`account_process_tick`, `run_local_timers`,
//! `rcu_check_callbacks`, `scheduler_tick`) and the timer and scheduler
//! softirqs it raises (`kernel/time/tick-sched.c`, `kernel/timer.c`,
//! `kernel/sched.c`).
//!
//! Each core ticks every `1 / hz`. The cores of a host are skewed as
//! `tick_setup_sched_timer` sets them up (2.6.2x: `offset = tick_period / 2
//! / num_possible_cpus() * smp_processor_id()`, unconditional before
//! Linux 3.2's `sched_skew_tick` made it a boot option), from the host's
//! jiffy phase (`tick_init_jiffy_update`), which depends on when the host
//! booted: drawn from the run's seed, one per host. So two runs with other
//! seeds see the ticks at other points of their traffic, as two runs of the
//! real hosts did. A core that is idle (not running, not spinning) does not
//! tick (`CONFIG_NO_HZ`): its timer is stopped until it has work.
//!
//! A tick is kernel work on its core (`KWork::Tick`): it preempts the
//! process there as an interrupt does and runs after the kernel item under
//! way (the hard IRQ would cut into a NAPI poll; the poll's next frame then
//! waits as long). The world runs no tick event when `hz = 0`.

use super::{Ev, KWork, World};
use crate::config::TickCfg;
use crate::engine::SimRng;
use crate::time::{Duration, Instant};

/// The ticks of a world's hosts: their period and cost, each host's next
/// tick, and how many ran. One event waits in the queue for all of them:
/// the earliest next tick of any host (more than one pending event per
/// core would move a busy run's queue out of its small sorted layout).
pub(crate) struct Ticks {
    period: Duration,
    pub(super) cost: Duration,
    pub(super) ran: u64,
    /// Per host: the start of its current period (its core 0's tick), the
    /// skew between its cores' ticks, and the core that ticks next.
    hosts: Vec<(Instant, Duration, u8)>,
}

/// Keeps the tick's phases apart from the wire's draws of the same seed.
const PHASE_STREAM: u64 = 0x7469_636b_2d68_7a00;

impl Ticks {
    /// When host `h`'s next core ticks.
    fn next(&self, h: usize) -> Instant {
        let (base, skew, core) = self.hosts[h];
        base + skew.times(u64::from(core))
    }

    /// The host whose core ticks first (the lowest index among equals).
    fn first(&self) -> (usize, Instant) {
        (0..self.hosts.len()).map(|h| (h, self.next(h))).min_by_key(|&(h, t)| (t, h)).expect("a host")
    }
}

impl World {
    /// Starts every core's tick when `cfg` asks for one: host `h`'s phase
    /// is drawn from `seed`, its cores skewed from it.
    pub(super) fn start_ticks(&mut self, cfg: &TickCfg, seed: u64) {
        if cfg.hz == 0 || self.hosts.is_empty() {
            return;
        }
        let period = Duration::from_ps(1_000_000_000_000 / u64::from(cfg.hz));
        let mut rng = SimRng::new(seed ^ PHASE_STREAM);
        let hosts = self
            .hosts
            .iter()
            .map(|hs| {
                let phase = Duration::from_ps(rng.below(period.as_ps()));
                let skew = Duration::from_ps(period.as_ps() / 2 / hs.cores.len().max(1) as u64);
                (Instant::ZERO + phase, skew, 0u8)
            })
            .collect();
        let ticks = Ticks { period, cost: Duration::from_ns_f64(cfg.cost_ns), ran: 0, hosts };
        let (h, at) = ticks.first();
        self.ticks = Some(Box::new(ticks));
        self.q.push(at, h as u32, Ev::KernelTick { host: h as u16, core: 0 });
    }

    /// Core `core` of host `h` ticks (`Ev::KernelTick`): a busy core runs
    /// the tick's kernel work first. The host's next core ticks one skew
    /// later, its core 0 one period after the last; then the earliest of
    /// the hosts' next ticks is queued.
    pub(super) fn kernel_tick(&mut self, now: Instant, h: usize, core: usize) {
        let Some(t) = self.ticks.as_deref_mut() else { return };
        let cores = self.hosts[h].cores.len();
        let (base, skew, _) = t.hosts[h];
        t.hosts[h] = if core + 1 < cores { (base, skew, core as u8 + 1) } else { (base + t.period, skew, 0) };
        let (next_h, at) = t.first();
        let next_core = t.hosts[next_h].2;
        let cs = &mut self.hosts[h].cores[core];
        if !(cs.is_quiet() && cs.idle_since.is_some()) {
            t.ran += 1;
            cs.kq.push_front(KWork::Tick);
            self.kick(now, h, core);
        }
        self.q.push(at, next_h as u32, Ev::KernelTick { host: next_h as u16, core: next_core });
    }

    /// What a tick costs its core.
    pub(super) fn tick_cost(&self) -> Duration {
        self.ticks.as_deref().map_or(Duration::ZERO, |t| t.cost)
    }
}
