//! The host: topology, cores and their states, the cache model.
//!
//! This module owns the *resources* of a host: which core runs what, idle and
//! sleep bookkeeping, and the caches (which die's L2 holds which object). The receive path logic (interrupt,
//! NAPI bottom half, Open-MX receive handler, library) that consumes these
//! resources lives in `crate::sim`, where NIC, host and protocol meet.

pub mod cache;
pub mod topology;

pub use cache::{CacheCosts, CacheStats, HostLines, Obj, ObjClass, Owner, ProcLines, Side};
pub use topology::{Cpu, Topology};
