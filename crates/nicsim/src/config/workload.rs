//! `[workload]`: what the simulated processes run, one description for
//! every stack. [`WorkloadOpts`] mirrors the TOML table (the keys only
//! some stacks' programs read beside the shared ones);
//! `config::workload_check` checks it, once, into a [`Workload`] for the
//! stack the hosts run (`RunsOn`: called by the one scenario reader,
//! `Scenario::from_toml`, for whichever stack, knowing the platform). The \[LCI] programs are variants of the one [`Workload`]:
//! ASP, QR and the FFT all-to-all are the same variants on every stack,
//! the broadcast benchmark ([`Workload::BcastBench`]) and the DSM
//! ([`Workload::Dsm`]) those of the one stack that offers what they need
//! (`config::stack`). The per-element program costs are
//! `workload.*_cycles` on every stack.

use super::Int;
use crate::time::Duration;
use crate::tree::Tree;
use serde::{Deserialize, Serialize};

/// The most ranks a run may have: frames, events, the protocol and the
/// multicast tag name a rank in 16 bits, and the last value means "no rank".
pub const MAX_RANKS: u32 = u16::MAX as u32;

/// The workload.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadOpts {
    /// Required: pingpong | stream | uniband | flood | nas-is | nas-cg |
    /// nas-mg | nas-ft | nas-bt | nas-ep | nas-lu | nas-sp | alltoall | exchange | bcast | asp | qr |
    /// fft-alltoall | echo-nic | echo-kernel | dsm (each stack runs the
    /// kinds it offers, `config::Stack::offers`).
    pub kind: Option<WorkloadKind>,
    /// Message size in bytes (0 ..= 2^30; default 0).
    pub size_bytes: Option<Int>,
    /// pingpong, echo-*: timed round trips (default 1000); alltoall,
    /// exchange, bcast: timed repetitions (default 100); nas-is: timed
    /// iterations (default 10); asp and qr: the matrix's first iterations
    /// (default all, a quarter); fft-alltoall: iterations (default 5). On
    /// the LCI stack, bcast: the broadcasts sent one at a time (default 20).
    pub iterations: Option<Int>,
    /// Untimed messages or round trips first (default 100 for pingpong and
    /// echo-*, 10 for alltoall and exchange, 1000 otherwise; 10 on the LCI
    /// stack).
    pub warmup: Option<Int>,
    /// stream, uniband: timed messages (default 20000; the LCI stack's
    /// stream 1000).
    pub messages: Option<Int>,
    /// stream: requests the sender and the receiver keep outstanding;
    /// uniband: messages per window, each window answered by a 1-byte ack
    /// (IMB Uniband). Default 64 for both.
    pub window: Option<Int>,
    /// flood: invalid packets sent (default 20000).
    pub packets: Option<Int>,
    /// flood: gap between packets in ns (default 2000).
    pub gap_ns: Option<f64>,
    /// flood: bytes per packet (default 128).
    pub packet_bytes: Option<Int>,
    /// NAS class: S | A | B (default) | C; the other NAS kinds have B and C only.
    pub class: Option<NasClass>,
    /// nas-*, alltoall, exchange, bcast: processes per host (default: one
    /// per core).
    pub procs_per_host: Option<Int>,
    /// alltoall: MPI_Alltoall's algorithm, auto (default) | linear |
    /// pairwise | bruck. `auto` is Open MPI's `tuned` decision (1.2.6 and
    /// 1.3.0 `ompi_coll_tuned_alltoall_intra_dec_fixed`): Bruck below
    /// 200 B a block with more than 12 ranks, linear below 3,000 B,
    /// pairwise from 3,000 B and with 2 ranks
    /// (`crate::workload::AlltoallAlgorithm`).
    pub alltoall_algorithm: Option<crate::workload::AlltoallAlgorithm>,
    /// bcast, asp, qr: the spanning tree of each root: binary (default,
    /// \[LCI]'s) | binomial | chain.
    pub tree: Option<Tree>,
    /// bcast, asp, qr: who forwards down the tree: host (default;
    /// point-to-point sends) | ni (the NIC firmware, \[LCI] §4.2; needs
    /// `nic.multicast_forwarding = true`, eager messages of at most
    /// `protocol.rndv_threshold` bytes, forwarded frame by frame, and
    /// `protocol.loss = 0`).
    pub forwarding: Option<BcastForwarding>,
    /// asp: matrix rows = columns, a multiple of the ranks (default 1024:
    /// 4 KB rows of 32-bit distances).
    pub rows: Option<Int>,
    /// qr: matrix columns = rows, a multiple of the ranks (default 512).
    pub cols: Option<Int>,
    /// asp: host cycles per element update of the Floyd-Warshall inner
    /// loop, at `host.clock_ghz` (default 6: \[estimate] two loads, an add,
    /// a compare, a branch and a conditional store on 32-bit integers, the
    /// row streaming through the L1 cache of \[LCI]'s 200 MHz Pentium Pro).
    pub elem_cycles: Option<f64>,
    /// qr: host cycles per element of a column norm (default 4:
    /// \[estimate] one double multiply-add and its load on the Pentium
    /// Pro's x87, FMUL every 2 cycles).
    pub norm_cycles: Option<f64>,
    /// qr: host cycles per element of the Householder update (default 8:
    /// \[estimate] a dot product and an axpy, two multiply-adds per element
    /// with a load and a store).
    pub update_cycles: Option<f64>,
    /// fft-alltoall: compute per iteration and rank, us (default: the
    /// FFT's 5 N log2 N / ranks flops at the `nas` table's rate, N the
    /// complex points whose transpose sends `size_bytes` to each rank; on
    /// the LCI stack 65000, \[LCI]'s 2D FFT of 2^20 points on 16 processes).
    pub compute_us: Option<f64>,
    /// LCI stack, stream and pingpong: the sending host (default 0).
    pub src: Option<Int>,
    /// LCI stack, stream and pingpong: the receiving host (default 1).
    pub dst: Option<Int>,
    /// LCI stack, bcast: the broadcasting host (default 0).
    pub root: Option<Int>,
    /// LCI stack, bcast: broadcasts sent back to back for the throughput,
    /// after the `iterations` sent one at a time (default 100).
    pub count: Option<Int>,
    /// LCI stack, dsm: the application mix, barnes (default) | fft | radix.
    pub mix: Option<Mix>,
    /// LCI stack, dsm and fft-alltoall: processes, one per host on hosts
    /// 0 .. procs - 1 (default 16).
    pub procs: Option<Int>,
    /// LCI stack, dsm: shared-region operations per process (default 200).
    pub operations: Option<Int>,
}

/// `workload.mix`: the DSM application mixes of the LCI stack (`crate::lci::dsm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mix {
    /// Barnes-Hut: fine-grained, read-mostly (default).
    #[default]
    Barnes,
    /// FFT: coarse-grained transposes.
    Fft,
    /// Radix: all-to-all permutation with write sharing.
    Radix,
}

impl std::fmt::Display for Mix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mix::Barnes => "barnes",
            Mix::Fft => "fft",
            Mix::Radix => "radix",
        })
    }
}

/// `workload.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// omx_perf / IMB PingPong between host 0 and host 1.
    Pingpong,
    /// Unidirectional stream from host 0 to host 1.
    Stream,
    /// IMB Uniband: windows of messages, each answered by a 1-byte ack.
    Uniband,
    /// Invalid-packet flood into host 1.
    Flood,
    /// NAS IS skeleton.
    NasIs,
    /// NAS CG skeleton.
    NasCg,
    /// NAS MG skeleton.
    NasMg,
    /// NAS FT skeleton.
    NasFt,
    /// NAS BT skeleton.
    NasBt,
    /// NAS EP skeleton.
    NasEp,
    /// NAS LU skeleton.
    NasLu,
    /// NAS SP skeleton.
    NasSp,
    /// IMB Alltoall.
    Alltoall,
    /// IMB Exchange: each rank with its two neighbours of a periodic chain.
    Exchange,
    /// A broadcast from rank 0 down a spanning tree, forwarded by the hosts
    /// or by the NICs (\[LCI] §4), each followed by an ack up the tree.
    Bcast,
    /// \[LCI] §4.3 ASP: all-pairs shortest paths, each iteration's row
    /// broadcast by its owner down its own tree.
    Asp,
    /// \[LCI] §4.3 QR factorisation: per iteration a reduce-to-all of the
    /// column norms and the pivot column's broadcast.
    Qr,
    /// \[LCI] §5.2's FFT all-to-all: a transpose overlapped with the
    /// compute, one block sent after each compute chunk.
    FftAlltoall,
    /// \[EMO] echo server in host 1's NIC firmware.
    EchoNic,
    /// \[EMO] echo server in host 1's kernel.
    EchoKernel,
    /// \[LCI] CRL-like DSM request/reply mix: a program of the LCI stack
    /// only, whose requests are answered from its upcalls (`config::stack`).
    Dsm,
}

/// `workload.class`: the NPB problem class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
pub enum NasClass {
    S,
    A,
    #[default]
    B,
    C,
}

/// The workload of a scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Workload {
    /// omx_perf / IMB PingPong between the hosts `pair` (Open-MX: host 0
    /// and host 1; the LCI stack: `workload.src` and `workload.dst`).
    PingPong { size: u64, iterations: u64, warmup: u64, pair: [u32; 2] },
    /// Unidirectional stream from host `pair[0]` to host `pair[1]`
    /// (receiver-side rate), `window` sends and receives outstanding on
    /// each side (the LCI stack: 1, every message is in its library once
    /// sent).
    Stream { size: u64, messages: u64, warmup: u64, window: u32, pair: [u32; 2] },
    /// IMB Uniband from host 0 to host 1: windows of `window` messages, each
    /// answered by a 1-byte ack (receiver-side rate).
    Uniband { size: u64, messages: u64, warmup: u64, window: u32 },
    /// Invalid-packet flood into host 1 (dropped by the receive handler).
    Flood { packets: u64, gap: Duration, packet_bytes: u32 },
    /// NAS IS skeleton: `keys` in total over all ranks, `iterations` timed
    /// (plus one untimed, as NPB does), `per_host` ranks on each host;
    /// compute per iteration and rank `before` and `after` the key exchange
    /// (NPB's work at the rates of `platform.nas`).
    NasIs { keys: u64, iterations: u64, per_host: u32, before: Duration, after: Duration },
    /// NAS CG, MG, FT, BT, SP, LU or EP skeleton (class B or C), `per_host`
    /// ranks per host; `compute` per iteration and rank (NPB's work at the
    /// `rates` of `platform.nas`, which LU's phases are split by).
    NasKernel {
        kernel: crate::workload::NasKernel,
        class_c: bool,
        per_host: u32,
        compute: Duration,
        rates: crate::workload::NasRates,
    },
    /// IMB Alltoall: `size` bytes to every other rank, `iterations` timed
    /// repetitions after `warmup`, `per_host` ranks on each host, each
    /// repetition one MPI_Alltoall run with `algorithm` (never `Auto`: the
    /// `tuned` decision's for the size and the ranks, resolved when the
    /// workload is read).
    Alltoall { size: u64, iterations: u64, warmup: u64, per_host: u32, algorithm: crate::workload::AlltoallAlgorithm },
    /// IMB Exchange: `size` bytes to each neighbour of a periodic chain of
    /// ranks (rank - 1 and rank + 1, mod the rank count) and from each,
    /// `iterations` timed repetitions after `warmup`, `per_host` ranks on
    /// each host.
    Exchange { size: u64, iterations: u64, warmup: u64, per_host: u32 },
    /// A broadcast of `size` bytes from rank 0 down `tree`, forwarded by
    /// the hosts or the NICs (`forwarding`), then a 0-byte ack from every
    /// rank up the same tree (which paces the repetitions); `iterations`
    /// timed after `warmup`, `per_host` ranks on each host.
    Bcast { size: u64, iterations: u64, warmup: u64, per_host: u32, tree: Tree, forwarding: BcastForwarding },
    /// \[LCI]'s broadcast benchmark (`workload.kind = "bcast"` on the LCI
    /// stack, `crate::workload::bcast_bench_ops`): `root` broadcasts `size`
    /// bytes down its `tree` to every host, `iterations` one at a time
    /// (latency to the last receiver), then `count` back to back (sender
    /// throughput). It needs a library that knows when the last receiver
    /// has a message (`Op::WaitDelivered`).
    BcastBench { root: u32, size: u64, iterations: u32, count: u32, tree: Tree },
    /// \[LCI] ASP over a `rows` x `rows` matrix of `rows / ranks` rows per
    /// rank, the first `iterations` iterations: iteration `k` needs row `k`,
    /// which its owner broadcasts down its own `tree` once it has updated
    /// it; every rank then updates its rows (`elem_ps` per element). On
    /// the LCI stack one rank per host, the `nic.fanout`-ary tree, and
    /// `forwarding = Ni`: the library multicasts (`Op::Mcast`) and its
    /// forwarding scheme (`nic.forwarding`) carries the broadcast.
    Asp { rows: u32, iterations: u32, per_host: u32, elem_ps: u64, tree: Tree, forwarding: BcastForwarding },
    /// \[LCI] QR of a `cols` x `cols` matrix, columns cyclic over the ranks,
    /// the first `iterations` iterations: column norms (`norm_ps` per
    /// element), a reduce of the maximum up rank 0's tree and its
    /// broadcast back, the Householder vector at the pivot column's owner
    /// and its broadcast down the owner's tree, the update (`update_ps`).
    /// On the LCI stack as ASP.
    Qr {
        cols: u32,
        iterations: u32,
        per_host: u32,
        norm_ps: u64,
        update_ps: u64,
        tree: Tree,
        forwarding: BcastForwarding,
    },
    /// \[LCI] FFT all-to-all of `ranks` ranks, `per_host` on each host (the
    /// LCI stack: one on each of hosts `0 .. workload.procs`): per
    /// iteration each rank posts a receive from any rank for each block,
    /// computes `compute` in `ranks - 1` chunks (each within +-20 % of its
    /// share, seeded, `crate::workload::FftAlltoall`) and sends one `block`
    /// after each to the next rank in rotation, then waits for all;
    /// `iterations` timed.
    FftAlltoall { block: u64, iterations: u64, per_host: u32, ranks: u32, compute: Duration },
    /// \[LCI] CRL-like DSM request/reply mix of `mix` on hosts `0 ..
    /// procs`, `operations` shared-region operations per process
    /// (`crate::lci::dsm`). It needs a library that answers a request from
    /// the upcall of its last packet.
    Dsm { mix: Mix, procs: u32, operations: u64 },
    /// \[EMO] echo: the application on host 0 ping-pongs with an echo server
    /// that runs in host 1's NIC firmware or in host 1's kernel (no copy to
    /// user space). Metrics as for `PingPong`.
    Echo { at: EchoAt, size: u64, iterations: u64, warmup: u64 },
    /// A captured trace replayed into one host's NIC (`sim::run_replay`,
    /// which gives the frames; no scenario file names this kind).
    Replay,
}

/// Where the \[EMO] echo server runs on host 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EchoAt {
    /// In the NIC firmware: no DMA to the host, no interrupt.
    Nic,
    /// In the kernel receive handler (bottom half): no copy to user space.
    Kernel,
}

/// `workload.forwarding`: who forwards a broadcast down its tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BcastForwarding {
    /// `host` (default): each rank receives the message and sends it on to
    /// its children with point-to-point sends (\[LCI] §4.1, MPICH's way).
    #[default]
    Host,
    /// `ni`: the root hands one multicast frame to its NIC; every NIC on
    /// the tree forwards it from its receive buffer and delivers it
    /// (\[LCI] §4.2). Needs `nic.multicast_forwarding = true`.
    Ni,
}

#[cfg(test)]
mod tests {
    use crate::Scenario;

    #[test]
    fn one_table_for_every_stack_refuses_the_other_stacks_keys_by_kind() {
        // Every stack reads the one `[workload]` table; a key of the other
        // stack is refused in one line naming the kind's own keys.
        let err = |text: &str| Scenario::from_toml(text).unwrap_err().0;
        let omx = err("preset = \"omx2009\"\n[workload]\nkind = \"bcast\"\nroot = 3\n");
        assert!(omx.starts_with("`workload.root` = 3 is not read by workload.kind = \"bcast\" (its keys: "), "{omx}");
        assert!(!omx.contains('\n'), "{omx}");
        let lci = err(
            "preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n[workload]\nkind = \"bcast\"\nprocs_per_host = 2\n",
        );
        assert_eq!(
            lci,
            "`workload.procs_per_host` = 2 is not read by workload.kind = \"bcast\" (its keys: size_bytes, root, \
             iterations, count)"
        );
        // A shared key means the same on both: the broadcast's payload.
        for text in [
            "preset = \"omx2009\"\n[workload]\nkind = \"bcast\"\nsize_bytes = 64\n",
            "preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n[workload]\nkind = \"bcast\"\nsize_bytes = 64\n",
        ] {
            assert!(Scenario::from_toml(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn the_lci_programs_are_the_one_workload_read_once_with_their_costs_in_the_workload_table() {
        use crate::config::Workload;
        let lci = |w: &str| {
            let s = Scenario::from_toml(&format!("preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n[workload]\n{w}"))
                .unwrap();
            assert!(s.lci.is_some(), "the LCI stack's part: {w}");
            s.workload
        };
        // ASP's compute per element at the 200 MHz clock: 6 cycles (the
        // default) = 30 ns, and what `workload.elem_cycles` says, as on Open-MX.
        let elem_ps = |w| match w {
            Workload::Asp { elem_ps, per_host: 1, tree: crate::tree::Tree::Kary(2), .. } => elem_ps,
            other => panic!("{other:?}"),
        };
        assert_eq!(elem_ps(lci("kind = \"asp\"\n")), 30_000);
        assert_eq!(elem_ps(lci("kind = \"asp\"\nelem_cycles = 12\n")), 60_000);
        let omx =
            Scenario::from_toml("preset = \"lci2000\"\n[protocol]\nstack = \"open-mx\"\n[workload]\nkind = \"asp\"\n")
                .unwrap();
        assert!(matches!(omx.workload, Workload::Asp { elem_ps: 30_000, .. }), "{:?}", omx.workload);
        match lci("kind = \"qr\"\nnorm_cycles = 2\nupdate_cycles = 3\n") {
            Workload::Qr { norm_ps: 10_000, update_ps: 15_000, .. } => {}
            other => panic!("{other:?}"),
        }
        // The programs only the LCI stack offers are variants of the same enum.
        assert!(matches!(lci("kind = \"bcast\"\nroot = 3\n"), Workload::BcastBench { root: 3, .. }));
        assert!(matches!(lci("kind = \"dsm\"\nprocs = 4\n"), Workload::Dsm { procs: 4, .. }));
        assert!(matches!(
            lci("kind = \"stream\"\nsrc = 5\ndst = 2\n"),
            Workload::Stream { pair: [5, 2], window: 1, messages: 1000, warmup: 10, .. }
        ));
        assert!(matches!(
            lci("kind = \"fft-alltoall\"\nprocs = 8\n"),
            Workload::FftAlltoall { ranks: 8, per_host: 1, .. }
        ));
    }

    #[test]
    fn the_alltoall_runs_the_tuned_decisions_algorithm_for_its_size_and_ranks_unless_one_is_named() {
        use crate::workload::AlltoallAlgorithm::{self, Bruck, Linear, Pairwise};
        // `omx2009`: 2 hosts.
        let alg = |per_host: u32, size: u64, named: &str| -> AlltoallAlgorithm {
            let text = format!(
                "preset = \"omx2009\"\n[workload]\nkind = \"alltoall\"\nprocs_per_host = {per_host}\n\
                 size_bytes = {size}\n{named}"
            );
            match Scenario::from_toml(&text).unwrap().workload {
                crate::config::Workload::Alltoall { algorithm, .. } => algorithm,
                other => panic!("{other:?}"),
            }
        };
        // 16 ranks: [OMX-MQ]'s IMB Alltoall.
        assert_eq!([alg(8, 1, ""), alg(8, 256, ""), alg(8, 4096, "")], [Bruck, Linear, Pairwise]);
        // 12 ranks take no Bruck; 2 ranks exchange once.
        assert_eq!([alg(6, 1, ""), alg(1, 1, "")], [Linear, Pairwise]);
        assert_eq!(alg(8, 1, "alltoall_algorithm = \"auto\"\n"), Bruck);
        assert_eq!(alg(8, 4096, "alltoall_algorithm = \"linear\"\n"), Linear);
        assert_eq!(alg(8, 4096, "alltoall_algorithm = \"bruck\"\n"), Bruck);
    }

    #[test]
    fn a_program_cost_in_the_lci_table_is_refused_naming_its_workload_key() {
        for (old, new) in [
            ("asp_elem_cycles", "`workload.elem_cycles`"),
            ("qr_norm_cycles", "`workload.norm_cycles`"),
            ("qr_update_cycles", "`workload.update_cycles`"),
        ] {
            let text = format!("preset = \"lci2000\"\n[platform.lci]\n{old} = 6\n[workload]\nkind = \"qr\"\n");
            let e = Scenario::from_toml(&text).unwrap_err().0;
            assert!(e.starts_with(&format!("`platform.lci.{old}` = 6 is no key of a platform: ")), "{e}");
            assert!(e.contains(new) && !e.contains('\n'), "{e}");
            // The earlier shape's `[multicast]` names the same place.
            let text = text.replace("[platform.lci]", "[platform.multicast]");
            let e = Scenario::from_toml(&text).unwrap_err().0;
            assert!(e.contains(&format!("`platform.multicast.{old}`")) && e.contains(new), "{e}");
        }
    }
}
