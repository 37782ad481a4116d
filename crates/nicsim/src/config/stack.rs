//! Which message library a scenario's hosts run (`protocol.stack`), and
//! whether that library offers the scenario's workload on its hardware.
//!
//! This module owns the choice: the typed key ([`Stack`]), its default
//! (from the preset's family and the workload's kind, each read as a typed
//! value), and the one-line refusal of a combination that cannot run
//! (naming the key, the value and what is allowed). It does not read
//! either library's options: the one scenario reader (`Scenario::from_toml`)
//! reads them, the LCI stack's part with `LciScenario::read` (`scenario/lci.rs`).
//!
//! What each library offers (its programs; docs/lci.md, docs/design.md
//! "The [LCI] cluster in the main world"):
//! [`Stack::offers`]: one `workload.kind` ([`WorkloadKind`]) names a
//! program whichever library runs it, and the library runs it when it
//! provides everything the program needs beyond sends, receives and
//! compute ([`Need`], [`needs`], [`Stack::provides`]).
//! * Open-MX and native MX run every kind but `dsm` on the Ethernet
//!   presets; on an LCI-family preset (one with LANai NIs: its `[lanai]`
//!   table) all but the other studies' testbed programs too (the flood of
//!   invalid frames and \[EMO]'s echo servers, written for Ethernet NICs).
//! * The LCI stack runs `stream`, `pingpong`, `bcast`, `asp`, `qr`, `dsm`
//!   and `fft-alltoall`, on an LCI-family preset only (it reads the
//!   `[lanai]`, `[pci]` and `[lci]` tables no other preset has). Of them
//!   `dsm` answers requests from its upcalls, which only that library has.

use super::{variant_names, ConfigError, WorkloadKind, DEFAULT_PRESET};
use serde::Deserialize;
use std::fmt;

/// `protocol.stack`: the message library the hosts run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stack {
    /// Open-MX over the kernel's Ethernet receive path (default).
    #[default]
    OpenMx,
    /// Myricom's native MX: OS-bypass, the baseline of \[OMX-COAL].
    NativeMx,
    /// The \[LCI] user-level library: PIO sends, polling, upcalls, on the
    /// LANai firmware of an LCI-family preset.
    Lci,
}

impl Stack {
    /// The name a scenario gives it.
    pub fn name(self) -> &'static str {
        match self {
            Stack::OpenMx => "open-mx",
            Stack::NativeMx => "native-mx",
            Stack::Lci => "lci",
        }
    }

    /// The catalogue of metrics its runs report, as `nicsim.metrics` keys
    /// them: "lci" for the LCI stack, "open-mx" for Open-MX and native MX.
    pub fn catalogue(self) -> &'static str {
        match self {
            Stack::Lci => "lci",
            Stack::OpenMx | Stack::NativeMx => "open-mx",
        }
    }
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The hardware family of a preset (whether it has a `[lanai]` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hardware {
    /// An Ethernet preset (no `[lanai]`): Open-MX or native MX only.
    Ethernet,
    /// An LCI-family preset (`[lanai]`): LANai NIs on PCI, a grid.
    Lci,
}

/// What a program needs of the library and hardware that run it, beyond
/// sends, receives and compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Its requests answered from the upcall of their last packet (`dsm`).
    Upcalls,
    /// The moment the last receiver has a broadcast, which no message
    /// tells the root (the \[LCI] broadcast benchmark, `Op::WaitDelivered`).
    Delivery,
    /// Ethernet frames into an Ethernet NIC's firmware or the kernel's
    /// receive path (`flood`, \[EMO]'s `echo-nic` and `echo-kernel`).
    EthernetPath,
    /// `procs_per_host` ranks on a host (the NAS skeletons, IMB
    /// Alltoall and Exchange).
    RanksPerHost,
    /// Sends completed and kept outstanding in a window (IMB Uniband's
    /// `workload.window`, each window answered by an ack).
    SendWindow,
}

impl Need {
    /// What it is, for a refusal.
    pub(crate) fn why(self) -> &'static str {
        match self {
            Need::Upcalls => "its requests are answered from upcalls",
            Need::Delivery => "its root waits until the last receiver has each broadcast",
            Need::EthernetPath => "its frames need an Ethernet NIC and the kernel's receive path",
            Need::RanksPerHost => "it runs procs_per_host ranks on each host",
            Need::SendWindow => "it keeps a window of sends outstanding until they complete",
        }
    }
}

/// What the program of kind `kind` that `stack` runs needs (`bcast` is
/// the \[LCI] broadcast benchmark on the LCI stack, a broadcast acked up
/// its tree on the others).
pub fn needs(kind: WorkloadKind, stack: Stack) -> &'static [Need] {
    use WorkloadKind::*;
    match kind {
        Dsm => &[Need::Upcalls],
        Bcast if stack == Stack::Lci => &[Need::Delivery],
        Flood | EchoNic | EchoKernel => &[Need::EthernetPath],
        NasIs | NasCg | NasMg | NasFt | NasBt | NasEp | NasLu | NasSp | Alltoall | Exchange => &[Need::RanksPerHost],
        Uniband => &[Need::SendWindow],
        Pingpong | Stream | Bcast | Asp | Qr | FftAlltoall => &[],
    }
}

impl Stack {
    /// Whether the library provides `need` on hardware `hw`: the LCI
    /// library runs every host's process in one place, one per host, and
    /// hands a send to its outbox whole; Open-MX and native MX run ranks
    /// in processes of their own, on an Ethernet preset the other
    /// studies' testbed programs too.
    pub fn provides(self, need: Need, hw: Hardware) -> bool {
        match (self, need) {
            (Stack::Lci, Need::Upcalls | Need::Delivery) => true,
            (Stack::Lci, Need::EthernetPath | Need::RanksPerHost | Need::SendWindow) => false,
            (Stack::OpenMx | Stack::NativeMx, Need::Upcalls | Need::Delivery) => false,
            (Stack::OpenMx | Stack::NativeMx, Need::EthernetPath) => hw == Hardware::Ethernet,
            (Stack::OpenMx | Stack::NativeMx, Need::RanksPerHost | Need::SendWindow) => true,
        }
    }

    /// What the library's program of kind `kind` needs and it does not
    /// provide on `hw`, if anything.
    pub fn lacks(self, kind: WorkloadKind, hw: Hardware) -> Option<Need> {
        needs(kind, self).iter().copied().find(|&n| !self.provides(n, hw))
    }

    /// Whether the library has a program of kind `kind` on hardware `hw`:
    /// one it provides everything for.
    pub fn offers(self, kind: WorkloadKind, hw: Hardware) -> bool {
        self.lacks(kind, hw).is_none()
    }

    /// The names of the kinds it offers on `hw`, in `WorkloadKind`'s order.
    pub fn programs(self, hw: Hardware) -> Vec<&'static str> {
        variant_names::<WorkloadKind>()
            .iter()
            .copied()
            .filter(|n| kind_named(n).is_some_and(|k| self.offers(k, hw)))
            .collect()
    }
}

/// The kind a name gives (`None`: no library has a program of that name).
fn kind_named(name: &str) -> Option<WorkloadKind> {
    WorkloadKind::deserialize(toml::Value::String(name.into())).ok()
}

/// The name of a kind, as a scenario gives it.
fn name_of(kind: WorkloadKind) -> String {
    toml::Value::try_from(kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// Whether the LCI study's hardware runs `kind` on its own stack when the
/// scenario names none: the study's programs do (multicast, DSM, FFT);
/// the MPI benchmarks run Open-MX there, as on every preset.
fn lci_by_default(kind: WorkloadKind) -> bool {
    use WorkloadKind::*;
    matches!(kind, Bcast | Asp | Qr | Dsm | FftAlltoall)
}

/// The stack a scenario runs: `named` (its `protocol.stack`) or, absent,
/// the default of its hardware and workload kind (`kind`: `None` when the
/// scenario gives none or a name no library has, which the chosen
/// library's parser reports). A combination that cannot run is refused
/// with one line naming the key, the value and what is allowed; `preset`
/// names the preset in it.
pub fn resolve(
    named: Option<Stack>,
    hw: Hardware,
    kind: Option<WorkloadKind>,
    preset: &str,
) -> Result<Stack, ConfigError> {
    let stack = named.unwrap_or(match (hw, kind) {
        (Hardware::Lci, Some(k)) if lci_by_default(k) => Stack::Lci,
        _ => Stack::OpenMx,
    });
    if stack == Stack::Lci && hw != Hardware::Lci {
        return Err(ConfigError::range(
            "protocol.stack",
            format!("\"lci\" on preset {preset:?}"),
            "\"open-mx\" or \"native-mx\"; \"lci\" runs on an LCI-family preset (LANai NIs: a [lanai] table), e.g. \"lci2000\"",
        ));
    }
    let Some(kind) = kind else { return Ok(stack) };
    if stack.offers(kind, hw) {
        return Ok(stack);
    }
    let name = name_of(kind);
    let lci_only = Stack::Lci.offers(kind, Hardware::Lci) && !Stack::OpenMx.offers(kind, Hardware::Lci);
    let why = stack.lacks(kind, hw).map_or("", Need::why);
    Err(match (stack, named) {
        (Stack::Lci, _) => ConfigError::range(
            "workload.kind",
            format!("{name:?} with protocol.stack = \"lci\""),
            &format!("one of {} (the LCI stack's programs; {why})", Stack::Lci.programs(hw).join(", ")),
        ),
        // A program of the LCI stack only, another stack named.
        (_, Some(named)) if lci_only => ConfigError::range(
            "protocol.stack",
            format!("\"{named}\" with workload.kind = {name:?}"),
            &format!("\"lci\": only the LCI stack runs it ({why})"),
        ),
        _ => {
            let lci = match hw {
                Hardware::Lci => format!("; with protocol.stack = \"lci\", {}", Stack::Lci.programs(hw).join(", ")),
                Hardware::Ethernet => "; the LCI stack's (dsm, ...) need an LCI-family preset, e.g. \"lci2000\"".into(),
            };
            ConfigError::range(
                "workload.kind",
                format!("{name:?} on preset {preset:?} with protocol.stack = \"{stack}\""),
                &format!("one of {}{lci} ({why})", stack.programs(hw).join(", ")),
            )
        }
    })
}

/// The hardware family of the preset `preset` (an embedded name or a
/// path); a preset that cannot be read is Ethernet's here, and its loading
/// names the error.
pub(super) fn hardware(preset: &str) -> Hardware {
    match super::preset_table(preset) {
        Ok(t) if super::is_lci_table(&t) => Hardware::Lci,
        _ => Hardware::Ethernet,
    }
}

/// The parts of a scenario table that choose its stack, read as typed
/// values: the preset's family, `protocol.stack` and `workload.kind`.
/// Keys it does not know are left to the chosen library's parser, as are
/// values of the wrong type (`Ok(None)` for them: the parser names the
/// key).
pub(super) fn of_table(table: &toml::Table) -> Result<Stack, ConfigError> {
    let field = |t: &str, k: &str| table.get(t).and_then(|v| v.get(k));
    let preset = table.get("preset").and_then(toml::Value::as_str).unwrap_or(DEFAULT_PRESET);
    let hw = hardware(preset);
    let named = match field("protocol", "stack") {
        None => None,
        Some(v) => Some(super::from_value::<Stack>("protocol.stack", v.clone())?),
    };
    let kind = field("workload", "kind").and_then(|v| WorkloadKind::deserialize(v.clone()).ok());
    resolve(named, hw, kind, preset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str) -> Option<WorkloadKind> {
        Some(kind_named(name).unwrap())
    }

    #[test]
    fn the_default_follows_the_hardware_and_the_program() {
        let lci = Hardware::Lci;
        for (k, want) in [("pingpong", Stack::OpenMx), ("alltoall", Stack::OpenMx), ("dsm", Stack::Lci)] {
            assert_eq!(resolve(None, lci, kind(k), "lci2000").unwrap(), want, "{k}");
        }
        for k in ["bcast", "asp", "qr", "fft-alltoall"] {
            assert_eq!(resolve(None, lci, kind(k), "lci2000").unwrap(), Stack::Lci, "{k}");
            assert_eq!(resolve(None, Hardware::Ethernet, kind(k), "modern").unwrap(), Stack::OpenMx, "{k}");
            let named = Some(Stack::OpenMx);
            assert_eq!(resolve(named, lci, kind(k), "lci2000").unwrap(), Stack::OpenMx, "{k}");
        }
        assert_eq!(resolve(Some(Stack::Lci), lci, kind("stream"), "lci2000").unwrap(), Stack::Lci);
        assert_eq!(resolve(None, lci, None, "lci2000").unwrap(), Stack::OpenMx);
    }

    #[test]
    fn a_combination_that_cannot_run_is_one_line_naming_why() {
        let cases = [
            (
                Some(Stack::Lci),
                Hardware::Ethernet,
                "stream",
                &["`protocol.stack`", "\"lci\"", "omx2009", "LCI-family"][..],
            ),
            (Some(Stack::Lci), Hardware::Lci, "uniband", &["`workload.kind`", "uniband", "dsm", "LCI stack"][..]),
            (Some(Stack::NativeMx), Hardware::Lci, "dsm", &["`protocol.stack`", "native-mx", "dsm", "upcalls"][..]),
            (None, Hardware::Ethernet, "dsm", &["`workload.kind`", "dsm", "omx2009", "alltoall", "lci2000"][..]),
            (None, Hardware::Lci, "flood", &["`workload.kind`", "flood", "alltoall", "fft-alltoall"][..]),
        ];
        for (named, hw, k, needles) in cases {
            let preset = if hw == Hardware::Lci { "lci2000" } else { "omx2009" };
            let e = resolve(named, hw, kind(k), preset).unwrap_err().0;
            assert!(!e.contains('\n'), "{e}");
            for n in needles {
                assert!(e.contains(n), "{n:?} not in {e:?}");
            }
        }
    }

    #[test]
    fn each_library_offers_the_programs_it_provides_everything_for_and_a_refusal_names_the_need() {
        use WorkloadKind::*;
        let (lci, eth) = (Hardware::Lci, Hardware::Ethernet);
        assert_eq!(Stack::Lci.lacks(Dsm, lci), None);
        assert_eq!(Stack::OpenMx.lacks(Dsm, lci), Some(Need::Upcalls));
        assert_eq!(Stack::Lci.lacks(Bcast, lci), None, "the broadcast benchmark's delivery wait");
        assert_eq!(Stack::OpenMx.lacks(Bcast, lci), None, "the broadcast acked up its tree");
        assert_eq!(Stack::OpenMx.lacks(Flood, eth), None);
        assert_eq!(Stack::NativeMx.lacks(EchoNic, lci), Some(Need::EthernetPath));
        assert_eq!(Stack::Lci.lacks(Alltoall, lci), Some(Need::RanksPerHost));
        assert_eq!(Stack::Lci.lacks(Uniband, lci), Some(Need::SendWindow));
        for k in [Asp, Qr, FftAlltoall, Stream, Pingpong] {
            for s in [Stack::Lci, Stack::OpenMx, Stack::NativeMx] {
                assert!(s.offers(k, lci), "{k:?} on {s}: needs nothing more");
            }
        }
        let e = resolve(Some(Stack::Lci), lci, kind("uniband"), "lci2000").unwrap_err().0;
        assert!(e.contains("window of sends outstanding"), "{e}");
        let e = resolve(Some(Stack::OpenMx), lci, kind("dsm"), "lci2000").unwrap_err().0;
        assert!(e.contains("answered from upcalls") && !e.contains('\n'), "{e}");
        let e = resolve(None, lci, kind("flood"), "lci2000").unwrap_err().0;
        assert!(e.contains("Ethernet NIC"), "{e}");
    }

    #[test]
    fn a_name_no_library_knows_is_left_to_the_parser() {
        assert_eq!(kind_named("pingpongx"), None);
        assert_eq!(resolve(None, Hardware::Lci, None, "lci2000").unwrap(), Stack::OpenMx);
    }

    #[test]
    fn a_scenario_whose_stack_cannot_run_its_workload_is_refused_before_anything_else() {
        let cases = [
            ("[protocol]\nstack = \"lci\"\n[workload]\nkind = \"stream\"\n", "`protocol.stack`"),
            ("preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n[workload]\nkind = \"alltoall\"\n", "`workload.kind`"),
            ("preset = \"lci2000\"\n[protocol]\nstack = \"open-mx\"\n[workload]\nkind = \"dsm\"\n", "`protocol.stack`"),
            ("[workload]\nkind = \"dsm\"\n", "`workload.kind`"),
            ("[protocol]\nstack = \"mx\"\n[workload]\nkind = \"stream\"\n", "`protocol.stack`"),
        ];
        for (text, key) in cases {
            let e = crate::Scenario::from_toml(text).unwrap_err().0;
            assert!(e.contains(key) && !e.contains('\n'), "{key} in {e:?}");
            assert_eq!(crate::config::check_toml(text).unwrap_err().0, e);
        }
        let ok = |text: &str| crate::config::check_toml(&format!("preset = \"lci2000\"\n{text}")).unwrap();
        assert_eq!(ok("[workload]\nkind = \"qr\"\n"), Stack::Lci);
        assert_eq!(ok("[protocol]\nstack = \"open-mx\"\n[workload]\nkind = \"qr\"\n"), Stack::OpenMx);
        assert_eq!(ok("[protocol]\nstack = \"native-mx\"\n[workload]\nkind = \"stream\"\n"), Stack::NativeMx);
    }
}
