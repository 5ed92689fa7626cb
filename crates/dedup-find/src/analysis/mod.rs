//! The questions asked of a finished scan beyond "which files are identical": duplicated
//! directories (`--dirs`), files by number of copies (`--unique`, `--rf-over`, `--rf-under`) and
//! where the duplicated bytes are (`--summary`). They run after the exact stage on the walked
//! tree and the final groups, read no file content (only directories that look duplicated are
//! listed once more), and add sections to the report.

pub(crate) mod contained;
pub(crate) mod content;
pub(crate) mod dir_summary;
pub(crate) mod dirs;
pub(crate) mod extras;
pub(crate) mod nodes;
pub(crate) mod replication;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;

use dedup_core::{Observer, Problem};
use dedup_report::{DirCopy, DirGroup, DirKind, Report, ReportFile};
use dedup_scan::NodeId;

use crate::tree::Tree;

use crate::analysis::contained::{choose, Chosen, Contained};
use crate::analysis::content::Contents;
use crate::analysis::dir_summary::summarise;
use crate::analysis::dirs::{candidate_groups, path_bytes, DirFacts, Extras};
use crate::analysis::extras::extras;
use crate::analysis::nodes::Nodes;
use crate::analysis::replication::{copies, unique_files, Replication, Troubled};
use crate::stages::candidates::Class;

/// What to work out beyond the groups of identical files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Report duplicated directories as a whole.
    pub dirs: bool,
    /// List files by their number of copies.
    pub replication: Replication,
    /// Summarise duplicated bytes per top-level directory.
    pub dir_summary: bool,
}

impl Analysis {
    /// True when any analysis is asked for.
    pub fn any(&self) -> bool {
        self.dirs || self.replication.is_set() || self.dir_summary
    }
}

/// Passes problems on and remembers their paths: a file or directory the run had trouble with
/// is never called unique or part of a duplicated directory.
pub(crate) struct Recorder<'a> {
    inner: &'a dyn Observer,
    paths: Option<Mutex<Vec<PathBuf>>>,
}

impl<'a> Recorder<'a> {
    /// Record paths only when an analysis needs them.
    pub fn new(inner: &'a dyn Observer, analysis: &Analysis) -> Self {
        Recorder { inner, paths: analysis.any().then(|| Mutex::new(Vec::new())) }
    }

    /// The paths recorded.
    pub fn into_paths(self) -> Vec<PathBuf> {
        self.paths.map(|p| p.into_inner().unwrap_or_else(|e| e.into_inner())).unwrap_or_default()
    }
}

impl Observer for Recorder<'_> {
    fn problem(&self, problem: Problem) {
        if let Some(paths) = &self.paths {
            paths.lock().unwrap_or_else(|e| e.into_inner()).push(problem.path.clone());
        }
        self.inner.problem(problem);
    }
}

/// The sections to add to a report, and what to leave out of its groups.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    analysis: Analysis,
    hardlinks: bool,
    /// Directories whose files are all accounted for by `dirs` (path bytes).
    hidden: HashSet<Vec<u8>>,
    dirs: Option<Vec<DirGroup>>,
    unique: Option<Vec<dedup_report::Group>>,
    dir_summary: Option<Vec<dedup_report::DirSummary>>,
}

/// Run the analyses asked for on the walked tree and the final groups.
pub(crate) fn analyse(
    tree: &Tree,
    classes: &[Class],
    hardlinks: bool,
    max_depth: Option<u32>,
    analysis: &Analysis,
    problems: Vec<PathBuf>,
) -> Findings {
    let mut findings = Findings { analysis: *analysis, hardlinks, ..Findings::default() };
    if !analysis.any() {
        return findings;
    }
    let contents = Contents::new(tree, classes);
    let needs_nodes = analysis.dirs || analysis.dir_summary || !problems.is_empty();
    let nodes = needs_nodes.then(|| Nodes::new(tree));
    if analysis.replication.wants_unique() {
        let troubled = troubled_files(tree, nodes.as_ref(), &problems);
        findings.unique = Some(unique_files(tree, &contents, &troubled));
    }
    let Some(nodes) = nodes.filter(|_| analysis.dirs || analysis.dir_summary) else {
        return findings;
    };
    if analysis.dir_summary {
        findings.dir_summary = Some(summarise(tree, &nodes, classes, hardlinks));
    }
    if analysis.dirs {
        let unknown = unknown_nodes(tree, &nodes, max_depth, &problems);
        let (dirs, hidden) = duplicate_dirs(tree, &nodes, &contents, unknown);
        findings.dirs = Some(dirs);
        findings.hidden = hidden;
    }
    findings
}

/// Files with a problem, and every file of the same size: one of those may have been a copy,
/// so none of them can be called unique.
fn troubled_files(tree: &Tree, nodes: Option<&Nodes>, problems: &[PathBuf]) -> Troubled {
    let mut troubled =
        Troubled { paths: problems.iter().cloned().collect(), sizes: HashSet::new() };
    let Some(nodes) = nodes else { return troubled };
    let roots = root_nodes(tree);
    for p in problems {
        if let Some(entry) = nodes.resolve(tree, p, &roots).and_then(|n| nodes.file(n)) {
            troubled.sizes.insert(tree.files[entry].meta.size);
        }
    }
    troubled
}

fn root_nodes(tree: &Tree) -> HashMap<&[u8], u32> {
    use std::os::unix::ffi::OsStrExt;
    tree.roots
        .iter()
        .filter_map(|r| r.node.map(|n| (r.path.as_os_str().as_bytes(), n.index() as u32)))
        .collect()
}

/// Nodes whose contents are not fully known: those named by a problem (or the directory that
/// would have held them), and with a depth limit the directories at the limit (never listed).
fn unknown_nodes(
    tree: &Tree,
    nodes: &Nodes,
    max_depth: Option<u32>,
    problems: &[PathBuf],
) -> Vec<bool> {
    let mut unknown = vec![false; nodes.len()];
    let roots = root_nodes(tree);
    for p in problems {
        if let Some(n) = nodes.resolve(tree, p, &roots) {
            unknown[n as usize] = true;
        }
    }
    if let Some(max) = max_depth {
        let mut depth = vec![0u32; nodes.len()];
        for i in 0..nodes.len() {
            if let Some(p) = tree.arena.parent(NodeId::from_index(i)) {
                depth[i] = depth[p.index()] + 1;
            }
            if depth[i] >= max && nodes.file(i as u32).is_none() {
                unknown[i] = true;
            }
        }
    }
    unknown
}

/// Identical directories (outermost), then contained ones; returns the report section and the
/// directories it makes redundant.
fn duplicate_dirs(
    tree: &Tree,
    nodes: &Nodes,
    contents: &Contents,
    unknown: Vec<bool>,
) -> (Vec<DirGroup>, HashSet<Vec<u8>>) {
    // First by what the walk kept; then the directories that look duplicated are listed again so
    // entries the walk does not keep (empty files, symlinks, excluded names) are compared too.
    let first = DirFacts::new(tree, nodes, contents, unknown.clone(), &Extras::new());
    let mut listed = Extras::new();
    for group in candidate_groups(tree, &first) {
        for dir in group {
            listed.insert(dir, extras(tree, NodeId::from_index(dir as usize)));
        }
    }
    // Usually the directories hold nothing else: then the first classification stands.
    let facts = if listed.values().all(|e| e.as_ref().is_some_and(Vec::is_empty)) {
        first
    } else {
        drop(first);
        DirFacts::new(tree, nodes, contents, unknown, &listed)
    };
    let Chosen { identical: groups, contained, hidden } =
        choose(tree, nodes, contents, &facts, candidate_groups(tree, &facts));
    let report_file = |node: u32| {
        let entry = &tree.files[nodes.file(node).expect("a file node")];
        let m = entry.meta;
        ReportFile {
            path: tree.arena.path(entry.node),
            dev: m.id.dev,
            ino: m.id.ino,
            mtime_ns: m.mtime_ns,
            ctime_ns: Some(m.ctime_ns),
        }
    };
    let files_of = |dir: u32| -> Vec<ReportFile> {
        nodes
            .subtree(dir)
            .iter()
            .filter(|&&n| nodes.file(n).is_some())
            .map(|&n| report_file(n))
            .collect()
    };
    let path = |n: u32| tree.arena.path(NodeId::from_index(n as usize));
    let mut out: Vec<DirGroup> = groups
        .iter()
        .map(|g| DirGroup {
            kind: DirKind::Identical,
            file_count: u64::from(facts.files[g[0] as usize]),
            size: facts.bytes[g[0] as usize],
            dirs: g.iter().map(|&d| DirCopy { path: path(d), files: files_of(d) }).collect(),
        })
        .collect();
    out.extend(contained.iter().map(|Contained { dir, within, files }| DirGroup {
        kind: DirKind::Contained,
        file_count: files.len() as u64,
        size: facts.bytes[*dir as usize],
        dirs: vec![
            DirCopy {
                path: path(*dir),
                files: files.iter().map(|&(f, _)| report_file(f)).collect(),
            },
            DirCopy {
                path: path(*within),
                files: files.iter().map(|&(_, c)| report_file(c)).collect(),
            },
        ],
    }));
    out.sort_by_cached_key(|g| {
        use std::os::unix::ffi::OsStrExt;
        (std::cmp::Reverse(g.size), g.dirs[0].path.as_os_str().as_bytes().to_vec())
    });
    let hidden_paths = (0..nodes.len() as u32)
        .filter(|&n| hidden[n as usize])
        .map(|n| path_bytes(tree, n))
        .collect();
    (out, hidden_paths)
}

impl Findings {
    /// Add the sections to the report, and leave out of its groups the files that a directory
    /// entry accounts for, and the groups outside the replication bounds. The summary still
    /// counts every group found.
    pub fn apply(self, report: &mut Report) {
        let hardlinks = self.hardlinks;
        if !self.hidden.is_empty() {
            let hidden = &self.hidden;
            let shown = |f: &ReportFile| {
                use std::os::unix::ffi::OsStrExt;
                let bytes = f.path.as_os_str().as_bytes();
                !bytes
                    .iter()
                    .enumerate()
                    .filter(|&(_, &b)| b == b'/')
                    .any(|(i, _)| hidden.contains(&bytes[..i]))
            };
            for g in &mut report.groups {
                g.files.retain(shown);
            }
            report.groups.retain(|g| copies(g, hardlinks) >= 2);
        }
        let r = self.analysis.replication;
        if r.is_set() {
            report.groups.retain(|g| r.wants(copies(g, hardlinks)));
        }
        if self.analysis.dirs {
            report.dirs = self.dirs;
        }
        if r.wants_unique() {
            report.unique = self.unique;
        }
        if self.analysis.dir_summary {
            report.dir_summary = self.dir_summary;
        }
    }
}
