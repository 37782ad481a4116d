//! The host's NAPI settings as the scenario reads them: per-queue
//! `[[host.napi]]` entries over the host-wide knobs, threaded NAPI (refused
//! where the kernel or the reap has none) and the busy-poll budget.

use super::*;

/// The per-queue NAPI settings of `[[host.napi]]` (`opts`) over the
/// host-wide `host`, each queue below `queues` (per host) and set at most
/// once; an irq-suspend-timeout needs busy polling, as the host-wide key.
pub(super) fn napi_per_queue(
    opts: &[NapiSetOpts],
    host: NapiKnobs,
    queues: usize,
) -> Result<Vec<(u32, NapiKnobs)>, ConfigError> {
    let mut out: Vec<(u32, NapiKnobs)> = Vec::with_capacity(opts.len());
    for (i, o) in opts.iter().enumerate() {
        let key = format!("host.napi[{i}]");
        let allowed = format!("an integer 0 ..= {}, one of the {queues} receive queue(s) of a host", queues - 1);
        let q = match &o.queue {
            None => {
                return Err(ConfigError::new(format!(
                    "`{key}.queue` is missing: give the receive queue it sets ({allowed})"
                )))
            }
            Some(v) => match v.0.as_integer().and_then(|v| u32::try_from(v).ok()) {
                Some(q) if (q as usize) < queues => q,
                _ => return Err(ConfigError::range(&format!("{key}.queue"), &v.0, &allowed)),
            },
        };
        if out.iter().any(|&(earlier, _)| earlier == q) {
            return Err(ConfigError::new(format!(
                "invalid value for `{key}.queue`: {q} (an earlier [[host.napi]] sets queue {q}: give each queue once)"
            )));
        }
        let mut k = host;
        if let Some(d) = &o.defer_hard_irqs {
            k.defer_hard_irqs = d.range(&format!("{key}.defer_hard_irqs"), 0, i32::MAX as u64)? as u32;
        }
        if o.gro_flush_timeout_ns.is_some() || o.gro_flush_timeout_us.is_some() {
            k.gro_flush_timeout =
                ns_or_us(&format!("{key}.gro_flush_timeout"), &o.gro_flush_timeout_ns, o.gro_flush_timeout_us)?;
        }
        if o.irq_suspend_timeout_ns.is_some() || o.irq_suspend_timeout_us.is_some() {
            k.irq_suspend_timeout =
                ns_or_us(&format!("{key}.irq_suspend_timeout"), &o.irq_suspend_timeout_ns, o.irq_suspend_timeout_us)?;
            if !k.irq_suspend_timeout.is_zero() && !k.busy_poll {
                let unit = if o.irq_suspend_timeout_ns.is_some() { "ns" } else { "us" };
                return Err(ConfigError::new(format!(
                    "invalid value for `{key}.irq_suspend_timeout_{unit}`: it needs `host.busy_poll = true` (preferred busy polling)"
                )));
            }
        }
        if let Some(t) = o.threaded {
            k.threaded = t;
        }
        out.push((q, k));
    }
    Ok(out)
}

/// The first key that turns threaded NAPI on, host-wide or for a queue.
pub(super) fn threaded_key(h: &HostOpts) -> Option<String> {
    if h.napi_threaded == Some(true) {
        return Some("host.napi_threaded".into());
    }
    let i = h.napi.as_deref().unwrap_or_default().iter().position(|o| o.threaded == Some(true))?;
    Some(format!("host.napi[{i}].threaded"))
}

/// Threaded NAPI (turned on by `key`) needs its kernel thread's costs in
/// the preset (`host.napi_thread_wake_ns`, `host.napi_thread_switch_ns`):
/// `modern` has them; the 2009 presets' kernel, Linux 2.6.26, has no
/// threaded NAPI (net/core/dev.c gained `napi_threaded_poll` in 5.12), nor
/// the LCI and EMO hosts. It also needs the lumped interrupt structure:
/// with myri10ge's split claims (`tx_reap = "hard-irq"`) the hard handler
/// schedules NAPI itself (`sim/kernel.rs`), which is modelled in softirq
/// context only.
pub(super) fn napi_threads(key: String, platform: &Platform, preset: &str, tx_reap: TxReap) -> Result<(), ConfigError> {
    let h = &platform.host;
    if h.napi_thread_wake_ns == 0.0 && h.napi_thread_switch_ns == 0.0 {
        return Err(ConfigError::new(format!(
            "invalid value for `{key}`: true (allowed: false on preset {preset:?}, whose kernel has no threaded NAPI \
             (Linux 5.12+); or give the thread's costs, platform.host.napi_thread_wake_ns and napi_thread_switch_ns)"
        )));
    }
    if tx_reap == TxReap::HardIrq {
        return Err(ConfigError::new(format!(
            "invalid value for `{key}`: true (allowed: false with tx_reap = \"hard-irq\": myri10ge's split claims \
             schedule NAPI from the hard handler, modelled in softirq context only; set host.tx_reap = \"napi\")"
        )));
    }
    Ok(())
}

/// Linux busy-poll budget: the packets one busy poll takes
/// (include/net/busy_poll.h `BUSY_POLL_BUDGET`, the budget `sk_busy_loop`
/// gives `napi_busy_loop` when the socket's `SO_BUSY_POLL_BUDGET` is 0:
/// `READ_ONCE(sk->sk_busy_poll_budget) ?: BUSY_POLL_BUDGET`; a scenario
/// sets another with `host.busy_poll_budget`; the queue's busy poll,
/// `crate::nic::RxQueue::busy_poll`, takes it).
pub const BUSY_POLL_BUDGET: u16 = 8;

/// `host.busy_poll_budget` (`opt`; `busy_poll`: `host.busy_poll`): the
/// socket's SO_BUSY_POLL_BUDGET as Linux takes it (net/core/sock.c
/// `sk_setsockopt`: `val < 0 || val > U16_MAX` is -EINVAL, and raising it
/// needs CAP_NET_ADMIN, which the simulated process has), 0 meaning the
/// kernel's `BUSY_POLL_BUDGET` (include/net/busy_poll.h `sk_busy_loop`:
/// `READ_ONCE(sk->sk_busy_poll_budget) ?: BUSY_POLL_BUDGET`). A budget
/// other than the default needs busy polling.
pub(super) fn busy_poll_budget(opt: &Option<Int>, busy_poll: bool) -> Result<u16, ConfigError> {
    let key = "host.busy_poll_budget";
    let v = int_or(key, opt, 0, 0, u16::MAX as u64)? as u16;
    if v != 0 && !busy_poll {
        return Err(ConfigError::new(format!(
            "invalid value for `{key}`: {v} (it needs `host.busy_poll = true`: the budget is the busy poll's)"
        )));
    }
    Ok(if v == 0 { BUSY_POLL_BUDGET } else { v })
}

impl Scenario {
    /// The NAPI settings of receive queue `q` of a host: its `[[host.napi]]`
    /// entry, else the host-wide knobs.
    pub fn napi_of(&self, q: usize) -> NapiKnobs {
        self.napi_queues.iter().find(|&&(i, _)| i as usize == q).map_or(self.napi, |&(_, k)| k)
    }
}
