//! The host's hardware: its topology (sockets, dies sharing an L2, cores),
//! the cache model (which die's L2 holds each object, which core's L1 its
//! latest lines, and what a line costs to move), its cores (`core`: what
//! each runs, its kernel work queue, its idle, sleep and segment
//! bookkeeping) and its I/O bus (`bus`: a shared PCI bus's arbitration of
//! the NIC's DMAs and the host's programmed I/O); the send-path state
//! its cores share (`tx`: `TxPath`, and what a touch of it costs; the
//! frames queued for the wire and their bound, `TxBacklog`).
//!
//! It does not own what runs on the cores: the kernel work items
//! (`crate::kernel::KWork`, which name the world's frames, pull replies
//! and processes), their prices, the dispatch that picks the next one and
//! the events a core's segments schedule are `crate::sim`'s `kernel`, as
//! is the receive path that consumes these resources (interrupt, NAPI
//! bottom half, Open-MX handler, library), where NIC, host and protocol
//! meet.

pub mod bus;
pub mod cache;
pub(crate) mod core;
pub mod topology;
pub(crate) mod tx;

pub(crate) use self::core::{Core, Cur, Segment, Sleep};
pub use cache::{CacheCosts, CacheStats, HostLines, Obj, ObjClass, Owner, ProcLines, Side};
pub use topology::{Cpu, Topology};
pub(crate) use tx::{TxBacklog, TxPath};

/// A host's cache counters, its send path and the kernel paths' lines
/// (a library call's context holds one reference to them).
pub(crate) struct HostMem {
    /// The kernel's per-die and the processes' private objects.
    pub lines: HostLines,
    pub cache: CacheStats,
    /// The send-path state its cores share.
    pub tx: TxPath,
}
