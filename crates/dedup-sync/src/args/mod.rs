//! `dedup sync`'s arguments (under the `clap` feature): its flags ([`flags`]), its include and
//! exclude rules in the order given, a parser of them alone for a quick start, and how they
//! become [`SyncOptions`](crate::SyncOptions) ([`options`]).

mod flags;
mod options;

use std::ffi::OsString;
use std::ops::Deref;
use std::path::PathBuf;

use clap::{ArgMatches, Args, FromArgMatches};

pub use flags::{DedupArg, ReflinkArg, SyncFlags};
pub use options::ArgsError;

/// `dedup sync ...` read by a parser of `sync`'s own arguments: building the parser of every
/// command costs a run more instructions than a no-op sync of a small tree spends on its own
/// work (docs/benchmarks/journal.md, "Sync start-up and per-file costs (issue 27)"). `None` when the command is
/// not `sync` or its arguments are not accepted as they are (help, a mistake): the whole parser
/// then reads them, and answers as it always does.
pub fn parse_alone(args: impl IntoIterator<Item = OsString>) -> Option<SyncArgs> {
    let mut args = args.into_iter().skip(1).peekable();
    if args.peek()? != "sync" {
        return None;
    }
    let mut parser = SyncArgs::augment_args(clap::Command::new("sync"));
    let mut matches = parser.try_get_matches_from_mut(args).ok()?;
    // Values taken out, not copied; the parser and what is left of the matches are the
    // process's exit's to free, as a sync's trees are (`SyncOptions::exit_after`).
    let parsed = SyncArgs::from_arg_matches_mut(&mut matches).ok();
    std::mem::forget(matches);
    std::mem::forget(parser);
    parsed
}

/// `dedup sync [OPTIONS] SRC DST`: its flags, and its include and exclude rules in the order
/// given, which clap's derived fields do not keep across two options.
#[derive(Debug)]
pub struct SyncArgs {
    /// Every flag.
    pub flags: SyncFlags,
    /// `--include`, `--exclude`, `--include-from` and `--exclude-from`, in command-line order.
    pub filters: Vec<FilterArg>,
}

/// One of the options that make the include and exclude rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterArg {
    /// `--include PATTERN`.
    Include(OsString),
    /// `--exclude PATTERN`.
    Exclude(OsString),
    /// `--include-from FILE`.
    IncludeFrom(PathBuf),
    /// `--exclude-from FILE`.
    ExcludeFrom(PathBuf),
}

impl Deref for SyncArgs {
    type Target = SyncFlags;

    fn deref(&self) -> &SyncFlags {
        &self.flags
    }
}

impl FromArgMatches for SyncArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        let at = positions(matches);
        let flags = SyncFlags::from_arg_matches_mut(matches)?;
        let filters = in_order(&at, &flags);
        Ok(SyncArgs { flags, filters })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        let at = positions(matches);
        self.flags.update_from_arg_matches(matches)?;
        self.filters = in_order(&at, &self.flags);
        Ok(())
    }
}

impl Args for SyncArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        SyncFlags::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        SyncFlags::augment_args_for_update(cmd)
    }
}

/// The ids of the rule options, in the order [`in_order`] reads them.
const RULE_IDS: [&str; 4] = ["include", "exclude", "include_from", "exclude_from"];

/// Where on the command line each value of the rule options stood: (position, option, n-th
/// value of that option), by position.
fn positions(matches: &ArgMatches) -> Vec<(usize, usize, usize)> {
    let mut at: Vec<(usize, usize, usize)> = Vec::new();
    for (option, id) in RULE_IDS.iter().enumerate() {
        let indices = matches.indices_of(id).into_iter().flatten();
        at.extend(indices.enumerate().map(|(nth, index)| (index, option, nth)));
    }
    at.sort_unstable();
    at
}

/// The rule options of `flags` in the order of `at` ([`positions`]).
fn in_order(at: &[(usize, usize, usize)], flags: &SyncFlags) -> Vec<FilterArg> {
    at.iter()
        .filter_map(|&(_, option, nth)| match option {
            0 => flags.include.get(nth).cloned().map(FilterArg::Include),
            1 => flags.exclude.get(nth).cloned().map(FilterArg::Exclude),
            2 => flags.include_from.get(nth).cloned().map(FilterArg::IncludeFrom),
            _ => flags.exclude_from.get(nth).cloned().map(FilterArg::ExcludeFrom),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_and_exclude_rules_keep_the_order_they_were_given_in() {
        let args = ["dedup", "sync", "--exclude", "x", "--include=*/", "-0", "--exclude-from", "f"];
        let args: Vec<OsString> =
            args.iter().chain(&["--include", "y", "a", "b"]).map(OsString::from).collect();
        let alone = parse_alone(args).unwrap();
        assert_eq!(
            alone.filters,
            [
                FilterArg::Exclude("x".into()),
                FilterArg::Include("*/".into()),
                FilterArg::ExcludeFrom("f".into()),
                FilterArg::Include("y".into()),
            ]
        );
    }

    #[test]
    fn anything_else_is_left_to_the_whole_parser() {
        for args in [
            &["dedup", "sync", "--help"][..],
            &["dedup", "sync", "-h"],
            &["dedup", "sync", "-V"],
            &["dedup", "sync", "a"],
            &["dedup", "sync", "--io-threads", "0", "a", "b"],
            &["dedup", "sync", "--delete-excluded", "a", "b"],
            &["dedup", "find", "a"],
            &["dedup", "--version"],
            &["dedup"],
        ] {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            assert!(parse_alone(args.clone()).is_none(), "{args:?}");
        }
    }
}
