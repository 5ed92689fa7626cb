//! Property test: on random small trees, `dedup find --format json` agrees
//! exactly with a naive reference that reads every regular file and groups by
//! full content (collapsing identical (dev, ino) unless -H; empty files only
//! with --include-empty).

use crate::common;

use common::*;
use proptest::prelude::*;
use std::sync::OnceLock;

const DIRS: &[&str] = &["", "a", "a/b", "a/b/c", ".hidden", "d e", "a/.x", "f/g"];

/// Contents that collide in size, head and tail in various ways.
fn pool() -> &'static [Vec<u8>] {
    static POOL: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    POOL.get_or_init(|| {
        let p = pattern(10_000, 1);
        let q = pattern(200_000, 2);
        vec![
            Vec::new(),
            b"x".to_vec(),
            b"y".to_vec(),
            p.clone(),
            flip(&p, 5_000),
            flip(&p, 0),
            flip(&p, 9_999),
            q.clone(),
            flip(&q, 100_000),
            flip(&q, 150_001),
            vec![0; 70_000],
        ]
    })
}

#[derive(Debug, Clone)]
enum Content {
    Pool(usize),
    Tiny(Vec<u8>),
}

#[derive(Debug, Clone)]
enum Node {
    File {
        dir: usize,
        content: Content,
    },
    HardLink {
        dir: usize,
        target: prop::sample::Index,
    },
    /// A symlink to an earlier file or to a directory: never followed nor
    /// reported by default, so the reference ignores it.
    SymLink {
        dir: usize,
        target: prop::sample::Index,
        to_dir: bool,
    },
}

fn content() -> impl Strategy<Value = Content> {
    prop_oneof![
        3 => (0..pool().len()).prop_map(Content::Pool),
        1 => prop::collection::vec(0u8..2, 0..3).prop_map(Content::Tiny),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    prop_oneof![
        4 => (0..DIRS.len(), content()).prop_map(|(dir, content)| Node::File { dir, content }),
        1 => (0..DIRS.len(), any::<prop::sample::Index>())
            .prop_map(|(dir, target)| Node::HardLink { dir, target }),
        1 => (0..DIRS.len(), any::<prop::sample::Index>(), any::<bool>())
            .prop_map(|(dir, target, to_dir)| Node::SymLink { dir, target, to_dir }),
    ]
}

fn build(t: &std::path::Path, nodes: &[Node]) {
    let mut files: Vec<String> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let (dir, name) = match n {
            Node::File { dir, .. } | Node::HardLink { dir, .. } | Node::SymLink { dir, .. } => {
                (DIRS[*dir], format!("f{i}"))
            }
        };
        let rel = if dir.is_empty() { format!("t/{name}") } else { format!("t/{dir}/{name}") };
        match n {
            Node::HardLink { target, .. } if !files.is_empty() => {
                let target = files[target.index(files.len())].clone();
                hardlink(t, &target, &rel);
            }
            Node::File { content: Content::Pool(k), .. } => {
                write(t, &rel, &pool()[*k]);
            }
            Node::File { content: Content::Tiny(v), .. } => {
                write(t, &rel, v);
            }
            Node::SymLink { target, to_dir, .. } if *to_dir => {
                let dir = DIRS[target.index(DIRS.len())];
                let abs = t.join("t").join(dir);
                std::fs::create_dir_all(&abs).unwrap();
                symlink(t, abs.to_str().unwrap(), &rel);
                continue;
            }
            Node::SymLink { target, .. } if !files.is_empty() => {
                let abs = t.join(&files[target.index(files.len())]);
                symlink(t, abs.to_str().unwrap(), &rel);
                continue;
            }
            Node::HardLink { .. } | Node::SymLink { .. } => {
                write(t, &rel, b"");
            }
        }
        files.push(rel);
    }
    mkdir(t, "t/empty/dir");
}

proptest! {
    #![proptest_config(ProptestConfig {
        // PROPTEST_CASES=n runs more (or fewer) cases
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(24),
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    })]

    #[test]
    fn find_agrees_with_a_naive_reference(
        nodes in prop::collection::vec(node(), 1..40),
        hardlinks in any::<bool>(),
        include_empty in any::<bool>(),
    ) {
        let d = tmp();
        let t = d.path();
        build(t, &nodes);
        let mut args = vec!["--format", "json"];
        if hardlinks {
            args.push("-H");
        }
        if include_empty {
            args.push("--include-empty");
        }
        args.push("t");
        let out = run(cmd(t).arg("find").args(&args));
        prop_assert_eq!(out.code(), 0, "{}", out.dump());
        let r = out.json();
        let want = reference(&t.join("t"), "t", hardlinks, include_empty);
        let got = r.sets();
        prop_assert!(
            got == want.groups,
            "args {:?}\nexpected:\n{}got:\n{}",
            args,
            show(&want.groups),
            show(&got)
        );
        prop_assert_eq!(r.summary.groups, want.groups.len() as u64);
        prop_assert_eq!(r.summary.redundant_files, want.redundant_files);
        prop_assert_eq!(r.summary.redundant_bytes, want.redundant_bytes);
        prop_assert_eq!(r.summary.errors, 0);
        // whether empty files count as "considered" is not pinned down here
        prop_assert!(
            r.summary.files_scanned == want.regular_paths
                || r.summary.files_scanned == want.nonempty_paths,
            "files_scanned {} not in {{{}, {}}}",
            r.summary.files_scanned,
            want.nonempty_paths,
            want.regular_paths
        );
        // sizes descending, each group's size is its files' size, and the
        // entries carry the real (dev, ino)
        for w in r.groups.windows(2) {
            prop_assert!(w[0].size >= w[1].size);
        }
        for g in &r.groups {
            for f in &g.files {
                let p = bpath(t, &f.path);
                let (dev, ino, _) = ident(&p);
                prop_assert_eq!((f.dev, f.ino), (dev, ino));
                prop_assert_eq!(std::fs::metadata(&p).unwrap().len(), g.size);
            }
        }
    }
}
