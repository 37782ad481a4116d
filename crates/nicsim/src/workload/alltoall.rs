//! MPI_Alltoall as Open MPI's `tuned` collective component runs it: its
//! three algorithms for an intra-communicator (basic linear, pairwise,
//! Bruck) in the operation vocabulary of the scripts ([`Step`], [`Op`]),
//! and the fixed decision that picks one from the block size and the
//! ranks (`ompi_coll_tuned_alltoall_intra_dec_fixed`).
//!
//! The source is Open MPI 1.2.6 (the version \[OMX-MQ] ran),
//! `ompi/mca/coll/tuned/coll_tuned_alltoall.c` and
//! `coll_tuned_decision_fixed.c`; 1.3.0 (\[OMX-COAL]) has the same
//! decision and the same three algorithms' messages. `tuned` is the
//! default component of both (`ompi_coll_tuned_priority` 30 against
//! `mca_coll_basic_priority` 10) and uses its fixed rules unless
//! `coll_tuned_use_dynamic_rules` is set (default 0).
//!
//! Only the messages are modelled: the local copies (the block a rank
//! keeps, Bruck's rotations and its pack and unpack of each step) are not
//! priced, as no collective's local copy is.

use super::{Body, Op, Step};
use serde::{Deserialize, Serialize};

/// `workload.alltoall_algorithm`: the algorithm of MPI_Alltoall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AlltoallAlgorithm {
    /// What Open MPI's `tuned` component picks for the block size and the
    /// ranks ([`AlltoallAlgorithm::tuned_decision`]).
    #[default]
    Auto,
    /// `ompi_coll_tuned_alltoall_intra_basic_linear`: every receive and
    /// every send posted at once, then one wait ([`alltoall_ops`]).
    Linear,
    /// `ompi_coll_tuned_alltoall_intra_pairwise`: `n - 1` exchanges, one
    /// at a time ([`pairwise_alltoall_ops`]).
    Pairwise,
    /// `ompi_coll_tuned_alltoall_intra_bruck`: `ceil(log2 n)` exchanges of
    /// packed blocks ([`bruck_alltoall_ops`]).
    Bruck,
}

impl AlltoallAlgorithm {
    /// Open MPI 1.2.6 and 1.3.0 `ompi_coll_tuned_alltoall_intra_dec_fixed`
    /// (`coll_tuned_decision_fixed.c`) for blocks of `block` bytes among
    /// `n` ranks: two ranks take `alltoall_intra_two_procs` (one
    /// send-receive with the other rank: the messages of a pairwise
    /// exchange of two ranks); then `(block_dsize < 200) &&
    /// (communicator_size > 12)` takes Bruck, `block_dsize < 3000` the
    /// basic linear, and the rest pairwise. (`block_dsize` is the type's
    /// size times the count: IMB's `MPI_BYTE` blocks are `size_bytes`.)
    pub fn tuned_decision(block: u64, n: u32) -> AlltoallAlgorithm {
        if n == 2 {
            AlltoallAlgorithm::Pairwise
        } else if block < 200 && n > 12 {
            AlltoallAlgorithm::Bruck
        } else if block < 3000 {
            AlltoallAlgorithm::Linear
        } else {
            AlltoallAlgorithm::Pairwise
        }
    }

    /// The algorithm run for blocks of `block` bytes among `n` ranks: this
    /// one, or for `Auto` the `tuned` decision's.
    pub fn resolve(self, block: u64, n: u32) -> AlltoallAlgorithm {
        match self {
            AlltoallAlgorithm::Auto => Self::tuned_decision(block, n),
            other => other,
        }
    }

    /// Appends one MPI_Alltoall of `size` bytes to each rank, for `rank`
    /// of `n`, with this algorithm (`Auto`: resolved first).
    pub fn ops(self, ops: &mut Body, rank: u32, n: u32, size: u64, tag: u64) {
        match self.resolve(size, n) {
            // `resolve` never gives `Auto`.
            AlltoallAlgorithm::Linear | AlltoallAlgorithm::Auto => alltoall_ops(ops, rank, n, size, tag),
            AlltoallAlgorithm::Pairwise => pairwise_alltoall_ops(ops, rank, n, size, tag),
            AlltoallAlgorithm::Bruck => bruck_alltoall_ops(ops, rank, n, size, tag),
        }
    }
}

/// A linear alltoall (`ompi_coll_tuned_alltoall_intra_basic_linear`):
/// post every receive, then every send, then wait for all. Each is one
/// ring step ([`Step`]). Open MPI posts the receives from `rank + 1`,
/// `rank + 2`, ... and the sends to `rank - 1`, `rank - 2`, ... ("so that
/// messages arrive in the order in which they were posted"); the rings
/// run the mirror image (receives from `rank - 1`, ..., sends to
/// `rank + 1`, ...), which has the same property.
pub fn alltoall_ops(ops: &mut Body, rank: u32, nprocs: u32, size: u64, tag: u64) {
    if nprocs > 1 {
        ops.0.push(Step::RecvRing { rank, n: nprocs, size, tag });
        ops.0.push(Step::SendRing { rank, n: nprocs, size, tag });
    }
    ops.push(Op::WaitOutstanding(0));
}

/// A pairwise alltoall (`ompi_coll_tuned_alltoall_intra_pairwise`): for
/// `step` = 1 .. `nprocs - 1`, `ompi_coll_tuned_sendrecv` with the ranks
/// `rank + step` (send) and `rank - step` (receive), which posts the
/// receive, then the send, then waits for both (`coll_tuned_util.c`
/// `ompi_coll_tuned_sendrecv_actual`); its last step (`step` =
/// `nprocs`) is the rank's copy to itself. One ring step
/// ([`Step::PairwiseRing`]), so that a program does not hold `nprocs`
/// operations.
pub fn pairwise_alltoall_ops(ops: &mut Body, rank: u32, nprocs: u32, size: u64, tag: u64) {
    if nprocs > 1 {
        ops.0.push(Step::PairwiseRing { rank, n: nprocs, size, tag });
    }
}

/// Blocks a Bruck step at `distance` packs, for `n` ranks: the indices
/// `i` in `1 .. n` with bit `distance` set (`ompi_coll_tuned_alltoall_
/// intra_bruck`'s indexed datatype: `if ((i&distance) == distance)`).
/// `distance` a power of two. Counted per period of `2 distance` indices,
/// whose upper half has the bit, not index by index: a program is built
/// for each of up to 65,535 ranks.
pub fn bruck_blocks(n: u32, distance: u32) -> u32 {
    debug_assert!(distance.is_power_of_two());
    let period = 2 * distance as u64;
    let n = n as u64;
    ((n / period) * distance as u64 + (n % period).saturating_sub(distance as u64)) as u32
}

/// Bruck's alltoall (`ompi_coll_tuned_alltoall_intra_bruck`): the rank
/// rotates its blocks up by its rank, then for `distance` = 1, 2, 4, ...
/// below `nprocs` packs every block whose index has that bit set into one
/// message (`MPI_Pack` of the indexed datatype: [`bruck_blocks`] blocks of
/// `size` bytes) and `ompi_coll_tuned_sendrecv`s it: the receive from
/// `rank - distance`, the send to `rank + distance`, the wait for both;
/// it unpacks what it received over the blocks it sent. `ceil(log2
/// nprocs)` messages a rank instead of `nprocs - 1`, each carrying about
/// half the blocks.
pub fn bruck_alltoall_ops(ops: &mut Body, rank: u32, nprocs: u32, size: u64, tag: u64) {
    let mut distance = 1;
    while distance < nprocs {
        let bytes = bruck_blocks(nprocs, distance) as u64 * size;
        ops.push(Op::Recv { src: Some((rank + nprocs - distance) % nprocs), size: bytes, tag });
        ops.push(Op::Send { peer: (rank + distance) % nprocs, size: bytes, tag });
        ops.push(Op::WaitOutstanding(0));
        distance <<= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::AlltoallAlgorithm::{Bruck, Linear, Pairwise};
    use super::*;
    use crate::workload::{Label, Program};

    /// One MPI_Alltoall of `size` bytes a block for `rank` of `n`, as operations.
    fn ops_of(alg: AlltoallAlgorithm, rank: u32, n: u32, size: u64) -> Vec<Op> {
        let mut b = Body::new();
        alg.ops(&mut b, rank, n, size, 7);
        b.ops().collect()
    }

    /// A message: from, to, bytes.
    type Message = (u32, u32, u64);

    /// The messages of one alltoall of every rank: those of the sends, and
    /// those of the receives, sorted.
    fn messages(alg: AlltoallAlgorithm, n: u32, size: u64) -> (Vec<Message>, Vec<Message>) {
        let (mut sends, mut recvs) = (vec![], vec![]);
        for r in 0..n {
            for op in ops_of(alg, r, n, size) {
                match op {
                    Op::Send { peer, size, .. } => sends.push((r, peer, size)),
                    Op::Recv { src: Some(s), size, .. } => recvs.push((s, r, size)),
                    _ => {}
                }
            }
        }
        sends.sort();
        recvs.sort();
        (sends, recvs)
    }

    #[test]
    fn alltoall_rings_post_every_receive_then_send_in_rank_order() {
        // Open MPI's basic linear alltoall, rank 2 of 5: receives from
        // 1, 0, 4, 3, then sends to 3, 4, 0, 1, then waits for them all.
        let mut body = Body::new();
        alltoall_ops(&mut body, 2, 5, 64, 9);
        let recv = |src| Op::Recv { src: Some(src), size: 64, tag: 9 };
        let send = |peer| Op::Send { peer, size: 64, tag: 9 };
        let want = [recv(1), recv(0), recv(4), recv(3), send(3), send(4), send(0), send(1), Op::WaitOutstanding(0)];
        assert_eq!(body.ops().collect::<Vec<_>>(), want);
        // Run as a script (one untimed iteration, one timed), the rings
        // come out whole in every iteration.
        let mut p = Program::script(body, 2, 1);
        let mut run = want.to_vec();
        run.push(Op::Mark(Label::Start));
        run.extend(want);
        run.extend([Op::Mark(Label::End), Op::Done]);
        assert_eq!((0..run.len()).map(|_| p.next_op()).collect::<Vec<_>>(), run);
        // The program's size does not grow with the ranks.
        for n in [2, 64, 1024] {
            let mut big = Body::new();
            alltoall_ops(&mut big, n - 1, n, 64, 9);
            assert_eq!(big.0.len(), 3, "{n} ranks");
            assert_eq!(big.ops().count(), 2 * (n as usize - 1) + 1);
        }
        // A single rank exchanges nothing: no ring, only the wait.
        let mut one = Body::new();
        alltoall_ops(&mut one, 0, 1, 64, 9);
        assert_eq!(one.ops().collect::<Vec<_>>(), [Op::WaitOutstanding(0)]);
    }

    #[test]
    fn the_tuned_decision_takes_bruck_below_200_bytes_past_12_ranks_and_pairwise_from_3000_bytes() {
        // `ompi_coll_tuned_alltoall_intra_dec_fixed`, 1.2.6 and 1.3.0.
        let d = AlltoallAlgorithm::tuned_decision;
        assert_eq!((d(199, 13), d(200, 13), d(199, 12)), (Bruck, Linear, Linear));
        assert_eq!((d(0, 16), d(1, 1024)), (Bruck, Bruck));
        assert_eq!((d(2999, 16), d(3000, 16), d(2999, 3), d(3000, 3)), (Linear, Pairwise, Linear, Pairwise));
        // Two ranks: `alltoall_intra_two_procs`, one send-receive.
        assert_eq!((d(1, 2), d(4096, 2)), (Pairwise, Pairwise));
        // [OMX-MQ]'s IMB rows, 16 ranks.
        let rows: Vec<_> = [1, 16, 256, 4096, 65536, 1 << 20, 4 << 20].iter().map(|&s| d(s, 16)).collect();
        assert_eq!(rows, [Bruck, Bruck, Linear, Pairwise, Pairwise, Pairwise, Pairwise]);
        // `auto` is the decision; a named algorithm stays.
        assert_eq!(AlltoallAlgorithm::Auto.resolve(4096, 16), Pairwise);
        assert_eq!(Linear.resolve(4096, 16), Linear);
        assert_eq!(Bruck.resolve(1 << 20, 3), Bruck);
    }

    #[test]
    fn pairwise_exchanges_with_one_rank_pair_a_step_and_waits_between_steps() {
        // `alltoall_intra_pairwise`, rank 2 of 5: step s sends to 2 + s and
        // receives from 2 - s (`sendrecv`: receive, send, wait).
        let recv = |src| Op::Recv { src: Some(src), size: 64, tag: 7 };
        let send = |peer| Op::Send { peer, size: 64, tag: 7 };
        let w = Op::WaitOutstanding(0);
        let want = [recv(1), send(3), w, recv(0), send(4), w, recv(4), send(0), w, recv(3), send(1), w];
        assert_eq!(ops_of(Pairwise, 2, 5, 64), want);
        // One step of the script whatever the ranks; none for one rank.
        for n in [2, 64, 4096] {
            let mut b = Body::new();
            pairwise_alltoall_ops(&mut b, 0, n, 8, 7);
            assert_eq!((b.0.len(), b.ops().count()), (1, 3 * (n as usize - 1)));
        }
        assert!(ops_of(Pairwise, 0, 1, 64).is_empty());
    }

    #[test]
    fn bruck_sends_log2_messages_of_the_blocks_whose_index_has_the_step_bit() {
        // `alltoall_intra_bruck`, rank 3 of 16, 10 B blocks: distances 1,
        // 2, 4, 8, each packing the 8 indices of 1..15 with that bit.
        let w = Op::WaitOutstanding(0);
        let step = |src, peer| [Op::Recv { src: Some(src), size: 80, tag: 7 }, Op::Send { peer, size: 80, tag: 7 }, w];
        let want: Vec<Op> = [step(2, 4), step(1, 5), step(15, 7), step(11, 11)].concat();
        assert_eq!(ops_of(Bruck, 3, 16, 10), want);
        // 13 ranks: 6, 6, 5 and 5 blocks (1..12 with bit 1, 2, 4, 8).
        let sizes: Vec<u64> = ops_of(Bruck, 0, 13, 1)
            .iter()
            .filter_map(|o| if let Op::Send { size, .. } = o { Some(*size) } else { None })
            .collect();
        assert_eq!(sizes, [6, 6, 5, 5]);
        // The count is Open MPI's loop over the indices, for every size.
        for n in 2..300u32 {
            let mut d = 1;
            while d < n {
                let looped = (1..n).filter(|i| (i & d) == d).count() as u32;
                assert_eq!(bruck_blocks(n, d), looped, "{n} ranks, distance {d}");
                d <<= 1;
            }
        }
    }

    #[test]
    fn bruck_delivers_every_block_to_its_rank_with_the_peers_and_sizes_of_its_operations() {
        // Runs Open MPI's Bruck on labelled blocks with each step's peers
        // taken from the operations: rotate up by the rank, at each step
        // send the blocks whose index has the bit to the Send's peer (as
        // many bytes as the Send says), put what arrives from the Recv's
        // source in their place, and rotate back. Every rank must end with
        // block (j -> r) from every rank j.
        for n in [3u32, 5, 8, 13, 16, 17, 31] {
            let size = 3;
            // tmp[r][i]: the block rank r holds at index i, as (from, to).
            let mut tmp: Vec<Vec<(u32, u32)>> = (0..n).map(|r| (0..n).map(|i| (r, (r + i) % n)).collect()).collect();
            let progs: Vec<Vec<Op>> = (0..n).map(|r| ops_of(Bruck, r, n, size)).collect();
            let steps = progs[0].len() / 3;
            assert_eq!(steps as u32, 32 - (n - 1).leading_zeros(), "ceil(log2 {n}) steps");
            for s in 0..steps {
                let distance = 1u32 << s;
                let idx: Vec<usize> = (1..n as usize).filter(|i| (*i as u32 & distance) != 0).collect();
                let mut out = vec![vec![]; n as usize];
                for r in 0..n as usize {
                    let Op::Send { peer, size: bytes, .. } = progs[r][3 * s + 1] else { panic!() };
                    assert_eq!(bytes, idx.len() as u64 * size);
                    out[peer as usize] = idx.iter().map(|&i| tmp[r][i]).collect::<Vec<_>>();
                    let Op::Recv { src: Some(src), size: want, .. } = progs[r][3 * s] else { panic!() };
                    assert_eq!((want, (src + distance) % n), (bytes, r as u32));
                }
                for (r, packed) in out.into_iter().enumerate() {
                    for (&i, block) in idx.iter().zip(packed) {
                        tmp[r][i] = block;
                    }
                }
            }
            for r in 0..n {
                // Step 3: rbuf[(rank - i) mod n] = tmpbuf[i].
                for i in 0..n {
                    assert_eq!(tmp[r as usize][i as usize], ((r + n - i) % n, r), "{n} ranks, rank {r}, index {i}");
                }
            }
        }
    }

    #[test]
    fn every_algorithm_matches_each_send_with_a_receive_and_moves_every_block() {
        for n in [2u32, 3, 5, 13, 16, 17] {
            for alg in [Linear, Pairwise, Bruck] {
                let (sends, recvs) = messages(alg, n, 100);
                assert_eq!(sends, recvs, "{alg:?} at {n} ranks");
                let bytes: u64 = sends.iter().map(|m| m.2).sum();
                let blocks = (n * (n - 1)) as u64 * 100;
                if alg == Bruck {
                    // Store and forward: each block travels once per bit
                    // of its distance, so more than once on average.
                    assert!(bytes >= blocks && (n < 4 || bytes > blocks), "{n}: {bytes}");
                } else {
                    assert_eq!(bytes, blocks, "{alg:?} at {n} ranks");
                }
            }
        }
    }
}
