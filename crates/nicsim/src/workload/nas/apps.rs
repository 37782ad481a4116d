//! The NAS skeletons of the pseudo-applications BT, SP and LU and of the
//! kernel EP (NPB 3.3 MPI sources, `NPB3.3-MPI/{BT,SP,LU,EP}`): their
//! process grids, the messages of one timed step, and how a step's compute
//! falls between them.
//!
//! * BT and SP ([`adi_step`]): `adi` = `copy_faces` (six faces to the six
//!   neighbours of the multi-partition, then `compute_rhs`), then `x_solve`,
//!   `y_solve`, `z_solve`, each pipelined over the `ncells` cells a rank
//!   owns along that axis (forward elimination to the successor, back
//!   substitution to the predecessor), then `add`.
//! * LU ([`lu_step`]): one SSOR iteration (`ssor.f`): the lower and upper
//!   triangular sweeps are wavefronts over the k-planes (`blts`/`buts`
//!   call `exchange_1` before and after each plane), then `rhs`, whose two
//!   `exchange_3` calls swap two-deep halos of `u` with the four neighbours.
//! * EP ([`ep_ops`]): all compute, then the three `mpi_allreduce`s of `ep.f`.

use super::{allreduce_ops, NasProblem, NasRates};
use crate::time::Duration;
use crate::workload::{tag, Body, Op};

mod ep;
pub use ep::*;

/// `share` of `compute`, rounded to the picosecond.
fn part(compute: Duration, share: f64) -> Duration {
    Duration::from_ps((compute.as_ps() as f64 * share).round() as u64)
}

/// EP's communication (`ep.f`, after loop 150): the sums `sx` and `sy`
/// (one double each) and the counts `q(0:nq-1)` (nq = 10 doubles), each
/// `mpi_allreduce`d (recursive doubling). The allreduce of the timer
/// comes after `timer_stop(1)`, outside the timed region.
pub fn ep_ops(ops: &mut Body, rank: u32, nprocs: u32) {
    for (k, size) in [8u64, 8, 80].into_iter().enumerate() {
        allreduce_ops(ops, rank, 0, 1, nprocs, size, tag::EP + 32 * k as u64);
    }
}

/// NPB LU's process grid and one rank's place in it (`proc_grid.f`,
/// `neighbors.f`, `subdomain.f`): `xdim x ydim` ranks, rank `id` at row
/// `id mod xdim` and column `id / xdim` (0-based here); its neighbours
/// north (`id - 1`), south (`id + 1`), west (`id - xdim`), east (`id +
/// xdim`) where they exist; its block of `nx x ny` points per plane, of
/// which `ist..=iend` x `jst..=jend` are interior (a rank on the grid's
/// edge leaves out the boundary points).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LuRank {
    pub xdim: u32,
    pub ydim: u32,
    pub north: Option<u32>,
    pub south: Option<u32>,
    pub west: Option<u32>,
    pub east: Option<u32>,
    pub nx: u64,
    pub ny: u64,
    /// Interior points along i (`iend - ist + 1`) and along j (`jend - jst + 1`).
    pub ni: u64,
    pub nj: u64,
}

impl LuRank {
    /// `id` of `num` ranks on a grid of `n0`^2 points per plane.
    pub fn new(id: u32, num: u32, n0: u64) -> LuRank {
        // proc_grid: ydim = sqrt(num), lowered until it divides num.
        let mut ydim = ((num as f64).sqrt() + 0.001) as u32;
        while !num.is_multiple_of(ydim) {
            ydim -= 1;
        }
        let xdim = num / ydim;
        let (row, col) = (id % xdim, id / xdim);
        let north = (row > 0).then(|| id - 1);
        let south = (row + 1 < xdim).then_some(id + 1);
        let west = (col > 0).then(|| id - xdim);
        let east = (col + 1 < ydim).then_some(id + xdim);
        // subdomain: the first `n0 mod dim` rows (columns) take one more point.
        let share = |k: u32, dim: u32| n0 / dim as u64 + u64::from((k as u64) < n0 % dim as u64);
        let (nx, ny) = (share(row, xdim), share(col, ydim));
        let ni = nx - u64::from(north.is_none()) - u64::from(south.is_none());
        let nj = ny - u64::from(west.is_none()) - u64::from(east.is_none());
        LuRank { xdim, ydim, north, south, west, east, nx, ny, ni, nj }
    }
}

/// LU bytes per grid point per SSOR iteration, by phase (`ssor.f`):
/// * scaling `rsd = dt * rsd`: read and write rsd (2 x 40 B);
/// * lower sweep: `jacld` reads u (40 B; its a, b, c, d blocks for one
///   plane, 4 x 25 doubles x 41^2 = 1.3 MB at 16 ranks, stay in the L2
///   for `blts` when they fit the rank's share of it: [`LU_BLOCK_BYTES`]),
///   `blts` reads and writes rsd (80 B);
/// * upper sweep: `jacu` and `buts`, the same 40 and 80 B;
/// * the update `u = u + tmp * rsd`: u read and written, rsd read (120 B);
/// * `rhs`: `rsd = -frct` (frct 40 B, rsd 40 B + 40 B write-allocate);
///   the xi and eta directions work line by line (xi: `do k, do j`, then
///   `do i` loops over one line) and plane by plane (eta: `do k`, then
///   `do j, do i` loops over one plane), so each reads u (40 B), reads and
///   writes rsd (80 B) and writes the `flux` array (5 doubles a point, 3D:
///   40 B + 40 B write-allocate), which its later loops read again while
///   the line or plane is in cache: 200 B each;
/// * `rhs`'s zeta direction is five loops over the rank's whole block,
///   each `do k, do j, do i`, so nothing stays in cache from one to the
///   next ([`LuPerPoint::rhs_zeta`]): the flux from u (u 40 B, flux 80 B),
///   `rsd -= tz2 * (flux(k+1) - flux(k-1))` (flux 40 B, rsd 80 B), the
///   viscous flux from u at k and k-1 (u 40 B, flux 80 B), `rsd += ...`
///   from u at k-1, k, k+1 and flux at k, k+1 (u 40 B, flux 40 B, rsd 80 B),
///   the fourth-order dissipation from u at k-2 .. k+2 (u 40 B, rsd 80 B):
///   640 B. The planes a loop reads at k-2 .. k+2 stay in the L2 between
///   their uses (at most 5 planes of u, 81 kB each at 16 ranks in class C,
///   and one or two of flux and rsd).
///
/// \[estimate] on what stays in cache: a sweep's blocks of one plane and a
/// line's or plane's neighbours in the stencils are taken to, whole 3D
/// arrays not (`u`, `rsd`, `frct`, `flux`: 11-13 MB each a rank at 16
/// ranks in class C, `applu.incl` with `isiz1 = isiz2 = 41`).
pub const LU_BYTES: LuPerPoint = LuPerPoint {
    scale: 80.0,
    jacobian: 40.0,
    solve: 80.0,
    update: 120.0,
    rhs_init: 120.0,
    rhs_direction: 200.0,
    rhs_zeta: 640.0,
};

/// LU's floating-point operations per grid point by phase, as written in
/// the loop bodies of NPB3.3-MPI LU (each operator once, a `do m = 1, 5`
/// body five times, divisions by constants and by variables left out):
/// `ssor.f` scaling (5) and update (10); `jacld.f` 841 and `blts.f` 270
/// (its two k- and j/i-neighbour products, 55 + 105, the 5 x 5
/// elimination, 90, and the back substitution, 20); `jacu.f` 790 and
/// `buts.f` 270; `rhs.f` 895: `rsd = -frct` (5), then 297 a direction.
/// \[estimate] the compiler hoists the products of constants in
/// `jacld`/`jacu` out of the loops, and `rhs`'s dissipation has statements
/// for the points next to the boundary that run at four points a line but
/// are counted at every point, so these counts only apportion NPB's own
/// operation count (`lu.f`, 1984.77 n^3 a step) among the phases; the two
/// sweeps share their means.
pub const LU_OPS_COUNTED: LuPerPoint = LuPerPoint {
    scale: 5.0,
    jacobian: 815.5,
    solve: 270.0,
    update: 10.0,
    rhs_init: 5.0,
    rhs_direction: 296.7,
    rhs_zeta: 296.7,
};

/// Bytes per point of a plane of the sweeps' blocks (`applu.incl`:
/// `a, b, c, d(5,5,isiz1,isiz2)`, 4 x 25 doubles): `jacld` (`jacu`) writes
/// them and `blts` (`buts`) reads them back. When a plane's blocks do not
/// fit the rank's L2 share they go to memory: the Jacobian moves them
/// twice (the write-allocate's read, the write-back) and the solve once.
pub const LU_BLOCK_BYTES: f64 = 4.0 * 25.0 * 8.0;

/// Divisions per grid point by phase (`/` on a variable; the divider is
/// busy [`DIVSD_CYCLES`] for each): `jacld`/`jacu` take `1 / u(1,...)` of
/// the four points whose blocks they form (4), `blts`/`buts` invert the
/// 5 x 5 diagonal block (4 pivots) and divide the five unknowns by it in
/// the back substitution (5), each direction of `rhs` divides by `u(1,...)`
/// four times (`u21`, `q`, and `tmp` at i and i-1). \[fact] counted in
/// NPB3.3-MPI LU `jacld.f`, `jacu.f`, `blts.f`, `buts.f`, `rhs.f`.
pub const LU_DIVISIONS: LuPerPoint =
    LuPerPoint { scale: 0.0, jacobian: 4.0, solve: 9.0, update: 0.0, rhs_init: 0.0, rhs_direction: 4.0, rhs_zeta: 4.0 };

/// Fused micro-ops of one point of `blts`'s (`buts`'s) second loop, by
/// part, in the source's order: the ten-term sums for m = 1 .. 5 (each:
/// ten products, each with its block's load, nine additions, `omega *`,
/// the load-subtract and the store of `v(m)`: 22; and the five loads of
/// the neighbour at j-1: 115); the diagonal block's elimination (25 loads
/// of `tmat`, 4 reciprocals of a pivot, 10 multipliers `tmp`, 30
/// multiply-subtracts of `tmat` and 10 of `v`: 123); the back substitution
/// (5 divisions, 10 multiply-subtracts, 5 stores: 30). \[estimate] as
/// gfortran compiles the loop body (a multiply with a load operand is one
/// fused micro-op on Merom; the binary was not read).
pub const LU_SOLVE_UOPS: [f64; 3] = [115.0, 123.0, 30.0];

/// Operations per point of `blts`'s (`buts`'s) first loop, of the 270 of
/// [`LU_OPS_COUNTED`]'s solve: `v(m) -= omega * (ldz(m,1..5) * v(1..5,k-1))`
/// (`buts`: `tv(m) = omega * (udz(m,1..5) * v(1..5,k+1))`), five products,
/// four additions, `omega *` and the subtraction for each m: 55. It is a
/// loop over the plane of its own, before the loop that carries the chain
/// ([`lu_solve_chain_cycles`]), and its points are independent: it runs at
/// the core's operation rate, and the two loops' times add.
pub const LU_SOLVE_K_OPS: f64 = 55.0;

/// The back substitution's chain: `v(5) / tmat(5,5)` (32), `v(4)`: 8 + 32,
/// `v(3)`: 11 + 32, `v(2)`: 14 + 32, `v(1)`: 17 + 32 (MULSD 5, SUBSD 3,
/// [`DIVSD_LATENCY`]).
const LU_BACK_SUBSTITUTION_CYCLES: f64 = 5.0 * DIVSD_LATENCY + 8.0 + 11.0 + 14.0 + 17.0;

/// Cycles of the dependence chain from one point of `blts` (`buts`) to the
/// next along i, on a core that holds `window` micro-ops in flight. The
/// point's unknowns need its neighbour's at i-1 (i+1), and that neighbour
/// is the previous point of the loop, so the loop over a plane runs at
/// this chain's latency. Two paths lead from the neighbour's last unknown
/// `v(1,i-1,j,k)` to the point's:
/// * through the ten-term sums: its product (5), the nine additions in
///   the source's order (27), `omega *` (5), the subtraction (3): 40; the
///   forward elimination of `v`, `v(2..5) -= v(1..4) * tmp` (4 x 8); the
///   back substitution (210): 282 cycles, when the diagonal block's
///   elimination, which does not depend on the neighbour, was done ahead;
/// * through the diagonal block's elimination, when it cannot start early:
///   it comes after the sums in the source ([`LU_SOLVE_UOPS`]: 115 micro-ops
///   before its first load), and with Merom's 96-entry reorder buffer
///   ([`ROB_UOPS`]) its loads enter only once the point's first 19
///   micro-ops have retired, the first sum's products and additions up to
///   its eighth, which wait on the neighbour's `v(1)` (5 + 8 x 3); then the
///   load of `tmat(1,1)` (3), four pivots in a row, each a reciprocal
///   ([`DIVSD_LATENCY`]), its multiplier (5) and the next pivot's update
///   (5 + 3): 180 (`v(5)`'s last update runs beside `tmat(5,5)`'s), then
///   the back substitution: 29 + 3 + 180 + 210 = 422 cycles.
///
/// A window that holds a whole point (268 micro-ops) lets the next point's
/// elimination run under this point's back substitution: the first path.
/// Between the sums' 115 and a whole point it would overlap in part; taken
/// as not at all. \[estimate] the compiler keeps the source's order of the
/// statements and of the sums (gfortran without `-ffast-math`); `buts`
/// ends with `v = v - tv` (3 cycles more, left out); the Merom latencies
/// are [`EpGenerator::chain_cycles`]'s sources.
pub fn lu_solve_chain_cycles(window: f64) -> f64 {
    let point: f64 = LU_SOLVE_UOPS.iter().sum();
    if window >= point {
        40.0 + 4.0 * 8.0 + LU_BACK_SUBSTITUTION_CYCLES
    } else {
        (5.0 + 8.0 * 3.0) + 3.0 + 4.0 * (DIVSD_LATENCY + 5.0 + 8.0) + LU_BACK_SUBSTITUTION_CYCLES
    }
}

/// Something of LU per grid point (bytes: [`LU_BYTES`]; operations:
/// [`LU_OPS_COUNTED`]) or per rank (seconds: [`lu_phases`]), by phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LuPerPoint {
    pub scale: f64,
    /// Each sweep's Jacobian blocks (`jacld`, `jacu`).
    pub jacobian: f64,
    /// Each sweep's triangular solve (`blts`, `buts`).
    pub solve: f64,
    pub update: f64,
    pub rhs_init: f64,
    /// Each of rhs's xi and eta directions.
    pub rhs_direction: f64,
    /// rhs's zeta direction.
    pub rhs_zeta: f64,
}

impl LuPerPoint {
    /// Each of the two sweeps.
    pub fn sweep(&self) -> f64 {
        self.jacobian + self.solve
    }

    /// The whole step: both sweeps, the three directions.
    pub fn total(&self) -> f64 {
        self.scale + 2.0 * self.sweep() + self.update + self.rhs_init + 2.0 * self.rhs_direction + self.rhs_zeta
    }
}

/// Seconds of each LU phase on one of `nprocs` ranks in one SSOR step.
/// The phases run one after the other and each touches its own data, so
/// each is its own roofline: the largest of its operations at `ops_per_s`
/// (NPB's count, [`LU_OPS_COUNTED`]'s shares of it), its divisions on the
/// divider ([`LU_DIVISIONS`]), its bytes ([`LU_BYTES`]) at `bytes_per_s`,
/// and for the triangular solves their first loop at the operation rate
/// ([`LU_SOLVE_K_OPS`]) then their chain from point to point
/// ([`lu_solve_chain_cycles`] through Merom's window). The Jacobians work
/// on one plane's blocks in cache and are bound by their operations, the
/// solves by their chain;
/// the scaling, the update and `rhs` stream whole arrays and are bound by
/// memory. A single roofline over the step would let the sweeps' work hide
/// under `rhs`'s memory traffic, which it cannot: they do not run at the
/// same time.
pub fn lu_phases(p: &NasProblem, nprocs: u32, r: &NasRates) -> LuPerPoint {
    let points = (p.dims[0] * p.dims[1] * p.dims[2]) as f64 / nprocs as f64;
    let ops_per_point = p.total_ops / p.timed_steps() as f64 / (p.dims[0] * p.dims[1] * p.dims[2]) as f64;
    let share = ops_per_point / LU_OPS_COUNTED.total();
    // `chain`: seconds a point that no other resource hides.
    let phase = |ops: f64, divisions: f64, bytes: f64, chain: f64| {
        let divider = divisions * DIVSD_CYCLES / r.cycles_per_s;
        (ops * share / r.ops_per_s).max(divider).max(chain).max(bytes / r.bytes_per_s) * points
    };
    let solve_chain = LU_SOLVE_K_OPS * share / r.ops_per_s + lu_solve_chain_cycles(ROB_UOPS) / r.cycles_per_s;
    let (o, d, mut b) = (LU_OPS_COUNTED, LU_DIVISIONS, LU_BYTES);
    if !lu_blocks_fit(p, nprocs, r.l2_share) {
        b.jacobian += 2.0 * LU_BLOCK_BYTES;
        b.solve += LU_BLOCK_BYTES;
    }
    LuPerPoint {
        scale: phase(o.scale, d.scale, b.scale, 0.0),
        jacobian: phase(o.jacobian, d.jacobian, b.jacobian, 0.0),
        solve: phase(o.solve, d.solve, b.solve, solve_chain),
        update: phase(o.update, d.update, b.update, 0.0),
        rhs_init: phase(o.rhs_init, d.rhs_init, b.rhs_init, 0.0),
        rhs_direction: phase(o.rhs_direction, d.rhs_direction, b.rhs_direction, 0.0),
        rhs_zeta: phase(o.rhs_zeta, d.rhs_zeta, b.rhs_zeta, 0.0),
    }
}

/// Whether a plane's Jacobian blocks ([`LU_BLOCK_BYTES`] a point of the
/// largest rank's `nx x ny` block, [`LuRank`]) fit `l2_share` bytes.
pub fn lu_blocks_fit(p: &NasProblem, nprocs: u32, l2_share: f64) -> bool {
    let g = LuRank::new(0, nprocs, p.dims[0]);
    LU_BLOCK_BYTES * (g.nx * g.ny) as f64 <= l2_share
}

/// One SSOR iteration of NPB LU for `rank` of `nprocs` on `n0`^3 points,
/// with `compute` in all (split as `phases`, [`lu_phases`]):
/// * lower sweep, `k = 2 .. nz-1`: `exchange_1(iex=0)` receives the
///   plane's `5 * (jend-jst+1)` doubles from north and `5 * (iend-ist+1)`
///   from west (`MPI_RECV`), `jacld` and `blts` compute, `exchange_1(iex=2)`
///   sends to south and east (`MPI_SEND`);
/// * upper sweep, `k = nz-1 .. 2`: from south and east, to north and west;
/// * `rhs`: `exchange_3(u, 0)`: `10 * ny * nz` doubles, irecv from north,
///   send south, wait; irecv from south, send north, wait; the xi fluxes;
///   `exchange_3(u, 1)`: `10 * nx * nz` with west and east the same way;
///   the eta and zeta fluxes.
///
/// `l2norm`'s allreduces (5 doubles) run every `inorm` iterations, and
/// `inorm` is `itmax` in classes B and C (`npbparams.h`): once in the timed
/// region, left out of the step.
pub fn lu_step(ops: &mut Body, rank: u32, nprocs: u32, n0: u64, compute: Duration, phases: &LuPerPoint) {
    let g = LuRank::new(rank, nprocs, n0);
    let b = phases;
    let share = |seconds: f64| part(compute, seconds / b.total());
    let planes = n0 - 2;
    let plane = share(b.sweep() / planes as f64);
    let (ns, ew) = (40 * g.nj, 40 * g.ni);
    ops.push(Op::Compute(share(b.scale)));
    // Lower sweep: from north (tag +0) and west (+1), to south and east.
    for _ in 0..planes {
        sweep_plane(ops, [(g.north, ns, tag::LU), (g.west, ew, tag::LU + 1)], plane);
        sweep_sends(ops, [(g.south, ns, tag::LU), (g.east, ew, tag::LU + 1)]);
    }
    // Upper sweep: from south (+2) and east (+3), to north and west.
    for _ in 0..planes {
        sweep_plane(ops, [(g.south, ns, tag::LU + 2), (g.east, ew, tag::LU + 3)], plane);
        sweep_sends(ops, [(g.north, ns, tag::LU + 2), (g.west, ew, tag::LU + 3)]);
    }
    ops.push(Op::Compute(share(b.update + b.rhs_init)));
    halo(ops, g.north, g.south, 80 * g.ny * n0, tag::LU + 4);
    ops.push(Op::Compute(share(b.rhs_direction)));
    halo(ops, g.west, g.east, 80 * g.nx * n0, tag::LU + 6);
    ops.push(Op::Compute(share(b.rhs_direction + b.rhs_zeta)));
}

/// A sweep's plane: its receives (blocking, one after the other), then its compute.
fn sweep_plane(ops: &mut Body, from: [(Option<u32>, u64, u64); 2], compute: Duration) {
    for (peer, size, tag) in from {
        if let Some(src) = peer {
            ops.push(Op::Recv { src: Some(src), size, tag });
            ops.push(Op::WaitOutstanding(0));
        }
    }
    ops.push(Op::Compute(compute));
}

fn sweep_sends(ops: &mut Body, to: [(Option<u32>, u64, u64); 2]) {
    for (peer, size, tag) in to {
        if let Some(peer) = peer {
            ops.push(Op::Send { peer, size, tag });
        }
    }
}

/// `exchange_3`'s one axis: irecv from `low`, send to `high`, wait; irecv
/// from `high`, send to `low`, wait (`tag` upwards, `tag + 1` downwards).
fn halo(ops: &mut Body, low: Option<u32>, high: Option<u32>, size: u64, tag: u64) {
    for (from, to, tag) in [(low, high, tag), (high, low, tag + 1)] {
        if let Some(src) = from {
            ops.push(Op::Recv { src: Some(src), size, tag });
        }
        if let Some(peer) = to {
            ops.push(Op::Send { peer, size, tag });
        }
        ops.push(Op::WaitOutstanding(0));
    }
}

/// NPB BT and SP's multi-partition (`make_set.f`): `p = sqrt(nprocs)`
/// cells per rank; rank `node` at `(i, j) = (node mod p, node / p)`; its
/// cell `c` (0-based) at `((i + c) mod p, (j - c) mod p, c)`, so it owns
/// one cell in every slab of every axis; its successor and predecessor
/// along each axis (`successor(1) = mod(i+1,p) + p*j`, `successor(2) = i +
/// p*mod(j+1,p)`, `successor(3) = mod(i-1,p) + p*mod(j+1,p)`, and the
/// predecessors the other way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiPartition {
    pub p: u32,
    i: u32,
    j: u32,
}

impl MultiPartition {
    pub fn new(node: u32, nprocs: u32) -> MultiPartition {
        let p = ((nprocs as f64).sqrt() + 1e-5) as u32;
        MultiPartition { p, i: node % p, j: node / p }
    }

    /// Coordinates of cell `c` (0-based).
    pub fn cell(&self, c: u32) -> [u32; 3] {
        let p = self.p;
        [(self.i + c) % p, (self.j + p - c % p) % p, c]
    }

    pub fn successor(&self, axis: usize) -> u32 {
        let (i, j, p) = (self.i, self.j, self.p);
        match axis {
            0 => (i + 1) % p + p * j,
            1 => i + p * ((j + 1) % p),
            _ => (i + p - 1) % p + p * ((j + 1) % p),
        }
    }

    pub fn predecessor(&self, axis: usize) -> u32 {
        let (i, j, p) = (self.i, self.j, self.p);
        match axis {
            0 => (i + p - 1) % p + p * j,
            1 => i + p * ((j + p - 1) % p),
            _ => (i + 1) % p + p * ((j + p - 1) % p),
        }
    }

    /// Points of a cell at coordinate `coord` along an axis of `n` points
    /// (`make_set`: the first `n mod p` cells take one more).
    pub fn cell_size(&self, n: u64, coord: u32) -> u64 {
        n / self.p as u64 + u64::from((coord as u64) < n % self.p as u64)
    }

    /// `copy_faces`'s buffers (`define.f` `compute_buffer_size(5)`), in
    /// doubles, along `axis`: `[to the successor, to the predecessor]`, two
    /// layers of 5 variables of every cell with a neighbour that way.
    pub fn faces(&self, n: u64, axis: usize) -> [u64; 2] {
        let mut out = [0; 2];
        for c in 0..self.p {
            let at = self.cell(c);
            let face: u64 = (0..3).filter(|&d| d != axis).map(|d| self.cell_size(n, at[d])).product::<u64>() * 10;
            if at[axis] != self.p - 1 {
                out[0] += face;
            }
            if at[axis] != 0 {
                out[1] += face;
            }
        }
        out
    }
}

/// The two NPB pseudo-applications on the multi-partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adi {
    Bt,
    Sp,
}

/// BT's and SP's traffic per grid point and step, by phase, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdiBytes {
    /// `copy_faces`' `compute_rhs` (and SP's `txinvr`).
    pub rhs: f64,
    /// Per solve direction: the part of the forward elimination done
    /// while the predecessor's message is awaited (SP's `lhsx`, which
    /// `x_solve` calls between `mpi_irecv` and `mpi_waitall`; BT waits first).
    pub lhs: f64,
    /// Per solve direction: the rest of the forward elimination.
    pub forward: f64,
    /// Per solve direction: the back substitution.
    pub back: f64,
    /// `add`: u read and written, rhs read (120 B).
    pub add: f64,
}

impl AdiBytes {
    pub fn total(&self) -> f64 {
        self.rhs + 3.0 * (self.lhs + self.forward + self.back) + self.add
    }
}

/// BT (`rhs.f`, `x_solve.f`, `add.f`; `header.h` for the arrays):
/// * `compute_rhs`: u read (40 B), `rho_i, us, vs, ws, square, qs` written
///   (6 x 8 B + write-allocate); `rhs = forcing` (40 B, rhs 40 B + 40 B
///   write-allocate); per direction u (40 B) and six of the auxiliary
///   arrays (48 B) read, rhs read and written (80 B); `rhs = dt * rhs`
///   (80 B): 136 + 120 + 3 x 168 + 80 = 840 B;
/// * per solve direction, forward: u, `qs`, `rho_i`, `square` read to build
///   the line's Jacobians (64 B; `fjac`, `njac`, `lhs` are one line's, in
///   cache), rhs read and written (80 B), `lhsc` (5 x 5 doubles a point,
///   a whole cell's) written (200 B + 200 B write-allocate): 544 B;
///   back substitution: `lhsc` read (200 B), rhs read and written (80 B);
/// * `add`: 120 B.
///
/// \[estimate] on what stays in cache: one line's work arrays do, a
/// cell's arrays (5-40 MB a rank in class C) do not.
pub const BT_BYTES: AdiBytes = AdiBytes { rhs: 840.0, lhs: 0.0, forward: 544.0, back: 280.0, add: 120.0 };

/// SP (`rhs.f`, `txinvr.f`, `lhsx.f`, `x_solve.f`, `ninvr.f`, `add.f`):
/// * `compute_rhs` as BT's with a seventh auxiliary array (`speed`):
///   152 + 120 + 3 x 176 + 80 = 880 B; `txinvr`: six auxiliary arrays read
///   (48 B), rhs read and written (80 B): 1008 B;
/// * per solve direction: `lhsx` (and `lhsy`, `lhsz`) reads three
///   auxiliary arrays (24 B) and writes `lhs` (15 doubles a point: 120 B
///   and 120 B write-allocate): 264 B; the forward elimination reads and
///   writes `lhs` (240 B) and rhs (80 B); the back substitution reads the
///   six `lhs` entries it needs (48 B) and rhs (80 B), and `ninvr` (`pinvr`,
///   `tzetar`) reads and writes rhs (80 B);
/// * `add`: 120 B.
///
/// \[estimate] on what stays in cache, as for BT.
pub const SP_BYTES: AdiBytes = AdiBytes { rhs: 1008.0, lhs: 264.0, forward: 320.0, back: 208.0, add: 120.0 };

impl Adi {
    pub fn bytes(self) -> AdiBytes {
        match self {
            Adi::Bt => BT_BYTES,
            Adi::Sp => SP_BYTES,
        }
    }

    /// Doubles of the solve's forward and backward messages along `axis`
    /// for the cell at `coord` (its three coordinates). BT sends whole
    /// buffers (`x_send_solve_info`: `MAX_CELL_DIM^2 x (BLOCK_SIZE^2 +
    /// BLOCK_SIZE)`; `x_send_backsub_info`: `MAX_CELL_DIM^2 x BLOCK_SIZE`,
    /// `MAX_CELL_DIM = problem_size / maxcells + 1`); SP the cell's face
    /// without the global boundary (`x_solve.f`: `buffer_size = (jsize -
    /// start(2,c) - end(2,c)) * (ksize - start(3,c) - end(3,c))`, `22 *` and
    /// `10 * buffer_size`).
    pub fn solve_doubles(self, m: &MultiPartition, n: u64, axis: usize, coord: [u32; 3]) -> [u64; 2] {
        match self {
            Adi::Bt => {
                let dim = n / m.p as u64 + 1;
                [dim * dim * 30, dim * dim * 5]
            }
            Adi::Sp => {
                let face: u64 = (0..3)
                    .filter(|&d| d != axis)
                    .map(|d| {
                        let edge = u64::from(coord[d] == 0) + u64::from(coord[d] == m.p - 1);
                        m.cell_size(n, coord[d]) - edge
                    })
                    .product();
                [22 * face, 10 * face]
            }
        }
    }
}

/// One time step of NPB BT or SP (`adi`) for `rank` of `nprocs` (a
/// square) on `n`^3 points, `compute` in all (split by the phases'
/// traffic, [`AdiBytes`]):
/// * `copy_faces`: six `mpi_irecv`s, six `mpi_isend`s (to the successor
///   and predecessor along each axis, [`MultiPartition::faces`]), one
///   `mpi_waitall`; then `compute_rhs`;
/// * per axis, `x_solve` (`y_solve`, `z_solve`): forward over the stages
///   `1 .. ncells`, each but the first receiving from the predecessor
///   before its cell, each but the last sending to the successor after
///   it; backward over `ncells .. 1`, receiving from the successor,
///   sending to the predecessor ([`Adi::solve_doubles`]). A stage's
///   `mpi_wait` also waits for the previous stage's `mpi_isend`;
/// * `add`.
pub fn adi_step(ops: &mut Body, app: Adi, rank: u32, nprocs: u32, n: u64, compute: Duration) {
    let m = MultiPartition::new(rank, nprocs);
    let b = app.bytes();
    let share = |bytes: f64| part(compute, bytes / b.total());
    for axis in 0..3 {
        let (succ, pred) = (m.successor(axis), m.predecessor(axis));
        let (to_succ, to_pred) = (MultiPartition::new(succ, nprocs), MultiPartition::new(pred, nprocs));
        // From the successor: what it sends its predecessor; and back.
        let t = tag::ADI_FACES + 2 * axis as u64;
        ops.push(Op::Recv { src: Some(succ), size: 8 * to_succ.faces(n, axis)[1], tag: t + 1 });
        ops.push(Op::Recv { src: Some(pred), size: 8 * to_pred.faces(n, axis)[0], tag: t });
    }
    for axis in 0..3 {
        let [up, down] = m.faces(n, axis);
        let t = tag::ADI_FACES + 2 * axis as u64;
        ops.push(Op::Send { peer: m.successor(axis), size: 8 * up, tag: t });
        ops.push(Op::Send { peer: m.predecessor(axis), size: 8 * down, tag: t + 1 });
    }
    ops.push(Op::WaitOutstanding(0));
    ops.push(Op::Compute(share(b.rhs)));
    let p = m.p;
    // The cell of each stage (slice): the one whose coordinate along the axis is the stage.
    let at = |axis: usize, stage: u32| (0..p).map(|c| m.cell(c)).find(|x| x[axis] == stage).unwrap();
    for axis in 0..3 {
        let (succ, pred) = (m.successor(axis), m.predecessor(axis));
        let t = tag::ADI_SOLVE + 2 * axis as u64;
        let (lhs, forward, back) = (share(b.lhs / p as f64), share(b.forward / p as f64), share(b.back / p as f64));
        for stage in 0..p {
            let [fwd, _] = app.solve_doubles(&m, n, axis, at(axis, stage));
            if stage > 0 {
                ops.push(Op::Recv { src: Some(pred), size: 8 * fwd, tag: t });
            }
            if b.lhs > 0.0 {
                ops.push(Op::Compute(lhs));
            }
            ops.push(Op::WaitOutstanding(0));
            ops.push(Op::Compute(forward));
            if stage + 1 < p {
                ops.push(Op::Send { peer: succ, size: 8 * fwd, tag: t });
            }
        }
        for stage in (0..p).rev() {
            let [_, bwd] = app.solve_doubles(&m, n, axis, at(axis, stage));
            if stage + 1 < p {
                ops.push(Op::Recv { src: Some(succ), size: 8 * bwd, tag: t + 1 });
                ops.push(Op::WaitOutstanding(0));
            }
            ops.push(Op::Compute(back));
            if stage > 0 {
                ops.push(Op::Send { peer: pred, size: 8 * bwd, tag: t + 1 });
            }
        }
    }
    ops.push(Op::Compute(share(b.add)));
}

#[cfg(test)]
mod tests;
