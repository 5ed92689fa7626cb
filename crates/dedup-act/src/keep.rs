//! Which file of a group is kept: rules a user combines in priority order, then a deterministic
//! tie-break (the order of the report: root argument, then path bytes).

use std::path::Path;

use globset::{Glob, GlobSet, GlobSetBuilder};

/// One criterion for choosing the file to keep; also `--keep`'s values, whose help is these
/// lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum KeepRule {
    /// Oldest modification time.
    Oldest,
    /// Newest modification time.
    Newest,
    /// Fewest directory levels below its PATH.
    Shallowest,
    /// Most directory levels below its PATH.
    Deepest,
    /// Under the earliest PATH argument.
    FirstRoot,
    /// Matching the earliest --prefer GLOB.
    PathPriority,
}

impl KeepRule {
    /// The rule that orders the other way (`oldest`/`newest`, `shallowest`/`deepest`).
    fn opposite(self) -> Option<KeepRule> {
        match self {
            KeepRule::Oldest => Some(KeepRule::Newest),
            KeepRule::Newest => Some(KeepRule::Oldest),
            KeepRule::Shallowest => Some(KeepRule::Deepest),
            KeepRule::Deepest => Some(KeepRule::Shallowest),
            KeepRule::FirstRoot | KeepRule::PathPriority => None,
        }
    }
}

/// Two rules of one `--keep` list that ask for contradictory things (a rule and its opposite),
/// or one rule given twice: the later one could never decide anything, so the user meant
/// something else. `None` when the list is coherent.
pub fn conflicting_rules(rules: &[KeepRule]) -> Option<(KeepRule, KeepRule)> {
    rules.iter().enumerate().find_map(|(i, &a)| {
        rules[i + 1..].iter().find(|&&b| b == a || a.opposite() == Some(b)).map(|&b| (a, b))
    })
}

/// The rules and the globs of `--prefer`.
#[derive(Debug, Clone)]
pub struct KeepPolicy {
    rules: Vec<KeepRule>,
    prefer: Vec<GlobSet>,
}

/// What the rules look at for one candidate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate<'a> {
    pub path: &'a Path,
    pub mtime_ns: i64,
    pub root: usize,
    pub depth: usize,
}

impl KeepPolicy {
    /// A policy from rules in priority order and `--prefer` globs (earlier globs win). When
    /// globs are given without the `path-priority` rule, it is applied first.
    pub fn new(rules: &[KeepRule], prefer: &[String]) -> Result<KeepPolicy, globset::Error> {
        let mut rules = rules.to_vec();
        if !prefer.is_empty() && !rules.contains(&KeepRule::PathPriority) {
            rules.insert(0, KeepRule::PathPriority);
        }
        let prefer = prefer
            .iter()
            .map(|g| {
                let glob = Glob::new(g)?;
                GlobSetBuilder::new().add(glob).build()
            })
            .collect::<Result<_, _>>()?;
        Ok(KeepPolicy { rules, prefer })
    }

    /// Index of the candidate to keep; candidates are in report order, which breaks ties.
    pub(crate) fn choose(&self, candidates: &[Candidate<'_>]) -> Option<usize> {
        (0..candidates.len()).min_by_key(|&i| (self.key(&candidates[i]), i))
    }

    fn key(&self, c: &Candidate<'_>) -> Vec<i128> {
        self.rules
            .iter()
            .map(|rule| match rule {
                KeepRule::Oldest => i128::from(c.mtime_ns),
                KeepRule::Newest => -i128::from(c.mtime_ns),
                KeepRule::Shallowest => c.depth as i128,
                KeepRule::Deepest => -(c.depth as i128),
                KeepRule::FirstRoot => c.root as i128,
                KeepRule::PathPriority => {
                    self.prefer.iter().position(|g| g.is_match(c.path)).unwrap_or(usize::MAX)
                        as i128
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(path: &str, mtime_ns: i64, root: usize, depth: usize) -> Candidate<'_> {
        Candidate { path: Path::new(path), mtime_ns, root, depth }
    }

    #[test]
    fn rules_apply_in_order_and_ties_keep_report_order() {
        let files = [c("b/x/y", 5, 1, 2), c("a/x", 5, 0, 1), c("a/z", 1, 0, 1)];
        let pick = |rules: &[KeepRule]| KeepPolicy::new(rules, &[]).unwrap().choose(&files);
        assert_eq!(pick(&[]), Some(0));
        assert_eq!(pick(&[KeepRule::Oldest]), Some(2));
        assert_eq!(pick(&[KeepRule::Newest]), Some(0));
        assert_eq!(pick(&[KeepRule::Newest, KeepRule::Shallowest]), Some(1));
        assert_eq!(pick(&[KeepRule::Deepest]), Some(0));
        assert_eq!(pick(&[KeepRule::FirstRoot]), Some(1));
        assert_eq!(pick(&[KeepRule::FirstRoot, KeepRule::Oldest]), Some(2));
    }

    #[test]
    fn contradictory_or_repeated_rules_are_found() {
        use KeepRule::*;
        assert_eq!(conflicting_rules(&[Newest, Shallowest, FirstRoot]), None);
        assert_eq!(conflicting_rules(&[Newest, Deepest, Oldest]), Some((Newest, Oldest)));
        assert_eq!(conflicting_rules(&[Deepest, Shallowest]), Some((Deepest, Shallowest)));
        assert_eq!(conflicting_rules(&[FirstRoot, FirstRoot]), Some((FirstRoot, FirstRoot)));
    }

    #[test]
    fn preferred_globs_win_in_their_order() {
        let files = [c("a/tmp/x", 0, 0, 1), c("a/keep/x", 0, 0, 1), c("a/best/x", 0, 0, 1)];
        let policy = KeepPolicy::new(&[], &["**/best/**".into(), "**/keep/**".into()]).unwrap();
        assert_eq!(policy.choose(&files), Some(2));
        let policy = KeepPolicy::new(&[], &["**/keep/**".into()]).unwrap();
        assert_eq!(policy.choose(&files), Some(1));
    }
}
