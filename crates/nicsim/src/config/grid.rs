//! The `[grid]` table: hosts on a 3D grid of crossbar switches (the
//! Myrinet of \[LCI]), read by the LCI stack (`crate::lci`) and by the
//! world's network when a platform has one (`crate::net`).
//!
//! This module owns the table's fields and checks; it does not own the
//! grid's timing (`crate::net::grid`).

use super::{check_u, ConfigError};
use serde::{Deserialize, Serialize};

/// Hosts and the 3D grid of switches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridCfg {
    /// Number of hosts (= x * y * z * hosts_per_switch).
    pub hosts: u32,
    /// Switches along x, y and z.
    pub x: u32,
    pub y: u32,
    pub z: u32,
    /// Hosts attached to each switch.
    pub hosts_per_switch: u32,
    /// Ports of one switch (hosts + up to 6 grid neighbours must fit).
    pub switch_ports: u32,
}

impl GridCfg {
    /// Range checks; errors name the key (`grid.*`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let g = self;
        for (k, v) in [("grid.x", g.x), ("grid.y", g.y), ("grid.z", g.z)] {
            check_u(k, v as u64, 1, 64)?;
        }
        check_u("grid.switch_ports", g.switch_ports as u64, 2, 64)?;
        check_u("grid.hosts_per_switch", g.hosts_per_switch as u64, 1, g.switch_ports as u64)?;
        let need = g.x * g.y * g.z * g.hosts_per_switch;
        if g.hosts != need || g.hosts < 2 {
            return Err(ConfigError::range(
                "grid.hosts",
                g.hosts,
                &format!("x*y*z*hosts_per_switch = {need}, at least 2"),
            ));
        }
        let neighbours = [g.x, g.y, g.z].iter().map(|&d| if d > 2 { 2 } else { d - 1 }).sum::<u32>();
        if g.hosts_per_switch + neighbours > g.switch_ports {
            return Err(ConfigError::range(
                "grid.hosts_per_switch",
                g.hosts_per_switch,
                &format!("at most switch_ports - grid neighbours = {}", g.switch_ports.saturating_sub(neighbours)),
            ));
        }
        Ok(())
    }
}
