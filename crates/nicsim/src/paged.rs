//! A table indexed by rank, made a page at a time.
//!
//! A process keeps state for each rank it talks to: its protocol record
//! towards that peer, the heads of its receive lists by source. Allocated
//! for every rank of the run, that is n entries per process and n^2 in
//! all, whatever the communication pattern: 64 MiB of protocol records at
//! 1,024 ranks, 4 GiB at 8,192, for a halo exchange whose ranks each talk
//! to two neighbours. [`Paged`] keeps its
//! entries in pages of [`PAGE`], each made on the first mutable access to
//! one of its entries; reading an entry of a page never made gives the
//! empty value. Memory is then O(the ranks a process talks to), and an
//! access costs the page table's index and one load of the page's address
//! (the table is one word per page: 128 bytes at 1,024 ranks).

use std::ops::{Index, IndexMut};

/// Entries per page (a power of two: the division is a shift).
pub const PAGE: usize = 64;

/// `len` entries, all equal to an empty value until written; see the module
/// documentation.
#[derive(Clone, Debug)]
pub struct Paged<T> {
    pages: Vec<Option<Box<[T; PAGE]>>>,
    empty: T,
    len: usize,
}

impl<T: Copy> Paged<T> {
    /// `len` entries equal to `empty`; no page is made yet.
    pub fn new(len: usize, empty: T) -> Self {
        Paged { pages: vec![None; len.div_ceil(PAGE)], empty, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pages made so far (each holds `PAGE` entries).
    pub fn pages_made(&self) -> usize {
        self.pages.iter().filter(|p| p.is_some()).count()
    }

    /// Entry `i`, or `None` past the end.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self[i])
    }

    /// Whether entry `i`'s page was made (an entry of a page never made
    /// holds the empty value).
    pub fn is_made(&self, i: usize) -> bool {
        self.pages.get(i / PAGE).is_some_and(Option::is_some)
    }

    /// Grows the table to `len` entries (the new ones empty; no page is
    /// made). Nothing to do for a table already as long: checked inline.
    #[inline(always)]
    pub fn grow(&mut self, len: usize) {
        if len > self.len {
            self.grow_to(len);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow_to(&mut self, len: usize) {
        self.len = len;
        self.pages.resize(len.div_ceil(PAGE), None);
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
fn new_page<T: Copy>(empty: T) -> Box<[T; PAGE]> {
    Box::new([empty; PAGE])
}

impl<T: Copy> Index<usize> for Paged<T> {
    type Output = T;

    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < self.len, "index {i} of {} entries", self.len);
        match &self.pages[i / PAGE] {
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
        let empty = self.empty;
        &mut self.pages[i / PAGE].get_or_insert_with(|| new_page(empty))[i % PAGE]
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
    #[should_panic]
    fn an_index_past_the_pages_panics() {
        let t = Paged::new(10, 0u8);
        let _ = t[PAGE];
    }
}
