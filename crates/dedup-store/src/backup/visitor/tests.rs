//! The visitor's handling of a file that cannot be opened: one message, and a snapshot entry
//! that says what was stored.

use std::io;
use std::sync::{Arc, Mutex};

use dedup_core::{Observer, Problem};

use super::*;
use crate::backend::LocalBackend;
use crate::format::{Content, KdfParams, NodeKind};
use crate::index::Index;
use crate::repo::{InitOptions, Repository};

/// Every problem, as the user would read it.
#[derive(Default)]
struct Heard(Mutex<Vec<(bool, String)>>);

impl Observer for Heard {
    fn problem(&self, problem: Problem) {
        let line = format!("{}: {}", problem.path.display(), problem.kind);
        self.0.lock().unwrap().push((problem.incomplete, line));
    }
}

fn repository(dir: &std::path::Path) -> Repository {
    let options = InitOptions {
        kdf: KdfParams { memory_kib: 64, iterations: 1, lanes: 1 },
        ..InitOptions::default()
    };
    Repository::init(Arc::new(LocalBackend::new(dir.join("repo"))), options).unwrap()
}

/// Offers one file that fails to open with `err` to a visitor (its attributes to be read
/// through its descriptor, else by a path lookup that fails too); returns what was heard and
/// the node delivered, if any.
fn offer_unopenable(err: io::ErrorKind) -> (Vec<(bool, String)>, Option<Node>, u64) {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(dir.path());
    let sink = BlobSink::new(&repo, Index::new(), false);
    let stages = crate::backup::pipeline::Stages::new();
    let heard = Heard::default();
    let progress = BackupProgress::default();
    let visitor = BackupVisitor::new(&sink, &stages, &heard, &progress, None, false);
    visitor.set_parent_roots(vec![None]);
    let node = Node { name: b"f".to_vec(), kind: NodeKind::File, size: 10, ..Node::default() };
    let open = || Err(io::Error::from(err));
    let shown = || PathBuf::from("/src/f");
    let by_path: &dyn Fn() -> io::Result<Vec<dedup_scan::Xattr>> = &|| Err(io::Error::from(err));
    visitor.file(node, None, false, open, shown, Home::Root(0), Some(by_path));
    let (found, summary) = visitor.finish().unwrap();
    let heard = heard.0.into_inner().unwrap();
    (heard, found.into_iter().next().flatten(), summary.errors)
}

#[test]
fn a_file_that_cannot_be_opened_is_named_once_and_stored_flagged_without_content() {
    let (heard, node, errors) = offer_unopenable(io::ErrorKind::PermissionDenied);
    assert_eq!(heard.len(), 1, "{heard:?}");
    let (incomplete, line) = &heard[0];
    assert!(*incomplete);
    assert!(line.starts_with("/src/f: permission denied"), "{line}");
    assert!(line.ends_with("in the snapshot without its content, marked incomplete"), "{line}");
    let node = node.expect("the entry is in the snapshot");
    assert!(node.incomplete);
    assert_eq!(node.content, Content::Chunks(Vec::new()));
    assert_eq!(errors, 1, "the snapshot is marked incomplete");
}

#[test]
fn a_file_that_vanished_before_its_open_is_named_once_and_left_out() {
    let (heard, node, errors) = offer_unopenable(io::ErrorKind::NotFound);
    assert_eq!(heard.len(), 1, "{heard:?}");
    let (incomplete, line) = &heard[0];
    assert!(!*incomplete, "a file that no longer exists is no loss");
    assert_eq!(line, "/src/f: vanished before it could be read; not in the snapshot");
    assert!(node.is_none());
    assert_eq!(errors, 0);
}
