//! The EMO analytic model (\[EMO], SPEC §2.5): latency, overhead and gap of a
//! message protocol split across NIC, host OS and application, as pure
//! functions of its variables.
//!
//! This module owns the equations and their extensible layers. It does not
//! know any platform: [`from_scenario`] derives the variables from the same
//! validated scenario (preset + options) that the simulator runs, and is the
//! only place where simulator costs become EMO variables.
//!
//! Units are in the names: cycles are plain counts, clocks in Hz, latencies
//! in seconds (`_s`). The model is analytic, so it uses `f64`; the simulator's
//! integer time never enters it.
//!
//! Every sum is computed as the sum of its [`Term`]s, so that the terms the
//! CLI prints always add up to the value it reports.

pub mod from_scenario;

pub use from_scenario::{echo, echo_toml, echo_vars, layer, EchoEval, ModelError, Role};

use crate::config::On;

/// The EMO variables (SPEC §2.5).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Vars {
    /// C_N: protocol cycles on the NIC processor.
    pub c_n_cycles: f64,
    /// R_N: NIC processor clock.
    pub r_n_hz: f64,
    /// L_NH: latency of the NIC -> host crossing.
    pub l_nh_s: f64,
    /// C_H: protocol cycles on the host in the OS.
    pub c_h_cycles: f64,
    /// R_H: host clock.
    pub r_h_hz: f64,
    /// L_HA: latency of the host OS -> application crossing.
    pub l_ha_s: f64,
    /// L_NA: latency of the NIC -> application crossing (OS bypass).
    pub l_na_s: f64,
    /// C_A: protocol cycles on the host in the application (library).
    pub c_a_cycles: f64,
    /// O_NH: host cycles of the NIC -> host crossing (interrupt).
    pub o_nh_cycles: f64,
    /// O_HA: host cycles of the OS -> application crossing.
    pub o_ha_cycles: f64,
    /// O_NA: host cycles of the NIC -> application crossing.
    pub o_na_cycles: f64,
    /// L_W: wire latency.
    pub l_w_s: f64,
}

/// An extra layer of the extensible model, added to both sums: e.g. MPI
/// matching offloaded to the NIC (C_m on the NIC, L_am, O_am).
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    pub name: String,
    /// C_m: the layer's protocol cycles, on the clock of `on`.
    pub cycles: f64,
    pub on: On,
    /// L_am: latency of the layer's crossing.
    pub latency_s: f64,
    /// O_am: host cycles of the layer's crossing.
    pub overhead_cycles: f64,
}

impl Layer {
    /// The layer's part of a latency sum: C_m / R + L_am.
    pub fn latency_s(&self, v: &Vars) -> f64 {
        let clock = match self.on {
            On::Nic => v.r_n_hz,
            On::Host => v.r_h_hz,
        };
        self.cycles / clock + self.latency_s
    }

    /// The layer's part of an overhead sum (host cycles): O_am, plus C_m
    /// when the layer runs on the host (as C_H and C_A are in the sum).
    pub fn overhead_cycles(&self) -> f64 {
        self.overhead_cycles
            + match self.on {
                On::Host => self.cycles,
                On::Nic => 0.0,
            }
    }
}

/// The EMO configurations of SPEC §2.5.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Config {
    /// Every path: `Overhead`, `Latency`.
    Full,
    /// The traditional kernel stack: `Traditional_Overhead`, `Traditional_Latency`.
    Traditional,
    /// The traditional stack with interrupt coalescing: `Coalesced_Overhead`
    /// (O_NH amortised to 0) and `Traditional_Latency` (whose L_NH includes
    /// the coalescing wait).
    Coalesced,
    /// Protocol offloaded to the NIC talking to the application directly
    /// (application-to-NIC): C_N/R_N + L_NA + C_A/R_H, O_NA + C_A.
    Offload,
}

/// Names accepted by [`Config::parse`].
pub const CONFIG_NAMES: &[&str] = &["full", "traditional", "coalesced", "offload"];

impl Config {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "full" => Config::Full,
            "traditional" => Config::Traditional,
            "coalesced" => Config::Coalesced,
            "offload" => Config::Offload,
            _ => return None,
        })
    }
}

/// The \[EMO] measurement paths: where the echo server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// Application-to-NIC: the echo server is NIC firmware.
    ToNic,
    /// Application-to-kernel: the echo server is in the host OS (no copy to user).
    ToKernel,
    /// Application-to-application ping-pong.
    ToApp,
}

/// Names accepted by [`Path::parse`], in the order of [`Path::ALL`].
pub const PATH_NAMES: &[&str] = &["to-nic", "to-kernel", "to-app"];

impl Path {
    pub const ALL: [Path; 3] = [Path::ToNic, Path::ToKernel, Path::ToApp];
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "to-nic" => Path::ToNic,
            "to-kernel" => Path::ToKernel,
            "to-app" => Path::ToApp,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Path::ToNic => "to-nic",
            Path::ToKernel => "to-kernel",
            Path::ToApp => "to-app",
        }
    }
}

/// One term of a sum: its EMO name and value (seconds for latency sums,
/// host cycles for overhead sums).
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub name: String,
    pub value: f64,
}

fn t(name: &str, value: f64) -> Term {
    Term { name: name.to_string(), value }
}

/// Sum of terms.
pub fn sum(terms: &[Term]) -> f64 {
    terms.iter().fold(0.0, |a, t| a + t.value)
}

fn layer_latency_terms<'a>(v: &Vars, layers: &'a [Layer]) -> impl Iterator<Item = Term> + 'a {
    let v = *v;
    layers.iter().map(move |l| Term { name: format!("{} (C_m/R + L_am)", l.name), value: l.latency_s(&v) })
}

fn layer_overhead_terms(layers: &[Layer]) -> impl Iterator<Item = Term> + '_ {
    layers.iter().map(|l| Term { name: format!("{} (O_am)", l.name), value: l.overhead_cycles() })
}

/// Terms of the latency sum of a configuration (seconds).
pub fn latency_terms(v: &Vars, config: Config, layers: &[Layer]) -> Vec<Term> {
    let mut ts = match config {
        Config::Full => vec![
            t("C_N/R_N", v.c_n_cycles / v.r_n_hz),
            t("L_NH", v.l_nh_s),
            t("C_H/R_H", v.c_h_cycles / v.r_h_hz),
            t("L_HA", v.l_ha_s),
            t("L_NA", v.l_na_s),
            t("C_A/R_H", v.c_a_cycles / v.r_h_hz),
            t("L_W", v.l_w_s),
        ],
        Config::Traditional | Config::Coalesced => vec![
            t("C_N/R_N", v.c_n_cycles / v.r_n_hz),
            t("L_NH", v.l_nh_s),
            t("C_H/R_H", v.c_h_cycles / v.r_h_hz),
            t("L_HA", v.l_ha_s),
        ],
        Config::Offload => {
            vec![t("C_N/R_N", v.c_n_cycles / v.r_n_hz), t("L_NA", v.l_na_s), t("C_A/R_H", v.c_a_cycles / v.r_h_hz)]
        }
    };
    ts.extend(layer_latency_terms(v, layers));
    ts
}

/// Terms of the overhead sum of a configuration (host cycles).
pub fn overhead_terms(v: &Vars, config: Config, layers: &[Layer]) -> Vec<Term> {
    let mut ts = match config {
        Config::Full => vec![
            t("O_NH", v.o_nh_cycles),
            t("C_H", v.c_h_cycles),
            t("O_HA", v.o_ha_cycles),
            t("C_A", v.c_a_cycles),
            t("O_NA", v.o_na_cycles),
        ],
        Config::Traditional => vec![t("O_NH", v.o_nh_cycles), t("C_H", v.c_h_cycles), t("O_HA", v.o_ha_cycles)],
        Config::Coalesced => vec![t("C_H", v.c_h_cycles), t("O_HA", v.o_ha_cycles)],
        Config::Offload => vec![t("O_NA", v.o_na_cycles), t("C_A", v.c_a_cycles)],
    };
    ts.extend(layer_overhead_terms(layers));
    ts
}

/// `Latency` = C_N/R_N + L_NH + C_H/R_H + L_HA + L_NA + C_A/R_H + L_W (+ layers), seconds.
pub fn latency_s(v: &Vars, layers: &[Layer]) -> f64 {
    sum(&latency_terms(v, Config::Full, layers))
}

/// `Traditional_Latency` = C_N/R_N + L_NH + C_H/R_H + L_HA (+ layers), seconds.
pub fn traditional_latency_s(v: &Vars, layers: &[Layer]) -> f64 {
    sum(&latency_terms(v, Config::Traditional, layers))
}

/// `Overhead` = O_NH + C_H + O_HA + C_A + O_NA (+ layers), host cycles.
pub fn overhead_cycles(v: &Vars, layers: &[Layer]) -> f64 {
    sum(&overhead_terms(v, Config::Full, layers))
}

/// `Traditional_Overhead` = O_NH + C_H + O_HA (+ layers), host cycles.
pub fn traditional_overhead_cycles(v: &Vars, layers: &[Layer]) -> f64 {
    sum(&overhead_terms(v, Config::Traditional, layers))
}

/// `Coalesced_Overhead` = C_H + O_HA (+ layers): O_NH amortised to 0, host cycles.
pub fn coalesced_overhead_cycles(v: &Vars, layers: &[Layer]) -> f64 {
    sum(&overhead_terms(v, Config::Coalesced, layers))
}

/// `Gap` = max(C_N/R_N, C_H/R_H, L_W) - min(C_N/R_N, C_H/R_H, L_W), seconds
/// (SPEC §2.5, as written).
pub fn gap_s(v: &Vars) -> f64 {
    let xs = [v.c_n_cycles / v.r_n_hz, v.c_h_cycles / v.r_h_hz, v.l_w_s];
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    max - min
}

/// The sums of one configuration for given variables: (latency terms in
/// seconds, overhead terms in host cycles, gap in seconds).
pub fn sums(v: &Vars, config: Config, layers: &[Layer]) -> (Vec<Term>, Vec<Term>, f64) {
    (latency_terms(v, config, layers), overhead_terms(v, config, layers), gap_s(v))
}

/// Terms of the one-way latency of a message to the level a path reaches
/// on one host (seconds): to-nic C_N/R_N + L_W; to-kernel C_N/R_N + L_NH +
/// C_H/R_H + L_W; to-app the full `Latency`.
pub fn path_latency_terms(v: &Vars, path: Path, layers: &[Layer]) -> Vec<Term> {
    match path {
        Path::ToNic => vec![t("C_N/R_N", v.c_n_cycles / v.r_n_hz), t("L_W", v.l_w_s)],
        Path::ToKernel => vec![
            t("C_N/R_N", v.c_n_cycles / v.r_n_hz),
            t("L_NH", v.l_nh_s),
            t("C_H/R_H", v.c_h_cycles / v.r_h_hz),
            t("L_W", v.l_w_s),
        ],
        Path::ToApp => latency_terms(v, Config::Full, layers),
    }
}

/// Terms of the host overhead of a path on the host that ends it (host
/// cycles): to-nic none; to-kernel O_NH + C_H; to-app the full `Overhead`.
pub fn path_overhead_terms(v: &Vars, path: Path, layers: &[Layer]) -> Vec<Term> {
    match path {
        Path::ToNic => Vec::new(),
        Path::ToKernel => vec![t("O_NH", v.o_nh_cycles), t("C_H", v.c_h_cycles)],
        Path::ToApp => overhead_terms(v, Config::Full, layers),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-picked variables: every term a different round number.
    fn vars() -> Vars {
        Vars {
            c_n_cycles: 880.0, // 10 us at 88 MHz
            r_n_hz: 88e6,
            l_nh_s: 7e-6,
            c_h_cycles: 1000.0, // 1 us at 1 GHz
            r_h_hz: 1e9,
            l_ha_s: 3e-6,
            l_na_s: 0.5e-6,
            c_a_cycles: 2000.0, // 2 us
            o_nh_cycles: 300.0,
            o_ha_cycles: 400.0,
            o_na_cycles: 50.0,
            l_w_s: 4e-6,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-9)
    }

    #[test]
    fn latency_is_the_spec_sum() {
        // 10 + 7 + 1 + 3 + 0.5 + 2 + 4 = 27.5 us
        assert!(close(latency_s(&vars(), &[]), 27.5e-6));
    }

    #[test]
    fn traditional_latency_is_the_spec_sum() {
        // 10 + 7 + 1 + 3 = 21 us
        assert!(close(traditional_latency_s(&vars(), &[]), 21e-6));
    }

    #[test]
    fn overheads_are_the_spec_sums() {
        let v = vars();
        assert!(close(overhead_cycles(&v, &[]), 300.0 + 1000.0 + 400.0 + 2000.0 + 50.0));
        assert!(close(traditional_overhead_cycles(&v, &[]), 300.0 + 1000.0 + 400.0));
        assert!(close(coalesced_overhead_cycles(&v, &[]), 1000.0 + 400.0));
        assert!(close(sum(&overhead_terms(&v, Config::Offload, &[])), 50.0 + 2000.0));
    }

    #[test]
    fn offload_latency() {
        // 10 + 0.5 + 2 = 12.5 us
        assert!(close(sum(&latency_terms(&vars(), Config::Offload, &[])), 12.5e-6));
    }

    #[test]
    fn gap_is_max_minus_min_of_the_three_stages() {
        // stages: NIC 10 us, host 1 us, wire 4 us -> 9 us
        assert!(close(gap_s(&vars()), 9e-6));
        let v = Vars { l_w_s: 20e-6, ..vars() };
        assert!(close(gap_s(&v), 19e-6));
    }

    #[test]
    fn a_layer_adds_to_both_sums() {
        let v = vars();
        let nic =
            Layer { name: "mpi-matching".into(), cycles: 176.0, on: On::Nic, latency_s: 1e-6, overhead_cycles: 30.0 };
        // 176 cycles at 88 MHz = 2 us, + 1 us
        assert!(close(latency_s(&v, std::slice::from_ref(&nic)), 30.5e-6));
        assert!(close(traditional_latency_s(&v, std::slice::from_ref(&nic)), 24e-6));
        assert!(close(overhead_cycles(&v, std::slice::from_ref(&nic)), 3750.0 + 30.0));
        // On the host its cycles are host cycles, in both sums.
        let host = Layer { on: On::Host, ..nic };
        assert!(close(latency_s(&v, std::slice::from_ref(&host)), 27.5e-6 + 0.176e-6 + 1e-6));
        assert!(close(overhead_cycles(&v, std::slice::from_ref(&host)), 3750.0 + 30.0 + 176.0));
    }

    #[test]
    fn path_sums() {
        let v = vars();
        assert!(close(sum(&path_latency_terms(&v, Path::ToNic, &[])), 14e-6));
        assert!(close(sum(&path_latency_terms(&v, Path::ToKernel, &[])), 22e-6));
        assert!(close(sum(&path_latency_terms(&v, Path::ToApp, &[])), 27.5e-6));
        assert_eq!(sum(&path_overhead_terms(&v, Path::ToNic, &[])), 0.0);
        assert!(close(sum(&path_overhead_terms(&v, Path::ToKernel, &[])), 1300.0));
        assert!(close(sum(&path_overhead_terms(&v, Path::ToApp, &[])), 3750.0));
    }

    #[test]
    fn coalescing_wait_moves_only_the_offset() {
        // L_NH grows by the wait; nothing else moves.
        let v = vars();
        let c = Vars { l_nh_s: v.l_nh_s + 30e-6, ..v };
        assert!(close(latency_s(&c, &[]) - latency_s(&v, &[]), 30e-6));
        assert!(close(overhead_cycles(&c, &[]), overhead_cycles(&v, &[])));
    }

    #[test]
    fn names_parse() {
        for (i, n) in PATH_NAMES.iter().enumerate() {
            assert_eq!(Path::parse(n), Some(Path::ALL[i]));
            assert_eq!(Path::ALL[i].name(), *n);
        }
        for n in CONFIG_NAMES {
            assert!(Config::parse(n).is_some());
        }
        assert_eq!(Path::parse("to-disk"), None);
    }
}
