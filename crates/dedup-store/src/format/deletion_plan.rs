//! The plaintext of a deletion plan (docs/store-format.md §12): what a prune will delete, which
//! snapshots its marking saw, and which writing sessions were live when it wrote the plan.

use super::wire::{Reader, Writer};
use super::DecodeError;
use crate::id::Id;

/// Longest writer marker name accepted (`writers/` and 64 hex digits in practice).
const MAX_MARKER_NAME: usize = 1024;

/// A decoded deletion plan.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeletionPlan {
    /// When the plan was written, ns since the epoch.
    pub created: i64,
    /// Packs to delete.
    pub packs: Vec<Id>,
    /// Index files to delete (superseded by the prune's new index files).
    pub index_files: Vec<Id>,
    /// The snapshots whose blobs the prune marked: any other snapshot present when the plan is
    /// executed is marked again first.
    pub snapshots: Vec<Id>,
    /// Object names of the writer markers that were present after the plan was first written:
    /// the plan is executed once none of them is present and fresh.
    pub writers: Vec<String>,
    /// Whether `writers` was filled in. A prune writes its plan first without them (so that
    /// writers starting from then on see it), lists the markers, writes the plan again with
    /// them and deletes the first. An incomplete plan is never executed.
    pub complete: bool,
}

impl DeletionPlan {
    /// The plaintext.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Writer::default();
        out.u8(1);
        out.i64(self.created);
        for ids in [&self.packs, &self.index_files, &self.snapshots] {
            out.len(ids.len());
            for id in ids {
                out.id(id);
            }
        }
        out.len(self.writers.len());
        for name in &self.writers {
            out.bytes(name.as_bytes());
        }
        out.u8(u8::from(self.complete));
        out.buf
    }

    /// Decodes untrusted bytes.
    pub fn decode(bytes: &[u8]) -> Result<DeletionPlan, DecodeError> {
        let mut r = Reader::new(bytes);
        r.version(1)?;
        let created = r.i64()?;
        let ids = |r: &mut Reader<'_>, what: &str| -> Result<Vec<Id>, DecodeError> {
            let count = r.count(32, what)?;
            (0..count).map(|_| r.id()).collect()
        };
        let packs = ids(&mut r, "packs")?;
        let index_files = ids(&mut r, "index files")?;
        let snapshots = ids(&mut r, "snapshots")?;
        let count = r.count(4, "writers")?;
        let writers =
            (0..count).map(|_| r.str(MAX_MARKER_NAME, "writer")).collect::<Result<_, _>>()?;
        let complete = match r.u8()? {
            0 => false,
            1 => true,
            other => return Err(DecodeError::invalid(format!("complete flag {other}"))),
        };
        r.finish()?;
        Ok(DeletionPlan { created, packs, index_files, snapshots, writers, complete })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plan_strategy() -> impl Strategy<Value = DeletionPlan> {
        let ids = || proptest::collection::vec(any::<[u8; 32]>().prop_map(Id), 0..4);
        let writers = proptest::collection::vec("writers/[0-9a-f]{8}", 0..3);
        (any::<i64>(), ids(), ids(), ids(), writers, any::<bool>()).prop_map(
            |(created, packs, index_files, snapshots, writers, complete)| DeletionPlan {
                created,
                packs,
                index_files,
                snapshots,
                writers,
                complete,
            },
        )
    }

    proptest! {
        #[test]
        fn plans_round_trip(plan in plan_strategy()) {
            prop_assert_eq!(DeletionPlan::decode(&plan.encode()), Ok(plan));
        }

        #[test]
        fn mutated_plans_never_panic(plan in plan_strategy(), at in any::<usize>(), byte in 1u8.., cut in any::<usize>()) {
            crate::format::damaged_input(&plan.encode(), at, byte, cut, DeletionPlan::decode);
        }
    }
}
