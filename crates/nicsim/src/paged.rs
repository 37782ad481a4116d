//! A table indexed by rank, made a page at a time.
//!
//! A process keeps state for each rank it talks to: its protocol record
//! towards that peer, the heads of its receive lists by source. Allocated
//! for every rank of the run, that is n entries per process and n^2 in
//! all, whatever the communication pattern: 64 MiB of protocol records at
//! 1,024 ranks, 4 GiB at 8,192, for a halo exchange whose ranks each talk
//! to two neighbours. [`Paged`] keeps its entries in pages of [`PAGE`],
//! each made on the first mutable access to one of its entries; reading an
//! entry of a page never made gives the empty value.
//!
//! Where the pages are is a table too. For the first `PAGE * CHUNK` (4,096)
//! ranks it is one address per page, made with the first page (at most 512
//! bytes): an access reads the address and then the entry. Beyond them a
//! flat table would grow with the ranks of the run, not with those a
//! process talks to: n/8 bytes per process, n^2/8 in all, 0.5 GiB per
//! table at 65,535 ranks. So the pages of the higher ranks are found
//! through chunks of [`CHUNK`] addresses, each made with its first page:
//! an access there reads one address more, out of line.

use std::ops::{Index, IndexMut};

/// Entries per page (a power of two: the division is a shift).
pub const PAGE: usize = 64;

/// Page addresses per chunk (a power of two); a chunk covers
/// `PAGE * CHUNK` entries and is 512 bytes.
pub const CHUNK: usize = 64;

type Page<T> = Box<[T; PAGE]>;
type Chunk<T> = [Option<Page<T>>; CHUNK];
type Chunks<T> = Vec<Option<Box<Chunk<T>>>>;

/// `len` entries, all equal to an empty value until written; see the module
/// documentation.
#[derive(Clone, Debug)]
pub struct Paged<T> {
    /// The pages of the first `PAGE * CHUNK` entries: none until one is
    /// made, then one slot per page of the table's length (at most
    /// `CHUNK`).
    first: Box<[Option<Page<T>>]>,
    /// The pages of the entries beyond: chunk `k` at `rest[k]`, as far as
    /// the highest chunk made. (Boxed, as `first` is a boxed slice, so
    /// that the table is no larger than a flat one: it sits inside every
    /// process's hot state.)
    rest: Option<Box<Chunks<T>>>,
    empty: T,
    len: usize,
}

impl<T: Copy> Paged<T> {
    /// `len` entries equal to `empty`; nothing is allocated yet.
    pub fn new(len: usize, empty: T) -> Self {
        Paged { first: Box::default(), rest: None, empty, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pages made so far (each holds `PAGE` entries).
    pub fn pages_made(&self) -> usize {
        let made = |pages: &[Option<Page<T>>]| pages.iter().filter(|p| p.is_some()).count();
        made(&self.first) + self.rest.iter().flat_map(|r| r.iter().flatten()).map(|c| made(&c[..])).sum::<usize>()
    }

    /// Chunks of page addresses made so far beyond the first `PAGE * CHUNK`
    /// entries.
    pub fn chunks_made(&self) -> usize {
        self.rest.iter().flat_map(|r| r.iter().flatten()).count()
    }

    /// Entry `i`, or `None` past the end.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self[i])
    }

    /// Whether entry `i`'s page was made (an entry of a page never made
    /// holds the empty value).
    pub fn is_made(&self, i: usize) -> bool {
        self.page(i).is_some()
    }

    /// Grows the table to `len` entries (the new ones empty; nothing is
    /// allocated).
    #[inline(always)]
    pub fn grow(&mut self, len: usize) {
        self.len = self.len.max(len);
    }

    /// The page holding entry `i`, if it was made.
    #[inline(always)]
    fn page(&self, i: usize) -> Option<&[T; PAGE]> {
        match self.first.get(i / PAGE) {
            Some(page) => page.as_deref(),
            None => self.page_beyond(i),
        }
    }

    /// [`Paged::page`] beyond the first pages' slots (or before they
    /// are made).
    #[inline(never)]
    fn page_beyond(&self, i: usize) -> Option<&[T; PAGE]> {
        let p = (i / PAGE).checked_sub(CHUNK)?;
        self.rest.as_ref()?.get(p / CHUNK)?.as_deref()?[p % CHUNK].as_deref()
    }

    /// The page holding entry `i`, made if it was not.
    #[inline(always)]
    fn page_mut(&mut self, i: usize) -> &mut [T; PAGE] {
        if i / PAGE < self.first.len() {
            // Borrowed apart, so that the empty value is read only to make
            // a page (an entry can be 64 bytes).
            let Paged { first, empty, .. } = self;
            return first[i / PAGE].get_or_insert_with(|| new_page(*empty));
        }
        self.page_mut_beyond(i)
    }

    /// [`Paged::page_mut`] beyond the first pages' slots: makes them (or
    /// more of them, as the table grew), or the chunk, if they were not.
    #[inline(never)]
    fn page_mut_beyond(&mut self, i: usize) -> &mut [T; PAGE] {
        assert!(i < self.len, "index {i} of {} entries", self.len);
        let Some(p) = (i / PAGE).checked_sub(CHUNK) else {
            let mut first = std::mem::take(&mut self.first).into_vec();
            first.resize_with(self.len.div_ceil(PAGE).min(CHUNK), || None);
            self.first = first.into_boxed_slice();
            let empty = self.empty;
            return self.first[i / PAGE].get_or_insert_with(|| new_page(empty));
        };
        let rest = self.rest.get_or_insert_with(Box::default);
        if p / CHUNK >= rest.len() {
            rest.resize_with(p / CHUNK + 1, || None);
        }
        let empty = self.empty;
        let chunk = rest[p / CHUNK].get_or_insert_with(|| Box::new([const { None }; CHUNK]));
        chunk[p % CHUNK].get_or_insert_with(|| new_page(empty))
    }
}

impl<T: Copy + Default> Default for Paged<T> {
    fn default() -> Self {
        Paged::new(0, T::default())
    }
}

/// A page of empty entries (out of line: made once per page).
#[cold]
#[inline(never)]
fn new_page<T: Copy>(empty: T) -> Page<T> {
    Box::new([empty; PAGE])
}

impl<T: Copy> Index<usize> for Paged<T> {
    type Output = T;

    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < self.len, "index {i} of {} entries", self.len);
        match self.page(i) {
            Some(page) => &page[i % PAGE],
            None => &self.empty,
        }
    }
}

impl<T: Copy> IndexMut<usize> for Paged<T> {
    /// Makes the entry's page if it was never made.
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.len, "index {i} of {} entries", self.len);
        &mut self.page_mut(i)[i % PAGE]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_empty_value_until_written_and_makes_only_written_pages() {
        let mut t = Paged::new(1000, 7u32);
        assert_eq!((t.len(), t.pages_made()), (1000, 0));
        assert!((0..1000).all(|i| t[i] == 7));
        t[3] = 1;
        t[999] = 2;
        assert_eq!(t.pages_made(), 2);
        assert_eq!((t[3], t[999], t[4], t[998], t[500]), (1, 2, 7, 7, 7));
        // A mutable access makes the page even if it writes nothing.
        let _ = &mut t[PAGE];
        assert_eq!(t.pages_made(), 3);
        // Against a vector, through interleaved writes.
        let mut v = vec![7u32; 1000];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for k in 0..5000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % 1000) as usize;
            t[i] = k;
            v[i] = k;
        }
        assert!((0..1000).all(|i| t[i] == v[i]));
    }

    #[test]
    fn grows_without_making_pages() {
        let mut t = Paged::new(0, 0u16);
        assert_eq!(t.get(0), None);
        t.grow(10);
        t[9] = 4;
        t.grow(5 * PAGE);
        assert_eq!((t.len(), t.pages_made(), t.get(9), t.get(5 * PAGE - 1)), (5 * PAGE, 1, Some(&4), Some(&0)));
        assert_eq!(t.get(5 * PAGE), None);
        assert!(t.is_made(0) && t.is_made(PAGE - 1) && !t.is_made(PAGE) && !t.is_made(10 * PAGE));
    }

    #[test]
    fn makes_the_chunks_of_the_pages_written_and_no_others() {
        // 65,535 ranks: the first 4,096 in the flat part, the rest in 15
        // chunks, of which a rank that talks to ranks 1, 5,000 and 65,000
        // makes two (the first and the last). The table grows past the flat
        // part after a write, as a receive list does.
        let n = 65_535;
        let mut t = Paged::new(100, 0u32);
        t[1] = 10;
        t.grow(n);
        assert_eq!((t.pages_made(), t.chunks_made()), (1, 0));
        for (i, v) in [(5_000, 20), (65_000, 30)] {
            t[i] = v;
        }
        assert_eq!((t.pages_made(), t.chunks_made()), (3, 2));
        assert_eq!((t[1], t[5_000], t[65_000], t[64_999], t[40_000], t[n - 1]), (10, 20, 30, 0, 0, 0));
        assert!(t.is_made(65_000 - 65_000 % PAGE) && !t.is_made(40_000) && !t.is_made(PAGE * CHUNK));
        // Against a vector, through interleaved writes in every chunk.
        let mut v: Vec<u32> = (0..n).map(|i| t[i]).collect();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for k in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % n as u64) as usize;
            t[i] = k;
            v[i] = k;
        }
        assert!((0..n).all(|i| t[i] == v[i]));
        assert_eq!(t.chunks_made(), n.div_ceil(PAGE * CHUNK) - 1);
    }

    // The bound is a debug assertion (the look-up is on the hot path).
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "index 10 of 10 entries")]
    fn an_index_past_the_end_panics() {
        let t = Paged::new(10, 0u8);
        let _ = t[10];
    }

    // The bound is a debug assertion (the look-up is on the hot path).
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "index 10 of 10 entries")]
    fn a_write_past_the_end_panics() {
        let mut t = Paged::new(10, 0u8);
        t[10] = 1;
    }
}
