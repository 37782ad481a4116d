//! EMO variables from a validated [`Scenario`]: the mapping from the
//! simulator's costs (platform preset + scenario options) to C_N, L_NH, ...
//!
//! This module owns that mapping and the \[EMO] echo measurement built on it.
//! It reads the same `Scenario` the simulator runs, so model and simulation
//! never disagree by construction of their inputs; every cost below names
//! the preset key it comes from and the simulator step that charges it
//! (`crate::sim`). It does not run anything.
//!
//! Each variable describes *one host* handling *one message in and one
//! message out* at its level (the receive and the send side of that level):
//!
//! | variable | from the preset (ns keys x clock where cycles) |
//! |---|---|
//! | C_N (NIC cycles) | `nic.fw_rx_ns + nic.fw_tx_ns` at R_N; the firmware echo adds `emo.nic_copy_cycles_per_byte` x payload |
//! | R_N | `emo.nic_clock_mhz` |
//! | L_NH | receive DMA (`frame / nic.dma_MBps + nic.dma_startup_ns`) + coalescing wait (the client's: `nic.host0` when set) + `nic.irq_delivery_ns` + `host.irq_entry_ns + host.napi_poll_ns` (+ `host.sleep_exit_ns` when the interrupt core sleeps); send DMA (`frame / nic.dma_MBps + nic.tx_dma_startup_ns`) |
//! | O_NH | `host.irq_entry_ns + host.napi_poll_ns + host.irq_rearm_ns` (+ the transmit-completion interrupt when `nic.tx_done_interrupts`) |
//! | C_H, R_H | receive: `host.driver_rx_ns + host.handler_ns` + copy of the payload from DMA memory (`cache.copy_cold_MBps`; tiny messages carry none); send: `host.syscall_ns + host.driver_tx_ns + nic.doorbell_ns` + copy into the frame (`cache.copy_hot_MBps`); kernel echo: `driver_rx + handler + driver_tx + doorbell`; R_H = `host.clock_ghz` |
//! | L_HA | `host.irq_rearm_ns` (+ `host.wakeup_ns` when the library blocks) |
//! | O_HA | `library.post_recv_ns` (+ `host.wakeup_ns + host.block_ns` when it blocks) |
//! | C_A | receive: `library.event_ns` (+ `library.mpi_recv_ns`) + copy from the event ring to the application; send: `library.send_ns` (+ `library.mpi_send_ns`) |
//! | L_NA, O_NA | 0: the Open-MX stack has no NIC -> application path |
//! | L_W | serialization of the frame + `link.frame_overhead_bytes` at `link.rate_gbps`, + 2 x `link.propagation_ns` + `link.switch_latency_ns` (+ one more serialization without cut-through) |
//!
//! A message is one unit (\[EMO] is message-oriented): "frame" above is one
//! header plus the whole payload, whatever the number of frames the
//! simulator cuts it into. What the simulator runs and the model leaves out
//! therefore shows only on messages of several frames: per-frame costs paid
//! again, successive frames overlapping in the pipeline, and (with
//! `nic.dma_shared_bus`) receive and transmit DMA taking turns on one bus.
//!
//! Layers: the preset's `[[emo.layer]]`, plus a derived `cache` layer when
//! the application and the interrupt run on different dies (line transfers
//! of the cache model: endpoint, event ring, NAPI and transmit state).

use super::{path_latency_terms, path_overhead_terms, sum, Layer, Path, Term, Vars};
use crate::config::{CoalesceSpec, On, Relation, Scenario, SteeringKind, TimeoutMode, TimeoutSpec, WaitMode};
use crate::host::Topology;
use crate::wire::{self, FrameRepr, MessageClass, OmxBody};

/// A scenario the model cannot evaluate: one line naming what and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ModelError(pub String);

/// Which host of the \[EMO] echo a set of variables describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The client application (host 0): sends, and receives the echo.
    Client,
    /// The echo host (host 1) of a path.
    Echo(Path),
}

/// The model's evaluation of one \[EMO] echo measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct EchoEval {
    pub path: Path,
    pub size_bytes: u64,
    /// Frames the simulator cuts the message into at the MTU; the model
    /// prices the message as one unit whatever this is.
    pub frames: u64,
    pub client: Vars,
    pub echo: Vars,
    pub layers: Vec<Layer>,
    /// The client's to-app latency terms (seconds).
    pub client_terms: Vec<Term>,
    /// The echo host's path latency terms (seconds).
    pub echo_terms: Vec<Term>,
    /// The echo host's overhead terms (host cycles).
    pub overhead_terms: Vec<Term>,
    /// Round trip = client to-app latency + echo path latency.
    pub rtt_s: f64,
    /// Half the round trip (what `latency_us` of the simulator reports).
    pub latency_s: f64,
    pub overhead_cycles: f64,
    /// Share of the echo host's CPU (all cores) the echo takes.
    pub overhead_pct: f64,
    pub gap_s: f64,
    /// The coalescing wait included in L_NH.
    pub coalescing_wait_s: f64,
}

const NS: f64 = 1e-9;

/// The interrupt coalescing wait of a lone message frame on the echo host
/// (host 1; seconds): what the policy adds between the frame's DMA
/// completion and its interrupt.
pub fn coalescing_wait_s(s: &Scenario) -> Result<f64, ModelError> {
    wait_of(&s.coalesce)
}

/// The same on the client (host 0), whose coalescing `nic.host0` may set apart.
pub fn client_coalescing_wait_s(s: &Scenario) -> Result<f64, ModelError> {
    wait_of(s.host0_coalesce.as_ref().unwrap_or(&s.coalesce))
}

fn wait_of(spec: &CoalesceSpec) -> Result<f64, ModelError> {
    let timeout = |ts: &TimeoutSpec| -> Result<f64, ModelError> {
        if ts.frames == 1 {
            return Ok(0.0);
        }
        let delay = ts.delay.as_ns_f64() * NS;
        match ts.mode {
            TimeoutMode::Absolute if delay == 0.0 && ts.frames > 1 => Err(ModelError(format!(
                "model: `nic.delay_us` = 0 with `nic.frames` = {} never interrupts for a lone message (allowed: delay_us > 0 or frames <= 1)",
                ts.frames
            ))),
            TimeoutMode::Absolute => Ok(delay),
            TimeoutMode::PacketTimer => {
                let cap = ts.cap.as_ns_f64() * NS;
                Ok(if cap > 0.0 { delay.min(cap) } else { delay })
            }
            // Ping-pong interrupts are a round trip apart, longer than any
            // throttle interval the model is used with: no wait.
            TimeoutMode::Throttle => Ok(0.0),
        }
    };
    match spec {
        CoalesceSpec::Disabled => Ok(0.0),
        // A lone message waits for the receive timer (the transmit
        // completions' own timer does not hold it back).
        CoalesceSpec::Timeout(ts) | CoalesceSpec::TimeoutTx(ts, _) => timeout(ts),
        // [OMX-COAL]: marked frames (every message frame of the echo) interrupt at once.
        CoalesceSpec::OpenMx(_) | CoalesceSpec::Stream(_) => Ok(0.0),
        CoalesceSpec::Adaptive(_) | CoalesceSpec::OpenMxAdaptive(_) => Err(ModelError(
            "model: adaptive coalescing has no fixed wait (allowed `nic.coalescing`: disabled, timeout, openmx, stream)"
                .into(),
        )),
    }
}

/// The message of `size` bytes as \[EMO] prices it: one unit behind one
/// header, whatever the number of frames the protocol cuts it into.
#[derive(Debug, Clone, Copy)]
struct Message {
    class: MessageClass,
    /// Bytes that cross the bus and the wire: one frame header + the payload.
    bytes: f64,
    payload: f64,
    /// Frames the simulator sends (MTU fragmentation); the model ignores it.
    frames: u64,
}

/// The message of `size` bytes, or why the model does not cover it.
///
/// EMO is message-oriented (\[EMO] abstract: it "models it in a
/// message-oriented rather than flow-oriented manner"): a message pays each
/// per-message cost once and each per-byte cost over all its bytes. A
/// message that spans several frames is therefore priced as one frame of its
/// size: the model has no packets, so neither the per-frame costs paid again
/// for each further frame nor the overlap of successive frames in the
/// pipeline (EMO's gap, §2.0.3) enter its latency. The study kept its
/// messages within one jumbo frame "to avoid fragmentation and reassembly or
/// multiple packets" (§4.1.1); the simulator cuts them at the MTU.
fn message(s: &Scenario, size: u64) -> Result<Message, ModelError> {
    let class = wire::classify(size as usize, s.rndv_threshold as usize);
    let one = s.layout.medium_frag as u64;
    let body = match class {
        MessageClass::Tiny => {
            OmxBody::Tiny { dst_ep: 0, src_ep: 0, session: 0, seq: 0, piggy_ack: 0, match_info: 0, length: size as u8 }
        }
        MessageClass::Small => {
            OmxBody::Small { dst_ep: 0, src_ep: 0, session: 0, seq: 0, piggy_ack: 0, match_info: 0, length: size as u16 }
        }
        MessageClass::Medium => OmxBody::Medium {
            dst_ep: 0,
            src_ep: 0,
            session: 0,
            seq: 0,
            piggy_ack: 0,
            match_info: 0,
            msg_length: size as u32,
            frag_seq: 0,
            frag_pipeline: 0,
            frag_length: size.min(one) as u16,
        },
        MessageClass::Large => {
            return Err(ModelError(format!(
                "model: size_bytes = {size} goes by rendezvous and pull (allowed: 0 ..= {} = `protocol.rndv_threshold`; the pull protocol is not one message in EMO's sum)",
                s.rndv_threshold
            )))
        }
    };
    let repr = FrameRepr { dst_mac: wire::host_mac(1), src_mac: wire::host_mac(0), src_peer: 0, marked: true, body };
    let frames = match class {
        MessageClass::Medium => s.layout.medium_frag_count(size as usize) as u64,
        _ => 1,
    };
    let bytes = (repr.header_len() + size as usize).max(repr.frame_len()) as f64;
    Ok(Message { class, bytes, payload: size as f64, frames })
}

/// Where the interrupts of the process's queue land relative to the
/// process: (share on the process's own core, expected line-transfer cost
/// per line between the process's die and the interrupt's die (s), share on
/// the process's die, expected cost per line between consecutive
/// interrupt cores (s)).
fn placement(s: &Scenario) -> (f64, f64, f64, f64) {
    let topo = Topology::new(&s.platform.topology);
    let cores = topo.cores();
    let app = s.binding.unwrap_or(0) as u16;
    let c = &s.platform.cache;
    let line = |a: u16, b: u16| match topo.core_relation(a, b) {
        Relation::SameDie => 0.0,
        Relation::SameSocket => c.same_socket_ns * NS,
        Relation::OtherSocket => c.other_socket_ns * NS,
    };
    let irq_cores: Vec<u16> = match s.steering {
        SteeringKind::SingleRr => (0..cores).collect(),
        SteeringKind::SingleCore(k) => vec![k as u16],
        // Queue of endpoint 0 (the echo's endpoint): its core.
        SteeringKind::MultiQueue => vec![0],
    };
    let n = irq_cores.len() as f64;
    let same_core = irq_cores.iter().filter(|&&k| k == app).count() as f64 / n;
    let same_die = irq_cores.iter().filter(|&&k| topo.core_relation(k, app) == Relation::SameDie).count() as f64 / n;
    let to_app = irq_cores.iter().map(|&k| line(app, k)).sum::<f64>() / n;
    let consecutive = if irq_cores.len() > 1 {
        (0..irq_cores.len()).map(|i| line(irq_cores[i], irq_cores[(i + 1) % irq_cores.len()])).sum::<f64>() / n
    } else {
        0.0
    };
    (same_core, to_app, same_die, consecutive)
}

/// The EMO variables of one host of the echo measurement for a message of
/// `size` bytes (see the module table).
pub fn echo_vars(s: &Scenario, role: Role, size: u64) -> Result<Vars, ModelError> {
    if s.native_mx {
        return Err(ModelError(
            "model: `protocol.stack` = \"native-mx\" (the NIC -> application path L_NA/O_NA) is not modelled (allowed: open-mx)"
                .into(),
        ));
    }
    let p = &s.platform;
    let (nic, host, lib) = (&p.nic, &p.host, &p.library);
    let emo = p.emo_cfg();
    let r_h = host.clock_ghz * 1e9;
    let r_n = emo.nic_clock_mhz * 1e6;
    let Message { class, bytes: frame_len, payload, .. } = message(s, size)?;
    let dma = frame_len / (nic.dma_MBps * 1e6);
    let hot = |b: f64| b / (p.cache.copy_hot_MBps * 1e6);
    let cold = |b: f64| b / (p.cache.copy_cold_MBps * 1e6);
    let ser = (frame_len + p.link.frame_overhead_bytes as f64) * 8.0 / (p.link.rate_gbps * 1e9);
    let l_w = ser
        + 2.0 * p.link.propagation_ns * NS
        + p.link.switch_latency_ns * NS
        + if p.link.cut_through { 0.0 } else { ser };
    let fw = (nic.fw_rx_ns + nic.fw_tx_ns) * NS * r_n;
    if let Role::Echo(Path::ToNic) = role {
        let copy = emo.nic_copy_cycles_per_byte * payload;
        return Ok(Vars { c_n_cycles: fw + copy, r_n_hz: r_n, r_h_hz: r_h, l_w_s: l_w, ..Vars::default() });
    }
    let wait = match role {
        Role::Client => client_coalescing_wait_s(s)?,
        Role::Echo(_) => coalescing_wait_s(s)?,
    };
    let block = s.wait == WaitMode::Block;
    let has_app = role != Role::Echo(Path::ToKernel);
    let (irq_on_app_core, _, irq_on_app_die, _) = placement(s);
    // Sleep states (the simulator's soaker keeps every core awake): the
    // interrupt core sleeps while it waits unless it is the polling process's
    // core; a blocked process's core sleeps unless the interrupt runs there.
    let sleeps = s.sleep && !s.soaker;
    let exit = host.sleep_exit_ns * NS;
    let busy_share = if has_app && !block { irq_on_app_core } else { 0.0 };
    let sleep_rx = if sleeps { exit * (1.0 - busy_share) } else { 0.0 };
    let sleep_app = if sleeps && has_app && block { exit * (1.0 - irq_on_app_core) } else { 0.0 };

    let irq = (host.irq_entry_ns + host.napi_poll_ns) * NS;
    let l_nh = dma
        + nic.dma_startup_ns * NS
        + wait
        + nic.irq_delivery_ns * NS
        + irq
        + sleep_rx
        + dma
        + nic.tx_dma_startup_ns * NS;
    // Transmit completions through the receive interrupt: a separate
    // interrupt when nothing delays it, else reaped with the next receive.
    let tx_done = if nic.tx_done_interrupts {
        host.tx_done_ns * NS + if wait == 0.0 { irq + host.irq_rearm_ns * NS } else { 0.0 }
    } else {
        0.0
    };
    let o_nh = (irq + host.irq_rearm_ns * NS + tx_done) * r_h;
    let rx_copy = match class {
        MessageClass::Tiny => 0.0,
        _ => cold(payload),
    };
    let c_h = if has_app {
        (host.driver_rx_ns + host.handler_ns + host.syscall_ns + host.driver_tx_ns + nic.doorbell_ns) * NS
            + rx_copy
            + hot(payload)
    } else {
        (host.driver_rx_ns + host.handler_ns + host.driver_tx_ns + nic.doorbell_ns) * NS
    } * r_h;
    if !has_app {
        return Ok(Vars {
            c_n_cycles: fw,
            r_n_hz: r_n,
            l_nh_s: l_nh,
            c_h_cycles: c_h,
            r_h_hz: r_h,
            o_nh_cycles: o_nh,
            l_w_s: l_w,
            ..Vars::default()
        });
    }
    let (mpi_s, mpi_r) = if s.mpi { (lib.mpi_send_ns, lib.mpi_recv_ns) } else { (0.0, 0.0) };
    // The event ring -> application copy is hot when the handler ran on the
    // process's die (the cache model's single-owner rule).
    let ring_copy = match class {
        MessageClass::Tiny | MessageClass::Small | MessageClass::Medium => {
            irq_on_app_die * hot(payload) + (1.0 - irq_on_app_die) * cold(payload)
        }
        MessageClass::Large => 0.0,
    };
    // A medium message is copied into the send queue fragment by fragment
    // by the send path (C_H's copy into the frame), not again by the post.
    let c_a = ((lib.event_ns + mpi_r + lib.send_ns + mpi_s) * NS + ring_copy) * r_h;
    let wake = if block { host.wakeup_ns * NS } else { 0.0 };
    let l_ha = host.irq_rearm_ns * NS + wake + sleep_app;
    let o_ha = (lib.post_recv_ns + if block { host.wakeup_ns + host.block_ns } else { 0.0 }) * NS * r_h;
    Ok(Vars {
        c_n_cycles: fw,
        r_n_hz: r_n,
        l_nh_s: l_nh,
        c_h_cycles: c_h,
        r_h_hz: r_h,
        l_ha_s: l_ha,
        l_na_s: 0.0,
        c_a_cycles: c_a,
        o_nh_cycles: o_nh,
        o_ha_cycles: o_ha,
        o_na_cycles: 0.0,
        l_w_s: l_w,
    })
}

/// The preset's declared layers (`[[emo.layer]]`).
pub fn preset_layers(s: &Scenario) -> Vec<Layer> {
    s.platform
        .emo_cfg()
        .layer
        .iter()
        .map(|l| Layer {
            name: l.name.clone(),
            cycles: l.cycles,
            on: l.on,
            latency_s: l.latency_ns * NS,
            overhead_cycles: l.overhead_cycles,
        })
        .collect()
}

/// The cache/memory layer (beyond \[EMO]): line transfers the simulator's
/// cache model charges per message when the interrupt and the process run
/// on different dies (`None` when there are none).
///
/// Per message in and out on a host: the handler and the library each pull
/// the endpoint and event-ring lines from the other's die
/// (`cache.endpoint_lines + cache.event_lines`, twice: on the critical path,
/// so C_m); the NAPI state (`cache.napi_lines`) moves between consecutive
/// interrupt cores (C_m); with `nic.tx_done_interrupts` the transmit state
/// (`cache.tx_lines`) moves to the reaping interrupt and back to the next
/// send: the send's pull is on the path (C_m), the reaper's is too when the
/// completion waits for the receive interrupt (coalescing), else it runs in
/// its own interrupt while the message flies (O_am only).
pub fn cache_layer(s: &Scenario) -> Result<Option<Layer>, ModelError> {
    let c = &s.platform.cache;
    let (_, to_app, _, consecutive) = placement(s);
    let mut on_path = 2.0 * (c.endpoint_lines + c.event_lines) as f64 * to_app + c.napi_lines as f64 * consecutive;
    let mut off_path = 0.0;
    if s.platform.nic.tx_done_interrupts {
        on_path += c.tx_lines as f64 * to_app;
        if coalescing_wait_s(s)? > 0.0 {
            on_path += c.tx_lines as f64 * to_app;
        } else {
            off_path += c.tx_lines as f64 * to_app;
        }
    }
    let r_h = s.platform.host.clock_ghz * 1e9;
    Ok((on_path + off_path > 0.0).then(|| Layer {
        name: "cache".into(),
        cycles: on_path * r_h,
        on: On::Host,
        latency_s: 0.0,
        overhead_cycles: off_path * r_h,
    }))
}

/// Evaluates the \[EMO] echo measurement of `path` for `size` bytes: the
/// client's to-app latency plus the echo host's path latency is the round
/// trip; the echo host's path overhead over that round trip is its CPU share.
/// `extra` layers (e.g. declared from Python) join the preset's and the
/// derived cache layer; layers apply on the to-app paths.
pub fn echo(s: &Scenario, path: Path, size: u64, extra: &[Layer]) -> Result<EchoEval, ModelError> {
    let client = echo_vars(s, Role::Client, size)?;
    let echo = echo_vars(s, Role::Echo(path), size)?;
    let mut layers = preset_layers(s);
    layers.extend(cache_layer(s)?);
    layers.extend(extra.iter().cloned());
    let client_terms = path_latency_terms(&client, Path::ToApp, &layers);
    let echo_terms = path_latency_terms(&echo, path, &layers);
    let overhead_terms = path_overhead_terms(&echo, path, &layers);
    let rtt = sum(&client_terms) + sum(&echo_terms);
    let overhead_cycles = sum(&overhead_terms);
    let cores = s.platform.cores() as f64;
    let overhead_pct = 100.0 * overhead_cycles / echo.r_h_hz / rtt / cores;
    Ok(EchoEval {
        path,
        size_bytes: size,
        frames: message(s, size)?.frames,
        client,
        echo,
        gap_s: super::gap_s(&client),
        layers,
        client_terms,
        echo_terms,
        overhead_terms,
        rtt_s: rtt,
        latency_s: rtt / 2.0,
        overhead_cycles,
        overhead_pct,
        coalescing_wait_s: coalescing_wait_s(s)?,
    })
}

/// A layer declared outside a preset (e.g. from Python); `on` is "nic" or
/// "host", latency in nanoseconds.
pub fn layer(name: &str, cycles: f64, on: &str, latency_ns: f64, overhead_cycles: f64) -> Result<Layer, ModelError> {
    let on = crate::config::from_value::<On>("layer.on", toml::Value::String(on.to_owned()))
        .map_err(|e| ModelError(e.to_string()))?;
    for (k, v) in [("cycles", cycles), ("latency_ns", latency_ns), ("overhead_cycles", overhead_cycles)] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(ModelError(format!("invalid value for `layer.{k}`: {v} (allowed: 0 ..= finite)")));
        }
    }
    Ok(Layer { name: name.to_string(), cycles, on, latency_s: latency_ns * NS, overhead_cycles })
}

/// Evaluates the echo model for a scenario TOML text (the one the simulator
/// would run), a path name and sizes; errors are one line.
pub fn echo_toml(text: &str, path: &str, sizes: &[u64], extra: &[Layer]) -> Result<Vec<EchoEval>, String> {
    let s = Scenario::from_toml(text).map_err(|e| e.to_string())?;
    let path = Path::parse(path)
        .ok_or_else(|| format!("invalid value for `path`: {path:?} (allowed: {})", super::PATH_NAMES.join(", ")))?;
    sizes.iter().map(|&n| echo(&s, path, n, extra).map_err(|e| e.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emo(extra: &str) -> Scenario {
        Scenario::from_toml(&format!(
            "preset = \"emo2004\"\n[nic]\ncoalescing = \"timeout\"\n{extra}\n[host]\nwait = \"block\"\nsoaker = true\n[workload]\nkind = \"pingpong\"\n"
        ))
        .unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
    }

    #[test]
    fn emo2004_wire_and_nic_terms_by_hand() {
        let s = emo("");
        // 1000 B medium: Open-MX medium header + Ethernet header.
        let len = message(&s, 1000).unwrap().bytes;
        let v = echo_vars(&s, Role::Echo(Path::ToNic), 1000).unwrap();
        // L_W = (len + 24) B at 1 Gb/s + 2 x 10 ns
        assert!(close(v.l_w_s, (len + 24.0) * 8e-9 + 20e-9));
        // C_N = (2300 + 2300) ns at 88 MHz + 4 cycles x 1000 B
        assert!(close(v.c_n_cycles, 4600e-9 * 88e6 + 4000.0));
        assert_eq!(v.r_n_hz, 88e6);
        assert_eq!((v.l_nh_s, v.c_h_cycles, v.o_nh_cycles), (0.0, 0.0, 0.0));
    }

    #[test]
    fn emo2004_host_terms_by_hand() {
        let s = emo("delay_us = 0");
        let len = message(&s, 1000).unwrap().bytes;
        let v = echo_vars(&s, Role::Echo(Path::ToKernel), 1000).unwrap();
        // L_NH = 2 x len / 200 MB/s + 5 us + 0 wait + 1 us + (2 + 0.5) us + 5 us
        assert!(close(v.l_nh_s, 2.0 * len / 200e6 + 5e-6 + 1e-6 + 2.5e-6 + 5e-6));
        // C_H = driver_rx 2500 + handler 1500 + driver_tx 3000 + doorbell 500 ns at 933 MHz
        assert!(close(v.c_h_cycles, 7500e-9 * 0.933e9));
        assert!(close(v.o_nh_cycles, 2500e-9 * 0.933e9));
        let a = echo_vars(&s, Role::Client, 1000).unwrap();
        // + syscall 700 ns, cold copy 1000 B / 300 MB/s, hot copy 1000 B / 800 MB/s
        let c_h = (2500.0 + 1500.0 + 700.0 + 3000.0 + 500.0) * 1e-9 + 1000.0 / 300e6 + 1000.0 / 800e6;
        assert!(close(a.c_h_cycles, c_h * 0.933e9));
        // C_A = event 600 + send 700 ns + the hot copy ring -> app (the
        // medium send's copy into the frame is C_H's)
        assert!(close(a.c_a_cycles, (1300e-9 + 1000.0 / 800e6) * 0.933e9));
        assert!(close(a.l_ha_s, 4e-6));
        assert!(close(a.o_ha_cycles, (300.0 + 4000.0 + 3000.0) * 1e-9 * 0.933e9), "{}", a.o_ha_cycles);
    }

    #[test]
    fn coalescing_waits() {
        assert_eq!(coalescing_wait_s(&emo("delay_us = 0")).unwrap(), 0.0);
        // The preset default: acenic DEF_JUMBO_RX_COAL = 30 us.
        assert!(close(coalescing_wait_s(&emo("")).unwrap(), 30e-6));
        assert!(close(coalescing_wait_s(&emo("delay_us = 100\nframes = 1000")).unwrap(), 100e-6));
        assert_eq!(coalescing_wait_s(&emo("delay_us = 100\nframes = 1")).unwrap(), 0.0);
        // No delay and a frames threshold above 1 never interrupts for a
        // lone message: the scenario is refused before the model sees it.
        let e = Scenario::from_toml(
            "preset = \"emo2004\"\n[nic]\ncoalescing = \"timeout\"\ndelay_us = 0\nframes = 6\n[workload]\nkind = \"pingpong\"\n",
        )
        .unwrap_err();
        assert!(e.0.contains("nic.frames"), "{e}");
    }

    #[test]
    fn the_client_keeps_its_own_coalescing() {
        // [EMO] 4: Host A at the driver's defaults (30 us, 6 frames) while Host B's setting varies.
        let s = emo("delay_us = 0\n[nic.host0]\nframes = 6");
        assert_eq!(coalescing_wait_s(&s).unwrap(), 0.0);
        assert!(close(client_coalescing_wait_s(&s).unwrap(), 30e-6));
        let plain = emo("delay_us = 0");
        let (a, b) = (echo(&s, Path::ToKernel, 1000, &[]).unwrap(), echo(&plain, Path::ToKernel, 1000, &[]).unwrap());
        // One wait per round trip, on the client's receive: half of it on the latency.
        assert!(close(a.latency_s - b.latency_s, 15e-6));
        assert!(close(a.echo.l_nh_s, b.echo.l_nh_s));
        let e = Scenario::from_toml(
            "preset = \"emo2004\"\n[nic.host0]\ndelay_us = 0\nframes = 6\n[workload]\nkind = \"pingpong\"\n",
        )
        .unwrap_err();
        assert!(e.0.contains("nic.host0.frames"), "{e}");
    }

    #[test]
    fn echo_sums_and_overhead_share() {
        let s = emo("delay_us = 0");
        let e = echo(&s, Path::ToKernel, 1000, &[]).unwrap();
        let client = sum(&path_latency_terms(&e.client, Path::ToApp, &[]));
        let kernel = sum(&path_latency_terms(&e.echo, Path::ToKernel, &[]));
        assert!(close(e.rtt_s, client + kernel));
        assert!(close(e.latency_s, e.rtt_s / 2.0));
        let oh = e.echo.o_nh_cycles + e.echo.c_h_cycles;
        assert!(close(e.overhead_pct, 100.0 * oh / 0.933e9 / e.rtt_s));
        assert_eq!(echo(&s, Path::ToNic, 1000, &[]).unwrap().overhead_pct, 0.0);
        assert!(e.layers.is_empty(), "one core: no cache layer");
    }

    #[test]
    fn a_message_of_several_frames_is_priced_as_one() {
        let s = emo("delay_us = 0");
        // MTU 9000: Open-MX medium fragments of 8192 B, so 8900 B is two frames, 32000 B four.
        let (one, two, four) = (message(&s, 8000).unwrap(), message(&s, 8900).unwrap(), message(&s, 32000).unwrap());
        assert_eq!((one.frames, two.frames, four.frames), (1, 2, 4));
        // One header whatever the frame count: the bytes grow by the payload only.
        assert_eq!(two.bytes - one.bytes, 900.0);
        assert_eq!(four.bytes - one.bytes, 24000.0);
        let (a, b) = (echo_vars(&s, Role::Client, 8000).unwrap(), echo_vars(&s, Role::Client, 32000).unwrap());
        // The per-message costs (interrupt, driver, handler) once: O_NH does not grow.
        assert_eq!(a.o_nh_cycles, b.o_nh_cycles);
        // The per-byte terms grow with the 24000 extra bytes only (serialization at 1 Gb/s).
        assert!(close(b.l_w_s - a.l_w_s, 24000.0 * 8e-9));
        assert_eq!(echo(&s, Path::ToKernel, 32000, &[]).unwrap().frames, 4);
    }

    #[test]
    fn too_big_or_native_is_an_error_naming_the_key() {
        let s = emo("");
        let e = echo(&s, Path::ToApp, 40000, &[]).unwrap_err();
        assert!(e.0.contains("size_bytes") && e.0.contains("rndv_threshold") && e.0.contains("32768"), "{e}");
        let mut n = emo("");
        n.native_mx = true;
        assert!(echo(&n, Path::ToApp, 100, &[]).unwrap_err().0.contains("protocol.stack"));
    }

    #[test]
    fn toml_entry_point_and_layers() {
        let text = "preset = \"emo2004\"\n[workload]\nkind = \"pingpong\"\n";
        let l = layer("mpi-matching", 880.0, "nic", 1000.0, 0.0).unwrap();
        let e = echo_toml(text, "to-app", &[100, 1000], std::slice::from_ref(&l)).unwrap();
        let plain = echo_toml(text, "to-app", &[100], &[]).unwrap();
        // 880 cycles at 88 MHz + 1 us, in the client's and the echo's sums: 2 x 11 us on the RTT.
        assert!(close(e[0].rtt_s - plain[0].rtt_s, 22e-6));
        assert!(echo_toml(text, "to-disk", &[1], &[]).unwrap_err().contains("to-nic"));
        assert!(layer("x", 1.0, "gpu", 0.0, 0.0).unwrap_err().0.contains("layer.on"));
        assert!(layer("x", -1.0, "nic", 0.0, 0.0).unwrap_err().0.contains("layer.cycles"));
    }

    #[test]
    fn cache_layer_appears_across_dies() {
        let s = Scenario::from_toml(
            "preset = \"omx2009\"\n[nic]\nsteering = \"single-core\"\nirq_core = 0\ntimeout_mode = \"absolute\"\n[host]\nbinding = \"OP\"\n[workload]\nkind = \"pingpong\"\n",
        )
        .unwrap();
        let l = cache_layer(&s).unwrap().unwrap();
        let c = &s.platform.cache;
        // Other socket (150 ns a line). On the path: 2 x (2 endpoint + 1 event) lines, 15 tx
        // lines pulled back by the send, and (75 us default coalescing: the transmit completion
        // is reaped with the receive) 15 tx lines pulled by the reaping interrupt.
        let secs =
            (2.0 * (c.endpoint_lines + c.event_lines) as f64 + 2.0 * c.tx_lines as f64) * c.other_socket_ns * 1e-9;
        assert!(close(l.cycles, secs * 2.33e9));
        assert_eq!(l.overhead_cycles, 0.0);
        // Coalescing disabled: the reaping runs in its own interrupt, off the path.
        let mut d = s.clone();
        d.coalesce = CoalesceSpec::Disabled;
        let l = cache_layer(&d).unwrap().unwrap();
        let off = c.tx_lines as f64 * c.other_socket_ns * 1e-9 * 2.33e9;
        assert!(close(l.cycles, secs * 2.33e9 - off) && close(l.overhead_cycles, off));
        let same = Scenario::from_toml(
            "preset = \"omx2009\"\n[nic]\nsteering = \"single-core\"\nirq_core = 0\n[host]\nbinding = \"SC\"\n[workload]\nkind = \"pingpong\"\n",
        )
        .unwrap();
        assert!(cache_layer(&same).unwrap().is_none());
    }
}
