//! The Open-MX-like user-space library of each process, one component
//! per process ([`Proc`]): its program's progress, requests, matching,
//! unexpected and early messages, medium reassembly, the outbox of what it
//! hands to the driver, its protocol state (`crate::proto::Endpoint`) and
//! what each of its steps costs.
//!
//! The interface is small, in smoltcp's socket style: the world calls a
//! process with a context ([`Cx`]: the time, the costs it reads, the cache
//! model, the host's send path, the rank map) and the process answers with
//! what it wants done, as [`Output`]s appended to the context's reused
//! buffer (transmit this frame, copy this message into a local endpoint,
//! arm this timer, open or start this pull, this request completed, ...),
//! which the world routes in order after the call. Its entry points:
//!
//! * [`Proc::step`]: the process has the CPU; what it runs next and what
//!   that costs ([`Step`]), a send's price beside its effect; it runs
//!   that segment;
//! * [`Proc::segment_done`]: the segment priced by `step` ended; its
//!   effect (or, for a computation's end and a busy poll's entry, the
//!   action handed back to the world);
//! * [`Proc::timer_fired`]: its protocol-timer event fired;
//! * [`Proc::pull_opened`]: the driver opened the pull handle it asked for;
//! * the scheduling and ring methods the kernel and the handler call
//!   (`process.rs`): preemption, notification, the event ring (`post`,
//!   which answers whether the process slept and what it does about the
//!   event).
//!
//! It owns the library's state and decisions; it does not own the cores,
//! the event queue, frames, NICs or the drivers' pull handles (the world's,
//! `crate::sim`), nor the protocol's transitions (`crate::proto`), which it
//! applies.

pub(crate) mod driver;
mod env;
mod event;
mod exp;
mod indexes;
pub(crate) mod lci;
mod mcast;
mod ob1;
mod ob1_ops;
#[cfg(test)]
mod ob1_tests;
mod process;
mod recv;
mod send;
mod step;
#[cfg(test)]
mod tests;

pub(crate) use env::{Env, Ranks, NO_RANK};
pub(crate) use event::{LibEvent, Writer};
pub(crate) use indexes::BySource;
pub(crate) use process::{Action, Notice, PState, Peaks, Proc, Step};

use crate::costs::Costs;
use crate::host::HostMem;
use crate::time::{Duration, Instant};
use crate::wire::OmxBody;

/// Bytes of a page the driver pins (x86-64 `PAGE_SIZE`).
const PAGE_BYTES: u64 = 4096;

/// Pages of a `size`-byte region (a page-aligned buffer: the 2009 benchmarks
/// allocate theirs with `malloc` of at least a page, which glibc serves from
/// `mmap` past 128 KiB, page-aligned plus a 16-byte header).
pub(crate) fn region_pages(size: u64) -> u32 {
    size.div_ceil(PAGE_BYTES).min(u32::MAX as u64) as u32
}

/// CPU time to register a large message's `size`-byte region: the flat
/// part (`library.pull_setup_ns`: the ioctl, the region and handle
/// bookkeeping) and the pinning, page by page (`library.pin_page_ns`).
/// Open-MX 1.0.901 pins a region synchronously when it is created
/// (`omx_pin_synchronous = 1`, driver/linux `omx_main.c`;
/// `omx__user_region_pin_add_chunk` → `get_user_pages`, `omx_reg.c`), and
/// the native library creates one per large send and per pull: its
/// registration cache is off unless the driver reports pin invalidation
/// (`omx__globals.regcache = omx__globals.parallel_regcache` = 0, libopen-mx
/// `omx_init.c`), which it never does with synchronous pinning (`if
/// (omx_pin_invalidate && !omx_pin_synchronous)`, `omx_main.c`).
pub(crate) fn pin_cost(c: &Costs, size: u64) -> Duration {
    c.lib.pull_setup + c.lib.pin_page.times(region_pages(size) as u64)
}

/// What a library's event is: the one event a library has the world queue
/// for it (`Output::Timer`), for the Open-MX process's protocol timer
/// (`Protocol`, `crate::sim::Ev::ProcTimer`) or host `h`'s \[LCI] library
/// (the others, `crate::sim::Ev::LciLibrary { host, ev, arg }`, handled by
/// the library's `lci::Lib::event`). `arg` is a packet the LCI library holds for
/// the event (`lci::Lib::held`, the kinds [`LibEv::names_packet`]), the
/// generation for `ComputeDone`, 0 otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum LibEv {
    /// The Open-MX process's protocol timer (`Proc::timer_fired`).
    Protocol,
    /// The host finished its current action.
    Done,
    /// The host finished the library send path: write the packet now.
    Write,
    /// The host's PIO read of its NI's delivered counter completed.
    PollDone,
    /// The host's PIO read of its NI's released-send-buffer counter completed.
    SendCounterDone,
    /// The host forwards a multicast packet after its upcall (`host-packet`; a packet).
    McForward,
    /// The host's read of the released-send-buffer counter for that forward completed (a packet).
    McSendCounterDone,
    /// The host finished the send path of that forward: write it now (a packet).
    McWrite,
    /// The host's compute phase of generation `arg` ends (stale if
    /// preempted since; in the library or outside it).
    ComputeDone,
    /// An NI interrupt reaches the host's process as a signal.
    Signal,
    /// The host's earliest soft timer is due (wakes a spinning library).
    SoftTimer,
}

impl LibEv {
    /// Whether the event names a packet (its `arg`).
    pub fn names_packet(self) -> bool {
        matches!(self, LibEv::McForward | LibEv::McSendCounterDone | LibEv::McWrite)
    }
}

/// What a library wants done, in the order it wants it: the Open-MX
/// process's ([`Proc`]) and the \[LCI] host library's ([`lci::Lib`]), routed
/// by the one router (`crate::sim` `kernel`'s `route`). The last six are the LCI
/// library's own: its PIO across its NIC's bus and what its program learns.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Output {
    /// Have the library's event `ev` at `at`, naming `arg` ([`LibEv`]).
    Timer { at: Instant, ev: LibEv, arg: u32 },
    /// The driver sends a frame to host `dst` (its doorbell): `body`,
    /// with the latency-sensitive marker if `marked`.
    Transmit { dst: u16, marked: bool, body: OmxBody },
    /// The driver copies an intra-host message into endpoint `ep` of host
    /// `host` (its event ring).
    Local { host: u16, ep: u8, ev: LibEvent },
    /// Multicast frame `frag` of `frags` of a `size`-byte message with
    /// `tag` from endpoint `ep` (rank `rank`) to the process's NIC.
    Mcast { ep: u8, rank: u16, tag: u64, size: u64, frag: u8, frags: u8 },
    /// Open a pull handle (the driver's) for receive `req` of the
    /// rendezvous `ev`, from endpoint `ep`; the world answers with
    /// [`Proc::pull_opened`].
    OpenPull { ep: u8, req: u32, ev: LibEvent },
    /// The driver starts pull `handle`: it requests the first blocks.
    PullStart { handle: u32 },
    /// A request completed.
    Completed,
    /// A medium message was reassembled; `one_irq`: its fragments were all
    /// in host memory before any interrupt reported one of them.
    Medium { one_irq: bool },
    /// Frames found to be duplicates.
    Duplicates { n: u64 },
    /// The program finished.
    ProgramDone,
    /// The program passed mark `label` (the world records its counters:
    /// [`Proc::set_mark_irqs`]).
    Mark { label: u8 },
    /// Core `core` owes `stall` (the send-path state bounced between it
    /// and this process's core: `TxPath::touch`).
    Stall { core: u16, stall: Duration },
    /// The library gave up on rank `peer`: message `seq` of `size` bytes,
    /// last put on the wire at `last_sent`, was never acknowledged (the run
    /// fails).
    GiveUp { peer: u16, seq: u32, size: u64, last_sent: Instant },
    /// \[LCI] Read an NI counter by PIO across the host's bus; then the
    /// library's event `then` (naming `arg`), with the counter's value.
    PioRead { then: LibEv, arg: u32 },
    /// \[LCI] Write the packet the library holds as `pkt` ([`lci::Lib::held`];
    /// `bytes` after the header: payload, FULL word, extra descriptors) and
    /// its descriptor into an NI send buffer by PIO.
    PioWrite { pkt: u32, bytes: u32 },
    /// \[LCI] The upcall of a message's last packet: the whole message from
    /// host `src` with `tag` reached the host's program.
    Message { src: u32, tag: u64 },
    /// \[LCI] The same for a program the upcalls drive (`Drive::Upcall`): the
    /// message from `from` (a broadcast's root) whose upcall ends at `at`.
    Arrived { from: u32, tag: u64, at: Instant },
    /// \[LCI] The library has nothing to do: the program says what the host
    /// goes on with ([`lci::Lib::control`]).
    Idle,
    /// \[LCI] The compute phase the program asked for ended.
    ComputeDone,
}

/// What a library reads and where it puts what it wants done, made by the
/// world for each call.
pub(crate) struct Cx<'a> {
    pub now: Instant,
    /// The process's host.
    pub host: u16,
    /// The costs, the topology, the rank map, whether the NI clocks run.
    pub env: &'a Env,
    /// The host's cache counters, its send path, and its cores' own
    /// kernel state and the kernel paths' lines (`host::HostLines`).
    pub mem: &'a mut HostMem,
    /// The outputs of this call (the world's reused buffer; appended to).
    pub out: &'a mut Vec<Output>,
}

impl Cx<'_> {
    #[inline(always)]
    pub(crate) fn emit(&mut self, o: Output) {
        self.out.push(o);
    }

    /// Has the library's event `ev` at `at` (`arg` 0).
    #[inline(always)]
    pub(crate) fn timer(&mut self, at: Instant, ev: LibEv) {
        self.emit(Output::Timer { at, ev, arg: 0 });
    }

    /// The host's send-path state, touched by `core` which then works on
    /// it for `hold` (`TxPath::touch`), the lines of endpoint `ep`'s send
    /// system call (`Path::SendIoctl`) and those Open-MX's `omx_queue_xmit`
    /// and myri10ge's `myri10ge_xmit` write (`Path::OmxSend`), with
    /// `payload` lines of data copied into the skb; a stall it makes
    /// another core owe is an output.
    #[inline(always)]
    pub(crate) fn tx_touch(&mut self, core: u16, ep: u8, hold: Duration, payload: u32) -> Duration {
        let (env, mem) = (self.env, &mut *self.mem);
        let kernel = &mut mem.lines.kernel[core as usize];
        let (cost, owed) =
            mem.tx.touch(&env.c.cc, &env.topo, &env.c.cache, &mut mem.cache, kernel, self.now, core, hold);
        if let Some((core, stall)) = owed {
            self.emit(Output::Stall { core, stall });
        }
        let at = env.topo.cpu(core);
        // The send system call's own lines (`Path::SendIoctl`), counted,
        // and the frame's (`Path::OmxSend`).
        let mem = &mut *self.mem;
        cost + mem.lines.send_call(&env.c.cc, &env.topo, &mut mem.cache, ep as usize, payload, at)
    }
}
