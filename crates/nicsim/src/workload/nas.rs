//! The NAS Parallel Benchmarks skeletons (IS, CG, MG, FT; BT, SP, LU, EP in
//! `nas::apps`): per rank and
//! iteration, the work a core does and the messages of the collectives it
//! takes part in, written as the steps of a script ([`super::Program::script`]);
//! and those collectives (recursive-doubling allreduce, pairwise exchange;
//! the all-to-alls are `super::alltoall`'s).

use super::{alltoall_ops, pairwise_alltoall_ops, tag, AlltoallAlgorithm, Body, Op};
use crate::time::Duration;

/// NPB IS: `NUM_BUCKETS` (2^10) bucket sizes plus `TEST_ARRAY_SIZE` (5)
/// verification counts, 4-byte ints, go through the allreduce (`is.c`
/// `rank`: `MPI_Allreduce(bucket_size, ..., NUM_BUCKETS+TEST_ARRAY_SIZE)`).
pub const IS_ALLREDUCE_BYTES: u64 = (1024 + 5) * 4;

/// NAS Parallel Benchmarks IS (integer sort) skeleton, one iteration of one
/// rank (NPB 3.x `is.c` `rank()`, MPI version): bucket counting and the
/// scatter of the keys into their buckets (`before`), an allreduce of the
/// bucket sizes, an alltoall of the send counts, an alltoallv of the keys,
/// then the ranking of the received keys (`after`). Collectives use the
/// algorithms of Open MPI's `tuned` component for these sizes: recursive
/// doubling for the allreduce; for the alltoall of one 4-byte count to
/// each rank, its fixed decision ([`AlltoallAlgorithm::tuned_decision`]:
/// Bruck beyond 12 ranks, linear up to 12, one exchange for 2); linear
/// (post everything, wait all) for the alltoallv, the only algorithm
/// Open MPI 1.2.6 and 1.3.0 have for it. NPB hands each rank a run of whole buckets holding about
/// `TOTAL_KEYS / nprocs` keys, and every rank's keys follow the same
/// distribution, so each pair exchanges `keys_per_proc / nprocs` keys.
pub fn nas_is_iteration(rank: u32, nprocs: u32, keys_per_proc: u64, before: Duration, after: Duration) -> Body {
    let pair_bytes = keys_per_proc * 4 / nprocs as u64;
    let mut ops = Body::new();
    ops.push(Op::Compute(before));
    let mut step = 0;
    let mut mask = 1;
    while mask < nprocs {
        let partner = rank ^ mask;
        if partner < nprocs {
            ops.push(Op::Recv { src: Some(partner), size: IS_ALLREDUCE_BYTES, tag: tag::IS_ALLREDUCE + step });
            ops.push(Op::Send { peer: partner, size: IS_ALLREDUCE_BYTES, tag: tag::IS_ALLREDUCE + step });
            ops.push(Op::WaitOutstanding(0));
        }
        mask <<= 1;
        step += 1;
    }
    AlltoallAlgorithm::Auto.ops(&mut ops, rank, nprocs, 4, tag::IS_COUNTS);
    alltoall_ops(&mut ops, rank, nprocs, pair_bytes, tag::IS_KEYS);
    ops.push(Op::Compute(after));
    ops
}

/// The work of one rank in one timed iteration of a NAS benchmark: what the
/// core executes and what it moves to and from memory. The compute time is
/// the larger of the two at the core's rate and the rank's share of the
/// host's memory bandwidth (the roofline bound: Williams, Waterman and
/// Patterson, "Roofline", CACM 52(4), 2009).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NasWork {
    /// Floating-point operations (CG, MG, FT) or integer instructions (IS).
    pub ops: f64,
    /// Bytes between memory and the caches (write-allocate included).
    pub bytes: f64,
}

impl NasWork {
    /// Time of this work at `ops_per_s` on the core and `bytes_per_s` of
    /// memory bandwidth available to the rank.
    pub fn time(&self, ops_per_s: f64, bytes_per_s: f64) -> Duration {
        Duration::from_ns_f64((self.ops / ops_per_s).max(self.bytes / bytes_per_s) * 1e9)
    }
}

/// The rates one rank's NAS work runs at: its core's (`platform.nas`,
/// `host.clock_ghz`) and its share of its host's memory bandwidth and L2.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NasRates {
    /// Floating-point operations a second of one core.
    pub ops_per_s: f64,
    /// The rank's share of its host's memory bandwidth, bytes a second.
    pub bytes_per_s: f64,
    /// The core's clock, cycles a second: what latency chains and the
    /// divider's busy cycles take.
    pub cycles_per_s: f64,
    /// Bytes of L2 the rank has.
    pub l2_share: f64,
}

/// IS bytes per key before the exchange: the counting pass reads the key
/// (4 B); the scatter pass reads it again and stores it into its bucket
/// (4 B + 4 B write-allocate). `is.c` `rank()`, the two loops over `key_array`.
const IS_BYTES_PER_KEY_BEFORE: f64 = 16.0;
/// IS instructions per key before the exchange: load, shift, load-add-store
/// of the bucket count (5); load, shift, load and bump the bucket pointer,
/// store the key (7).
const IS_INSNS_PER_KEY_BEFORE: f64 = 12.0;
/// IS after the exchange: the counting of the received keys reads each key
/// (4 B); its counters (the rank's key range, 512 KiB in class B, 2 MiB in
/// class C) stay in the 4 MiB L2 the rank shares with one other.
const IS_BYTES_PER_KEY_AFTER: f64 = 4.0;
/// Load, subtract the range base, load-add-store of the counter.
const IS_INSNS_PER_KEY_AFTER: f64 = 5.0;
/// Per entry of the rank's key range: zeroing it (4 B + 4 B write-allocate)
/// before the counting; the prefix sum after it runs in cache.
const IS_BYTES_PER_RANGE_ENTRY: f64 = 8.0;
/// Zeroing (2) and the prefix sum (load, add, store: 3).
const IS_INSNS_PER_RANGE_ENTRY: f64 = 5.0;

/// NPB IS work of one rank per iteration: `(before, after)` the exchange,
/// for `keys_per_proc` keys and a key range of `max_key` values over
/// `nprocs` ranks (NPB 3.x `MAX_KEY` = 2^11 (S), 2^19 (A), 2^21 (B), 2^23 (C)).
pub fn nas_is_work(keys_per_proc: u64, max_key: u64, nprocs: u32) -> (NasWork, NasWork) {
    let keys = keys_per_proc as f64;
    let range = (max_key / nprocs as u64) as f64;
    (
        NasWork { ops: IS_INSNS_PER_KEY_BEFORE * keys, bytes: IS_BYTES_PER_KEY_BEFORE * keys },
        NasWork {
            ops: IS_INSNS_PER_KEY_AFTER * keys + IS_INSNS_PER_RANGE_ENTRY * range,
            bytes: IS_BYTES_PER_KEY_AFTER * keys + IS_BYTES_PER_RANGE_ENTRY * range,
        },
    )
}

/// Recursive-doubling allreduce of `size` bytes among the ranks
/// `base + i * stride` (i < `n`, `n` a power of two) that `rank` belongs to.
fn allreduce_ops(ops: &mut Body, rank: u32, base: u32, stride: u32, n: u32, size: u64, tag: u64) {
    let me = (rank - base) / stride;
    let mut mask = 1;
    let mut step = 0;
    while mask < n {
        let partner = base + (me ^ mask) * stride;
        ops.push(Op::Recv { src: Some(partner), size, tag: tag + step });
        ops.push(Op::Send { peer: partner, size, tag: tag + step });
        ops.push(Op::WaitOutstanding(0));
        mask <<= 1;
        step += 1;
    }
}

/// Receive `recv` bytes from `peer` and send it `send` bytes, then wait
/// for both (NPB's `mpi_irecv`, `mpi_send`, `mpi_wait`).
fn exchange_ops(ops: &mut Body, peer: u32, send: u64, recv: u64, tag: u64) {
    ops.push(Op::Recv { src: Some(peer), size: recv, tag });
    ops.push(Op::Send { peer, size: send, tag });
    ops.push(Op::WaitOutstanding(0));
}

/// The NAS kernels with communication skeletons besides IS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NasKernel {
    Cg,
    Mg,
    Ft,
    Bt,
    Ep,
    Lu,
    Sp,
}

/// CG bytes per nonzero per matrix-vector product: the value (8 B) and its
/// column index (4 B) stream from memory (the matrix, 160 MiB in class B,
/// is far larger than the caches); the gathered vector segment (150 KiB in
/// class B at 16 ranks) stays in L2.
const CG_BYTES_PER_NONZERO: f64 = 12.0;
/// CG bytes per vector element per CG step (`cg.f` `conj_grad`): q = A.p
/// is written (8 B + 8 B write-allocate), p.q reads two vectors (16 B),
/// z += alpha p and r -= alpha q read two and write one each (2 x 24 B),
/// r.r reads one (8 B), p = r + beta p reads two and writes one (24 B).
const CG_BYTES_PER_ELEMENT_STEP: f64 = 112.0;
/// MG bytes per finest-grid point per iteration (`mg.f` `mg3P` then
/// `resid`): on the finest grid rprj3 reads r (8 B), interp updates u and
/// reads the coarse grid (17 B), resid reads u and v and writes r (24 B +
/// 8 B write-allocate) twice, psinv reads r and updates u (24 B): 113 B;
/// the coarser levels add an eighth each, and zero3 clears them (16 B per
/// point): about 130 B in all.
const MG_BYTES_PER_POINT: f64 = 130.0;
/// Of [`MG_BYTES_PER_POINT`], the finest grid's reads through a 27-point
/// stencil, which walks three planes of its input at once (`mg.f`: rprj3
/// reads r, resid reads u twice, psinv reads r: 4 x 8 B). Read once each
/// when the L2 keeps a plane between its three uses.
const MG_STENCIL_BYTES: f64 = 32.0;
/// The same reads when the L2 cannot keep the planes: resid's and psinv's
/// planes come from memory three times, rprj3's (stride 2 across planes)
/// one and a half times: 8 x 1.5 + 16 x 3 + 8 x 3.
const MG_STENCIL_BYTES_UNCACHED: f64 = 84.0;
/// MG bytes per finest-grid point of the timed set-up (`mg.f`, between
/// `timer_start(T_bench)` and the first iteration, and after the last):
/// one `resid` (24 B + 8 B write-allocate, and its stencil reads of u as an
/// iteration's resid has them) and two `norm2u3` passes over r (2 x 8 B).
const MG_SETUP_BYTES_PER_POINT: f64 = 48.0;
/// Planes a stencil sweep keeps in the L2 to read its input once: the three
/// it reads and one each of the two other arrays it streams (resid: v and
/// r; psinv: u). [estimate: one LRU pass; the reuse distance of a plane is
/// two planes of the sweep]
const MG_STENCIL_PLANES: f64 = 5.0;
/// FT bytes per grid point per iteration (`ft.f`, 1D layout): evolve reads
/// u0 and the twiddle factors and writes u1 (16 + 8 + 16 B + 16 B
/// write-allocate); the FFTs along two local dimensions each read and write
/// the complex grid once through a cached scratch block (2 x 32 B); the
/// local transpose before the alltoall and the one after it each read and
/// write it (2 x 48 B with write-allocate); the last FFT dimension (32 B):
/// 248 B.
const FT_BYTES_PER_POINT: f64 = 248.0;
/// FT bytes per grid point of the timed set-up (`ft.f`, between
/// `timer_start(T_total)` and the first iteration): `compute_indexmap`
/// writes the twiddle factors (8 B + 8 B write-allocate),
/// `compute_initial_conditions` writes u1 (16 B + 16 B write-allocate), and
/// the forward `fft(1, u1, u0)` makes an iteration's passes less evolve's
/// (248 - 56 B): 240 B.
const FT_SETUP_BYTES_PER_POINT: f64 = 240.0;

/// Problem parameters of NPB 3.x classes B and C (`npbparams.h` defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NasProblem {
    pub kernel: NasKernel,
    /// Iterations of the benchmark (CG: outer iterations of 25 CG steps
    /// each); [`NasProblem::timed_steps`] says how many the skeleton times.
    pub iterations: u64,
    /// Total operations of the timed part, from the Mop/s formula each NPB
    /// benchmark prints (cg.f, mg.f, ft.f, bt.f, sp.f `mflops = ...`, lu.f
    /// `mflops`, ep.f `Mops = 2**(m+1) / tm`): floating-point operations,
    /// but EP's are its random numbers ([`apps::ep_time`] says what each
    /// costs).
    pub total_ops: f64,
    /// CG: matrix order and NONZER; MG/FT/BT/SP/LU: grid points per
    /// dimension (nx, ny, nz); EP: `[m, 0, 0]` (2^m pairs).
    pub dims: [u64; 3],
}

impl NasProblem {
    pub fn new(kernel: NasKernel, class_c: bool) -> Self {
        match kernel {
            NasKernel::Cg => {
                // Class B: NA 75000, NONZER 13; class C: NA 150000, NONZER 15; NITER 75.
                let (na, nonzer) = if class_c { (150_000u64, 15u64) } else { (75_000, 13) };
                let niter = 75u64;
                let nz = (nonzer * (nonzer + 1)) as f64;
                let ops = 2.0 * (niter * na) as f64 * (3.0 + nz + 25.0 * (5.0 + nz) + 3.0);
                NasProblem { kernel, iterations: niter, total_ops: ops, dims: [na, nonzer, 0] }
            }
            NasKernel::Mg => {
                // Class B: 256^3, class C: 512^3; 20 iterations. ops = 58 * nit * n^3.
                let n = if class_c { 512u64 } else { 256 };
                let nit = 20u64;
                NasProblem { kernel, iterations: nit, total_ops: 58.0 * (nit * n * n * n) as f64, dims: [n, n, n] }
            }
            NasKernel::Ft => {
                // Class B: 512x256x256, class C: 512^3; 20 iterations.
                let d = if class_c { [512u64, 512, 512] } else { [512, 256, 256] };
                let niter = 20u64;
                let nt = (d[0] * d[1] * d[2]) as f64;
                let ops = nt * (14.8157 + 7.19641 * nt.ln() + (5.23518 + 7.21113 * nt.ln()) * niter as f64);
                NasProblem { kernel, iterations: niter, total_ops: ops, dims: d }
            }
            NasKernel::Bt | NasKernel::Sp | NasKernel::Lu => {
                // Classes B and C: 102^3 and 162^3 (`problem_size`, `isiz01`);
                // BT 200 steps, SP 400, LU 250 (`niter_default`, `itmax_default`).
                let n = if class_c { 162u64 } else { 102 };
                let x = n as f64;
                let (niter, per_step) = match kernel {
                    // bt.f: 3478.8 n3 - 17655.7 navg^2 + 28023.7 navg (n3 = n^3, navg = n).
                    NasKernel::Bt => (200u64, 3478.8 * x.powi(3) - 17655.7 * x * x + 28023.7 * x),
                    // sp.f: 881.174 n^3 - 4683.91 n^2 + 11484.5 n - 19272.4.
                    NasKernel::Sp => (400, 881.174 * x.powi(3) - 4683.91 * x * x + 11484.5 * x - 19272.4),
                    // lu.f: 1984.77 nx0 ny0 nz0 - 10923.3 ((nx0+ny0+nz0)/3)^2 + 27770.9 (nx0+ny0+nz0)/3 - 144010.
                    _ => (250, 1984.77 * x.powi(3) - 10923.3 * x * x + 27770.9 * x - 144010.0),
                };
                NasProblem { kernel, iterations: niter, total_ops: niter as f64 * per_step, dims: [n, n, n] }
            }
            NasKernel::Ep => {
                // Class B: M = 30, class C: M = 32; ep.f counts 2^(M+1) numbers.
                let m = if class_c { 32u64 } else { 30 };
                NasProblem { kernel, iterations: 1, total_ops: (1u64 << (m + 1)) as f64, dims: [m, 0, 0] }
            }
        }
    }

    /// Steps of the skeleton in the timed region, each with one step's
    /// communication and [`NasProblem::work`]'s compute. CG times its
    /// iterations; MG its iterations and a residual and two norms around
    /// them (`mg.f`), whose memory passes [`NasProblem::work`] spreads over
    /// the iterations (their one halo exchange and two allreduces aside).
    /// FT times its set-up too: `ft.f` runs the whole
    /// problem once untimed, then "Start over from the beginning. Note that
    /// all operations must be timed, in contrast to other benchmarks": the
    /// twiddle factors, the initial conditions and the forward FFT, whose
    /// transpose is one more all-to-all, before the `niter` iterations. The
    /// set-up is one more step (its checksum allreduce of 16 B aside, its
    /// communication is an iteration's).
    /// BT, SP and LU time their steps (each runs one untimed step first,
    /// `bt.f`/`sp.f` `call adi`, `lu.f` `call ssor(1)`); EP is one step.
    pub fn timed_steps(&self) -> u64 {
        match self.kernel {
            NasKernel::Ft => self.iterations + 1,
            _ => self.iterations,
        }
    }

    /// The work of one of `nprocs` ranks in one timed step: NPB's
    /// operation count (which counts FT's set-up) and the memory traffic of
    /// the kernel's passes over its data (the constants above) shared
    /// evenly over the ranks and the [`NasProblem::timed_steps`], with
    /// `l2_share` bytes of L2 cache to each rank.
    pub fn work(&self, nprocs: u32, l2_share: f64) -> NasWork {
        let n = nprocs as f64;
        let steps = self.timed_steps() as f64;
        let ops = self.total_ops / steps / n;
        let bytes = match self.kernel {
            NasKernel::Cg => {
                // 25 CG steps and the residual's product per iteration; the
                // nonzeros as cg.f's operation count has them (NA x NONZER x
                // (NONZER+1)); each rank keeps vector segments of NA / npcols,
                // so the vectors exist nprows times over.
                let (na, nonzer) = (self.dims[0] as f64, self.dims[1] as f64);
                let nprows = (nprocs / cg_npcols(nprocs)) as f64;
                26.0 * CG_BYTES_PER_NONZERO * na * nonzer * (nonzer + 1.0)
                    + 25.0 * CG_BYTES_PER_ELEMENT_STEP * na * nprows
            }
            NasKernel::Mg => {
                let points = (self.dims[0] * self.dims[1] * self.dims[2]) as f64;
                let fit = self.mg_planes_fit(nprocs, l2_share);
                let stencil = if fit { MG_STENCIL_BYTES } else { MG_STENCIL_BYTES_UNCACHED };
                // The set-up's resid reads u's planes three times too when
                // they miss the L2 (24 B instead of 8, as in an iteration).
                let setup = MG_SETUP_BYTES_PER_POINT + if fit { 0.0 } else { 16.0 };
                let iterations = self.iterations as f64;
                ((MG_BYTES_PER_POINT - MG_STENCIL_BYTES + stencil) * iterations + setup) * points / steps
            }
            NasKernel::Ft => {
                let points = (self.dims[0] * self.dims[1] * self.dims[2]) as f64;
                (FT_BYTES_PER_POINT * self.iterations as f64 + FT_SETUP_BYTES_PER_POINT) * points / steps
            }
            NasKernel::Bt | NasKernel::Sp | NasKernel::Lu => {
                let points = (self.dims[0] * self.dims[1] * self.dims[2]) as f64;
                let per_point = match self.kernel {
                    NasKernel::Bt => apps::BT_BYTES.total(),
                    NasKernel::Sp => apps::SP_BYTES.total(),
                    _ => apps::LU_BYTES.total(),
                };
                per_point * points
            }
            NasKernel::Ep => return NasWork { ops: ops * apps::ep_ops_per_number(), bytes: 0.0 },
        };
        NasWork { ops, bytes: bytes / n }
    }

    /// A rank's compute in one timed step at the rates `r`: the roofline of
    /// [`NasProblem::work`]; LU's phase by phase ([`apps::lu_phases`]); EP's
    /// generator at its chain's latency and its pair loop at its accepted
    /// pairs' chain as far as the core's reorder buffer overlaps them
    /// ([`apps::ep_time`]).
    pub fn compute(&self, nprocs: u32, r: &NasRates) -> Duration {
        match self.kernel {
            NasKernel::Ep => apps::ep_time(self, nprocs, r, apps::EP_GENERATOR),
            NasKernel::Lu => Duration::from_ns_f64(apps::lu_phases(self, nprocs, r).total() * 1e9),
            _ => self.work(nprocs, r.l2_share).time(r.ops_per_s, r.bytes_per_s),
        }
    }
}

impl NasProblem {
    /// Whether MG's finest-grid stencil sweeps find their planes in the L2:
    /// five planes (`MG_STENCIL_PLANES`) of a rank's block (`mg.f` arrays
    /// `(n1, n2, n3)` with one ghost layer on each side, `n1`, `n2` the
    /// grid divided over [`mg_grid`]'s first two axes) in `l2_share`
    /// bytes. The coarser grids' planes are a quarter as large each level
    /// down, and taken to fit.
    pub fn mg_planes_fit(&self, nprocs: u32, l2_share: f64) -> bool {
        let (px, py, _) = mg_grid(nprocs);
        let (n1, n2) = (self.dims[0] / px as u64 + 2, self.dims[1] / py as u64 + 2);
        MG_STENCIL_PLANES * (8 * n1 * n2) as f64 <= l2_share
    }
}

/// Columns of NPB CG's process grid (`cg.f` `setup_proc_info`: npcols =
/// nprows for an even power of two, twice nprows otherwise).
fn cg_npcols(nprocs: u32) -> u32 {
    1u32 << nprocs.trailing_zeros().div_ceil(2)
}

/// One exchange of NPB CG: the peer, the bytes sent to it and the bytes
/// received from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CgExchange {
    pub peer: u32,
    pub send: u64,
    pub recv: u64,
}

/// The exchanges of one CG step for one rank, as NPB's `cg.f`
/// `setup_submatrix_info` sets them up (NPB 3.3 `CG/cg.f`), with `rows =
/// na / nprows` elements of 8 B in a rank's row block:
///
/// * the row reduction of `w = A.p`, in the order `conj_grad` runs it
///   (`i = l2npcols, 1, -1`): partner `i` is the rank of the same row
///   whose column differs in bit `l2npcols - i`. With a square grid every
///   step sends and receives the whole row block (`reduce_send_lengths(i)
///   = send_len = lastrow - firstrow + 1`, `reduce_recv_lengths(i) =
///   lastrow - firstrow + 1`): a recursive doubling, not a halving. With
///   `npcols = 2 nprows` a rank owns half the block (`send_len`: the upper
///   half for an even rank) and the first step swaps the other halves;
/// * the transpose exchange (`exch_proc`): `send_len` elements each way
///   (`exch_recv_length = lastcol - firstcol + 1` is the same number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CgExchanges {
    /// The row reduction, in `conj_grad`'s order; `l2npcols` are used.
    pub reduce: [CgExchange; 16],
    pub l2npcols: usize,
    pub transpose: CgExchange,
}

impl CgExchanges {
    /// `na` the problem's order; `nprocs` a power of two.
    pub fn new(na: u64, rank: u32, nprocs: u32) -> CgExchanges {
        let npcols = cg_npcols(nprocs);
        let nprows = nprocs / npcols;
        let (row, col) = (rank / npcols, rank % npcols);
        let rows = na / nprows as u64;
        let odd = rank % 2 == 1;
        let square = npcols == nprows;
        // send_len: the row block, or the rank's half of it.
        let half = |odd: bool| if odd { rows / 2 } else { rows.div_ceil(2) };
        let send_len = if square { rows } else { half(odd) };
        let l2npcols = npcols.trailing_zeros() as usize;
        let none = CgExchange { peer: rank, send: 0, recv: 0 };
        let mut reduce = [none; 16];
        for (k, r) in reduce.iter_mut().take(l2npcols).enumerate() {
            // i = l2npcols - k: partner's column differs in bit k.
            let peer = row * npcols + (col ^ (1 << k));
            let (send, recv) = if square {
                (rows, rows)
            } else if k == 0 {
                (rows - send_len, send_len)
            } else {
                (send_len, send_len)
            };
            *r = CgExchange { peer, send: 8 * send, recv: 8 * recv };
        }
        let peer = if square {
            (rank % nprows) * nprows + rank / nprows
        } else {
            let pair = rank / 2;
            2 * ((pair % nprows) * nprows + pair / nprows) + rank % 2
        };
        // The peer has this rank's parity, so it sends as many elements as
        // it receives: `exch_recv_length` is `send_len` (when `na` divides
        // evenly; otherwise they differ by at most one element).
        let transpose = CgExchange { peer, send: 8 * send_len, recv: 8 * send_len };
        CgExchanges { reduce, l2npcols, transpose }
    }
}

/// NPB MG's process grid `(pi(1), pi(2), pi(3))` (`mg.f` `setup`: `dx =
/// log_p / 3`, `dy = (log_p - dx) / 2`, the rest on the third axis; rank
/// `me` sits at `(me mod pi(1), (me / pi(1)) mod pi(2), me / (pi(1) pi(2)))`).
/// 16 ranks make a 2 x 2 x 4 grid: with 8 ranks a host, each rank has one
/// neighbour on the other host along the third axis.
pub fn mg_grid(nprocs: u32) -> (u32, u32, u32) {
    let log_p = nprocs.trailing_zeros();
    let dx = log_p / 3;
    let dy = (log_p - dx) / 2;
    let (px, py) = (1 << dx, 1 << dy);
    (px, py, nprocs / (px * py))
}

/// One timed iteration of a NAS kernel skeleton for `rank` of `nprocs` (a
/// power of two, at least 4), with `compute` per iteration on each rank
/// (LU splits it among its phases as their times at the rates `r` do).
///
/// * CG (2D grid `nprows x npcols`): per CG step, the row reduction of the
///   matrix-vector product, the exchange with the transpose partner, and
///   two scalar allreduces across the row (NPB `cg.f` `conj_grad`, sizes
///   and partners from `setup_submatrix_info`, see [`CgExchanges`]); 25
///   steps per iteration, then the residual's product (same exchanges, one
///   scalar) and the main loop's allreduce of two norms (16 B).
/// * MG (3D grid of ranks): per level of the V-cycle, four halo exchanges of
///   the six faces (`comm3` after resid, psinv, rprj3/interp).
/// * FT (1D layout): one all-to-all transpose of the complex grid per
///   iteration (pairwise: its blocks are megabytes) and a checksum
///   allreduce (`ft.f` `transpose_x_yz`, `checksum`).
/// * BT, SP (a square rank count), LU and EP: see [`apps`].
pub fn nas_kernel_iteration(
    kernel: NasKernel,
    p: &NasProblem,
    rank: u32,
    nprocs: u32,
    compute: Duration,
    r: &NasRates,
) -> Body {
    let mut ops = Body::new();
    // The pseudo-applications interleave their compute with their messages.
    match kernel {
        NasKernel::Bt => apps::adi_step(&mut ops, apps::Adi::Bt, rank, nprocs, p.dims[0], compute),
        NasKernel::Sp => apps::adi_step(&mut ops, apps::Adi::Sp, rank, nprocs, p.dims[0], compute),
        NasKernel::Lu => apps::lu_step(&mut ops, rank, nprocs, p.dims[0], compute, &apps::lu_phases(p, nprocs, r)),
        _ => ops.push(Op::Compute(compute)),
    }
    match kernel {
        NasKernel::Bt | NasKernel::Sp | NasKernel::Lu => {}
        NasKernel::Ep => apps::ep_ops(&mut ops, rank, nprocs),
        NasKernel::Cg => {
            let x = CgExchanges::new(p.dims[0], rank, nprocs);
            // 25 CG steps, then (step 25) the residual's product with its
            // scalar reduction and the main loop's reduction of the two norms.
            for step in 0..26u64 {
                let tag = tag::CG + step * 16;
                for (k, r) in x.reduce.iter().take(x.l2npcols).enumerate() {
                    exchange_ops(&mut ops, r.peer, r.send, r.recv, tag + k as u64);
                }
                let t = x.transpose;
                if t.peer != rank {
                    exchange_ops(&mut ops, t.peer, t.send, t.recv, tag + 8);
                }
                let second = if step == 25 { 16 } else { 8 };
                for (size, base) in [(8, tag + 10), (second, tag + 13)] {
                    // The scalar sums take the row partners the other way
                    // round: `i = 1 .. l2npcols`.
                    for (k, r) in x.reduce.iter().take(x.l2npcols).rev().enumerate() {
                        exchange_ops(&mut ops, r.peer, size, size, base + k as u64);
                    }
                }
            }
        }
        NasKernel::Mg => {
            let (px, py, pz) = mg_grid(nprocs);
            let (x, y, z) = (rank % px, (rank / px) % py, rank / (px * py));
            let at = |x: u32, y: u32, z: u32| (z % pz) * px * py + (y % py) * px + (x % px);
            let neighbours = [
                (at(x + 1, y, z), at(x + px - 1, y, z), (py, pz)),
                (at(x, y + 1, z), at(x, y + py - 1, z), (px, pz)),
                (at(x, y, z + 1), at(x, y, z + pz - 1), (px, py)),
            ];
            let mut n = p.dims[0];
            let mut level = 0u64;
            while n >= 4 {
                for pass in 0..4u64 {
                    for (d, (up, down, (a, b))) in neighbours.iter().enumerate() {
                        let face = 8 * (n / *a as u64).max(1) * (n / *b as u64).max(1);
                        let tag = tag::MG + level * 64 + pass * 8 + d as u64 * 2;
                        // Faces going up carry `tag`, faces going down `tag + 1`.
                        if *up != rank {
                            ops.push(Op::Recv { src: Some(*down), size: face, tag });
                            ops.push(Op::Recv { src: Some(*up), size: face, tag: tag + 1 });
                            ops.push(Op::Send { peer: *up, size: face, tag });
                            ops.push(Op::Send { peer: *down, size: face, tag: tag + 1 });
                        }
                        ops.push(Op::WaitOutstanding(0));
                    }
                }
                n /= 2;
                level += 1;
            }
        }
        NasKernel::Ft => {
            let total = p.dims[0] * p.dims[1] * p.dims[2];
            let pair = 16 * total / (nprocs as u64 * nprocs as u64);
            pairwise_alltoall_ops(&mut ops, rank, nprocs, pair, tag::FT_TRANSPOSE);
            allreduce_ops(&mut ops, rank, 0, 1, nprocs, 16, tag::FT_CHECKSUM);
        }
    }
    ops
}

/// The rates of one of 8 ranks of a 2 x Xeon E5345 host at the
/// `omx2009` preset's `[nas]` values, for the tests.
#[cfg(test)]
pub(crate) const TEST_RATES: NasRates =
    NasRates { ops_per_s: 2.33e9, bytes_per_s: 750e6, cycles_per_s: 2.33e9, l2_share: 2.0 * 1024.0 * 1024.0 };

pub mod apps;
#[cfg(test)]
mod tests;
