//! The \[LCI] study's applications, written once: a broadcast from any
//! root down its own tree, ASP and QR (\[LCI] §4.3) and the FFT all-to-all
//! of the timers study (§5.2). This module owns what each program is made
//! of (who owns a row or a column, how many bytes each broadcast carries,
//! how many elements each compute step covers, how an FFT chunk's compute
//! is drawn: [`asp_owner`], [`asp_row_bytes`], [`asp_update_elems`],
//! [`qr_local_cols`], [`qr_norm_elems`], [`qr_house_elems`],
//! [`qr_update_elems`], [`qr_column_bytes`], [`QR_REDUCE_BYTES`],
//! [`fft_chunk`], [`process_rng`]) and the operations each rank runs
//! ([`bcast_from`], [`asp_ops`], [`qr_ops`], the program
//! [`FftAlltoall`], and the broadcast benchmark of \[LCI]'s multicast
//! study, [`bcast_bench_ops`]). Every library runs them in one shape (but
//! the broadcast benchmark, whose wait for the last receiver the Open-MX
//! library does not offer); ASP and QR take the broadcast's carrier as an
//! argument (`ni = true`: the library multicasts, [`Op::Mcast`], as the
//! LCI stack's user-level library does, `crate::lci::process`, whose
//! forwarding scheme carries it). It prices nothing (the library and
//! `crate::config::Workload`'s compute do).

use super::{tag, Body, Label, Op, Program};
use crate::engine::SimRng;
use crate::nic::multicast::Tree;
use crate::time::Duration;

/// A broadcast of `size` bytes with `tag` from `root` down its own
/// `tree`, for `rank` of `n`: with host forwarding (`ni = false`) the
/// root sends to its children and every other rank receives from its
/// parent, waits for the data and sends it on to its children; with NI
/// forwarding the root multicasts the data ([`Op::Mcast`]) and the others
/// receive it from the root and wait for it. Either way a rank has the
/// data before its next operation. The sends to children are left
/// outstanding.
pub fn bcast_from(ops: &mut Body, root: u32, rank: u32, n: u32, size: u64, tag: u64, tree: Tree, ni: bool) {
    use crate::nic::multicast::{children, parent};
    if ni {
        if rank == root {
            ops.push(Op::Mcast { size, tag });
        } else {
            ops.push(Op::Recv { src: Some(root), size, tag });
            ops.push(Op::WaitOutstanding(0));
        }
        return;
    }
    if let Some(p) = parent(tree, n, root, rank) {
        ops.push(Op::Recv { src: Some(p), size, tag });
        ops.push(Op::WaitOutstanding(0));
    }
    for c in children(tree, n, root, rank) {
        ops.push(Op::Send { peer: c, size, tag });
    }
}

/// The \[LCI] broadcast benchmark (SPEC §3) for `rank` of `n`, in the
/// library-forwarded shape of [`bcast_from`]: `root` broadcasts `size`
/// bytes `iterations` times one at a time, each once the last receiver
/// has the previous one ([`Op::WaitDelivered`]: latency to the last
/// receiver), then `count` back to back (sender throughput). Broadcast `i`
/// has tag `tag::LCI_BCAST + i`. The root marks the start when the last
/// receiver has the last of the one-at-a-time broadcasts (time zero
/// without any), the end when it has the last of all.
#[allow(clippy::too_many_arguments)]
pub fn bcast_bench_ops(
    ops: &mut Body,
    root: u32,
    rank: u32,
    n: u32,
    size: u64,
    (iterations, count): (u32, u32),
    tree: Tree,
) {
    let tag = |i: u32| tag::LCI_BCAST + i as u64;
    let root_marks = |ops: &mut Body, label| {
        if rank == root {
            ops.push(Op::Mark(label));
        }
    };
    for i in 0..iterations + count {
        if i == iterations {
            root_marks(ops, Label::Start);
        }
        bcast_from(ops, root, rank, n, size, tag(i), tree, true);
        if rank == root && (i < iterations || i + 1 == iterations + count) {
            ops.push(Op::WaitDelivered { tag: tag(i) });
        }
    }
    if count == 0 {
        root_marks(ops, Label::Start);
    }
    root_marks(ops, Label::End);
}

/// The whole \[LCI] ASP program of `rank` of `n` (`crate::config::Workload::Asp`):
/// `rows / n` rows per rank; iteration `k`'s row is broadcast by its owner
/// (`k / (rows / n)`, after its update of iteration `k - 1`) down the
/// owner's tree ([`bcast_from`]), then each rank updates its rows (`rows /
/// n` x `rows` elements of `elem_ps`). One `Mark` pair around it all.
pub fn asp_ops(ops: &mut Body, rank: u32, n: u32, rows: u32, iterations: u32, elem_ps: u64, tree: Tree, ni: bool) {
    let update = Duration::from_ps(elem_ps.saturating_mul(asp_update_elems(n, rows)));
    ops.push(Op::Mark(Label::Start));
    for k in 0..iterations {
        bcast_from(ops, asp_owner(n, rows, k), rank, n, asp_row_bytes(rows), tag::ASP + k as u64, tree, ni);
        ops.push(Op::Compute(update));
    }
    ops.push(Op::WaitOutstanding(0));
    ops.push(Op::Mark(Label::End));
}

/// ASP over `rows` rows on `n` ranks (`rows` a multiple of `n`): the rows
/// each rank owns, a block of consecutive ones (rank `r` owns rows from
/// `r * asp_rows_per(n, rows)`).
pub fn asp_rows_per(n: u32, rows: u32) -> u32 {
    rows / n
}

/// The rank that owns ASP row `row`, which broadcasts it for iteration `row`.
pub fn asp_owner(n: u32, rows: u32, row: u32) -> u32 {
    row / asp_rows_per(n, rows)
}

/// Bytes of an ASP row: `rows` 32-bit distances.
pub fn asp_row_bytes(rows: u32) -> u64 {
    4 * rows as u64
}

/// Elements a rank updates per ASP iteration: its `rows / n` rows of
/// `rows` elements.
pub fn asp_update_elems(n: u32, rows: u32) -> u64 {
    asp_rows_per(n, rows) as u64 * rows as u64
}

/// Bytes of QR's reduce-to-all value: a double and a 32-bit column index
/// (the pivot search's largest column norm).
pub const QR_REDUCE_BYTES: u64 = 12;

/// Columns `j >= from` of `cols` that `rank` of `n` owns (cyclic).
pub fn qr_local_cols(n: u32, cols: u32, rank: u32, from: u32) -> u64 {
    let upto = |end: u32| if end > rank { ((end - rank - 1) / n + 1) as u64 } else { 0 };
    upto(cols) - upto(from)
}

/// The rank that owns QR column `k` (cyclic), which computes iteration
/// `k`'s Householder vector and broadcasts it.
pub fn qr_owner(n: u32, k: u32) -> u32 {
    k % n
}

/// Elements of QR iteration `k`'s column norms at `rank`: its columns from
/// `k`, each `cols - k` long below the diagonal.
pub fn qr_norm_elems(n: u32, cols: u32, rank: u32, k: u32) -> u64 {
    qr_local_cols(n, cols, rank, k) * (cols - k) as u64
}

/// Elements of QR iteration `k`'s Householder vector at the pivot
/// column's owner (`k mod n`): two passes (norm, scale) over the column.
pub fn qr_house_elems(cols: u32, k: u32) -> u64 {
    2 * (cols - k) as u64
}

/// Elements of QR iteration `k`'s update at `rank`: the reflection applied
/// to its columns after `k`.
pub fn qr_update_elems(n: u32, cols: u32, rank: u32, k: u32) -> u64 {
    qr_local_cols(n, cols, rank, k + 1) * (cols - k) as u64
}

/// Bytes of QR iteration `k`'s pivot column: `cols - k` doubles.
pub fn qr_column_bytes(cols: u32, k: u32) -> u64 {
    8 * (cols - k) as u64
}

/// The whole \[LCI] QR program of `rank` of `n` (`crate::config::Workload::Qr`),
/// columns cyclic over the ranks. Iteration `k`: the norms of its columns
/// from `k` (`norm_ps` per element of the `cols - k` below the diagonal);
/// the maximum reduced up rank 0's tree and broadcast back from rank 0
/// (reduce-to-all); the owner of column `k` computes the Householder vector
/// (two passes over the column) and broadcasts it (`8 (cols - k)` bytes)
/// down its own tree; every rank applies it to its columns after `k`
/// (`update_ps` per element). One `Mark` pair around it all.
#[allow(clippy::too_many_arguments)]
pub fn qr_ops(
    ops: &mut Body,
    rank: u32,
    n: u32,
    cols: u32,
    iterations: u32,
    (norm_ps, update_ps): (u64, u64),
    tree: Tree,
    ni: bool,
) {
    use crate::nic::multicast::{children, parent};
    let kids: Vec<u32> = children(tree, n, 0, rank).collect();
    let up = parent(tree, n, 0, rank);
    ops.push(Op::Mark(Label::Start));
    for k in 0..iterations {
        ops.push(Op::Compute(Duration::from_ps(norm_ps.saturating_mul(qr_norm_elems(n, cols, rank, k)))));
        let t = k as u64;
        for &c in &kids {
            ops.push(Op::Recv { src: Some(c), size: QR_REDUCE_BYTES, tag: tag::QR_REDUCE + t });
        }
        ops.push(Op::WaitOutstanding(0));
        if let Some(p) = up {
            ops.push(Op::Send { peer: p, size: QR_REDUCE_BYTES, tag: tag::QR_REDUCE + t });
        }
        bcast_from(ops, 0, rank, n, QR_REDUCE_BYTES, tag::QR_RESULT + t, tree, ni);
        ops.push(Op::WaitOutstanding(0));
        let owner = qr_owner(n, k);
        if rank == owner {
            ops.push(Op::Compute(Duration::from_ps(update_ps.saturating_mul(qr_house_elems(cols, k)))));
        }
        bcast_from(ops, owner, rank, n, qr_column_bytes(cols, k), tag::QR_COLUMN + t, tree, ni);
        ops.push(Op::Compute(Duration::from_ps(update_ps.saturating_mul(qr_update_elems(n, cols, rank, k)))));
    }
    ops.push(Op::WaitOutstanding(0));
    ops.push(Op::Mark(Label::End));
}

/// The compute of an FFT all-to-all iteration varies per chunk by up to
/// this fraction either way (\[estimate]: load imbalance and cache effects
/// skew the ranks so that some compute while others send).
pub const FFT_COMPUTE_JITTER: f64 = 0.2;

/// The random stream of process `rank` of a program seeded `seed` (the FFT
/// all-to-all's chunk times, the LCI stack's DSM): one per process, so
/// that what a process draws does not depend on the order in which the
/// processes happen to draw.
pub fn process_rng(seed: u64, rank: u32) -> SimRng {
    SimRng::new(seed ^ (u64::from(rank) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// One chunk of an FFT all-to-all iteration of `compute` on `n` ranks:
/// its `1 / (n - 1)` share times `1 +- FFT_COMPUTE_JITTER`, drawn from
/// `rng` (one draw per chunk).
pub fn fft_chunk(compute: Duration, n: u32, rng: &mut SimRng) -> Duration {
    let f = 1.0 + FFT_COMPUTE_JITTER * (2.0 * rng.unit() - 1.0);
    Duration::from_ns_f64(compute.as_ns_f64() / (n - 1) as f64 * f)
}

/// The \[LCI] FFT all-to-all of `rank` of `n` (at least 2), the one shape
/// every library runs (`Program::FftAlltoall`): a start mark; `iterations`
/// times, a receive posted from any rank for each of the `n - 1` blocks of
/// the iteration, then `n - 1` chunks of the iteration's `compute`, each
/// followed by the send of one `block` to the next rank in rotation
/// (`rank + 1`, `rank + 2`, ...: the transpose overlapped with the
/// butterflies), then a wait for all; an end mark. Chunk `j` takes its
/// share of `compute` times `1 +- FFT_COMPUTE_JITTER`, drawn from the
/// rank's own stream ([`process_rng`]) when the program reaches it, so the
/// chunk times differ from one iteration to the next and the program
/// holds one iteration's position, not its operations.
#[derive(Clone, Debug)]
pub struct FftAlltoall {
    rank: u32,
    n: u32,
    block: u64,
    compute: Duration,
    iterations: u64,
    /// The iteration, and the operation within it (`0 .. 3 (n - 1) + 1`).
    iter: u64,
    at: u32,
    /// 0 before the start mark, 1 running, 2 after the end mark.
    phase: u8,
    rng: SimRng,
}

impl FftAlltoall {
    /// The program of `rank` of `n` in a run seeded `seed`.
    pub fn new(rank: u32, n: u32, block: u64, compute: Duration, iterations: u64, seed: u64) -> Self {
        debug_assert!(n >= 2 && rank < n);
        let rng = process_rng(seed, rank);
        FftAlltoall { rank, n, block, compute, iterations, iter: 0, at: 0, phase: 0, rng }
    }

    /// The next operation.
    pub fn next_op(&mut self) -> Op {
        let (n, block) = (self.n, self.block);
        match self.phase {
            0 => {
                self.phase = 1;
                return Op::Mark(Label::Start);
            }
            1 if self.iter == self.iterations => {
                self.phase = 2;
                return Op::Mark(Label::End);
            }
            1 => {}
            _ => return Op::Done,
        }
        let at = self.at;
        self.at += 1;
        if at < n - 1 {
            return Op::Recv { src: None, size: block, tag: tag::FFT };
        }
        let q = at - (n - 1);
        if q < 2 * (n - 1) {
            return match q % 2 {
                0 => Op::Compute(fft_chunk(self.compute, n, &mut self.rng)),
                _ => Op::Send { peer: (self.rank + q / 2 + 1) % n, size: block, tag: tag::FFT },
            };
        }
        self.at = 0;
        self.iter += 1;
        Op::WaitOutstanding(0)
    }
}

impl Program {
    /// [`FftAlltoall`] of `rank` of `n`.
    pub fn fft_alltoall(rank: u32, n: u32, block: u64, compute: Duration, iterations: u64, seed: u64) -> Self {
        Program::FftAlltoall(Box::new(FftAlltoall::new(rank, n, block, compute, iterations, seed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message of `body_of(rank)` over `n` ranks: each send has one
    /// receive at its peer with the same source and tag and vice versa, and
    /// each multicast one receive at every other rank. Returns the sends
    /// (point to point, and multicast copies) per tag.
    fn matched(n: u32, body_of: impl Fn(u32) -> Body) -> std::collections::BTreeMap<u64, u64> {
        use std::collections::BTreeMap;
        let (mut sent, mut recvd) = (BTreeMap::new(), BTreeMap::new());
        let mut per_tag = BTreeMap::new();
        for r in 0..n {
            for op in body_of(r).ops() {
                match op {
                    Op::Send { peer, tag, size } => {
                        *sent.entry((r, peer, tag, size)).or_insert(0) += 1;
                        *per_tag.entry(tag).or_insert(0) += 1;
                    }
                    Op::Mcast { tag, size } => {
                        for d in (0..n).filter(|&d| d != r) {
                            *sent.entry((r, d, tag, size)).or_insert(0) += 1;
                        }
                        *per_tag.entry(tag).or_insert(0) += n as u64 - 1;
                    }
                    Op::Recv { src, tag, size } => {
                        *recvd.entry((src.expect("named source"), r, tag, size)).or_insert(0) += 1;
                    }
                    _ => {}
                }
            }
        }
        assert_eq!(sent, recvd, "every send has its receive");
        per_tag
    }

    #[test]
    fn asp_broadcasts_each_row_from_its_owner_to_every_rank_once() {
        use crate::nic::multicast::Tree;
        for (n, rows, ni) in [(8, 64, false), (8, 32, true), (5, 20, false), (7, 28, true)] {
            for tree in [Tree::Binary, Tree::Binomial, Tree::Chain] {
                let iterations = rows / 2;
                let per_tag = matched(n, |r| {
                    let mut b = Body::new();
                    asp_ops(&mut b, r, n, rows, iterations, 1000, tree, ni);
                    b
                });
                // One copy per receiving rank of every row, whoever forwards.
                assert_eq!(per_tag.len() as u32, iterations, "{n} {tree:?} {ni}");
                assert!(per_tag.values().all(|&c| c == n as u64 - 1), "{n} {tree:?} {ni}: {per_tag:?}");
            }
            // The owner of row k (k / (rows / n)) sends it first.
            let mut b = Body::new();
            asp_ops(&mut b, 1, n, rows, rows, 1000, Tree::Binary, ni);
            let first = b.ops().find(
                |o| matches!(o, Op::Send { tag, .. } | Op::Mcast { tag, .. } if *tag == tag::ASP + (rows / n) as u64),
            );
            assert!(first.is_some(), "rank 1 owns row {}", rows / n);
        }
    }

    #[test]
    fn the_broadcast_benchmark_reaches_every_rank_and_waits_for_the_last_only_where_timed() {
        use crate::nic::multicast::Tree;
        for (n, root, iterations, count) in [(8, 0, 3, 2), (5, 4, 0, 3), (6, 2, 2, 0)] {
            let body = |r| {
                let mut b = Body::new();
                bcast_bench_ops(&mut b, root, r, n, 100, (iterations, count), Tree::Kary(2));
                b
            };
            // Every broadcast from the root reaches every other rank once.
            let per_tag = matched(n, body);
            assert_eq!(per_tag.len() as u32, iterations + count);
            assert!(per_tag.values().all(|&c| c == n as u64 - 1), "{per_tag:?}");
            // The root waits for each one-at-a-time broadcast and for the
            // last back-to-back one; the start mark between the two phases.
            let ops: Vec<Op> = body(root).ops().collect();
            let waits: Vec<u64> =
                ops.iter().filter_map(|o| if let Op::WaitDelivered { tag } = o { Some(*tag) } else { None }).collect();
            let mut want: Vec<u64> = (0..iterations).map(|i| tag::LCI_BCAST + i as u64).collect();
            if count > 0 {
                want.push(tag::LCI_BCAST + (iterations + count - 1) as u64);
            }
            assert_eq!(waits, want, "{n} {root}");
            let start = ops.iter().position(|o| *o == Op::Mark(Label::Start)).expect("a start mark");
            assert_eq!(ops[..start].iter().filter(|o| matches!(o, Op::Mcast { .. })).count() as u32, iterations);
            assert_eq!(ops.last(), Some(&Op::Mark(Label::End)));
            // The receivers wait for each broadcast and never for a delivery.
            let other: Vec<Op> = body((root + 1) % n).ops().collect();
            assert!(!other.iter().any(|o| matches!(o, Op::WaitDelivered { .. } | Op::Mark(_))));
        }
    }

    #[test]
    fn a_rank_computes_with_a_broadcast_row_or_column_only_once_it_has_it() {
        // As the LCI stack's job: ASP's iteration k updates with row k, QR's
        // update applies column k; with NI forwarding as with host
        // forwarding, each receive of a broadcast is waited for before the
        // next compute.
        use crate::nic::multicast::Tree;
        let (n, dim) = (4, 16);
        for ni in [false, true] {
            for rank in 0..n {
                let (mut asp, mut qr) = (Body::new(), Body::new());
                asp_ops(&mut asp, rank, n, dim, dim, 1000, Tree::Binary, ni);
                qr_ops(&mut qr, rank, n, dim, dim / 2, (1000, 2000), Tree::Binary, ni);
                for body in [asp, qr] {
                    let ops: Vec<Op> = body.ops().collect();
                    for (i, op) in ops.iter().enumerate() {
                        if let Op::Recv { tag, .. } = op {
                            if *tag >= tag::QR_REDUCE && *tag < tag::QR_RESULT {
                                continue; // the reduce's receives are waited for as a group
                            }
                            let next =
                                ops[i + 1..].iter().find(|o| matches!(o, Op::Compute(_) | Op::WaitOutstanding(_)));
                            assert!(matches!(next, Some(Op::WaitOutstanding(0))), "rank {rank} ni {ni} op {i}: {op:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn qr_reduces_up_rank_0s_tree_and_broadcasts_result_and_column() {
        use crate::nic::multicast::Tree;
        for (n, cols, ni) in [(8, 64, false), (8, 16, true), (6, 18, false)] {
            let iterations = cols / 2;
            let per_tag = matched(n, |r| {
                let mut b = Body::new();
                qr_ops(&mut b, r, n, cols, iterations, (1000, 2000), Tree::Binary, ni);
                b
            });
            for k in 0..iterations as u64 {
                // The reduce: one message per rank but the root.
                assert_eq!(per_tag[&(tag::QR_REDUCE + k)], n as u64 - 1);
                assert_eq!(per_tag[&(tag::QR_RESULT + k)], n as u64 - 1);
                assert_eq!(per_tag[&(tag::QR_COLUMN + k)], n as u64 - 1);
            }
        }
        // The compute shrinks with the trailing matrix: rank 0's update of
        // iteration 0 covers more columns than its last.
        let mut b = Body::new();
        qr_ops(&mut b, 0, 4, 16, 12, (1000, 2000), Tree::Binary, false);
        let computes: Vec<_> = b.ops().filter_map(|o| if let Op::Compute(d) = o { Some(d) } else { None }).collect();
        assert!(computes.first() > computes.last(), "{computes:?}");
    }

    #[test]
    fn fft_alltoall_moves_every_block_once_and_its_chunks_add_up_to_the_compute_drawn_anew_each_iteration() {
        for n in [2, 5, 16] {
            let compute = Duration::from_us(1000);
            let ops = |r, seed| {
                let mut p = Program::fft_alltoall(r, n, 4096, compute, 3, seed);
                let mut ops = Vec::new();
                loop {
                    match p.next_op() {
                        Op::Done => break ops,
                        op => ops.push(op),
                    }
                }
            };
            let (mut sent, mut posted) = (vec![0u32; n as usize], vec![0u32; n as usize]);
            for r in 0..n {
                let ops = ops(r, 7);
                assert_eq!((ops.first(), ops.last()), (Some(&Op::Mark(Label::Start)), Some(&Op::Mark(Label::End))));
                let iterations: Vec<&[Op]> = ops[1..ops.len() - 1].chunks(3 * (n as usize - 1) + 1).collect();
                assert_eq!(iterations.len(), 3);
                let mut totals = Vec::new();
                for it in &iterations {
                    // The receives first, from any rank; the wait for all last.
                    let recvs = &it[..n as usize - 1];
                    assert!(recvs.iter().all(|o| *o == Op::Recv { src: None, size: 4096, tag: tag::FFT }));
                    posted[r as usize] += recvs.len() as u32;
                    assert_eq!(it.last(), Some(&Op::WaitOutstanding(0)));
                    // Each chunk is followed by its block to the next rank in rotation.
                    let mut total = 0.0;
                    for (j, pair) in it[n as usize - 1..it.len() - 1].chunks(2).enumerate() {
                        let Op::Compute(d) = pair[0] else { panic!("{pair:?}") };
                        let peer = (r + j as u32 + 1) % n;
                        assert_eq!(pair[1], Op::Send { peer, size: 4096, tag: tag::FFT });
                        sent[peer as usize] += 1;
                        total += d.as_ns_f64();
                    }
                    assert!((total - 1e6).abs() <= 0.2 * 1e6, "{total}");
                    totals.push(total);
                }
                if n > 2 {
                    assert_ne!(totals[0], totals[1], "drawn anew each iteration");
                }
            }
            // Every rank is sent exactly the blocks it posts receives for.
            assert_eq!(sent, posted);
            // Seeded: the same seed draws the same chunks, another seed others.
            assert_eq!(ops(1, 7), ops(1, 7));
            assert_ne!(ops(1, 7), ops(1, 8));
        }
    }
}
