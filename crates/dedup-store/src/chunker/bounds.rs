//! What every content-defined rule shares: a chunk is the rest of the stream up to `min` bytes,
//! else ends at the first cut the rule finds past `min`, else at `max`; and a cut found in
//! fewer than `max` bytes depends on no later byte, so it is decided before the stream is.

/// The cut point of `data` (at least `max` bytes, or the rest of the stream), `find` giving the
/// rule's first cut below `max`.
pub(super) fn cut(
    data: &[u8],
    min: usize,
    max: usize,
    find: impl FnOnce(&[u8]) -> Option<usize>,
) -> usize {
    let n = data.len();
    if n <= min {
        return n;
    }
    find(data).unwrap_or(max.min(n))
}

/// The cut point of `data` if its bytes decide it: a cut found stands whatever follows, but none
/// found in fewer than `max` bytes says nothing yet.
pub(super) fn cut_if_decided(
    data: &[u8],
    min: usize,
    max: usize,
    find: impl FnOnce(&[u8]) -> Option<usize>,
) -> Option<usize> {
    if data.len() >= max {
        return Some(cut(data, min, max, find));
    }
    if data.len() <= min {
        return None;
    }
    find(data)
}
