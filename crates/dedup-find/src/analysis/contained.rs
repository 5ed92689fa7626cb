//! Directories whose files all exist elsewhere, arranged differently: "all 1,204 files of A also
//! exist under B". Decided together with the identical groups, largest first ([`choose`]), so
//! only the outermost entry is reported and nothing is said twice.
//!
//! How B is found without comparing directories pairwise: every file of A must have a copy under
//! B, so B is an ancestor of a copy of A's first file. Those ancestors (up to the first one that
//! holds A itself, at most [`MAX_CANDIDATES`] of them) are the candidates; each further file of A
//! keeps only the candidates that hold one of its copies, found by binary search in its group's
//! copies sorted by pre-order position (a subtree is one range of positions). The search for one
//! A stops as soon as no candidate is left. Copies inside a directory already reported as
//! redundant do not count, so two directories never vouch for each other.

use dedup_scan::NodeId;

use crate::tree::Tree;

use crate::analysis::content::{Content, Contents};
use crate::analysis::dirs::{report_key, DirFacts};
use crate::analysis::nodes::{Nodes, NONE};

/// Candidate directories B considered per directory A.
const MAX_CANDIDATES: usize = 64;

/// A directory whose files all have a copy under another.
pub(crate) struct Contained {
    /// The directory whose files all exist elsewhere.
    pub dir: u32,
    /// The directory holding the copies.
    pub within: u32,
    /// Each file node of `dir` (pre-order) with the node of its copy under `within`.
    pub files: Vec<(u32, u32)>,
}

struct Search<'a> {
    tree: &'a Tree,
    nodes: &'a Nodes,
    contents: &'a Contents,
    /// Per group, pre-order positions of its files.
    copies: Vec<Vec<u32>>,
    /// Per node: a file that no longer counts as a copy (it lies in a redundant directory).
    gone: Vec<bool>,
}

/// What to report about directories: identical groups (members in report order; every member
/// but the first is redundant) and contained directories.
pub(crate) struct Chosen {
    /// Identical groups, outermost only.
    pub identical: Vec<Vec<u32>>,
    /// Contained directories.
    pub contained: Vec<Contained>,
    /// Per node: a directory reported as redundant (all its files accounted for elsewhere).
    pub hidden: Vec<bool>,
}

/// Decision order: most files first, identical groups before contained directories, tree order.
type Order = (std::cmp::Reverse<u32>, u8, u32);

/// One thing to decide, largest first.
enum Item {
    Group(Vec<u32>),
    Dir(u32),
}

/// Choose the entries to report. Candidates (identical groups, and directories whose every
/// file has a copy) are decided largest first by file count, identical groups before contained
/// directories of the same size, then in tree order: a directory holds at least as many files as
/// any directory inside it and comes before it on a tie, so what is reported is outermost, and
/// nothing inside a redundant directory is reported again.
pub(crate) fn choose(
    tree: &Tree,
    nodes: &Nodes,
    contents: &Contents,
    facts: &DirFacts,
    groups: Vec<Vec<u32>>,
) -> Chosen {
    let mut copies = vec![Vec::new(); contents.group_count()];
    for &(root, _) in nodes.roots() {
        for &n in nodes.subtree(root) {
            if let Some(Content::Group(g)) = nodes.file(n).map(|e| contents.of(tree, e)) {
                copies[g as usize].push(nodes.pre(n));
            }
        }
    }
    let mut search = Search { tree, nodes, contents, copies, gone: vec![false; nodes.len()] };
    let mut items: Vec<(Order, Item)> = Vec::new();
    for mut g in groups {
        g.sort_by_cached_key(|&n| report_key(tree, nodes, n));
        let first = g.iter().map(|&n| nodes.pre(n)).min().unwrap_or(0);
        items.push(((std::cmp::Reverse(facts.files[g[0] as usize]), 0, first), Item::Group(g)));
    }
    for n in 0..nodes.len() as u32 {
        let i = n as usize;
        let all_copied = facts.files[i] > 0 && facts.dup_files[i] == facts.files[i];
        if nodes.file(n).is_none() && nodes.pre(n) != NONE && all_copied && !facts.unknown[i] {
            items.push(((std::cmp::Reverse(facts.files[i]), 1, nodes.pre(n)), Item::Dir(n)));
        }
    }
    items.sort_unstable_by_key(|(key, _)| *key);
    let mut hidden = vec![false; nodes.len()];
    let mut reported = vec![false; nodes.len()];
    let mut chosen = Chosen { identical: Vec::new(), contained: Vec::new(), hidden: Vec::new() };
    let under = |marks: &[bool], mut n: u32| loop {
        if marks[n as usize] {
            return true;
        }
        match tree.arena.parent(NodeId::from_index(n as usize)) {
            Some(p) => n = p.index() as u32,
            None => return false,
        }
    };
    for (_, item) in items {
        match item {
            Item::Group(g) => {
                let left: Vec<u32> = g.into_iter().filter(|&n| !under(&hidden, n)).collect();
                if left.len() < 2 {
                    continue;
                }
                reported[left[0] as usize] = true;
                for &n in &left[1..] {
                    hidden[n as usize] = true;
                    reported[n as usize] = true;
                    for &m in nodes.subtree(n) {
                        search.gone[m as usize] = true;
                    }
                }
                chosen.identical.push(left);
            }
            Item::Dir(dir) => {
                // Inside or around a directory already reported: accounted for there.
                if under(&hidden, dir)
                    || under(&reported, dir)
                    || nodes.subtree(dir).iter().any(|&n| reported[n as usize])
                {
                    continue;
                }
                if let Some(c) = search.within(dir) {
                    for &m in nodes.subtree(dir) {
                        search.gone[m as usize] = true;
                    }
                    hidden[dir as usize] = true;
                    reported[dir as usize] = true;
                    chosen.contained.push(c);
                }
            }
        }
    }
    chosen.hidden = hidden;
    chosen
}

impl Search<'_> {
    fn group(&self, file: u32) -> Option<u32> {
        match self.contents.of(self.tree, self.nodes.file(file)?) {
            Content::Group(g) => Some(g),
            Content::Inode(_) => None,
        }
    }

    /// The first copy of group `g` in the pre-order range, not counting gone files.
    fn copy_in(&self, g: u32, (start, end): (u32, u32)) -> Option<u32> {
        let list = &self.copies[g as usize];
        let from = list.partition_point(|&p| p < start);
        list[from..]
            .iter()
            .take_while(|&&p| p < end)
            .map(|&p| self.nodes.at(p))
            .find(|&n| !self.gone[n as usize])
    }

    /// The smallest directory outside `dir` holding a copy of every file of `dir`.
    fn within(&self, dir: u32) -> Option<Contained> {
        let nodes = self.nodes;
        let files: Vec<u32> =
            nodes.subtree(dir).iter().copied().filter(|&n| nodes.file(n).is_some()).collect();
        let own = nodes.range(dir);
        let first = self.group(*files.first()?)?;
        let mut candidates: Vec<(u32, (u32, u32))> = Vec::new();
        'copies: for &p in &self.copies[first as usize] {
            let copy = nodes.at(p);
            if (own.0..own.1).contains(&p) || self.gone[copy as usize] {
                continue;
            }
            let mut cur = copy;
            while let Some(parent) = self.tree.arena.parent(NodeId::from_index(cur as usize)) {
                cur = parent.index() as u32;
                if nodes.contains(cur, dir) {
                    break;
                }
                if !candidates.iter().any(|c| c.0 == cur) {
                    if candidates.len() == MAX_CANDIDATES {
                        break 'copies;
                    }
                    candidates.push((cur, nodes.range(cur)));
                }
            }
        }
        for &f in &files {
            let g = self.group(f)?;
            candidates.retain(|&(_, range)| self.copy_in(g, range).is_some());
            if candidates.is_empty() {
                return None;
            }
        }
        let &(within, range) = candidates.iter().min_by_key(|(_, (s, e))| e - s)?;
        let pairs = files
            .iter()
            .map(|&f| Some((f, self.copy_in(self.group(f)?, range)?)))
            .collect::<Option<Vec<_>>>()?;
        Some(Contained { dir, within, files: pairs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::dirs::{candidate_groups, path_text, Extras};
    use crate::testtree::{build_linked, groups};

    fn contained(entries: &[(&str, Option<u64>, Option<u64>)]) -> Vec<(String, String, usize)> {
        let mut t = build_linked(entries);
        let classes = groups(&mut t, false);
        let contents = Contents::new(&t, &classes);
        let nodes = Nodes::new(&t);
        let facts = DirFacts::new(&t, &nodes, &contents, vec![false; nodes.len()], &Extras::new());
        choose(&t, &nodes, &contents, &facts, candidate_groups(&t, &facts))
            .contained
            .iter()
            .map(|c| (path_text(&t, c.dir), path_text(&t, c.within), c.files.len()))
            .collect()
    }

    #[test]
    fn rearranged_copies_are_found_in_the_smallest_directory() {
        let got = contained(&[
            ("old/a/x", Some(1), None),
            ("old/b/y", Some(2), None),
            ("old/z", Some(3), None),
            ("new/photos/all/x2", Some(1), None),
            ("new/photos/all/y2", Some(2), None),
            ("new/photos/z", Some(3), None),
            ("new/photos/extra", Some(4), None),
        ]);
        assert_eq!(got, [("r/old".to_string(), "r/new/photos".to_string(), 3)]);
    }

    #[test]
    fn a_file_without_a_copy_there_means_not_contained_and_no_mutual_vouching() {
        let got = contained(&[
            ("old/a/x", Some(1), None),
            ("old/u", Some(9), None),
            ("new/x2", Some(1), None),
        ]);
        // old is not contained anywhere (u has no copy). new and old/a hold the same one file:
        // one of them is reported, and the other then has no copy left to vouch for it.
        assert_eq!(got, [("r/new".to_string(), "r/old/a".to_string(), 1)]);
        let mutual = contained(&[
            ("p/a/x", Some(1), None),
            ("p/y", Some(2), None),
            ("q/x", Some(1), None),
            ("q/b/y", Some(2), None),
        ]);
        assert_eq!(mutual, [("r/p".to_string(), "r/q".to_string(), 2)]);
    }
}
