//! One step of the exact stage sorts the members of a class by the bytes of one chunk: each
//! joins the representative whose chunk it equals, becomes a representative itself while the
//! budget allows, or is set aside by the hash of its chunk. The threads that read a step's
//! members share one [`Split`] behind a lock and place each member as soon as it is read, so a
//! buffer is held only while its chunk is read, or for as long as it is a representative's.

use std::collections::HashMap;
use std::sync::Arc;

use dedup_scan::ReadBuf;

use super::Member;

/// What reading one member's chunk showed.
pub(super) enum Seen {
    /// The member could not be read (its reader reported why) and drops out.
    Dropped,
    /// Byte for byte the chunk of this representative (the lead when the member was read;
    /// another thread's member may have made another one the lead since).
    Equal(usize),
    /// Something else, with this XXH3-64; the chunk is in the member's buffer.
    Hashed(u64),
}

pub(super) struct Rep {
    /// Shared with the readers comparing their chunks with it while it is the lead.
    pub chunk: Arc<ReadBuf>,
    /// XXH3-64 of the chunk.
    pub xxh3: u64,
    pub members: Vec<Member>,
    /// The next representative whose chunk has the same XXH3 (a different chunk, or a
    /// collision): the chain starts in `Split::reps_by_hash`.
    next_same_hash: Option<usize>,
}

/// The representative a member's chunk is compared with before it is hashed.
pub(super) struct Lead {
    pub rep: usize,
    pub chunk: Arc<ReadBuf>,
}

/// The members of a step placed so far.
pub(super) struct Split {
    pub reps: Vec<Rep>,
    /// The first representative of each hash; the rest are chained through the representatives,
    /// so that the common case (one per hash) allocates nothing beyond the table.
    reps_by_hash: HashMap<u64, usize>,
    /// Members whose chunk matched no representative once there could be no more, by its hash.
    pub set_aside: HashMap<u64, Vec<Member>>,
    /// Buffers read into that no representative kept, for the step's next reads.
    pub spare: Vec<ReadBuf>,
    rep_limit: usize,
    /// The representative with the most members.
    lead: usize,
    joins: usize,
    splits: usize,
}

impl Split {
    pub fn new(members: usize, rep_limit: usize) -> Split {
        // Sized up front: classes of small files can hold many thousands of members, and growing
        // the index from empty rehashed it again and again.
        let expected_reps = members.min(rep_limit);
        Split {
            reps: Vec::with_capacity(expected_reps),
            reps_by_hash: HashMap::with_capacity(expected_reps),
            set_aside: HashMap::new(),
            spare: Vec::new(),
            rep_limit,
            lead: 0,
            joins: 0,
            splits: 0,
        }
    }

    /// The lead representative's chunk, when comparing the next chunk with it before hashing
    /// it is likely to pay.
    ///
    /// A chunk equal to the lead needs no hash, and is compared on its reading thread as it is
    /// read; a chunk that differs costs the comparison up to its first differing byte on top of
    /// the hash. Members of a class that survived the samples are mostly copies, but a class of
    /// files that differ in the middle would pay for every failed comparison, so the lead is
    /// tried only while members join representatives at least about as often as they split off.
    pub fn lead(&self) -> Option<Lead> {
        let worth_trying = self.splits > 0 && self.joins + 1 >= self.splits;
        let rep = self.lead;
        worth_trying.then(|| Lead { rep, chunk: Arc::clone(&self.reps[rep].chunk) })
    }

    /// Place a member by what its chunk showed; `buf` is the buffer it was read into, if any.
    pub fn place(&mut self, member: Member, seen: Seen, buf: Option<ReadBuf>) {
        let hash = match seen {
            Seen::Dropped => {
                self.spare.extend(buf);
                return;
            }
            Seen::Equal(rep) => {
                self.join(rep, member);
                self.spare.extend(buf);
                return;
            }
            Seen::Hashed(hash) => hash,
        };
        let buf = buf.expect("a chunk that was hashed is held in a buffer");
        let first = self.reps_by_hash.get(&hash).copied();
        let mut same_hash = first;
        while let Some(r) = same_hash {
            if self.reps[r].chunk.bytes() == buf.bytes() {
                break;
            }
            same_hash = self.reps[r].next_same_hash;
        }
        if let Some(r) = same_hash {
            self.join(r, member);
            self.spare.push(buf);
        } else if self.reps.len() < self.rep_limit {
            self.reps_by_hash.insert(hash, self.reps.len());
            self.reps.push(Rep {
                chunk: Arc::new(buf),
                xxh3: hash,
                members: vec![member],
                next_same_hash: first,
            });
            self.splits += 1;
        } else {
            self.set_aside.entry(hash).or_default().push(member);
            self.spare.push(buf);
            self.splits += 1;
        }
    }

    fn join(&mut self, r: usize, member: Member) {
        self.reps[r].members.push(member);
        self.joins += 1;
        if self.reps[r].members.len() > self.reps[self.lead].members.len() {
            self.lead = r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::candidates::Inode;

    fn member(n: u32) -> Member {
        Member { inode: Inode::numbered(n), file: None }
    }

    fn chunk(byte: u8) -> Option<ReadBuf> {
        let mut buf = ReadBuf::new(16);
        buf.bytes_mut().fill(byte);
        Some(buf)
    }

    fn numbers(members: &[Member]) -> Vec<usize> {
        members.iter().map(|m| m.inode.first()).collect()
    }

    /// Readers compare with the lead outside the lock, so the lead may change before their
    /// member is placed: the member must join the representative it was compared with.
    #[test]
    fn a_member_equal_to_an_earlier_lead_joins_that_one() {
        let mut split = Split::new(8, 4);
        split.place(member(0), Seen::Hashed(1), chunk(1));
        split.place(member(1), Seen::Hashed(1), chunk(1));
        let lead = split.lead().expect("members have joined as often as they split");
        assert_eq!(lead.rep, 0);
        // Meanwhile other readers make representative 1 the larger.
        for n in 2..5 {
            split.place(member(n), Seen::Hashed(2), chunk(2));
        }
        assert_eq!(split.lead().map(|lead| lead.rep), Some(1));
        split.place(member(5), Seen::Equal(lead.rep), None);
        assert_eq!(numbers(&split.reps[0].members), [0, 1, 5]);
        assert_eq!(numbers(&split.reps[1].members), [2, 3, 4]);
    }

    /// Equal hashes are only a hint: a chunk joins a representative only if its bytes are the
    /// same, and once the budget of representatives is spent the rest is set aside by hash.
    #[test]
    fn only_equal_bytes_join_and_the_rest_is_set_aside_past_the_budget() {
        let mut split = Split::new(8, 2);
        split.place(member(0), Seen::Hashed(7), chunk(1));
        split.place(member(1), Seen::Hashed(7), chunk(2));
        split.place(member(2), Seen::Hashed(7), chunk(3));
        split.place(member(3), Seen::Hashed(9), chunk(4));
        split.place(member(4), Seen::Hashed(7), chunk(2));
        split.place(member(5), Seen::Dropped, chunk(5));
        assert_eq!(split.reps.len(), 2);
        assert_eq!(numbers(&split.reps[0].members), [0]);
        assert_eq!(numbers(&split.reps[1].members), [1, 4]);
        assert_eq!(numbers(&split.set_aside[&7]), [2]);
        assert_eq!(numbers(&split.set_aside[&9]), [3]);
        // The buffers of every chunk no representative kept are there for the next reads.
        assert_eq!(split.spare.len(), 4);
    }

    /// Representatives of one hash are chained: a chunk equal to any of them, the oldest
    /// included, joins that one.
    #[test]
    fn every_representative_of_a_hash_is_found() {
        let mut split = Split::new(8, 8);
        for (n, byte) in [(0, 1), (1, 2), (2, 3)] {
            split.place(member(n), Seen::Hashed(7), chunk(byte));
        }
        for (n, byte) in [(3, 1), (4, 3), (5, 2), (6, 1)] {
            split.place(member(n), Seen::Hashed(7), chunk(byte));
        }
        assert_eq!(split.reps.len(), 3);
        assert_eq!(numbers(&split.reps[0].members), [0, 3, 6]);
        assert_eq!(numbers(&split.reps[1].members), [1, 5]);
        assert_eq!(numbers(&split.reps[2].members), [2, 4]);
    }

    /// While members split off more often than they join, comparing with a lead first would
    /// mostly fail, so none is offered.
    #[test]
    fn no_lead_is_offered_while_members_mostly_differ() {
        let mut split = Split::new(8, 8);
        assert!(split.lead().is_none());
        split.place(member(0), Seen::Hashed(1), chunk(1));
        assert_eq!(split.lead().map(|lead| lead.rep), Some(0));
        split.place(member(1), Seen::Hashed(2), chunk(2));
        split.place(member(2), Seen::Hashed(3), chunk(3));
        assert!(split.lead().is_none());
    }
}
