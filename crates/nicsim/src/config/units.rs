//! Declaring a table of the platform preset once: [`cost_table!`] turns one
//! list of keys (each with its type, its range and, for a time or a rate,
//! the unit the simulator charges it in) into the serde struct, its range
//! checks naming each key, and the struct of the values as charged with its
//! conversion. Adding a cost is one line of the table and its use.
//!
//! This module owns the units and the declaration. It does not hold any
//! table (`platform` declares them) nor any range (each key's is written on
//! its line there).

use super::{check_f, check_u, ConfigError};

/// A key's value checked against its range, with the message of
/// [`check_f`] or [`check_u`] (which names the key).
pub(crate) trait InRange: Copy {
    fn check(self, key: &str, lo: Self, hi: Self) -> Result<(), ConfigError>;
}

impl InRange for f64 {
    fn check(self, key: &str, lo: f64, hi: f64) -> Result<(), ConfigError> {
        check_f(key, self, lo, hi)
    }
}

impl InRange for u32 {
    fn check(self, key: &str, lo: u32, hi: u32) -> Result<(), ConfigError> {
        check_u(key, self as u64, lo as u64, hi as u64)
    }
}

/// The type a key is charged as, by unit: `ns` and `us` a
/// [`Duration`](crate::time::Duration), `MBps` and `gbps` bytes per second,
/// `count` the integer itself.
macro_rules! charged_type {
    (ns) => {
        $crate::time::Duration
    };
    (us) => {
        $crate::time::Duration
    };
    (MBps) => {
        u64
    };
    (gbps) => {
        u64
    };
    (count) => {
        u32
    };
}

/// A key's value as charged, by unit: nanoseconds and microseconds to the
/// nearest picosecond ([`Duration::from_ns_f64`](crate::time::Duration::from_ns_f64)),
/// megabytes per second to whole bytes per second (truncated), gigabits per
/// second to bytes per second (rounded), a count as it is.
macro_rules! charged {
    (ns, $v:expr) => {
        $crate::time::Duration::from_ns_f64($v)
    };
    (us, $v:expr) => {
        $crate::time::Duration::from_ns_f64($v * 1e3)
    };
    (MBps, $v:expr) => {
        ($v * 1e6) as u64
    };
    (gbps, $v:expr) => {
        ($v * 1e9 / 8.0).round() as u64
    };
    (count, $v:expr) => {
        $v
    };
}

/// One table of the platform preset, each key declared once:
///
/// ```text
/// cost_table! {
///     /// docs and attributes of the serde struct
///     pub struct HostCfg in "host" as h {
///         /// the key's user help, serde attributes
///         pub irq_entry_ns: f64 [0.0, NS_MAX] => ns irq_entry,
///         pub sleep_enabled: bool,
///     }
///     /// docs of the charged values
///     pub struct HostTimes;
/// }
/// ```
///
/// makes the serde struct `HostCfg` (fields in the order written, which is
/// the order a preset is printed in), `HostCfg::check` (each key with a
/// range `[lo, hi]` checked in that order, the error naming `host.<key>`;
/// a bound may read an earlier key through the name after `as`), and
/// `HostTimes` with `HostTimes::of(&HostCfg)`, one field per key with a
/// unit (`=> unit name`: the value converted by [`charged!`]). A table
/// the simulator reads as written (topology, NAS rates) has no units and
/// no `pub struct ...Times;`: the serde struct and its check only.
macro_rules! cost_table {
    (
        $(#[$attr:meta])*
        pub struct $cfg:ident in $table:literal as $this:ident {
            $(
                $(#[$fattr:meta])*
                pub $key:ident : $ty:ty $([$lo:expr, $hi:expr])? $(=> $unit:ident $name:ident)?,
            )*
        }
        $(#[$tattr:meta])*
        pub struct $times:ident;
    ) => {
        $crate::config::units::cost_table! {
            $(#[$attr])*
            pub struct $cfg in $table as $this {
                $( $(#[$fattr])* pub $key : $ty $([$lo, $hi])?, )*
            }
        }
        $(#[$tattr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $times {
            $($(
                #[doc = concat!("`", $table, ".", stringify!($key), "` (", stringify!($unit), ").")]
                pub $name: $crate::config::units::charged_type!($unit),
            )?)*
        }
        impl $times {
            /// The values of a validated table as the simulator charges them.
            pub fn of($this: &$cfg) -> Self {
                $times {
                    $($( $name: $crate::config::units::charged!($unit, $this.$key), )?)*
                }
            }
        }
    };
    (
        $(#[$attr:meta])*
        pub struct $cfg:ident in $table:literal as $this:ident {
            $(
                $(#[$fattr:meta])*
                pub $key:ident : $ty:ty $([$lo:expr, $hi:expr])?,
            )*
        }
    ) => {
        $(#[$attr])*
        pub struct $cfg {
            $( $(#[$fattr])* pub $key: $ty, )*
        }
        impl $cfg {
            /// Checks each key of the table against its range; the error
            /// names the first key out of it.
            pub(crate) fn check(&self) -> Result<(), $crate::config::ConfigError> {
                use $crate::config::units::InRange;
                let $this = self;
                $($(
                    InRange::check($this.$key, concat!($table, ".", stringify!($key)), $lo, $hi)?;
                )?)*
                Ok(())
            }
        }
    };
}

pub(crate) use {charged, charged_type, cost_table};
