//! Members of candidate sets keyed by a hash of what was read of them, and split into runs of one
//! key: how the sample stage and the whole-read switch both split classes.

use crate::stages::candidates::Inode;
use crate::stages::reading::Reading;

/// Each set's members with their key, sorted by key and then as the walk sorted them (entries
/// are sorted by (dev, ino), so `first` keeps that order); members that could not be read drop
/// out (the reader has reported why).
pub(crate) fn keyed(
    ctx: &Reading,
    sets: Vec<Vec<Inode>>,
    key: &(dyn Fn(usize, &Inode) -> Option<u64> + Sync),
) -> Vec<Vec<(u64, Inode)>> {
    let mut keyed = ctx.keyed_sets(sets, key);
    for set in &mut keyed {
        sort_keyed(set);
    }
    keyed
}

/// The members of a set sorted as [`keyed`] gives, in runs of one key each.
pub(crate) fn same_key_runs(set: &[(u64, Inode)]) -> impl Iterator<Item = Vec<Inode>> + '_ {
    set.chunk_by(|a, b| a.0 == b.0).map(|run| run.iter().map(|&(_, inode)| inode).collect())
}

/// Members with their key in the order [`keyed`] gives: by key, then as the walk sorted them.
pub(crate) fn sort_keyed(set: &mut [(u64, Inode)]) {
    set.sort_unstable_by_key(|&(key, inode)| (key, inode.first()));
}
