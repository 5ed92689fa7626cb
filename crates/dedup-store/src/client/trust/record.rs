//! What a client remembers of one repository location, and its file: a few lines of text, read
//! strictly (docs/store-format.md, "Outside the repository: the client's state").
//!
//! ```text
//! dedup store client state 1
//! location /srv/backups/laptop
//! repository <64 hex digits>
//! encrypted yes
//! key <64 hex digits>
//! last-key <64 hex digits>
//! snapshot <64 hex digits>
//! gone <64 hex digits>
//! ```
//!
//! `last-key`, `snapshot` and `gone` are optional, the last two repeated (one line per id);
//! every other line appears once, in this order.

use std::collections::{BTreeSet, HashSet};

use crate::id::Id;

const FIRST_LINE: &str = "dedup store client state 1";

/// Snapshot ids remembered as gone at most (the oldest are forgotten first).
pub const MOST_GONE: usize = 10_000;

/// What a repository is: what must not change between two uses of one location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// The repository id of its config.
    pub repository: Id,
    /// Whether it encrypts.
    pub encrypted: bool,
    /// The fingerprint of its master key (never the key).
    pub key: [u8; 32],
}

/// What the client remembers of a location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The location as the backend names it, escaped to one line.
    pub location: String,
    /// The repository found there.
    pub identity: Identity,
    /// The key slot that opened it last.
    pub last_key: Option<Id>,
    /// The snapshots present when the client last looked (and those it wrote since).
    pub snapshots: BTreeSet<Id>,
    /// Snapshots that were present once and went, oldest first (at most [`MOST_GONE`]).
    pub gone: Vec<Id>,
}

impl Record {
    /// A record of `identity` at `location`, with no snapshot yet.
    pub fn new(location: &str, identity: Identity) -> Record {
        Record {
            location: one_line(location),
            identity,
            last_key: None,
            snapshots: BTreeSet::new(),
            gone: Vec::new(),
        }
    }

    /// Remembers `ids` as gone (dropping the oldest past [`MOST_GONE`]).
    pub fn mark_gone(&mut self, ids: impl IntoIterator<Item = Id>) {
        let mut known: HashSet<Id> = self.gone.iter().copied().collect();
        for id in ids {
            self.snapshots.remove(&id);
            if known.insert(id) {
                self.gone.push(id);
            }
        }
        let excess = self.gone.len().saturating_sub(MOST_GONE);
        self.gone.drain(..excess);
    }

    /// The file's text.
    pub fn encode(&self) -> String {
        let mut out = format!("{FIRST_LINE}\nlocation {}\n", self.location);
        out.push_str(&format!("repository {}\n", self.identity.repository));
        out.push_str(&format!(
            "encrypted {}\n",
            if self.identity.encrypted { "yes" } else { "no" }
        ));
        out.push_str(&format!("key {}\n", Id(self.identity.key)));
        if let Some(id) = self.last_key {
            out.push_str(&format!("last-key {id}\n"));
        }
        for id in &self.snapshots {
            out.push_str(&format!("snapshot {id}\n"));
        }
        for id in &self.gone {
            out.push_str(&format!("gone {id}\n"));
        }
        out
    }

    /// Reads a file's text; the reason when it is not a record.
    pub fn decode(text: &str) -> Result<Record, String> {
        if text.is_empty() {
            return Err("empty".into());
        }
        let body = text.strip_suffix('\n').ok_or("the last line is cut off")?;
        let mut lines = body.split('\n');
        let first = lines.next().unwrap_or_default();
        if first != FIRST_LINE {
            return Err(format!("not a dedup client state of version 1 ({first:?})"));
        }
        let location = field(&mut lines, "location")?.to_string();
        let repository = hex_id(field(&mut lines, "repository")?)?;
        let encrypted = match field(&mut lines, "encrypted")? {
            "yes" => true,
            "no" => false,
            other => return Err(format!("`encrypted {other}`: expected yes or no")),
        };
        let key = hex_id(field(&mut lines, "key")?)?.0;
        let mut record = Record::new("", Identity { repository, encrypted, key });
        record.location = location;
        // The optional lines, in the order last-key, snapshot, gone.
        let mut stage = 0;
        let mut gone = HashSet::new();
        for line in lines {
            let (name, value) = line.split_once(' ').unwrap_or((line, ""));
            let at = match name {
                "last-key" => 1,
                "snapshot" => 2,
                "gone" => 3,
                other => return Err(format!("unknown line {other:?}")),
            };
            if at < stage || (at == 1 && stage == 1) {
                return Err(format!("`{name}` out of order"));
            }
            stage = at;
            let id = hex_id(value)?;
            let fresh = match at {
                1 => record.last_key.replace(id).is_none(),
                2 => record.snapshots.insert(id),
                _ => {
                    record.gone.push(id);
                    gone.insert(id)
                }
            };
            if !fresh {
                return Err(format!("`{name} {id}` twice"));
            }
            if record.gone.len() > MOST_GONE {
                return Err(format!("more than {MOST_GONE} `gone` lines"));
            }
        }
        Ok(record)
    }
}

/// The value of the next line, which must be `name VALUE`.
fn field<'a>(lines: &mut impl Iterator<Item = &'a str>, name: &str) -> Result<&'a str, String> {
    let line = lines.next().ok_or_else(|| format!("no `{name}` line"))?;
    line.strip_prefix(name)
        .and_then(|rest| rest.strip_prefix(' '))
        .ok_or_else(|| format!("expected `{name} …`, found {line:?}"))
}

fn hex_id(text: &str) -> Result<Id, String> {
    Id::from_hex(text).ok_or_else(|| format!("{text:?} is not 64 hexadecimal digits"))
}

/// `text` on one line: control characters (a newline in a path) escaped.
pub(crate) fn one_line(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> =
                if c.is_control() || c == '\\' { c.escape_default().collect() } else { vec![c] };
            escaped
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn record_strategy() -> impl Strategy<Value = Record> {
        (
            ".{0,60}",
            any::<[u8; 32]>(),
            any::<bool>(),
            any::<[u8; 32]>(),
            proptest::option::of(any::<[u8; 32]>()),
            proptest::collection::btree_set(any::<[u8; 32]>(), 0..5),
            proptest::collection::btree_set(any::<[u8; 32]>(), 0..5),
        )
            .prop_map(|(location, repository, encrypted, key, last, snapshots, gone)| {
                Record {
                    location: one_line(&location),
                    identity: Identity { repository: Id(repository), encrypted, key },
                    last_key: last.map(Id),
                    snapshots: snapshots.into_iter().map(Id).collect(),
                    gone: gone.into_iter().map(Id).collect(),
                }
            })
    }

    proptest! {
        #[test]
        fn records_round_trip(record in record_strategy()) {
            prop_assert_eq!(Record::decode(&record.encode()), Ok(record));
        }

        #[test]
        fn damaged_records_never_panic(record in record_strategy(), at in any::<usize>(), byte in any::<u8>(), cut in any::<usize>()) {
            let mut bytes = record.encode().into_bytes();
            if !bytes.is_empty() {
                let at = at % bytes.len();
                bytes[at] = byte;
                bytes.truncate(cut % (bytes.len() + 1));
            }
            if let Ok(text) = String::from_utf8(bytes) {
                let _ = Record::decode(&text);
            }
        }
    }

    #[test]
    fn malformed_records_are_refused_with_a_reason() {
        let identity = Identity { repository: Id([1; 32]), encrypted: true, key: [2; 32] };
        let mut record = Record::new("/srv/repo\nx", identity);
        assert_eq!(record.location, "/srv/repo\\nx");
        record.snapshots.insert(Id([3; 32]));
        let good = record.encode();
        for (bad, says) in [
            (good.replace("encrypted yes", "encrypted maybe"), "expected yes or no"),
            (good.replace("dedup store client state 1", "dedup store client state 2"), "version"),
            (format!("{good}snapshot {}\n", Id([3; 32])), "twice"),
            (format!("{good}last-key {}\n", Id([4; 32])), "out of order"),
            (format!("{good}colour red\n"), "unknown line"),
            (good.trim_end().to_string(), "cut off"),
            (good.replace("key ", "key 12"), "not 64 hexadecimal"),
            (String::new(), "empty"),
        ] {
            let err = Record::decode(&bad).unwrap_err();
            assert!(err.contains(says), "{bad:?}: {err}");
        }
    }

    #[test]
    fn gone_snapshots_are_remembered_up_to_a_bound() {
        let identity = Identity { repository: Id([1; 32]), encrypted: true, key: [2; 32] };
        let mut record = Record::new("r", identity);
        record.snapshots.insert(Id([9; 32]));
        record.mark_gone([Id([9; 32])]);
        assert!(record.snapshots.is_empty() && record.gone == [Id([9; 32])]);
        let many = (0..MOST_GONE as u32 + 5).map(|i| {
            let mut bytes = [0u8; 32];
            bytes[..4].copy_from_slice(&i.to_le_bytes());
            Id(bytes)
        });
        record.mark_gone(many);
        assert_eq!(record.gone.len(), MOST_GONE);
        assert!(!record.gone.contains(&Id([9; 32])), "the oldest went first");
        assert_eq!(Record::decode(&record.encode()), Ok(record));
    }
}
