//! A file's pieces (a stored chunk, a hole, bytes not yet cut) by their start offset, as a
//! sorted vector: a tree of small files holds one piece each, which a `BTreeMap` keeps in a node
//! of eleven slots (about 630 bytes) and this keeps in one. Files are written mostly in order, so
//! pieces come and go mostly at the end, where a vector does not move the others.

use std::ops::{Bound, RangeBounds};

use dedup_store::Id;

/// One piece of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// A chunk in the repository, `len` bytes.
    Stored { id: Id, len: u64 },
    /// `len` bytes of zeros, stored as nothing.
    Hole { len: u64 },
    /// Bytes written and not yet cut into chunks.
    Fresh(Vec<u8>),
}

impl Piece {
    /// Its length in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Piece::Stored { len, .. } | Piece::Hole { len } => *len,
            Piece::Fresh(bytes) => bytes.len() as u64,
        }
    }
}

/// Pieces in order with their starts (a named type: the borrow is of the map only, not of
/// the range asked for).
pub type Pieces<'a> = std::iter::Map<
    std::slice::Iter<'a, (u64, Piece)>,
    fn(&'a (u64, Piece)) -> (&'a u64, &'a Piece),
>;

/// Pieces by start offset, in order, no two at one offset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PieceMap {
    entries: Vec<(u64, Piece)>,
}

impl PieceMap {
    fn position(&self, at: u64) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&at, |(start, _)| *start)
    }

    /// Puts `piece` at `at`; returns the piece it replaces.
    pub fn insert(&mut self, at: u64, piece: Piece) -> Option<Piece> {
        match self.position(at) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, piece)),
            Err(i) => {
                self.entries.insert(i, (at, piece));
                None
            }
        }
    }

    /// Takes the piece at `at` out.
    pub fn remove(&mut self, at: &u64) -> Option<Piece> {
        let i = self.position(*at).ok()?;
        let (_, piece) = self.entries.remove(i);
        // A file that shrank to a few pieces keeps no room for the many it had.
        if self.entries.capacity() > 8 && self.entries.len() < self.entries.capacity() / 4 {
            self.entries.shrink_to(self.entries.len() * 2);
        }
        Some(piece)
    }

    pub fn get(&self, at: &u64) -> Option<&Piece> {
        self.position(*at).ok().map(|i| &self.entries[i].1)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&u64, &Piece)> {
        self.entries.iter().map(|(at, piece)| (at, piece))
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&u64, &mut Piece)> {
        self.entries.iter_mut().map(|(at, piece)| (&*at, piece))
    }

    pub fn values(&self) -> impl Iterator<Item = &Piece> {
        self.entries.iter().map(|(_, piece)| piece)
    }

    /// The pieces whose start lies in `range`, in order.
    pub fn range(&self, range: impl RangeBounds<u64>) -> Pieces<'_> {
        let from = match range.start_bound() {
            Bound::Included(&at) => self.entries.partition_point(|(start, _)| *start < at),
            Bound::Excluded(&at) => self.entries.partition_point(|(start, _)| *start <= at),
            Bound::Unbounded => 0,
        };
        let to = match range.end_bound() {
            Bound::Included(&at) => self.entries.partition_point(|(start, _)| *start <= at),
            Bound::Excluded(&at) => self.entries.partition_point(|(start, _)| *start < at),
            Bound::Unbounded => self.entries.len(),
        };
        self.entries[from..to.max(from)].iter().map(|(at, piece)| (at, piece))
    }

    /// Gives back room beyond what the pieces need (a file whose writes are settled).
    pub fn shrink(&mut self) {
        if self.entries.capacity() > self.entries.len() {
            self.entries.shrink_to_fit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hole(len: u64) -> Piece {
        Piece::Hole { len }
    }

    #[test]
    fn ranges_match_a_btree_map() {
        let mut map = PieceMap::default();
        let mut tree = std::collections::BTreeMap::new();
        for at in [40u64, 0, 20, 10, 30, 20] {
            assert_eq!(map.insert(at, hole(at + 1)), tree.insert(at, hole(at + 1)));
        }
        assert_eq!(map.remove(&10), tree.remove(&10));
        assert_eq!(map.remove(&11), None);
        let bounds = [Bound::Unbounded, Bound::Included(20), Bound::Excluded(20)];
        for start in bounds {
            for end in
                [Bound::Unbounded, Bound::Included(30), Bound::Excluded(30), Bound::Excluded(25)]
            {
                let ours: Vec<_> = map.range((start, end)).collect();
                let theirs: Vec<_> = tree.range((start, end)).collect();
                assert_eq!(ours, theirs, "{start:?}..{end:?}");
            }
        }
        assert_eq!(map.range(..=25).next_back(), tree.range(..=25).next_back());
        assert_eq!(map.get(&30), tree.get(&30));
        assert_eq!(map.iter().collect::<Vec<_>>(), tree.iter().collect::<Vec<_>>());
    }
}
