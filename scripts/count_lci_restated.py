#!/usr/bin/env python3
# ruff: noqa: E501 (the audit's rows are one line each, as docs/lci-audit.md prints them)
"""Lines of LCI code that restate an Open-MX concept, file by file.

Issue 45 wants under 500. Usage:
scripts/count_lci_restated.py [--items] [--audited] [--audit-md] [SRC_DIR]
(--items: each counted item with its lines and class; --audited: the
classes of the item-by-item audit, `AUDIT` below and docs/lci-audit.md,
instead of the file rules; --audit-md: the audit's table, as markdown).

Method: code lines = non-blank lines that are not comments (//, ///, //!)
nor attributes (#[...]), outside #[cfg(test)] items and test-only files.
Each item (a fn, struct, enum, const, or a fn of an impl) is classed:
R  restates a concept the Open-MX side implements on its own (event kinds
   and routing, world building and loop control, packet slab, host
   library, NIC firmware, wire and back-pressure, multicast glue, watchdog
   / clock / signal glue, reliability, programs, metrics naming, scenario
   reading);
L  LCI-only (no Open-MX counterpart: the DSM program and its mixes);
N  not counted (use / mod lines; the shared keys a LANai platform derives
   from its own tables, and the earlier preset shape's keys with their
   places now).
"""

import os
import re
import sys

KW = re.compile(
    r"^(\s*)(?:pub(?:\([a-z]+\))?\s+)?(?:unsafe\s+)?(fn|struct|enum|impl|const|static|type|mod|trait|use|macro_rules!)\b\s*(?:<[^>]*>\s*)?([A-Za-z_][A-Za-z0-9_]*)?"
)


def items(path):
    """List the items of Rust file `path`: (name, code lines, in a test)."""
    with open(path) as fh:
        lines = fh.read().split("\n")
    out = []  # (name, code_lines, test)

    def code(s):
        t = s.strip()
        return bool(t) and not t.startswith("//")

    def walk(lo, hi, indent, prefix):
        nonlocal out
        i = lo
        test = False
        while i < hi:
            s = lines[i]
            if s.strip() == "#[cfg(test)]":
                test = True
                i += 1
                continue
            m = KW.match(s)
            if m and len(m.group(1)) == indent:
                kind, name = m.group(2), m.group(3) or ""
                if kind == "impl":
                    name = s.strip().rstrip("{").strip()
                # find end: if line ends with ';' -> single line; else brace match
                j = i
                depth = 0
                started = False
                while j < hi:
                    t = re.sub(r'"(\\.|[^"\\])*"', '""', lines[j])
                    t = re.sub(r"'(\\.|[^'\\])'", "''", t)
                    t = t.split("//")[0]
                    depth += t.count("{") - t.count("}")
                    if "{" in t:
                        started = True
                    if (started and depth <= 0) or (not started and t.rstrip().endswith(";")):
                        break
                    j += 1
                n = sum(code(lines[k]) for k in range(i, j + 1))
                if kind == "impl" and not test:
                    walk(i + 1, j, indent + 4, name + "::")
                    out.append(
                        (prefix + name + " {}", sum(1 for k in (i, j) if code(lines[k])), test)
                    )
                else:
                    out.append((prefix + kind + " " + name, n, test))
                test = False
                i = j + 1
                continue
            if code(s) and not s.strip().startswith("#["):
                if not test:
                    loose[0] += 1
                test = False
            i += 1

    loose = [0]
    walk(0, len(lines), 0, "")
    out.append(("(outside items: macros, attributes)", loose[0], False))
    return out


RULES = {
    "lci/mod.rs": ("R", {}),
    "lci/cpu.rs": ("R", {}),
    "library/lci/program.rs": ("R", {}),
    # The LCI host library, the second library beside the Open-MX one
    # (`library/lci/`): R, as lci/host.rs and the library rules of
    # lci/mod.rs, lci/cpu.rs and lci/multicast.rs were before it moved.
    "library/lci/mod.rs": ("R", {}),
    "library/lci/mc.rs": ("R", {}),
    "lci/ni.rs": ("R", {}),
    "nic/lanai.rs": ("R", {}),
    "lci/multicast.rs": ("R", {}),
    "lci/metrics.rs": ("R", {}),
    "lci/workload.rs": ("R", {}),
    "lci/apps.rs": ("R", {}),
    "lci/process.rs": ("R", {}),
    "lci/dsm.rs": ("L", {}),
    "library/lci/reliable.rs": ("R", {}),
    "sim/lci_stack.rs": ("R", {}),
    "config/lci.rs": ("R", {}),
    # config/lci.rs's successor: the LCI part of the one scenario file (the
    # refusal of another stack's keys serves every stack).
    "config/scenario/lci.rs": ("R", {"refuse_other_stacks_keys": "N", "LCI_NIC": "N", "LCI_PROTOCOL": "N"}),
    # The LANai's and the LCI library's own tables beside the shared
    # platform: R, as their predecessors in config/lci_platform.rs.
    "config/lanai.rs": ("R", {}),
    # What a LANai platform derives (the successor of that file's mapping
    # into the shared platform) and the earlier shape's keys with their
    # places now are N; the checks of the LANai's tables are R, as
    # LciPlatform::validate was.
    "config/lanai_derive.rs": ("N", {"fn validate": "R"}),
    "config/lci_workload.rs": ("R", {"enum Mix": "L", "for Mix": "L"}),
    # The one `[workload]` table of every stack: only the LCI stack's DSM
    # mixes are LCI code (its LCI-only keys are fields of the shared table).
    "config/workload.rs": ("N", {"enum Mix": "L", "for Mix": "L"}),
    # config/lci_workload.rs's successor: the one validation of that table
    # for every stack (`RunsOn`), the LCI stack's defaults beside the others.
    "config/workload_check.rs": ("N", {}),
}


# The audit (docs/lci-audit.md): each counted item's class by issue 45's
# item 3, and the shared code it restates (R) or why no Open-MX code makes
# the same decision (L). Keys are item names as `--items` prints them; "*"
# is the file's default. Applied by `--audited` only.
AUDIT = {
    "lci/mod.rs": {
        "*": ("R", "what the run holds of the program beside the world's `Run` (`sim/run.rs`), and the parts' construction, which `sim/build.rs` `assemble` gives the hosts"),
        "struct Running": ("R", "the run's part beside the world's `Run`: the whole-job DSM, how the libraries run their processes, the broadcast wait, the firmware's outputs' buffer and its store-full flag"),
        "impl Running::fn whole": ("R", "the whole-job program's accessor (the DSM's hand-over in `sim/lci_stack.rs` reads it)"),
        "impl Running::fn upcall_driven": ("R", "which drive the run's processes have: read by the world at time zero (`sim/lci_stack.rs` `lci_start`)"),
        "impl Running::fn stuck_is_a_result": ("R", "the world's run-end rule (`sim/mod.rs` `run_traced`): a program that can be stuck"),
        "fn build": ("R", "the parts' construction, which `sim/build.rs` `assemble` gives each host as it builds it"),
    },
    "library/lci/program.rs": {
        "enum Control": ("R", "what a program does next (compute, wait, sleep): `workload::Op` read by the one driver"),
        "const ACK_ONLY_MSG": ("R", "the explicit ack's message number: part of the reliability window (`proto` acks)"),
        "struct Outgoing": ("R", "a send request (peer, size, tag): `workload::Op::Send` as the one driver hands it to a library"),
        "struct Hosted": ("R", "the process a library holds (the one driver, `library/driver.rs`, as `library::Proc` holds its cursor), its drive, whether the run counts its deliveries, and the compute phase its upcalls' drive asked for"),
        "impl Hosted::fn new": ("R", "glue of the process a library holds"),
        "impl Lib::fn upcall_driven": ("R", "when the library runs its process (`Drive`), read from the process it holds: glue of the one driver"),
        "impl Lib::fn host_process": ("R", "glue of the process a library holds: the world's build places it (`sim/build.rs` `spawn_lci`, as `spawn` pushes a `Proc`)"),
        "impl Lib::fn process": ("R", "glue of the process a library holds"),
        "impl Lib::fn process_mut": ("R", "glue of the process a library holds"),
        "impl Lib::fn message": ("R", "the upcall of a message's last packet handed to the library's process (`Driver::arrived`; one its upcalls drive goes on at the upcall's end, `Lib::go_on`), or to the world where the run counts deliveries across hosts or for the whole-job DSM: `library::Proc` matches its own receives (`library/recv.rs`)"),
        "impl Lib::fn proceed": ("R", "`library::Proc::step`'s cursor loop, one for both drives (`Op::Send` to the outbox, all of a step or one per idle turn, `Op::Mcast` down the tree, an upcall-driven `Op::Compute` after the sends; what it asked for last returned)"),
        "impl Lib::fn go_on": ("R", "the cursor loop run inside the library, its end counted out as `Output::ProgramDone` (`library::Proc::step`'s `Op::Done`)"),
        "impl Lib::fn idle": ("R", "the library's process at an idle turn: the one loop (`Lib::proceed`) and what it asked for (`Op::Compute` a compute segment, a send written first, else polling), or, for the whole-job DSM, asks the world"),
        "impl Lib::fn compute_after_sends": ("R", "an upcall-driven process's compute phase begun once the host's sends are written: `library::Proc::step`'s `Op::Compute` segment (in the library, interrupts disabled, on `SignalledCore`)"),
        "impl Lib::fn compute_done": ("R", "a compute segment's end (`SignalledCore::end_compute`) told to the process, which goes on: `library::Proc::segment_done` / the kernel's segment end (`sim/clock.rs` `computed`)"),
    },
    "library/lci/mod.rs": {
        "*": ("L", "the LCI library's own polling, PIO send-buffer credits and upcall loop (see the row)"),
        "enum Action": ("L", "LCI's next step (consume, NI-counter poll, send path, PIO write, send-counter read, FULL-flag spin): Open-MX's `library::Step` has no PIO credits nor flag spin"),
        "struct Lib": ("L", "the LCI library's state: receive-buffer queue, host words the NI reads, PIO send-buffer credits, spin"),
        "impl Lib::fn new": ("L", "builds that state from the LANai / `[lci]` tables"),
        "impl Lib::fn packet_bytes": ("L", "LCI's packet payload (one NI buffer)"),
        "impl Lib::fn packets_for": ("L", "LCI's fragmentation into NI-buffer packets (Open-MX fragments by its own medium/large rules)"),
        "impl Lib::fn irq_enabled": ("L", "the interrupts-enabled word in host memory the LANai watchdog fetches (LCI §5.1), its core's (`SignalledCore::irq_enabled`, from the core's mode); no Open-MX library has it"),
        "impl Lib::fn consumed": ("L", "the processed-packet counter the LANai fetches to free host buffers"),
        "impl Lib::fn has_sends": ("R", "program-driver glue for `World::lci_idle` (`Output::Idle`): the one driver knows when its process has sends"),
        "impl Lib::fn held": ("R", "glue of the one `library::Output`: the packet an output names, held by index because the LCI packet (56 B) does not fit an output (the Open-MX frame body travels in `Output::Transmit` by value); goes when the packet is the world's frame (`sim/frame.rs`, fold 3)"),
        "impl Lib::fn held_mark": ("R", "glue of the one `library::Output`: the packets held for a call's outputs (see `held`)"),
        "impl Lib::fn release_held": ("R", "glue of the one `library::Output`: the packets held for a call's outputs (see `held`)"),
        "impl Lib::fn hold": ("R", "glue of the one `library::Output`: the packets held for a call's outputs (see `held`)"),
        "impl Lib::fn event": ("L", "its own events handled inside the component, as `Proc::timer_fired` / `segment_done` handle the Open-MX library's: the kinds are LCI's steps (PIO completions, the send path's end, a host-packet forward, a spin woken, a signal)"),
        "impl Lib::fn timer_words": ("L", "the words the NI clock fetches (LCI's fine-grain timers); the Open-MX clock reads no host word"),
        "impl Lib::fn start": ("L", "a host whose program does not run on it sleeps outside the library from time zero (interrupts enabled)"),
        "impl Lib::fn submit": ("R", "program-driver glue: the one driver hands a send to its library (`library::Proc::step`)"),
        "impl Lib::fn end_spin": ("L", "failed polls of the cached FULL flag (LCI's host-flag polling)"),
        "impl Lib::fn wake": ("L", "ends a FULL-flag spin"),
        "impl Lib::fn deliver": ("L", "the NI made a receive buffer visible (LCI's host queue)"),
        "impl Lib::fn done": ("L", "the end of an LCI action"),
        "impl Lib::fn write_pending": ("L", "the PIO write after the send path"),
        "impl Lib::fn poll_done": ("L", "`pio` polling's read of the NI counter"),
        "impl Lib::fn send_counter_done": ("L", "PIO send-buffer credits: the released counter read"),
        "impl Lib::fn write": ("L", "the PIO write of header, payload and FULL word"),
        "impl Lib::fn next": ("L", "LCI's progress rule (owed signal time, handler exit)"),
        "impl Lib::fn control": ("R", "what a host whose library has nothing to do goes on with: polling (`Lib::waiting`), a compute segment (`Lib::compute`) or sleep on its core: `library::Proc::step`'s `Op::Compute` and `Step::Wait`"),
        "impl Lib::fn compute": ("R", "a compute segment on the host's core (`SignalledCore::begin_compute`, in the library or outside it) and its end's event: the kernel's segment of an Open-MX process (`library::Proc::step` `Op::Compute`, `host::core::Core::begin_app`)"),
        "impl Lib::fn waiting": ("L", "LCI's wait for a packet per `Detect`: a PIO poll of the NI counter or a spin on the cached FULL flag"),
        "impl Lib::fn act": ("L", "carries out LCI's actions (PIO reads and writes, spin)"),
        "impl Lib::fn signal": ("R", "a signal's delivery to a process: `sim/clock.rs` `signal_starts`/`signal_cost`/`signal_done` (the Open-MX process's, on the core's kernel queue) beside `host::core::SignalledCore::deliver` (the LCI host's); only the spin it ends is LCI's"),
        "impl Lib::fn next_action": ("L", "LCI's polling per `Detect`, PIO send-buffer credits, the order of ack / data / poll"),
        "fn reliable_params": ("L", "the LCI library's parameters of the one endpoint (`proto::Params`: no resend, Myrinet loses nothing in this model; no ack after a count; no window per peer, its window is over all peers), as `sim/build.rs` gives the Open-MX library its own from `[library]`"),
    },
    "library/lci/mc.rs": {
        "*": ("L", "LCI's host-side multicast schemes (`host-message`, `host-packet`): a host re-sends what it consumed along the tree; no Open-MX host forwards"),
    },
    "nic/lanai.rs": {
        "*": ("L", "the LANai firmware's own buffers, descriptors and delivery (see the row)"),
        "struct Packet": ("R", "its own frame type, beside the world's frames (`sim/frame.rs`, `wire::OmxBody`); only `ack` and `bcast` are LCI header fields"),
        "impl Forwarded for Packet::fn root": ("L", "its packet behind the shared `nic::multicast::Forwarded` interface (root, copy per child, hold key)"),
        "impl Forwarded for Packet::fn to_child": ("L", "its packet behind the shared `nic::multicast::Forwarded` interface (root, copy per child, hold key)"),
        "impl Forwarded for Packet::fn hold_key": ("L", "its packet behind the shared `nic::multicast::Forwarded` interface (root, copy per child, hold key)"),
        "fn host_buffer_bytes": ("L", "the LCI host receive buffer's layout (header + mtu + FULL word)"),
        "struct RxJob": ("L", "the LANai's serial two-DMA delivery (the firmware programs the second after the first); the Open-MX NIC's DMA is one plan"),
        "enum FwEv": ("R", "its own event kinds, dispatched by `Nic::lanai_event`: the world's NIC events (`Ev::NicRx`, `DmaDone`, `TxDone`, `sim/nic_path.rs`)"),
        "struct FwOutcome": ("R", "its own output value, beside the receive queue's `nic::Outcome`, which the world schedules (`sim/nic_path.rs` `nic_outcome`): its steps, its watchdog's start, a delivery, a freed buffer, a transmit, a signal; its watchdog's and clock's outputs are the NIC's (`Nic::watchdog_timer`)"),
        "impl FwOutcome::fn step": ("R", "glue of that output value (its next steps in order)"),
        "fn packets_bound": ("R", "the bound of its own packet store: the world's frame slab (`sim/frame.rs`)"),
        "struct Ni": ("L", "the LANai's SRAM state (send/receive buffers, host-queue view, counters); its store and watchdog fields are glue (its NI clock is the world's, `sim/clock.rs`)"),
        "impl Ni::fn new": ("L", "builds that state"),
        "impl Ni::fn header": ("L", "the LANai header bytes"),
        "impl Ni::fn tx_started": ("L", "a send buffer shared by a multicast post's descriptors"),
        "impl Ni::fn tx_done": ("L", "a shared send buffer released by its last descriptor"),
        "impl Ni::fn fwd_started": ("L", "the LANai forward queue's head leaves"),
        "impl Ni::fn forwarded": ("L", "a receive buffer held for forwarding released by its last forward once its host has the packet"),
        "impl Ni::fn watchdog_fetched": ("R", "watchdog glue under the NIC's one watchdog path: `RxQueue::watchdog_fetched` over the same `Watchdog::on_fetched`; only the host words it is given are LCI's"),
        "impl Nic::fn fw_ni": ("R", "accessor glue onto the one `Nic`"),
        "impl Nic::fn fw_ni_ref": ("R", "accessor glue onto the one `Nic` (the world's rules and metrics read the firmware's state through it)"),
        "const RUNS_LANAI": ("R", "accessor glue onto the one `Nic`"),
        "impl Nic::fn lanai_pio_write": ("R", "bus glue: `Nic::pio` (`BusOp::PioWrite`) with the LANai header and its packets-sent counter"),
        "impl Nic::fn lanai_event": ("R", "a dispatch of its own events to its steps: the world's event dispatch (`sim/mod.rs` `handle`) to the NIC's methods"),
        "impl Nic::fn post": ("L", "a descriptor posted by PIO, one per child for a shared multicast post"),
        "impl Nic::fn lanai_tx_kick": ("L", "the firmware's send step on the one firmware processor (`Nic::fw_run`)"),
        "impl Nic::fn lanai_head": ("L", "the destination of the LANai's programmed head descriptor or forward (what its back-pressure reserves a buffer at)"),
        "impl Nic::fn lanai_transmit": ("L", "the LANai's network DMA of its head: the descriptor or forward leaves its queue, its bytes with the LANai header, the next one programmed"),
        "impl Nic::fn refreshed": ("L", "the fetched processed counter frees host buffers (LCI's NI-host protocol)"),
        "impl Nic::fn fwd_ready": ("L", "the LANai forward's network DMA programmed"),
        "impl Nic::fn arrive": ("L", "the LANai receive: watchdog count, NI forwards ahead of the host DMA"),
        "impl Nic::fn rx_next": ("L", "host-queue credits and the fetch of the processed counter (LCI's NI-host protocol)"),
        "impl Nic::fn rx_step": ("L", "the LANai's delivery DMAs and FULL-flag write"),
        "impl Nic::fn lanai_fwd_kick": ("R", "the NIC's forward work on its firmware processor: `sim/mcast.rs` with `nic::multicast`"),
        "fn refresh_dma": ("L", "the LANai's host->NI DMA of the processed counter"),
    },
    "lci/multicast.rs": {
        "fn metrics": ("R", "metrics naming: `sim/metrics.rs`"),
    },
    "lci/process.rs": {
        "*": ("L", "the broadcast benchmark's wait for its last receiver, counted across hosts (`Op::WaitDelivered`, `Deliveries`): no Open-MX program waits for another host's receive (`workload/lci.rs` `bcast_bench_ops`)"),
    },
    "sim/lci_stack.rs": {
        "*": ("R", "the stack's own rules beside the world's: a second dispatch after `handle`'s (`World::lci`), its own routing of the firmware's outputs, packet store and transmit rules: `sim/mod.rs` `handle`, `sim/nic_path.rs` `nic_outcome`, `sim/frame.rs`, `sim/net_tx.rs`, `nic::flow` (fold 3)"),
        "impl World::fn lci_timer": ("R", "the LCI half of the one router's `Output::Timer` (`sim/kernel.rs` `route_other`): its event's origin and the packet store (`sim/frame.rs`'s slab; fold 3)"),
        "impl World::fn lci_pio_read": ("L", "the LCI library's PIO read of an NI counter across the NIC's bus (`Nic::pio`, `host::bus::Bus::request`), handed over by the one router: no Open-MX library step is a bus transaction (its doorbell is a price, `nic.doorbell_ns`)"),
        "impl World::fn lci_pio_write": ("L", "the LCI library's PIO write of a packet into an NI send buffer across the NIC's bus (`Nic::lanai_pio_write`), handed over by the one router (see `lci_pio_read`)"),
        "impl World::fn lci_library": ("R", "the hand-over of a library event with its NI's counters and packet store (`proc_timer`'s counterpart)"),
        "const WHOLE": ("L", "the whole-job DSM's hand-over (see `lci_message`)"),
        "impl World::fn lci_message": ("L", "the whole-job DSM's hand-over: an upcall told to it. The DSM is a program only the LCI study runs, one state machine over every host's part (its home nodes answer whoever asks, which `workload::Op` cannot say), so the world, not one library, drives it"),
        "impl World::fn lci_arrived": ("L", "the broadcast benchmark's wait across hosts: an upcall counted toward its broadcast's last receiver (`Deliveries::delivered_to`), the root it lets go on and the receiver run (`lci_proceed`); no Open-MX program waits for another host's receive"),
        "impl World::fn lci_idle": ("L", "the whole-job DSM's hand-over: asked what a host does next (a library that holds its process asks it itself, `Lib::idle`)"),
        "impl World::fn lci_compute_done": ("L", "the whole-job DSM's hand-over: a compute segment's end told to it"),
        "impl World::fn lci_proceed": ("R", "the call of the library's own loop (`Lib::proceed`) with the broadcast wait's count across hosts (`Deliveries::next`), where the world runs a process: at time zero and when the broadcast wait lets one go on"),
        "impl World::fn lci_flush_sends": ("L", "the whole-job DSM's hand-over: its sends handed to the libraries"),
        "impl World::fn lci_start": ("R", "world start: the processes' first step (`Lib::proceed`) and each library's start (the Open-MX hosts' first `dispatch` in `sim/build.rs` `assemble`; the NI clocks' first ticks are `sim/clock.rs` `start_clocks`'s for both stacks)"),
        "impl World::fn start_lci": ("R", "world start: `sim/build.rs` `assemble`'s first dispatch, then the run-end check"),
        "impl World::fn lci_settle": ("R", "the run-end rule after an event of the stack: a full NI store ends the run, a done DSM leaves no program (`sim/mod.rs` `run`'s `programs_left`)"),
    },
    "config/scenario/lci.rs": {
        "struct LciProtocol": ("R", "`protocol.ack_delay_us` is the concept of `library.delayed_ack_us`, `protocol.send_buffers` of `library.send_window_frames` (over all peers): one `[library]` table serves one library per platform, and on lci2000 its values are the Open-MX library's (20 ms)"),
        "const DEFAULT_ACK_DELAY_US": ("R", "a default of the same concept as `library.delayed_ack_us` (see `LciProtocol`)"),
        "struct LciScenario": ("L", "the LCI-only keys beside the shared ones (the firmware's arrival detection and forwarding trees, the reliable protocol) and the platform's `[lanai]` and `[lci]` tables, present for this stack; the watchdog and the clock are `Scenario::ni`'s"),
        "impl LciScenario::fn read": ("L", "the LCI-only keys the one reader (`Scenario::from_toml`) reads beside the shared ones: `[lanai]`/`[lci]` present, the firmware's own `[nic]` keys (`lci_ni`), the reliable protocol's keys (about 7 lines, the concept of `LciProtocol`'s row)"),
        "impl LciScenario::fn check_workload": ("L", "a cross-check of LCI-only keys (the reliable protocol, `nic.forwarding`) with the workload; no Open-MX key is in it"),
        "fn reliable_asked": ("L", "the LCI reliable protocol's switch (`[protocol]` with a key besides `stack`); the Open-MX library's protocol is always on"),
    },
    "config/lanai.rs": {
        "const STEP_CYCLES_MAX": ("L", "the bound of a LANai firmware step's cycles"),
        "(outside items: macros, attributes)": ("L", "`[lanai]` (SRAM, buffers, firmware cycles at the shared `emo.nic_clock_mhz`) and `[lci]` (the LCI library's poll, send, upcall costs) are LCI-only keys, one `cost_table!` each"),
    },
    "config/lanai_derive.rs": {
        "fn validate": ("L", "the LANai platform's own cross-checks (its `[pci]` and `[lci]` only with `[lanai]`; its NIC clock, grid and bus present; buffers within SRAM; a multicast descriptor within a buffer; a cached poll above 0): the tables' own ranges are `Platform::validate`'s"),
    },
}


def audited(f, name, rule):
    """Class item `name` of file `f` by the audit.

    Its row, else its file's "*" row, else the file rule's class `rule`
    (N stays N).
    """
    if rule == "N":
        return "N", ""
    rows = AUDIT.get(f, {})
    c, why = rows.get(name) or rows.get("*") or (rule, "file rule (not audited)")
    return c, why


def classify(f, name):
    """Class item `name` of file `f`: R, L or N (see the module docstring)."""
    default, exc = RULES[f]
    if name.startswith("use ") or name.startswith("mod ") or name.endswith(" {}"):
        return "N"
    for k, c in exc.items():
        if k in name:
            return c
    return default


args = [a for a in sys.argv[1:] if not a.startswith("--")]
show_items = "--items" in sys.argv[1:]
use_audit = "--audited" in sys.argv[1:]
audit_md = "--audit-md" in sys.argv[1:]
rows_md = []
root = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "crates", "nicsim", "src")
tot = {"R": 0, "L": 0, "N": 0}
for f in RULES:
    p = os.path.join(root, f)
    if not os.path.exists(p):
        continue
    c = {"R": 0, "L": 0, "N": 0}
    for name, n, test in items(p):
        if not test:
            k = classify(f, name)
            a, why = audited(f, name, k)
            if use_audit:
                k = a
            c[k] += n
            if show_items and n:
                print(f"  {f}\t{name}\t{n}\t{k}")
            if audit_md and n and a != "N":
                rows_md.append(f"| `{f}` | `{name}` | {n} | {a} | {why} |")
    for k in c:
        tot[k] += c[k]
    with open(p) as fh:
        raw = sum(1 for _ in fh)
    if audit_md:
        continue
    print(
        f"{f:28s} raw {raw:4d}  code {sum(c.values()):4d}",
        f"restated {c['R']:4d}  lci-only {c['L']:4d}",
    )
if audit_md:
    print("| file | item | lines | class | the shared code (R) or why LCI's own (L) |")
    print("|---|---|---:|:-:|---|")
    print("\n".join(rows_md))
    sys.exit(0)
print(
    f"{'total':28s}          code {sum(tot.values()):4d}",
    f"restated {tot['R']:4d}  lci-only {tot['L']:4d}",
)
