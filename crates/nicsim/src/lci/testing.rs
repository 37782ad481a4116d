//! Runs of the LCI stack in the world for the mechanism tests: a scenario
//! text on `lci2000` with the stack asked for, built, stepped or run to its
//! end, and its program and parts taken out to look at.

use super::{FwEv, LibEv, Packet, Running};
use crate::library::lci::Lib as Host;
use crate::nic::lanai::Ni;
use crate::sim::World;
use crate::time::Instant;
use crate::{Metrics, Scenario};

/// The part a stepped event is addressed to, and what it is: host `h`'s
/// library, NI `h`'s firmware, its watchdog, its clock's tick or fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum To {
    Library(LibEv),
    Firmware(FwEv),
    Watchdog,
    ClockTick,
    ClockFetched,
}

/// `text` (preset `lci2000` unless it names one) with the LCI stack asked
/// for: `protocol.stack = "lci"`, in a `[protocol]` that has keys of its
/// own (an empty one turns on the reliable protocol with its defaults, so
/// it gets them written out).
pub(crate) fn stack_text(text: &str) -> String {
    let mut t: toml::Table = toml::from_str(text).expect("a test scenario parses");
    t.entry("preset").or_insert_with(|| "lci2000".into());
    let p = t.entry("protocol").or_insert_with(|| toml::Table::new().into());
    let p = p.as_table_mut().expect("[protocol] is a table");
    if p.is_empty() && !text.contains("[protocol]") {
        p.insert("stack".into(), "lci".into());
    } else {
        if p.is_empty() {
            p.insert("ack_delay_us".into(), crate::config::DEFAULT_ACK_DELAY_US.into());
        }
        p.insert("stack".into(), "lci".into());
    }
    toml::to_string(&t).expect("a table serializes")
}

/// The world of `text` (see [`stack_text`]), built: the stack started.
pub(crate) fn world(text: &str) -> World {
    let s = Scenario::from_toml(&stack_text(text)).unwrap_or_else(|e| panic!("{e}"));
    World::new(&s)
}

/// The LCI stack's part of `text` (see [`stack_text`]), as the one
/// scenario reader reads it, or its error.
pub(crate) fn scenario(text: &str) -> Result<crate::config::LciScenario, crate::config::ConfigError> {
    Scenario::from_toml(&stack_text(text)).map(|s| *s.lci.expect("a scenario of the LCI stack"))
}

/// A run's program and the parts its hosts held (their libraries, their
/// NIs' firmware, their NICs' buses), taken out of the world; the
/// program's through it.
pub(crate) struct Ran {
    pub prog: Box<Running>,
    /// Whether each host runs a rank (the world's rank map).
    pub ranked: Vec<bool>,
    pub hosts: Vec<Host>,
    pub nis: Vec<Ni>,
    /// The NICs' buses, which the NIs share with their hosts.
    pub buses: Vec<crate::host::bus::Bus>,
}

impl std::ops::Deref for Ran {
    type Target = Running;
    fn deref(&self) -> &Running {
        &self.prog
    }
}

/// `text` run to its end, invariants checked: the program with its hosts'
/// parts, and the metrics.
pub(crate) fn run(text: &str) -> (Ran, Metrics) {
    let mut w = world(text);
    w.run().unwrap_or_else(|e| panic!("{e}"));
    w.check_invariants().unwrap_or_else(|e| panic!("{e}"));
    let m = w.metrics();
    let hosts = w.hosts.iter_mut().map(|h| *h.lci.take().expect(PARTS)).collect();
    let nis = w.hosts.iter_mut().map(|h| *h.nic.lanai.take().expect(PARTS)).collect();
    let buses = w.hosts.iter().map(|h| h.nic.bus().expect(PARTS).clone()).collect();
    let ranked = (0..w.hosts.len()).map(|h| w.env.ranks.at(h, 0) != crate::library::NO_RANK).collect();
    (Ran { prog: w.run.lci.take().expect("the world runs the stack"), ranked, hosts, nis, buses }, m)
}

const PARTS: &str = "every host of the world runs the stack";

/// Host `h`'s library in a world.
pub(crate) fn lib(w: &World, h: usize) -> &Host {
    w.hosts[h].lci.as_deref().expect(PARTS)
}

/// NI `h`'s firmware in a world.
pub(crate) fn ni(w: &World, h: usize) -> &Ni {
    w.hosts[h].nic.lanai.as_deref().expect(PARTS)
}

/// Every NI's firmware in a world.
pub(crate) fn nis(w: &World) -> impl Iterator<Item = &Ni> {
    w.hosts.iter().map(|h| h.nic.lanai.as_deref().expect(PARTS))
}

/// The metrics of `text` run to its end as `nicsim run` runs it.
pub(crate) fn metrics(text: &str) -> Metrics {
    crate::run_toml(&stack_text(text)).unwrap_or_else(|e| panic!("{e}"))
}

/// Handles the world's next event, which is the stack's; returns its
/// time, the component it is addressed to and what it is, its host or NI
/// and the packet it named, if any.
pub(crate) fn step(w: &mut World) -> Option<(Instant, To, u32, Option<Packet>)> {
    w.step_lci()
}

/// Whether the program of a world that runs the stack is done.
pub(crate) fn done(w: &World) -> bool {
    w.programs_left == 0
}
