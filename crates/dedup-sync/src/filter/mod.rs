//! rsync's include and exclude rules: one ordered list, from `--include`, `--exclude`,
//! `--include-from` and `--exclude-from` in the order given, in which the first rule whose
//! pattern matches an entry decides whether it is left out (an entry no rule matches is kept).
//! A directory left out is never entered, so nothing below it is matched; this is why
//! `--include '*/' --include '*.jpg' --exclude '*'` keeps every JPEG at any depth. Patterns are
//! matched as rsync matches them ([`rule`], [`wildcard`]). The same rules filter SRC and DST, so
//! an excluded DST entry is left as it is.

mod rule;
pub mod wildcard;

pub use rule::Pattern;
use wildcard::WildcardError;

/// One include or exclude rule as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterRule {
    /// Keeps what it matches (`--include`, `+ `), rather than leaving it out.
    pub include: bool,
    /// The pattern.
    pub pattern: Vec<u8>,
}

/// What one `--include`/`--exclude` argument or one line of a rules file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleLine {
    /// A rule.
    Rule(FilterRule),
    /// `!`: the rules so far are dropped.
    Clear,
}

impl RuleLine {
    /// An argument of `--include` (`include`) or `--exclude`: as rsync reads it, `+ PATTERN` and
    /// `- PATTERN` say which kind of rule it is whatever the option, and `!` clears the list.
    pub fn from_arg(arg: &[u8], include: bool) -> RuleLine {
        match arg {
            b"!" => RuleLine::Clear,
            [b'+', b' ', rest @ ..] => {
                RuleLine::Rule(FilterRule { include: true, pattern: rest.into() })
            }
            [b'-', b' ', rest @ ..] => {
                RuleLine::Rule(FilterRule { include: false, pattern: rest.into() })
            }
            _ => RuleLine::Rule(FilterRule { include, pattern: arg.to_vec() }),
        }
    }

    /// Every rule of the text of an `--include-from` (`include`) or `--exclude-from` file: one a
    /// line (a line ends at a newline or a carriage return; with `nul`, at a NUL byte instead),
    /// blank lines and lines starting with `#` or `;` ignored, each read as an argument.
    pub fn from_file(text: &[u8], include: bool, nul: bool) -> Vec<RuleLine> {
        entries(text, nul).map(|line| RuleLine::from_arg(line, include)).collect()
    }
}

/// The entries of a list read from a file (rules, or `--files-from` paths): split at newlines
/// and carriage returns (at NUL bytes with `nul`), blank ones and those starting with `#` or `;`
/// left out.
pub fn entries(text: &[u8], nul: bool) -> impl Iterator<Item = &[u8]> {
    text.split(move |&b| if nul { b == 0 } else { b == b'\n' || b == b'\r' })
        .filter(|l| !l.is_empty() && !l.starts_with(b"#") && !l.starts_with(b";"))
}

/// Append `line` to `rules` (a `!` empties it).
pub fn push(rules: &mut Vec<FilterRule>, line: RuleLine) {
    match line {
        RuleLine::Rule(r) => rules.push(r),
        RuleLine::Clear => rules.clear(),
    }
}

/// A pattern that cannot be used, named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid pattern {pattern:?}: {reason}")]
pub struct PatternError {
    /// The pattern as given.
    pub pattern: String,
    /// Why.
    pub reason: WildcardError,
}

/// The compiled rules of a run.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    rules: Vec<(bool, Pattern)>,
}

impl Filter {
    /// Compile `rules` in order.
    pub fn new(rules: &[FilterRule]) -> Result<Filter, PatternError> {
        let compiled = rules
            .iter()
            .map(|r| {
                let pattern = Pattern::new(&r.pattern).map_err(|reason| PatternError {
                    pattern: String::from_utf8_lossy(&r.pattern).into_owned(),
                    reason,
                })?;
                Ok((r.include, pattern))
            })
            .collect::<Result<_, PatternError>>()?;
        Ok(Filter { rules: compiled })
    }

    /// True when there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// True when the first rule that matches the entry at `rel` (below the root) is an exclude.
    pub fn excludes(&self, rel: &[u8], is_dir: bool) -> bool {
        self.rules.iter().find(|(_, p)| p.matches(rel, is_dir)).is_some_and(|(include, _)| !include)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(args: &[(&str, bool)]) -> Filter {
        let mut rules = Vec::new();
        for (a, include) in args {
            push(&mut rules, RuleLine::from_arg(a.as_bytes(), *include));
        }
        Filter::new(&rules).unwrap()
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let f = filter(&[("*/", true), ("*.jpg", true), ("*", false)]);
        assert!(!f.excludes(b"a", true));
        assert!(!f.excludes(b"a/b.jpg", false));
        assert!(f.excludes(b"a/b.txt", false));
        let f = filter(&[("*.log", false), ("keep.log", true)]);
        assert!(f.excludes(b"keep.log", false), "an include after the exclude is never reached");
        assert!(!filter(&[]).excludes(b"x", false));
    }

    #[test]
    fn prefixes_say_the_kind_of_rule_and_a_bang_clears_the_list() {
        let f = filter(&[("+ *.c", false), ("*", false)]);
        assert!(!f.excludes(b"x.c", false) && f.excludes(b"x.h", false));
        let f = filter(&[("*", false), ("!", false), ("- *.h", true)]);
        assert!(!f.excludes(b"x.c", false) && f.excludes(b"x.h", false));
    }

    #[test]
    fn rule_files_skip_blank_lines_and_comments_and_split_as_asked() {
        let text = b"# comment\n*.o\r\n\n; another\n+ keep.o\r- x\n";
        let lines = RuleLine::from_file(text, false, false);
        let rule = |include, p: &str| RuleLine::Rule(FilterRule { include, pattern: p.into() });
        assert_eq!(lines, [rule(false, "*.o"), rule(true, "keep.o"), rule(false, "x")]);
        let lines = RuleLine::from_file(b"a b\n\0#c\0\0d", true, true);
        assert_eq!(lines, [rule(true, "a b\n"), rule(true, "d")]);
    }

    #[test]
    fn a_bad_pattern_is_named() {
        let err = Filter::new(&[FilterRule { include: false, pattern: b"/a[b".to_vec() }]);
        let err = err.unwrap_err().to_string();
        assert!(err.contains("/a[b") && err.contains("never closed"), "{err}");
    }
}
