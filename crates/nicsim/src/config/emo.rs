//! The `[emo]` table of a platform: the inputs of the EMO analytic model
//! (`crate::model`) and of the NIC-firmware echo (`workload.kind =
//! "echo-nic"`), among them the NIC processor's clock, at which a LANai
//! NI's firmware cycles run too (`config::lanai`).
//!
//! This module owns the table, its layers and their defaults; it does not
//! own the model (`crate::model`).

use super::units::cost_table;
use serde::{Deserialize, Serialize};

cost_table! {
    /// Inputs of the EMO model (`crate::model`) and of the NIC-firmware echo
    /// (`workload.kind = "echo-nic"`): the NIC processor's clock and its
    /// byte-copy cost, plus any extra layers a user declares.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct EmoCfg in "emo" as e {
        /// Clock of the NIC processor in MHz (EMO's R_N).
        pub nic_clock_mhz: f64 [0.001, 1e6],
        /// NIC processor cycles to copy one byte between its buffers (the
        /// firmware echo copies the payload from the receive to the send buffer).
        pub nic_copy_cycles_per_byte: f64 [0.0, 1e6],
        /// Extensible layers added to both EMO sums (`[[emo.layer]]`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub layer: Vec<LayerCfg>,
    }
}

impl Default for EmoCfg {
    /// Without an `[emo]` table: R_N = 1000 MHz (NIC cycles read as
    /// nanoseconds, so C_N/R_N is exact whatever the real clock) and a
    /// firmware echo that swaps buffers without copying bytes.
    fn default() -> Self {
        EmoCfg { nic_clock_mhz: 1000.0, nic_copy_cycles_per_byte: 0.0, layer: Vec::new() }
    }
}

/// One extra EMO layer (e.g. MPI matching offload: C_m, L_am, O_am).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerCfg {
    pub name: String,
    /// Protocol cycles of the layer (C_m), run on `on`'s clock.
    pub cycles: f64,
    /// Where the cycles run: nic | host.
    pub on: On,
    /// Extra latency of the layer's crossing (L_am), in nanoseconds.
    pub latency_ns: f64,
    /// Host cycles the layer's crossing costs (O_am).
    pub overhead_cycles: f64,
}

/// Where an EMO layer's protocol cycles run (`emo.layer.on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum On {
    /// `nic`: on the NIC processor's clock.
    Nic,
    /// `host`: on the host's clock.
    Host,
}

impl std::fmt::Display for On {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            On::Nic => "nic",
            On::Host => "host",
        })
    }
}

/// `cycles` of the NIC processor at `clock_mhz` (`emo.nic_clock_mhz`), in
/// nanoseconds: the one conversion of NIC firmware cycles (a LANai
/// firmware's steps, `config::lanai_derive`).
pub fn nic_cycles_ns(clock_mhz: f64, cycles: u32) -> f64 {
    cycles as f64 * 1e3 / clock_mhz
}
