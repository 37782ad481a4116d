//! NPB EP's compute on a Core 2 (Merom) core (`EP/ep.f`, NPB 3.3 MPI):
//! per batch of `nk` = 2^16 pairs (`mk = 16`), `vranlc(2 * nk, t1, a, x)`
//! fills `x` with 2^17 numbers, then loop 140 takes them in pairs. The two
//! are loops one after the other: the generator's chain ([`EpGenerator`])
//! and the pair loop's ([`ep_accepted_pair_cycles`]) do not overlap.
//!
//! The latencies are Merom's (Xeon E5345): \[estimate] as Agner Fog's
//! "Instruction tables" (Intel Core 2, Merom, 65nm) and Intel's
//! Optimization Reference Manual (Appendix C, CPUID 06_0FH) give them,
//! taken from those documents as recalled; the copies the search tools
//! reach show only their cover pages, so they are not quoted here.

use super::{NasProblem, NasRates};
use crate::time::Duration;
use std::f64::consts::{FRAC_PI_4, SQRT_2};

/// The random-number generator EP is built with (`make.def`'s `RAND`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpGenerator {
    /// `common/randi8.f`: `Lx = iand(Lx*La, i246m1)` in 64-bit integers.
    Randi8,
    /// `common/randdp.f`: the product modulo 2^46 in double precision.
    Randdp,
}

impl EpGenerator {
    /// Cycles of one number of `vranlc` on a Core 2 (Merom) core. Each
    /// number's seed is the product of the previous one, so the loop runs
    /// at the latency of that dependence chain, whatever the issue width:
    /// * `randi8`: one 64-bit `imul` (5 cycles) and one `and` (1);
    /// * `randdp`: `t1 = r23*x` (mulsd, 5), `x1 = int(t1)` (cvttsd2si and
    ///   cvtsi2sd, 7), `x2 = x - t23*x1` (5 + 3), `t1 = a1*x2 + a2*x1`
    ///   (5 + 3), `t2 = int(r23*t1)` (5 + 7), `z = t1 - t23*t2` (5 + 3),
    ///   `t3 = t23*z + a2*x2` (5 + 3), `t4 = int(r46*t3)` (5 + 7), `x = t3 -
    ///   t46*t4` (5 + 3): 8 multiplies, 5 adds, 3 round trips to an integer.
    ///
    /// \[estimate] (the module's sources): IMUL r64,r64 5, AND 1, MULSD 5,
    /// ADDSD/SUBSD 3; 7 cycles for CVTTSD2SI then CVTSI2SD (3 + 4, each
    /// crossing between the integer and floating-point units).
    pub fn chain_cycles(self) -> f64 {
        match self {
            EpGenerator::Randi8 => 5.0 + 1.0,
            EpGenerator::Randdp => 8.0 * 5.0 + 5.0 * 3.0 + 3.0 * 7.0,
        }
    }
}

/// EP's generator: NPB 3.3's default (`config/make.def.template`: "Use
/// \"randi8\" unless there is a reason to use another one", `RAND =
/// randi8`; `README.install`: "The default random number generator package
/// provided is called \"randi8\" and should be used where possible").
/// \[estimate] the studies do not say how they built NPB: the default.
pub const EP_GENERATOR: EpGenerator = EpGenerator::Randi8;

/// Cycles the Merom divider is busy per DIVSD and per SQRTSD: it is not
/// pipelined, so these are the reciprocal throughputs. \[estimate] as
/// the Intel 64 and IA-32 Architectures Optimization Reference Manual,
/// Appendix C, CPUID 06_0FH, gives them (recalled, not quoted): DIVSD 32
/// latency / 31 throughput, SQRTSD 58 / 57; consistent with the Intel
/// Technology Journal 12(3), 2008, "Original 45nm Intel Core
/// Microarchitecture", §"New radix-16 divider": Merom's "Radix-4 floating
/// point divide and Radix-2 square root" (2 and 1 quotient bits a cycle
/// for a 53-bit mantissa).
pub const DIVSD_CYCLES: f64 = 31.0;
pub const SQRTSD_CYCLES: f64 = 57.0;
/// The latencies of the same two (the same source): what a chain through
/// them waits.
pub const DIVSD_LATENCY: f64 = 32.0;
pub const SQRTSD_LATENCY: f64 = 58.0;

/// Entries of Merom's reorder buffer, in fused micro-ops: how many of a
/// loop's micro-ops can be in flight, from the oldest not yet retired to
/// the youngest allocated. \[estimate] 96, as Intel's Optimization
/// Reference Manual (§2.1, Intel Core microarchitecture, "the ROB holds
/// up to 96 micro-ops") and Agner Fog's "The microarchitecture of Intel,
/// AMD and VIA CPUs" (Core 2: reorder buffer of 96 entries, reservation
/// station of 32) give it (recalled, not quoted). The reservation station
/// does not bind here: it holds the micro-ops waiting for their operands,
/// at most the divider tail's dozen and the next pair's few ahead of its
/// own chain.
pub const ROB_UOPS: f64 = 96.0;

/// Cycles of Merom's store-to-load forwarding (a load inside an earlier
/// store's bytes), and of a load that spans two earlier stores, which
/// cannot be forwarded and waits for both to reach the L1 (about 10
/// cycles more). \[estimate] the module's sources, recalled.
pub const STORE_FORWARD_CYCLES: f64 = 5.0;
pub const FAILED_FORWARD_CYCLES: f64 = 15.0;

/// A stretch of one iteration of a loop: the latency of its dependence
/// chain in cycles and its fused micro-ops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainSegment {
    pub cycles: f64,
    pub uops: f64,
}

/// Loop 140 up to `log`'s argument, for an accepted pair: the loads of
/// `x(2i-1)` and `x(2i)` (3), `x1 = 2x - 1` (5 + 3), `t1 = x1**2 + x2**2`
/// (5 + 3): 19 cycles. Its micro-ops: the two loads and the four
/// operations of `x1`, `x2` (6), `t1` (5), the compare and branch (2), the
/// loop's counter (3), and what the call costs: `x1`, `x2` and `t1` live in
/// XMM registers, which the x86-64 ABI leaves to the callee, so they are
/// stored before the call (3) and `t1` moved into the argument (1): 20.
pub const EP_HEAD: ChainSegment = ChainSegment { cycles: 3.0 + 8.0 + 8.0, uops: 20.0 };
/// A rejected pair's micro-ops (`t1 > 1`): [`EP_HEAD`]'s without the call's 4.
pub const EP_REJECTED_UOPS: f64 = 16.0;

/// glibc's `log` for `t1` in (0, 1] and farther than 0.03 from 1 (97 % of
/// the accepted pairs): the 2008 library's `__ieee754_log`
/// (`sysdeps/ieee754/dbl-64/e_log.c`, the IBM Accurate Mathematical
/// Library; x86-64 has no assembly `log` of its own, only the long-double
/// ones in `sysdeps/x86_64/fpu`), stage I of `case_03`. Its chain from the
/// argument to the result, through the `number` union the code reads and
/// writes in halves (a stack slot: the halves go through memory):
/// * `num.d = x; ux = num.i[HIGH_HALF]`: a store and a forwarded load
///   ([`STORE_FORWARD_CYCLES`]);
/// * `num.i[HIGH_HALF] = (... & 0x000fffff) | 0x3ff00000` (2), then `num.d`
///   read whole across the two stores ([`FAILED_FORWARD_CYCLES`]);
/// * `if (num.d > SQRT_2) num.d *= HALF` (5) when the mantissa is above
///   sqrt 2: `t1` is uniform on (0, 1] for an accepted pair (the square of
///   the radius of a point uniform on the disc), so its mantissa is uniform
///   on [1, 2) in every binade, above sqrt 2 with probability 2 - sqrt 2;
/// * `num.d += h1.d` (3), `i` from its high half (forwarded, and, shift: 2);
/// * `Iu[i].d` (address 1, load 3), `u*Iu[i].d + h2.d` (5 + 3), `j` the
///   same way (forwarded, 2);
/// * `p0 = (ONE+(i-75)*DEL_U)*(ONE+(j-180)*DEL_V)`: `j - 180` (1),
///   CVTSI2SD (4), multiply, add, multiply (5 + 3 + 5); `q = u - p0` (3),
///   `w = q*r0` (5; `r0 = Iu[i].d*Iv[j].d` is ready before `q`);
/// * `polI = w+(a2.d+a3.d*w)*w*w` (5 + 3 + 5 + 5 + 3);
/// * `B = polI+B0` (3; `B0` comes from the tables and is ready earlier),
///   `y = A+(B+E1)` (3 + 3). The exit test `y == A+(B-E1)` is a branch.
///
/// Its fused micro-ops, counted from the same source: the special-value
/// tests (12), `case_03`'s reduction to `u`, `i`, `j` (25), `p0`, `q`,
/// `r0`, `w` and `polI` (19), the table loads and the two `EADD`s (`dla.h`:
/// a sum, two absolute values, a compare and branch, the error term; 28),
/// `B0`, `B`, `y` and the exit test (15), prologue and epilogue (6): 105;
/// and the wrapper `__log` (`w_log.c`: the call through the PLT, `x` kept,
/// the call, the `_LIB_VERSION`, NaN and sign tests, the return): 17.
/// \[estimate] as gcc 4.x compiles the C (the binary was not read).
pub const LOG_CHAIN: ChainSegment = ChainSegment {
    cycles: STORE_FORWARD_CYCLES
        + 2.0
        + FAILED_FORWARD_CYCLES
        + (2.0 - SQRT_2) * 5.0
        + (3.0 + STORE_FORWARD_CYCLES + 2.0)
        + (4.0 + 8.0 + STORE_FORWARD_CYCLES + 2.0)
        + (18.0 + 3.0 + 5.0)
        + 21.0
        + 9.0,
    uops: 105.0 + 17.0,
};

/// Loop 140 after `log` returns, for an accepted pair: `-2.d0 * log(t1)`
/// (5), `/ t1` ([`DIVSD_LATENCY`]), `sqrt` ([`SQRTSD_LATENCY`]), `t3 = x1 *
/// t2` (5), `abs` (1) and `max` (3), `l`'s conversion (CVTTSD2SI 3) and
/// address (1), `q(l) = q(l) + 1.d0` (load 3, add 3): 114 cycles. Its
/// micro-ops: the multiply, divide and square root (3), `t3`, `t4` with
/// `x1`, `x2` reloaded (2), the two `abs` and the `max` (3), the
/// conversion and the address (2), the load, add and store of `q(l)` (3),
/// the sums `sx`, `sy` (kept in memory across the call: load-add and store,
/// 4): 17.
pub const EP_TAIL: ChainSegment =
    ChainSegment { cycles: 5.0 + DIVSD_LATENCY + SQRTSD_LATENCY + 5.0 + 1.0 + 3.0 + 3.0 + 1.0 + 3.0 + 3.0, uops: 17.0 };

/// Cycles between consecutive iterations of a loop whose iterations are
/// independent chains (`head` then `tail`) on a core that holds `window`
/// micro-ops in flight: iteration k+1's micro-op m cannot be allocated
/// before iteration k's micro-op m + n - `window` has retired (n the
/// micro-ops of an iteration), and a chain's micro-ops retire as it
/// completes them, so consecutive iterations are at least as far apart as
/// the chain's latency over any n - `window` consecutive micro-ops. The
/// most is over the last ones: `tail` whole, where the latency is dense
/// (the divider), then the end of `head`, whose latency is taken as spread
/// evenly over its micro-ops. Zero when an iteration fits the window: then
/// other limits decide (the divider, in EP).
pub fn window_period(head: ChainSegment, tail: ChainSegment, window: f64) -> f64 {
    let outside = head.uops + tail.uops - window;
    if outside <= 0.0 {
        0.0
    } else if outside <= tail.uops {
        tail.cycles * outside / tail.uops
    } else {
        tail.cycles + head.cycles * ((outside - tail.uops) / head.uops).min(1.0)
    }
}

/// Cycles of loop 140 per accepted pair with a reorder buffer of `window`
/// micro-ops: an accepted pair is one chain, [`EP_HEAD`], [`LOG_CHAIN`],
/// [`EP_TAIL`] (243 cycles, 163 micro-ops with the rejected pairs' between
/// two accepted ones), and only 96 of those fit Merom's window
/// ([`ROB_UOPS`]): the next pair's chain can run beside this one's only
/// as far as the window reaches, so the divider tail and the end of `log`
/// are not overlapped ([`window_period`]: 158 cycles). Nor can a pair take
/// less than the divider's busy time, [`DIVSD_CYCLES`] + [`SQRTSD_CYCLES`].
///
/// The branch `if (t1 <= 1)` is taken with probability pi/4 and
/// mispredicted about 21 % of the pairs, the one in `log` on the mantissa
/// about 41 % of the accepted ones: both resolve early in a pair (on the
/// loads and four operations; on `log`'s first stores and loads), while
/// the next pair is still held out of the window by the previous one's
/// divider tail, so the front end's restart (about 15 cycles on Merom)
/// falls in a stall the window imposes anyway. The `EADD` test in the
/// last part (n = 0, 29 % of the accepted pairs) would add a few cycles
/// when mispredicted (its sum `B0` is ready before `polI`): left out.
pub fn ep_accepted_pair_cycles(window: f64) -> f64 {
    let rejected_per_accepted = (1.0 - FRAC_PI_4) / FRAC_PI_4;
    let head = ChainSegment {
        cycles: EP_HEAD.cycles + LOG_CHAIN.cycles,
        uops: EP_HEAD.uops + LOG_CHAIN.uops + rejected_per_accepted * EP_REJECTED_UOPS,
    };
    window_period(head, EP_TAIL, window).max(DIVSD_CYCLES + SQRTSD_CYCLES)
}

/// EP operations per pair of loop 140 (`ep.f`), before the acceptance
/// test: `x1 = 2x - 1`, `x2 = 2x - 1`, `t1 = x1**2 + x2**2`, the compare.
pub const EP_OPS_PER_PAIR: f64 = 8.0;
/// Floating-point operations of [`LOG_CHAIN`]'s `log` (stage I of
/// `case_03`): `w = x - 1` and its test (2), the normalisation of u (2),
/// `dbl_n` (1), `num.d += h1` (1), `u * Iu[i] + h2` (2), `p0` (2
/// conversions, 5 operations), `q`, `r0`, `w` (3), `polI` (5), `nln2a` (1),
/// two `EADD`s (`dla.h`: a sum, its error and the magnitude test, 5 each),
/// `B0` (5), `B` (1), the exit test (5).
pub const LOG_OPS: f64 = 45.0;
/// EP operations per accepted pair (`t1 <= 1`) besides the divider's:
/// `-2 * log(t1)` (1), `t3`, `t4` (2), two `abs` and the `max` (3), `l`'s
/// conversion (1), the count into `q(l)` (1), the sums `sx`, `sy` (2): 10,
/// and the `log`. Its `/ t1` and `sqrt` run on the divider.
pub const EP_OPS_PER_GAUSSIAN: f64 = 10.0 + LOG_OPS;

/// EP loop 140's operations per random number (two numbers a pair, a pair
/// accepted with probability pi/4, the unit disc's share of the square the
/// pair is drawn in); `vranlc`'s chain is timed apart ([`ep_time`]).
pub fn ep_ops_per_number() -> f64 {
    (EP_OPS_PER_PAIR + FRAC_PI_4 * EP_OPS_PER_GAUSSIAN) / 2.0
}

/// EP's compute on one of `nprocs` ranks (one step): `vranlc` fills `x`
/// with 2^17 numbers at its chain's latency ([`EpGenerator::chain_cycles`]),
/// then loop 140 takes them in pairs, at the slower of the core's
/// operations ([`ep_ops_per_number`] at `ops_per_s`) and its accepted
/// pairs' chains through the window ([`ep_accepted_pair_cycles`], which
/// the divider bounds below). EP's `x` (2^17 doubles, 1 MiB) stays in the
/// L2: it moves no memory traffic.
pub fn ep_time(p: &NasProblem, nprocs: u32, r: &NasRates, generator: EpGenerator) -> Duration {
    ep_time_with_window(p, nprocs, r, generator, ROB_UOPS)
}

/// [`ep_time`] with a reorder buffer of `window` micro-ops.
pub fn ep_time_with_window(p: &NasProblem, nprocs: u32, r: &NasRates, generator: EpGenerator, window: f64) -> Duration {
    let numbers = p.total_ops / nprocs as f64;
    let generate = numbers * generator.chain_cycles() / r.cycles_per_s;
    let pairs = numbers / 2.0;
    let ops = pairs * 2.0 * ep_ops_per_number() / r.ops_per_s;
    let chains = pairs * FRAC_PI_4 * ep_accepted_pair_cycles(window) / r.cycles_per_s;
    Duration::from_ns_f64((generate + ops.max(chains)) * 1e9)
}
