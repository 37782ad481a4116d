//! Test-only helpers for the wire tests: a tiny deterministic generator
//! (SplitMix64) so property loops need no extra crate. Not part of the API.

/// SplitMix64 (Steele, Lea, Flood 2014); deterministic from its seed.
pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(seed)
    }

    pub fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn u32(&mut self) -> u32 {
        (self.u64() >> 32) as u32
    }

    pub fn u16(&mut self) -> u16 {
        (self.u64() >> 48) as u16
    }

    pub fn u8(&mut self) -> u8 {
        (self.u64() >> 56) as u8
    }

    pub fn bool(&mut self) -> bool {
        self.u64() & 1 == 1
    }

    /// Uniform in `0..=max` (slightly biased; fine for tests).
    pub fn upto(&mut self, max: u64) -> u64 {
        if max == u64::MAX {
            self.u64()
        } else {
            self.u64() % (max + 1)
        }
    }

    /// Biased towards edge values (0, 1, max) a quarter of the time.
    pub fn edgy(&mut self, max: u64) -> u64 {
        match self.u64() % 8 {
            0 => 0,
            1 => max,
            2 => max.min(1),
            _ => self.upto(max),
        }
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.u8()).collect()
    }
}
