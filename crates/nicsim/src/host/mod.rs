//! The host's hardware that the receive path reads: its topology (sockets,
//! dies sharing an L2, cores) and the cache model (which die's L2 holds
//! each object, which core's L1 its latest lines, and what a line costs to
//! move).
//!
//! It does not own the cores' state and dispatch: a core's kernel work
//! queue, what it runs, its idle and sleep bookkeeping are `crate::sim`'s
//! `kernel` (`Core`, `KQueue`), since a core's work items and the events
//! it schedules are the world's. The receive path that consumes these
//! resources (interrupt, NAPI bottom half, Open-MX handler, library) lives
//! in `crate::sim` too, where NIC, host and protocol meet.

pub mod cache;
pub mod topology;

pub use cache::{CacheCosts, CacheStats, HostLines, Obj, ObjClass, Owner, ProcLines, Side};
pub use topology::{Cpu, Topology};
