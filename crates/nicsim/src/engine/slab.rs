//! A slab: the values events name by a `u32` index instead of carrying
//! them (so that an event stays eight bytes), each slot reused once its
//! value is given back, the last freed first, and at most a bound of them
//! held at once. It knows nothing of what it holds: the world's frames in
//! flight (`crate::sim`) and a LANai NI's packets (`crate::nic::lanai`)
//! are slabs.

/// Values named by index, at most `bound` held at once.
#[derive(Debug)]
pub struct Slab<T> {
    slots: Vec<T>,
    free: Vec<u32>,
    bound: u32,
}

impl<T: Copy + Default> Slab<T> {
    /// An empty slab of at most `bound` values, with room made for
    /// `capacity` of them.
    pub fn new(capacity: usize, bound: u32) -> Self {
        Slab { slots: Vec::with_capacity(capacity), free: Vec::new(), bound }
    }

    /// A free slot (its value is the caller's to set), or `None` when
    /// `bound` values are held.
    #[inline]
    pub fn alloc(&mut self) -> Option<u32> {
        if let Some(i) = self.free.pop() {
            return Some(i);
        }
        if self.slots.len() as u32 == self.bound {
            return None;
        }
        self.slots.push(T::default());
        Some(self.slots.len() as u32 - 1)
    }

    /// Holds `x`: its index, or `None` when `bound` values are held.
    #[inline]
    pub fn put(&mut self, x: T) -> Option<u32> {
        let i = self.alloc()?;
        self.slots[i as usize] = x;
        Some(i)
    }

    /// The value at `id`, given back: the slot is free again.
    #[inline]
    pub fn take(&mut self, id: u32) -> T {
        self.free.push(id);
        self.slots[id as usize]
    }

    /// Slot `id` is free again (its value is dropped).
    #[inline]
    pub fn free(&mut self, id: u32) {
        self.free.push(id);
    }

    /// The most values held at once.
    pub fn bound(&self) -> u32 {
        self.bound
    }

    /// Values held now.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots made: the most values held at once so far.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }
}

impl<T> std::ops::Index<usize> for Slab<T> {
    type Output = T;

    #[inline]
    fn index(&self, id: usize) -> &T {
        &self.slots[id]
    }
}

impl<T> std::ops::IndexMut<usize> for Slab<T> {
    #[inline]
    fn index_mut(&mut self, id: usize) -> &mut T {
        &mut self.slots[id]
    }
}

#[cfg(test)]
mod tests {
    use super::Slab;

    #[test]
    fn reuses_the_last_freed_slot_and_refuses_past_its_bound() {
        let mut s: Slab<u64> = Slab::new(0, 3);
        assert_eq!((s.put(10), s.put(11), s.put(12)), (Some(0), Some(1), Some(2)));
        assert_eq!(s.put(13), None, "three held: the bound");
        assert_eq!(s.take(0), 10);
        s.free(2);
        assert_eq!(s.len(), 1);
        assert_eq!(s.put(14), Some(2), "the last freed first");
        assert_eq!(s.put(15), Some(0));
        assert_eq!((s[0], s[1], s[2]), (15, 11, 14));
        assert_eq!((s.len(), s.slots(), s.is_empty()), (3, 3, false));
    }
}
