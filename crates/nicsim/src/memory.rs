//! The memory a run may hold, and the process's own figures for it.
//!
//! A run keeps what it has in flight, and some workloads keep a lot: an
//! all-to-all has a message and a posted receive live for the pairs of
//! ranks it has in flight, 300 to 370 bytes a pair (319 MiB at 1,024
//! ranks, 376 MiB with huge pages; 12.1 GiB at 8,192 ranks, 1,024 hosts of
//! 8), so a few more ranks need more than a machine has. Left alone, such a
//! run grows until the allocator fails (the process aborts) or the
//! kernel's out-of-memory killer ends it, or some other process. A
//! [`Limit`] lets a caller's interrupt check (`crate::interrupt`) stop it
//! first, with an error that gives its size and the limit: the Python
//! binding and `examples/run` keep a [`Guard`] in their checks, which
//! looks 20 times a second.
//!
//! The limit is the process's, whatever holds the memory: the binding
//! looks too while the Python side reads a capture for a replay and hands
//! its frames to the core. Each error names the work it stopped, with
//! advice that fits that work ([`Task`]).
//!
//! The default limit is a share of the memory the process may use: the
//! machine's, or less where a cgroup limits it (a container, a batch
//! system's allocation), since the kernel ends the cgroup's processes at
//! that limit whatever the machine has.
//!
//! Figures come from Linux's `/proc` and `/sys/fs/cgroup`; elsewhere there
//! are none, and no limit is kept unless one is set.

/// The environment variable that sets a run's limit, in MiB.
pub const LIMIT_VAR: &str = "NICSIM_MEMORY_LIMIT_MIB";

/// The environment variable that tells a run how many runs share the
/// machine at once (a campaign's worker processes: `nicsim.executor` sets
/// it); the default limit is divided among them.
pub const SHARES_VAR: &str = "NICSIM_MEMORY_SHARES";

/// The share of the memory the process may use ([`room`]) that the runs
/// on a machine may hold when [`LIMIT_VAR`] is not set: three quarters,
/// which leaves the rest of the machine room to work.
pub const DEFAULT_SHARE: (u64, u64) = (3, 4);

/// How much resident memory a run's process may hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The limit in KiB.
    pub kib: u64,
    /// Where it comes from, for the error message.
    pub source: String,
}

impl Limit {
    /// The limit [`LIMIT_VAR`] sets, else [`DEFAULT_SHARE`] of the memory
    /// the process may use ([`room`]) divided among [`SHARES_VAR`] runs;
    /// `None` where neither is known. A value of either that is not a
    /// whole number, at least 1, is an error naming it.
    pub fn from_env() -> Result<Option<Limit>, String> {
        if let Some(text) = var(LIMIT_VAR)? {
            return Limit::parse(&text).map(Some);
        }
        let shares = match var(SHARES_VAR)? {
            Some(text) => whole(SHARES_VAR, &text, "runs")?,
            None => 1,
        };
        Ok(room().map(|room| Limit::share_of(&room, shares)))
    }

    /// The limit of a [`LIMIT_VAR`] value.
    pub fn parse(text: &str) -> Result<Limit, String> {
        let mib = whole(LIMIT_VAR, text, "MiB")?;
        Ok(Limit { kib: mib.saturating_mul(1024), source: format!("{LIMIT_VAR} = {mib}") })
    }

    /// The default limit of one of `shares` runs in `room`.
    pub fn share_of(room: &Room, shares: u64) -> Limit {
        let (num, den) = DEFAULT_SHARE;
        let among = if shares > 1 { format!(", shared by {shares} runs at once") } else { String::new() };
        Limit {
            kib: room.kib / den * num / shares,
            source: format!("{num}/{den} of {}{among}; set {LIMIT_VAR} to change it", room.describe()),
        }
    }

    /// The error of a process that holds `held` KiB (rounded up to whole
    /// MiB, so that it never reads as the limit itself) while doing `task`:
    /// what it was doing, its size, the limit and the advice that fits.
    pub fn exceeded(&self, held: u64, task: &Task) -> String {
        format!(
            "{} was stopped holding {} MiB of memory, over its limit of {} MiB ({}): {}",
            task.doing,
            thousands(held.div_ceil(1024)),
            thousands(self.kib / 1024),
            self.source,
            task.advice
        )
    }
}

/// What a process under a [`Limit`] is doing, for the error that stops
/// it: the work, named, and what would make it hold less. The limit's
/// error speaks of the work it stopped, not of some other command's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// The work, as the subject of the error: "the run of workload
    /// `alltoall`, 1,024 ranks", "reading capture x.pcap".
    pub doing: String,
    /// What holds less: "run fewer ranks", "replay a slice of it".
    pub advice: String,
}

impl Task {
    /// A task named `doing` with its `advice`.
    pub fn new(doing: impl Into<String>, advice: impl Into<String>) -> Task {
        Task { doing: doing.into(), advice: advice.into() }
    }

    /// A run of a scenario not known here (`examples/run`, a guard made
    /// with [`Guard::new`]).
    pub fn run() -> Task {
        Task::new(
            "the run",
            format!(
                "its state grows with what it keeps in flight (ranks, and the messages between them), so run \
                 fewer ranks or less at once, or raise {LIMIT_VAR}"
            ),
        )
    }

    /// The run of `s`: its workload, its ranks, and what its state grows
    /// with.
    pub fn of_scenario(s: &crate::Scenario) -> Task {
        use crate::config::Workload as W;
        let hosts = s.platform.topology.hosts;
        let ranks = |what: &str, per_host: u32| {
            Task::new(
                format!(
                    "the run of workload `{what}`, {} ranks ({hosts} hosts of {per_host})",
                    thousands(u64::from(hosts) * u64::from(per_host))
                ),
                format!(
                    "its state grows with the ranks and what each keeps in flight (an all-to-all keeps state \
                     for every pair of ranks, 300 to 370 bytes a pair), so run fewer ranks \
                     (topology.hosts, workload.procs_per_host), or raise {LIMIT_VAR}"
                ),
            )
        };
        let in_flight = |what: &str, window: Option<u32>| {
            let held = match window {
                Some(n) => format!("up to workload.window = {n} messages of workload.size_bytes"),
                None => "a message of workload.size_bytes".to_string(),
            };
            Task::new(
                format!("the run of workload `{what}`"),
                format!(
                    "its state grows with the messages it keeps in flight ({held}), so send smaller \
                     messages or fewer at once, or raise {LIMIT_VAR}"
                ),
            )
        };
        let lci = || {
            Task::new(
                "the run of the LCI stack's program",
                format!(
                    "its state grows with the ranks and what each keeps in flight, so run fewer ranks \
                     (topology.hosts, workload.procs), or raise {LIMIT_VAR}"
                ),
            )
        };
        match &s.workload {
            _ if s.lci.is_some() => lci(),
            W::PingPong { .. } => in_flight("pingpong", None),
            W::Echo { at: crate::config::EchoAt::Nic, .. } => in_flight("echo-nic", None),
            W::Echo { .. } => in_flight("echo-kernel", None),
            W::Stream { window, .. } => in_flight("stream", Some(*window)),
            W::Uniband { window, .. } => in_flight("uniband", Some(*window)),
            W::Flood { .. } => Task::new(
                "the run of workload `flood`",
                format!("its state grows with the frames queued at the receiver, so send fewer, or raise {LIMIT_VAR}"),
            ),
            W::NasIs { per_host, .. } => ranks("nas-is", *per_host),
            W::NasKernel { kernel, per_host, .. } => {
                let name = match kernel {
                    crate::workload::NasKernel::Cg => "nas-cg",
                    crate::workload::NasKernel::Mg => "nas-mg",
                    crate::workload::NasKernel::Ft => "nas-ft",
                    crate::workload::NasKernel::Bt => "nas-bt",
                    crate::workload::NasKernel::Ep => "nas-ep",
                    crate::workload::NasKernel::Lu => "nas-lu",
                    crate::workload::NasKernel::Sp => "nas-sp",
                };
                ranks(name, *per_host)
            }
            W::Alltoall { per_host, .. } => ranks("alltoall", *per_host),
            W::Exchange { per_host, .. } => ranks("exchange", *per_host),
            W::Bcast { per_host, .. } => ranks("bcast", *per_host),
            W::Asp { per_host, .. } => ranks("asp", *per_host),
            W::Qr { per_host, .. } => ranks("qr", *per_host),
            W::FftAlltoall { per_host, .. } => ranks("fft-alltoall", *per_host),
            W::Replay => Task::replay(None),
            W::BcastBench { .. } | W::Dsm { .. } => lci(),
        }
    }

    /// A replay of `frames` captured frames (if known): the core holds
    /// each frame and its results.
    pub fn replay(frames: Option<usize>) -> Task {
        let doing = match frames {
            Some(n) => format!("the replay of {} frames", thousands(n as u64)),
            None => "the replay".to_string(),
        };
        Task::replay_doing(doing)
    }

    /// A replay taking in its frames, `taken` so far.
    pub fn replay_taking(taken: usize) -> Task {
        Task::replay_doing(format!("the replay, taking in the capture's frames ({} so far),", thousands(taken as u64)))
    }

    fn replay_doing(doing: String) -> Task {
        Task::new(
            doing,
            format!(
                "it holds every frame's time, length and header and its results, so replay a slice of the \
                 capture (e.g. editcap -r IN OUT 1-100000), or raise {LIMIT_VAR}"
            ),
        )
    }
}

/// Wall time between two looks of a [`Guard`]: 20 reads of
/// `/proc/self/status` a second (about 20 µs each), which no run notices.
pub const LOOK_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// A run's memory watch, for its interrupt check (`crate::interrupt`):
/// looks at the process's memory at its first call and then at most every
/// [`LOOK_EVERY`], and answers with an error once the process holds more
/// than its [`Limit`].
///
/// A run is stopped past its limit by what it allocated since the last
/// look: in 50 ms, or in one interval of the check (1,024 events) where
/// that takes longer. In a symmetric workload every process grows its
/// per-peer tables at the same point of the run, so those bursts are
/// large: an all-to-all of 8,192 ranks is stopped at 2,101 MiB against a
/// limit of 2,000 (at 2,261 MiB when the check came every 4,096 events).
#[derive(Clone, Debug)]
pub struct Guard {
    limit: Limit,
    /// What the process is doing, for the error.
    task: Task,
    /// When the next look is due.
    next: std::time::Instant,
}

impl Guard {
    /// A guard of a run ([`Task::run`]) whose first look is due at once.
    pub fn new(limit: Limit, now: std::time::Instant) -> Guard {
        Guard { limit, task: Task::run(), next: now }
    }

    /// The same guard, its error naming `task`.
    pub fn doing(self, task: Task) -> Guard {
        Guard { task, ..self }
    }

    /// The guard of [`Limit::from_env`], if there is a limit.
    pub fn from_env() -> Result<Option<Guard>, String> {
        Ok(Limit::from_env()?.map(|limit| Guard::new(limit, std::time::Instant::now())))
    }

    /// If a look is due at `now`, reads the process's memory: an error if
    /// it holds more than the limit. Nothing where it cannot be read.
    pub fn look(&mut self, now: std::time::Instant) -> Result<(), String> {
        self.look_at(now, |task| task.clone())
    }

    /// [`Guard::look`], its error naming the task `task` makes of the
    /// guard's (only when there is an error): how far the work has got.
    pub fn look_at(&mut self, now: std::time::Instant, task: impl FnOnce(&Task) -> Task) -> Result<(), String> {
        if now < self.next {
            return Ok(());
        }
        self.next = now + LOOK_EVERY;
        match resident_kib() {
            Some(held) if held > self.limit.kib => Err(self.limit.exceeded(held, &task(&self.task))),
            _ => Ok(()),
        }
    }
}

/// The process's resident memory in KiB (`VmRSS`).
pub fn resident_kib() -> Option<u64> {
    status_kib("VmRSS:")
}

/// The process's peak resident memory in KiB (`VmHWM`).
pub fn peak_kib() -> Option<u64> {
    status_kib("VmHWM:")
}

/// Resets the process's peak resident memory to its current size (Linux:
/// writing 5 to `/proc/self/clear_refs`). Elsewhere, or if refused, the
/// peak stays the process's.
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The machine's memory in KiB (`MemTotal` of `/proc/meminfo`).
pub fn machine_kib() -> Option<u64> {
    field_kib(&std::fs::read_to_string("/proc/meminfo").ok()?, "MemTotal:")
}

/// The memory the process may use: the machine's, or a cgroup's limit
/// where that is lower.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Room {
    pub kib: u64,
    /// Whether a cgroup's limit sets it.
    pub cgroup: bool,
}

impl Room {
    fn describe(&self) -> String {
        let mib = thousands(self.kib / 1024);
        if self.cgroup {
            format!("the {mib} MiB its cgroup allows")
        } else {
            format!("this machine's {mib} MiB")
        }
    }
}

/// The memory this process may use ([`Room`]); `None` where the machine's
/// cannot be read.
pub fn room() -> Option<Room> {
    let machine = machine_kib()?;
    Some(match cgroup_kib() {
        Some(kib) if kib < machine => Room { kib, cgroup: true },
        _ => Room { kib: machine, cgroup: false },
    })
}

/// The lowest memory limit, in KiB, of the cgroups that hold this process
/// (each of its memory controller's cgroups, from its own up to the root of
/// the hierarchy it sees); `None` where none is set or none can be read.
pub fn cgroup_kib() -> Option<u64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    cgroup_limit(&cgroups, &mounts, |path| std::fs::read_to_string(path).ok())
}

/// [`cgroup_kib`] from the texts of `/proc/self/cgroup` and
/// `/proc/self/mountinfo`, reading the limit files with `read`.
///
/// cgroup v2 (one line `0::PATH`, a `cgroup2` mount) limits by
/// `memory.max`, where the kernel ends the cgroup's processes, and
/// `memory.high`, above which it throttles them (`max`: none); v1 (a line
/// `N:...memory...:PATH`, a `cgroup` mount with the `memory` option) by
/// `memory.limit_in_bytes` (a huge number: none). A mount shows the hierarchy from its root (the fourth
/// field of `mountinfo`), which in a container is the container's own
/// cgroup: the process's path is taken relative to it, and where it lies
/// outside, the mount's root is all that is read.
fn cgroup_limit(cgroups: &str, mountinfo: &str, read: impl Fn(&std::path::Path) -> Option<String>) -> Option<u64> {
    let v2 = cgroups.lines().find_map(|l| l.strip_prefix("0::"));
    let v1 = cgroups.lines().find_map(|l| {
        let mut fields = l.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers.split(',').any(|c| c == "memory").then_some(path)
    });
    let mut lowest: Option<u64> = None;
    for line in mountinfo.lines() {
        let Some((mount, fs)) = line.split_once(" - ") else { continue };
        let mount: Vec<&str> = mount.split(' ').collect();
        let fs: Vec<&str> = fs.split(' ').collect();
        let (Some(root), Some(point), Some(kind)) = (mount.get(3), mount.get(4), fs.first()) else { continue };
        let (path, files) = match *kind {
            "cgroup2" => (v2, &["memory.max", "memory.high"][..]),
            "cgroup" if fs.get(2).is_some_and(|o| o.split(',').any(|o| o == "memory")) => {
                (v1, &["memory.limit_in_bytes"][..])
            }
            _ => continue,
        };
        let Some(path) = path else { continue };
        let top = std::path::PathBuf::from(point);
        let mut dir = match std::path::Path::new(path).strip_prefix(root) {
            Ok(below) => top.join(below),
            Err(_) => top.clone(),
        };
        loop {
            for file in files {
                let bytes = read(&dir.join(file)).and_then(|t| t.trim().parse::<u64>().ok());
                if let Some(kib) = bytes.map(|b| b / 1024) {
                    lowest = Some(lowest.map_or(kib, |l| l.min(kib)));
                }
            }
            if dir == top || !dir.pop() {
                break;
            }
        }
    }
    lowest
}

/// An environment variable's value, if set.
fn var(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(text) => Ok(Some(text)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(raw)) => Err(invalid(name, &format!("{raw:?}"), "a whole number")),
    }
}

/// A whole number of `unit`, at least 1.
fn whole(name: &str, text: &str, unit: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(invalid(name, &format!("{text:?}"), &format!("a whole number of {unit}"))),
    }
}

fn invalid(name: &str, shown: &str, allowed: &str) -> String {
    format!("invalid value for `{name}`: {shown} (allowed: {allowed}, at least 1)")
}

fn status_kib(field: &str) -> Option<u64> {
    field_kib(&std::fs::read_to_string("/proc/self/status").ok()?, field)
}

/// The value of a `Name:   123 kB` line.
fn field_kib(text: &str, field: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// 12345 as "12,345".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_a_whole_number_of_mib_and_anything_else_is_named() {
        assert_eq!(Limit::parse(" 2048 ").unwrap().kib, 2048 * 1024);
        assert_eq!(Limit::parse("18446744073709551615").unwrap().kib, u64::MAX);
        for bad in ["0", "-1", "1.5", "2GB", "", "99999999999999999999"] {
            let e = Limit::parse(bad).unwrap_err();
            assert!(e.contains(LIMIT_VAR) && e.contains(&format!("{bad:?}")) && e.contains("at least 1"), "{e}");
        }
    }

    #[test]
    fn runs_that_share_the_machine_share_its_default_limit() {
        let machine = Room { kib: 24 * 1024 * 1024, cgroup: false };
        let alone = Limit::share_of(&machine, 1);
        assert_eq!(alone.kib, 18 * 1024 * 1024);
        assert_eq!(alone.source, format!("3/4 of this machine's 24,576 MiB; set {LIMIT_VAR} to change it"));
        let pair = Limit::share_of(&machine, 2);
        assert_eq!(pair.kib, 9 * 1024 * 1024);
        assert!(pair.source.contains("shared by 2 runs at once"), "{}", pair.source);
        let job = Limit::share_of(&Room { kib: 8 * 1024 * 1024, cgroup: true }, 1);
        assert_eq!(job.kib, 6 * 1024 * 1024);
        assert!(job.source.starts_with("3/4 of the 8,192 MiB its cgroup allows;"), "{}", job.source);
    }

    /// The limit files of a fake `/sys/fs/cgroup`.
    fn files<'a>(limits: &'a [(&'a str, &'a str)]) -> impl Fn(&std::path::Path) -> Option<String> + 'a {
        move |path| limits.iter().find(|(p, _)| std::path::Path::new(p) == path).map(|(_, t)| t.to_string())
    }

    const V2_MOUNT: &str = "31 23 0:28 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate";
    const V1_MOUNTS: &str = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n\
        32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n\
        35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
        41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw";

    #[test]
    fn a_cgroup_v2_limit_anywhere_above_the_process_is_its_limit() {
        let cgroups = "0::/system.slice/job-42.scope\n";
        // The job's own cgroup sets none; its parent 8 GiB; the root none.
        let limits = [
            ("/sys/fs/cgroup/system.slice/job-42.scope/memory.max", "max\n"),
            ("/sys/fs/cgroup/system.slice/memory.max", "8589934592\n"),
        ];
        assert_eq!(cgroup_limit(cgroups, V2_MOUNT, files(&limits)), Some(8 * 1024 * 1024));
        assert_eq!(cgroup_limit(cgroups, V2_MOUNT, files(&limits[..1])), None);
        // A throttling threshold below the hard limit counts as the limit.
        let throttled = [limits[0], limits[1], ("/sys/fs/cgroup/system.slice/job-42.scope/memory.high", "4294967296")];
        assert_eq!(cgroup_limit(cgroups, V2_MOUNT, files(&throttled)), Some(4 * 1024 * 1024));
        // No memory controller mounted, or no cgroup line: nothing.
        assert_eq!(cgroup_limit(cgroups, "", files(&limits)), None);
        assert_eq!(cgroup_limit("", V2_MOUNT, files(&limits)), None);
    }

    #[test]
    fn a_cgroup_v1_memory_controller_is_read_and_its_unlimited_value_is_no_limit() {
        // As on the development VM: v1 with an unlimited memory cgroup.
        let cgroups = "5:devices:/\n4:memory:/process_api/77fe\n1:cpu,cpuacct:/\n0::/\n";
        let unlimited = [("/sys/fs/cgroup/memory/process_api/77fe/memory.limit_in_bytes", "9223372036854771712")];
        let huge = cgroup_limit(cgroups, V1_MOUNTS, files(&unlimited));
        assert_eq!(huge, Some(9223372036854771712 / 1024));
        let limited = [
            ("/sys/fs/cgroup/memory/process_api/77fe/memory.limit_in_bytes", "4294967296"),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712"),
        ];
        assert_eq!(cgroup_limit(cgroups, V1_MOUNTS, files(&limited)), Some(4 * 1024 * 1024));
        // The v2 hierarchy mounted beside it holds no memory controller here.
        assert_eq!(cgroup_limit("0::/\n", V1_MOUNTS, files(&limited)), None);
    }

    #[test]
    fn a_container_that_sees_its_own_cgroup_as_the_mount_root_reads_that() {
        // A container without a cgroup namespace: its path is the host's,
        // and the mount's root is that same cgroup.
        let cgroups = "4:memory:/docker/abc\n";
        let mount = "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory";
        let limits = [("/sys/fs/cgroup/memory/memory.limit_in_bytes", "2147483648")];
        assert_eq!(cgroup_limit(cgroups, mount, files(&limits)), Some(2 * 1024 * 1024));
        // A path outside the mount's root (not a path prefix: /docker/ab):
        // the root alone is read.
        let other = "35 31 0:32 /docker/ab /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory";
        assert_eq!(cgroup_limit(cgroups, other, files(&limits)), Some(2 * 1024 * 1024));
    }

    #[test]
    fn a_process_over_its_limit_is_told_its_size_and_the_limit() {
        let Some(held) = resident_kib() else { return };
        assert!(held > 1024, "a test process holds more than 1 MiB: {held} KiB");
        let now = std::time::Instant::now();
        let e = Guard::new(Limit::parse("1").unwrap(), now).look(now).unwrap_err();
        assert!(e.contains("over its limit of 1 MiB") && e.contains(&format!("{LIMIT_VAR} = 1")), "{e}");
        let roomy = Limit { kib: held * 4, source: "test".into() };
        assert_eq!(Guard::new(roomy, now).look(now), Ok(()));
        assert!(Limit::from_env().unwrap().is_some_and(|l| l.kib > 0));
        assert_eq!(
            Limit { kib: 0, source: "s".into() }.exceeded(12_345 * 1024, &Task::run()).split(" MiB").next(),
            Some("the run was stopped holding 12,345")
        );
        let e = Limit::parse("330").unwrap().exceeded(330 * 1024 + 1, &Task::run());
        assert!(e.contains("holding 331 MiB of memory, over its limit of 330 MiB"), "{e}");
    }

    #[test]
    fn the_error_names_the_work_it_stopped_and_advice_that_fits_it() {
        let limit = Limit::parse("200").unwrap();
        let scenario = |text: &str| crate::Scenario::from_toml(text).unwrap();
        let a2a = scenario("[workload]\nkind = \"alltoall\"\nprocs_per_host = 4\n[platform.topology]\nhosts = 8\n");
        let e = limit.exceeded(300 * 1024, &Task::of_scenario(&a2a));
        assert!(
            e.starts_with("the run of workload `alltoall`, 32 ranks (8 hosts of 4) was stopped holding 300 MiB"),
            "{e}"
        );
        assert!(e.contains("run fewer ranks") && e.contains(LIMIT_VAR), "{e}");
        let stream = scenario("[workload]\nkind = \"stream\"\n");
        let e = limit.exceeded(300 * 1024, &Task::of_scenario(&stream));
        assert!(e.starts_with("the run of workload `stream` was stopped") && !e.contains("all-to-all"), "{e}");
        assert!(e.contains("smaller messages"), "{e}");
        let e = limit.exceeded(300 * 1024, &Task::replay_taking(523_000));
        assert!(e.starts_with("the replay, taking in the capture's frames (523,000 so far), was stopped"), "{e}");
        let e = limit.exceeded(300 * 1024, &Task::replay(Some(999_999)));
        assert!(
            e.starts_with("the replay of 999,999 frames was stopped") && e.contains("a slice of the capture"),
            "{e}"
        );
        assert!(!e.contains("all-to-all") && !e.contains("ranks"), "{e}");
        let now = std::time::Instant::now();
        if resident_kib().is_some() {
            let e = Guard::new(Limit::parse("1").unwrap(), now).doing(Task::new("reading x", "read less")).look(now);
            assert!(e.unwrap_err().starts_with("reading x was stopped holding"));
        }
    }

    #[test]
    fn a_guard_looks_at_once_and_then_once_per_interval() {
        let Some(held) = resident_kib() else { return };
        let t0 = std::time::Instant::now();
        let mut guard = Guard::new(Limit { kib: held * 4, source: "test".into() }, t0);
        assert_eq!(guard.look(t0), Ok(()));
        // Over the limit from now on: seen at the next look, not before.
        guard.limit.kib = 1;
        assert_eq!(guard.look(t0 + LOOK_EVERY / 2), Ok(()));
        assert!(guard.look(t0 + LOOK_EVERY).is_err());
        assert!(guard.look(t0 + LOOK_EVERY * 3 / 2).is_ok(), "the next look is an interval later");
    }
}
