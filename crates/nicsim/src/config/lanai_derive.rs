//! What a platform with a `[lanai]` table (`config::lanai`) is beyond its
//! tables: the shared keys it derives from them, each a function of
//! several keys ([`derive`]: the firmware's per-frame times, which are
//! cycles at the NIC clock; the PIO word of a doorbell; the frames a
//! stopped link holds; the hosts, the grid's), the checks of how its tables
//! fit the shared ones ([`validate`]), and the keys of the earlier LCI
//! preset shape with their places now ([`MOVED`], refused by
//! `config::overrides` naming the new key). Loading a platform
//! (`config::overrides`, `load_platform`) runs them; the platform's own
//! checks (`Platform::validate`) do not know of them.

use super::emo::nic_cycles_ns;
use super::{check_f, check_u, ConfigError, LanaiCfg, Platform};
use crate::time::Duration;
use serde::Deserialize;

/// The shared keys a LANai platform derives (table, key, from what): a
/// preset or a scenario that sets one is refused naming these.
const DERIVED: [(&str, &str, &str); 8] = [
    ("topology", "hosts", "grid.hosts"),
    ("nic", "fw_rx_ns", "lanai.fw_rx_cycles + lanai.dma_setup_cycles at emo.nic_clock_mhz"),
    ("nic", "fw_tx_ns", "lanai.fw_tx_cycles + lanai.dma_setup_cycles at emo.nic_clock_mhz"),
    ("nic", "tx_dma_startup_ns", "lanai.dma_setup_cycles at emo.nic_clock_mhz, then nic.dma_startup_ns"),
    ("nic", "doorbell_ns", "one 32-bit PIO write: pci.pio_write_overhead_ns and 4 B at pci.pio_write_MBps"),
    ("nic", "mcast_fwd_ns", "lanai.fw_forward_cycles at emo.nic_clock_mhz"),
    ("nic", "flow_control_frames", "lanai.recv_buffers and every other host's lanai.send_buffers"),
    ("host", "irq_rearm_ns", "one 32-bit PIO write: pci.pio_write_overhead_ns and 4 B at pci.pio_write_MBps"),
];

/// What [`derive`] reads (the other keys of the table are the platform's).
#[derive(Deserialize)]
struct Inputs {
    lanai: LanaiCfg,
    pci: super::PciCfg,
    emo: EmoClock,
    grid: Hosts,
    nic: DmaStartup,
}

#[derive(Deserialize)]
struct EmoClock {
    nic_clock_mhz: f64,
}

#[derive(Deserialize)]
struct Hosts {
    hosts: u32,
}

#[derive(Deserialize)]
struct DmaStartup {
    dma_startup_ns: f64,
}

/// The first derived key `table` sets, if the platform has a `[lanai]`
/// table (`lanai`): an error naming it and what it is derived from.
pub(crate) fn derived_given(table: &toml::Table, lanai: bool) -> Option<ConfigError> {
    if !lanai {
        return None;
    }
    DERIVED.iter().find_map(|(t, k, from)| {
        let v = table.get(*t)?.as_table()?.get(*k)?;
        Some(ConfigError(format!(
            "`{t}.{k}` = {v} is derived on a LANai NI, from {from}; leave it out and set those keys"
        )))
    })
}

/// Fills in the shared keys a platform table with a `[lanai]` table derives
/// ([`DERIVED`]), each from the keys it is a function of. A table without
/// `[lanai]` is left as it is; one that sets a derived key is refused. When
/// the inputs do not parse, the derived keys are filled with in-range values
/// that are never used: the platform's own parsing of the same inputs then
/// fails, naming the key at fault (as [`validate`] does for a bad value).
pub(crate) fn derive(table: &mut toml::Table) -> Result<(), ConfigError> {
    if !table.contains_key("lanai") {
        return Ok(());
    }
    if let Some(e) = derived_given(table, true) {
        return Err(e);
    }
    let values = match super::from_value::<Inputs>("", toml::Value::Table(table.clone())) {
        Err(_) => DERIVED.map(|(t, k, _)| match (t, k) {
            ("topology", _) => toml::Value::Integer(2),
            (_, "flow_control_frames") => toml::Value::Integer(1),
            _ => toml::Value::Float(0.0),
        }),
        Ok(i) => {
            let (l, clock) = (&i.lanai, i.emo.nic_clock_mhz);
            l.check()?;
            i.pci.validate()?;
            check_f("emo.nic_clock_mhz", clock, 0.001, 1e6)?;
            check_f("nic.dma_startup_ns", i.nic.dma_startup_ns, 0.0, 1e9)?;
            let hosts = i.grid.hosts;
            check_u("grid.hosts", hosts as u64, 2, super::MAX_HOSTS as u64)?;
            let ns = |cycles: u32| nic_cycles_ns(clock, cycles);
            // A firmware step and its DMA's set-up, each whole picoseconds.
            let steps = |step: u32| steps_ns(clock, &[step, l.dma_setup_cycles]);
            let setup = Duration::from_ns_f64(ns(l.dma_setup_cycles));
            let tx_dma_startup = setup + Duration::from_ns_f64(i.nic.dma_startup_ns);
            let word = i.pci.word_write_ns();
            let frames = l.recv_buffers as i64 + (hosts as i64 - 1) * l.send_buffers as i64;
            [
                (hosts as i64).into(),
                steps(l.fw_rx_cycles).into(),
                steps(l.fw_tx_cycles).into(),
                tx_dma_startup.as_ns_f64().into(),
                word.into(),
                ns(l.fw_forward_cycles).into(),
                frames.into(),
                word.into(),
            ]
        }
    };
    for ((t, k, _), v) in DERIVED.iter().zip(values) {
        if let Some(toml::Value::Table(sub)) = table.get_mut(*t) {
            sub.insert((*k).to_owned(), v);
        }
    }
    Ok(())
}

/// The time of consecutive firmware steps of `steps` cycles each at
/// `clock_mhz`, in nanoseconds: each step a whole number of picoseconds
/// (the simulator's clock, `Duration`), as the firmware runs them one
/// after the other (`crate::nic::lanai`), then summed. A derived key that
/// is such a sum (a step and its DMA's set-up) is then read back
/// (`Duration::from_ns_f64`) as exactly the sum of its steps' times.
fn steps_ns(clock_mhz: f64, steps: &[u32]) -> f64 {
    let ps: u64 = steps.iter().map(|&c| Duration::from_ns_f64(nic_cycles_ns(clock_mhz, c)).as_ps()).sum();
    Duration::from_ps(ps).as_ns_f64()
}

/// The checks of a LANai platform beyond its tables' own ranges (those are
/// `Platform::validate`'s, with every table's; errors name the key): its
/// `[pci]` and `[lci]` tables are a LANai NI's only; it needs the NIC
/// processor's clock (`emo.nic_clock_mhz`), its grid and its bus's PIO;
/// its buffers fit its SRAM; its library's multicast descriptor fits a
/// buffer and its cached poll takes time.
pub fn validate(p: &Platform) -> Result<(), ConfigError> {
    let Some(n) = &p.lanai else {
        if let Some(t) = [("pci", p.pci.is_some()), ("lci", p.lci.is_some())].iter().find(|t| t.1) {
            return Err(ConfigError(format!(
                "`{}` is a table of a LANai NI's platform only; leave it out, or describe the NI in `[lanai]`",
                t.0
            )));
        }
        return Ok(());
    };
    let need = |key: &str, why: &str| ConfigError(format!("missing key `{key}` (required with `[lanai]`: {why})"));
    if p.emo.is_none() {
        return Err(need("emo.nic_clock_mhz", "the LANai's clock, at which its firmware cycles run"));
    }
    if p.grid.is_none() {
        return Err(need("grid", "the Myrinet grid of switches the LANai NIs are on"));
    }
    if p.pci.is_none() {
        return Err(need("pci", "the programmed I/O of the NI's bus"));
    }
    let used = (n.send_buffers as u64 + n.recv_buffers as u64) * (p.link.mtu + n.header_bytes) as u64;
    if used > n.sram_bytes as u64 {
        return Err(ConfigError::range(
            "lanai.send_buffers",
            n.send_buffers,
            &format!(
                "(send_buffers + recv_buffers) * (link.mtu + header_bytes) <= lanai.sram_bytes = {}",
                n.sram_bytes
            ),
        ));
    }
    if let Some(h) = &p.lci {
        check_u("lci.descriptor_bytes", h.descriptor_bytes as u64, 0, p.link.mtu as u64)?;
        if h.poll_hit_ns <= 0.0 {
            return Err(ConfigError::range("lci.poll_hit_ns", h.poll_hit_ns, "> 0"));
        }
    }
    Ok(())
}

/// Where the \[LCI] programs' per-element costs are: a program's, not the
/// platform's, on every stack.
const ASP_ELEM: &str = "a program's cost, the scenario's `workload.elem_cycles` (kind = \"asp\", default 6); \
                        write it there";
const QR_NORM: &str = "a program's cost, the scenario's `workload.norm_cycles` (kind = \"qr\", default 4); \
                       write it there";
const QR_UPDATE: &str = "a program's cost, the scenario's `workload.update_cycles` (kind = \"qr\", default 8); \
                         write it there";

/// Keys of the earlier LCI preset shape (its own `[ni]`, `[host]`,
/// `[multicast]`, `[kernel]` and `[library]` in cycles, mapped onto the
/// shared platform; the program costs of its `[lci]`) and where each is
/// now, with the unit where it changed:
/// a preset file or a scenario's `[platform]` that sets one is refused
/// naming its new key.
pub(crate) const MOVED: &[(&str, &str)] = &[
    ("family", "a platform with a `[lanai]` table has LANai NIs; leave it out"),
    ("link.rate_MBps", "`link.rate_gbps`, in Gb/s (160 MB/s = 1.28 Gb/s)"),
    ("link.wire_overhead_bytes", "`link.frame_overhead_bytes`"),
    ("pci.dma_MBps", "`nic.dma_MBps`"),
    ("pci.dma_overhead_ns", "`nic.dma_startup_ns`"),
    ("ni.clock_mhz", "`emo.nic_clock_mhz`"),
    ("ni.buffer_bytes", "`link.mtu`"),
    ("ni.sram_bytes", "`lanai.sram_bytes`"),
    ("ni.header_bytes", "`lanai.header_bytes`"),
    ("ni.send_buffers", "`lanai.send_buffers`"),
    ("ni.recv_buffers", "`lanai.recv_buffers`"),
    ("ni.fw_tx_cycles", "`lanai.fw_tx_cycles`"),
    ("ni.fw_rx_cycles", "`lanai.fw_rx_cycles`"),
    ("ni.dma_setup_cycles", "`lanai.dma_setup_cycles`"),
    ("host.clock_mhz", "`host.clock_ghz`, in GHz (200 MHz = 0.2)"),
    ("host.recv_buffers", "`lci.recv_buffers`"),
    ("host.poll_hit_ns", "`lci.poll_hit_ns`"),
    ("host.poll_miss_ns", "`lci.poll_miss_ns`"),
    ("host.send_ns", "`lci.send_ns`"),
    ("host.upcall_ns", "`lci.upcall_ns`"),
    ("host.kernel_dispatch_ns", "`host.irq_entry_ns`"),
    ("host.signal_handler_ns", "`host.signal_ns`"),
    ("multicast.fw_forward_cycles", "`lanai.fw_forward_cycles`"),
    ("multicast.descriptor_bytes", "`lci.descriptor_bytes`"),
    ("multicast.asp_elem_cycles", ASP_ELEM),
    ("multicast.qr_norm_cycles", QR_NORM),
    ("multicast.qr_update_cycles", QR_UPDATE),
    ("lci.asp_elem_cycles", ASP_ELEM),
    ("lci.qr_norm_cycles", QR_NORM),
    ("lci.qr_update_cycles", QR_UPDATE),
    ("kernel.irq_delivery_ns", "`nic.irq_delivery_ns`"),
    ("kernel.ring_slots", "`nic.ring_slots`"),
    ("kernel.tx_done_interrupts", "`nic.tx_done_interrupts`"),
    ("kernel.default_delay_us", "`nic.default_delay_us`"),
    ("kernel.napi_poll_cycles", "`host.napi_poll_ns`, in ns"),
    ("kernel.driver_rx_cycles", "`host.driver_rx_ns`, in ns"),
    ("kernel.driver_rx_tail_cycles", "`host.driver_rx_tail_ns`, in ns"),
    ("kernel.handler_drop_cycles", "`host.handler_drop_ns`, in ns"),
    ("kernel.handler_cycles", "`host.handler_ns`, in ns"),
    ("kernel.tx_done_cycles", "`host.tx_done_ns`, in ns"),
    ("kernel.syscall_cycles", "`host.syscall_ns`, in ns"),
    ("kernel.driver_tx_cycles", "`host.driver_tx_ns`, in ns"),
    ("kernel.wakeup_cycles", "`host.wakeup_ns`, in ns"),
    ("kernel.block_cycles", "`host.block_ns`, in ns"),
    ("library.send_cycles", "`library.send_ns`, in ns"),
    ("library.event_cycles", "`library.event_ns`, in ns"),
    ("library.post_recv_cycles", "`library.post_recv_ns`, in ns"),
    ("library.small_send_cycles", "`library.small_send_ns`, in ns"),
    ("library.mpi_send_cycles", "`library.mpi_send_ns`, in ns"),
    ("library.mpi_recv_cycles", "`library.mpi_recv_ns`, in ns"),
    ("library.pull_setup_cycles", "`library.pull_setup_ns`, in ns"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{load_platform, preset_text, Times};

    #[test]
    fn the_lci_preset_is_a_shared_platform() {
        let p = load_platform("lci2000", None).unwrap();
        let t = Times::of(&p);
        // [LCI] §2's 1.28 Gb/s links are the shared link's rate.
        assert_eq!(t.link.bytes_per_s, 160_000_000);
        assert_eq!((p.topology.hosts, p.cores(), p.link.mtu), (64, 1, 1024));
        // (128 + 20) LANai cycles at 33 MHz, derived once.
        let n = p.lanai.as_ref().unwrap();
        let clock = p.emo.as_ref().unwrap().nic_clock_mhz;
        let step = |c: u32| Duration::from_ns_f64(nic_cycles_ns(clock, c));
        assert_eq!(p.nic.fw_rx_ns, steps_ns(clock, &[n.fw_rx_cycles, n.dma_setup_cycles]));
        assert_eq!(t.nic.fw_rx, step(n.fw_rx_cycles) + step(n.dma_setup_cycles));
        // Each step whole picoseconds: 1 ps above the sum's 148 cycles at 33 MHz rounded once.
        assert_eq!(t.nic.fw_rx, Duration::from_ns_f64(148.0 * 1e3 / 33.0) + Duration::from_ps(1));
        assert_eq!(t.nic.tx_dma_startup.saturating_sub(t.nic.dma_startup), step(n.dma_setup_cycles));
        assert_eq!(t.nic.dma_bytes_per_s, 132_000_000);
        assert!(p.nic.dma_shared_bus && p.grid.is_some() && p.lci.is_some());
    }

    #[test]
    fn an_override_of_the_lanai_reaches_the_derived_keys() {
        let o: toml::Table = toml::from_str("[lanai]\nfw_rx_cycles = 33\ndma_setup_cycles = 0\n").unwrap();
        let p = load_platform("lci2000", Some(&o)).unwrap();
        assert!((p.nic.fw_rx_ns - 1000.0).abs() < 1e-9, "{}", p.nic.fw_rx_ns);
        assert_eq!(p.nic.tx_dma_startup_ns, p.nic.dma_startup_ns);
    }

    #[test]
    fn a_derived_key_given_is_refused_naming_its_inputs() {
        let o: toml::Table = toml::from_str("[nic]\nfw_rx_ns = 100.0\n").unwrap();
        let e = load_platform("lci2000", Some(&o)).unwrap_err().0;
        assert!(e.contains("`platform.nic.fw_rx_ns` = 100.0") && e.contains("lanai.fw_rx_cycles"), "{e}");
        // The Ethernet presets set it.
        load_platform("omx2009", Some(&o)).unwrap();
    }

    #[test]
    fn a_key_of_the_old_lci_shape_names_its_new_place() {
        for (over, old, new) in [
            ("[ni]\nfw_rx_cycles = 33\n", "`platform.ni.fw_rx_cycles` = 33", "`platform.lanai.fw_rx_cycles`"),
            ("[link]\nrate_MBps = 100.0\n", "`platform.link.rate_MBps` = 100.0", "`platform.link.rate_gbps`, in Gb/s"),
            (
                "[host]\nkernel_dispatch_ns = 1.0\n",
                "`platform.host.kernel_dispatch_ns`",
                "`platform.host.irq_entry_ns`",
            ),
            ("[pci]\ndma_MBps = 100.0\n", "`platform.pci.dma_MBps`", "`platform.nic.dma_MBps`"),
        ] {
            let o: toml::Table = toml::from_str(over).unwrap();
            let e = load_platform("lci2000", Some(&o)).unwrap_err().0;
            assert!(e.contains(old) && e.contains(new) && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn an_old_shape_preset_file_names_the_new_key() {
        let dir = std::env::temp_dir().join(format!("nicsim-lanai-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("old-lci.toml");
        let text = preset_text("lci2000").unwrap().replace("[lanai]\n", "[ni]\n");
        std::fs::write(&path, text).unwrap();
        let e = load_platform(path.to_str().unwrap(), None).unwrap_err().0;
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("old-lci.toml") && e.contains("`ni.sram_bytes`") && e.contains("`lanai.sram_bytes`"), "{e}");
    }

    #[test]
    fn the_lci_library_needs_its_table_and_open_mx_does_not() {
        let dir = std::env::temp_dir().join(format!("nicsim-no-lci-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("no-lci.toml");
        let text = preset_text("lci2000").unwrap();
        let (head, tail) = text.split_at(text.find("\n[lci]\n").unwrap());
        let tail = &tail[tail[1..].find("\n[").unwrap() + 1..];
        std::fs::write(&path, format!("{head}{tail}")).unwrap();
        let scenario = |stack: &str| {
            format!("preset = {:?}\n[protocol]\nstack = \"{stack}\"\n[workload]\nkind = \"pingpong\"\n", path)
        };
        let e = crate::config::Scenario::from_toml(&scenario("lci")).unwrap_err().0;
        let open_mx = crate::config::Scenario::from_toml(&scenario("open-mx"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.starts_with("missing key `lci`") && e.contains("protocol.stack = \"lci\""), "{e}");
        assert!(open_mx.unwrap().platform.lci.is_none());
    }

    #[test]
    fn buffers_beyond_the_sram_are_named() {
        let o: toml::Table = toml::from_str("[lanai]\nsend_buffers = 4096\n").unwrap();
        let e = load_platform("lci2000", Some(&o)).unwrap_err().0;
        assert!(e.contains("`platform.lanai.send_buffers`") && e.contains("4096") && e.contains("sram_bytes"), "{e}");
    }

    #[test]
    fn lanai_tables_without_a_lanai_are_refused() {
        let dir = std::env::temp_dir().join(format!("nicsim-pci-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("omx-pci.toml");
        let pci = "\n[pci]\npio_read_ns = 467.0\npio_write_MBps = 50.0\npio_write_overhead_ns = 120.0\n";
        std::fs::write(&path, format!("{}{pci}", preset_text("omx2009").unwrap())).unwrap();
        let e = load_platform(path.to_str().unwrap(), None).unwrap_err().0;
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("omx-pci.toml") && e.contains("`pci` is a table of a LANai NI's platform only"), "{e}");
    }
}
