//! Snapshots' plaintext: when, which root tree (and, versions 2 and 4, which root status tree),
//! from which host and paths, tags, whether complete, the backup's summary, and (versions 3 and
//! 4) the snapshot it was made from by `tag`, `rewrite` or `copy`.

use super::wire::{Reader, Writer};
use super::DecodeError;
use crate::id::Id;

const MAX_TEXT: usize = 4096;
const MAX_PATH: usize = 1 << 16;

/// What a backup did, kept with its snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Files not in the parent snapshot.
    pub files_new: u64,
    /// Files changed since the parent.
    pub files_changed: u64,
    /// Files unchanged since the parent (not read).
    pub files_unchanged: u64,
    /// Directories.
    pub dirs: u64,
    /// Symlinks, FIFOs, devices, sockets.
    pub others: u64,
    /// Entries that could not be read.
    pub errors: u64,
    /// Bytes read from files.
    pub bytes_read: u64,
    /// Logical size of all files.
    pub bytes_total: u64,
    /// Bytes added to the repository (after dedup and compression, as stored).
    pub bytes_added: u64,
    /// Blobs added.
    pub blobs_added: u64,
}

impl Summary {
    fn fields(&self) -> [u64; 10] {
        [
            self.files_new,
            self.files_changed,
            self.files_unchanged,
            self.dirs,
            self.others,
            self.errors,
            self.bytes_read,
            self.bytes_total,
            self.bytes_added,
            self.blobs_added,
        ]
    }

    fn from_fields(f: [u64; 10]) -> Self {
        Summary {
            files_new: f[0],
            files_changed: f[1],
            files_unchanged: f[2],
            dirs: f[3],
            others: f[4],
            errors: f[5],
            bytes_read: f[6],
            bytes_total: f[7],
            bytes_added: f[8],
            blobs_added: f[9],
        }
    }
}

/// A decoded snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot {
    /// When the backup started, ns since the epoch.
    pub time: i64,
    /// The root tree.
    pub tree: Id,
    /// The root status tree, when the trees are of version 2 and their status was written
    /// (a snapshot of version 2; one of version 1 has none).
    pub status_tree: Option<Id>,
    /// The parent snapshot, if any.
    pub parent: Option<Id>,
    /// The host name.
    pub host: String,
    /// The user name.
    pub user: String,
    /// The paths backed up, as given (absolute), any bytes.
    pub paths: Vec<Vec<u8>>,
    /// Tags.
    pub tags: Vec<String>,
    /// Some entries could not be read.
    pub incomplete: bool,
    /// What the backup did.
    pub summary: Summary,
    /// The program that wrote it.
    pub program: String,
    /// The snapshot this one replaces or copies (`tag`, `rewrite`, `copy`): the first of the
    /// line, so that a copy of a copy still names the snapshot a backup wrote.
    pub original: Option<Id>,
}

impl Snapshot {
    /// The plaintext.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Writer::default();
        // Versions 1 and 2 stay what they were, so that a snapshot without an original reads
        // in older programs; 3 and 4 are 1 and 2 with the original at the end.
        let version = match (self.status_tree.is_some(), self.original.is_some()) {
            (false, false) => 1,
            (true, false) => 2,
            (false, true) => 3,
            (true, true) => 4,
        };
        out.u8(version);
        out.i64(self.time);
        out.id(&self.tree);
        if let Some(status) = &self.status_tree {
            out.id(status);
        }
        match &self.parent {
            Some(parent) => {
                out.u8(1);
                out.id(parent);
            }
            None => out.u8(0),
        }
        out.bytes(self.host.as_bytes());
        out.bytes(self.user.as_bytes());
        out.len(self.paths.len());
        for path in &self.paths {
            out.bytes(path);
        }
        out.len(self.tags.len());
        for tag in &self.tags {
            out.bytes(tag.as_bytes());
        }
        out.u8(u8::from(self.incomplete));
        for field in self.summary.fields() {
            out.u64(field);
        }
        out.bytes(self.program.as_bytes());
        if let Some(original) = &self.original {
            out.id(original);
        }
        out.buf
    }

    /// Decodes the plaintext (version 1 to 4).
    pub fn decode(bytes: &[u8]) -> Result<Snapshot, DecodeError> {
        let mut input = Reader::new(bytes);
        let version = input.version_in(1..=4)?;
        let time = input.i64()?;
        let tree = input.id()?;
        let status_tree = if version % 2 == 0 { Some(input.id()?) } else { None };
        let parent = match input.u8()? {
            0 => None,
            1 => Some(input.id()?),
            other => return Err(DecodeError::invalid(format!("parent flag {other}"))),
        };
        let host = input.str(MAX_TEXT, "host")?;
        let user = input.str(MAX_TEXT, "user")?;
        let count = input.count(4, "paths")?;
        let paths = (0..count)
            .map(|_| input.bytes(MAX_PATH, "path").map(<[u8]>::to_vec))
            .collect::<Result<_, _>>()?;
        let count = input.count(4, "tags")?;
        let tags = (0..count).map(|_| input.str(MAX_TEXT, "tag")).collect::<Result<_, _>>()?;
        let incomplete = match input.u8()? {
            0 => false,
            1 => true,
            other => return Err(DecodeError::invalid(format!("flags {other}"))),
        };
        let mut fields = [0u64; 10];
        for field in &mut fields {
            *field = input.u64()?;
        }
        let program = input.str(MAX_TEXT, "program")?;
        let original = if version >= 3 { Some(input.id()?) } else { None };
        input.finish()?;
        Ok(Snapshot {
            time,
            tree,
            status_tree,
            parent,
            host,
            user,
            paths,
            tags,
            incomplete,
            summary: Summary::from_fields(fields),
            program,
            original,
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn snapshot_strategy() -> impl Strategy<Value = Snapshot> {
        (
            any::<i64>(),
            any::<[u8; 32]>(),
            proptest::option::of(any::<[u8; 32]>()),
            (".{0,10}", proptest::option::of(any::<[u8; 32]>())),
            proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..20), 0..4),
            proptest::collection::vec("[a-z]{0,8}", 0..3),
            any::<bool>(),
            (any::<[u64; 10]>(), proptest::option::of(any::<[u8; 32]>())),
        )
            .prop_map(
                |(
                    time,
                    tree,
                    parent,
                    (host, status),
                    paths,
                    tags,
                    incomplete,
                    (fields, original),
                )| Snapshot {
                    time,
                    tree: Id(tree),
                    status_tree: status.map(Id),
                    parent: parent.map(Id),
                    user: host.to_uppercase(),
                    host,
                    paths,
                    tags,
                    incomplete,
                    summary: Summary::from_fields(fields),
                    program: "dedup test".into(),
                    original: original.map(Id),
                },
            )
    }

    proptest! {
        #[test]
        fn snapshot_round_trips(snapshot in snapshot_strategy()) {
            prop_assert_eq!(Snapshot::decode(&snapshot.encode()), Ok(snapshot));
        }

        #[test]
        fn a_snapshot_without_an_original_keeps_the_version_older_programs_read(snapshot in snapshot_strategy()) {
            let plain = Snapshot { original: None, ..snapshot }.encode();
            prop_assert!(plain[0] <= 2, "version {}", plain[0]);
        }

        #[test]
        fn mutated_snapshot_never_panics(snapshot in snapshot_strategy(), at in any::<usize>(), byte in 1u8.., cut in any::<usize>()) {
            crate::format::damaged_input(&snapshot.encode(), at, byte, cut, Snapshot::decode);
        }
    }
}
