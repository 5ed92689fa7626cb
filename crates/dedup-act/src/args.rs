//! The actions' arguments (`link`, `reflink`, `symlink`, `remove`, `move`; under the `clap`
//! feature), with the help text every action shares, and how they become [`RunOptions`]. The
//! selection of the scan an action runs (unless `--from`) is dedup-find's: the binary puts both
//! on one command line.

use std::path::PathBuf;

use clap::Args;

use crate::{conflicting_rules, Action, KeepPolicy, KeepRule, PlanOptions, RunOptions};

/// Arguments that ask for something no run can do.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    /// A `--prefer` glob that does not parse.
    #[error("bad --prefer glob")]
    Prefer(#[source] globset::Error),
    /// Two `--keep` rules that contradict each other, or one given twice.
    #[error("--keep {0} and {1} contradict each other (or repeat): give each rule once, most important first")]
    KeepConflict(String, String),
    /// `move --to DIR` cannot be made absolute.
    #[error("cannot resolve --to")]
    MoveTo(#[source] std::io::Error),
}

/// The help after every action's options: how a change is made safe, the output, the exit status.
pub const AFTER_HELP: &str = "\
Each group of identical files keeps one file (chosen by --keep, --prefer and --reference) and \
acts on the others. Just before each change the file is checked again: same device, inode, size, \
mtime and ctime as when scanned, not a symlink, and still equal to the kept file byte for byte; \
otherwise it is skipped with the reason. Replacements are made under a temporary name in the same \
directory and renamed over the duplicate, so every path always names a complete file. Files under \
a --reference directory are never changed.

Output: one line per change on stdout (the same lines with --dry-run, which changes nothing); \
skipped files and a summary on stderr.

Exit status: 0 = every planned change was made (or nothing to do); 1 = finished, but some files \
were skipped (changed since the scan, permission denied, other file system...) or could not be \
scanned: each is named on stderr; 2 = usage or fatal error (bad report, missing reference...): \
nothing was changed.

Examples:
  dedup link --dry-run ~/Photos                  show which duplicates would become hard links
  dedup link ~/Photos                            hard-link duplicate photos
  dedup reflink /srv/images                      share extents on btrfs or XFS
  dedup remove --reference ~/Archive ~/Downloads   delete from Downloads what Archive has
  dedup move --to ~/dupes ~/Downloads            move duplicates aside to review them
  dedup find --format json -o r.json ~ && dedup remove --dry-run --from r.json";

/// Options of the actions.
#[derive(Debug, Args)]
pub struct ActArgs {
    /// Files and directories to scan, recursively [default: . unless --from]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Act on a saved JSON report of `dedup find --format json` instead of scanning (- for stdin).
    #[arg(long, value_name = "REPORT", conflicts_with = "paths", help_heading = "Plan")]
    pub from: Option<PathBuf>,

    /// Rules choosing the file to keep, in priority order (comma-separated or repeated); ties
    /// go to the first path in report order (PATH order, then name). A rule given twice, or with
    /// its opposite (newest/oldest, shallowest/deepest), is refused.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "RULE", help_heading = "Plan")]
    pub keep: Vec<KeepRule>,

    /// Prefer keeping files whose path matches GLOB (repeatable; earlier globs win).
    #[arg(long, value_name = "GLOB", help_heading = "Plan")]
    pub prefer: Vec<String>,

    /// Never change files under DIR, and keep one of them whenever a group has one (repeatable;
    /// DIR is scanned too). Groups that lie wholly in reference directories are left alone.
    #[arg(long, value_name = "DIR", help_heading = "Plan")]
    pub reference: Vec<PathBuf>,

    /// Only act on duplicates under another PATH than the kept file.
    #[arg(long, help_heading = "Plan")]
    pub isolate: bool,

    /// Also act on whole duplicated directories (as `dedup find --dirs` reports them): each of
    /// their files is checked and acted on against its copy in the kept directory; `remove`
    /// and `move` then remove the directories they emptied.
    #[arg(long, conflicts_with = "script", help_heading = "Plan")]
    pub dirs: bool,

    /// link, symlink: also replace duplicates whose owner, group or mode differ from the kept
    /// file's (they take the kept file's, and its owner may then change them); remove: also
    /// remove duplicates of another user than the kept file's. Without it they are skipped.
    #[arg(long, help_heading = "Plan")]
    pub any_owner: bool,

    /// Check everything and print what would be done, but change nothing.
    #[arg(short = 'n', long, help_heading = "Output")]
    pub dry_run: bool,

    /// Print the plan as a shell script that re-checks each file before changing it; change nothing.
    #[arg(long, conflicts_with = "dry_run", help_heading = "Output")]
    pub script: bool,

    /// Append a JSON line to FILE for every change made and every file skipped.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub log: Option<PathBuf>,

    /// No summary, no progress display, no line per change (problems are still shown).
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,

    /// Also show notes and the settings chosen.
    #[arg(short, long, help_heading = "Output")]
    pub verbose: bool,
}

impl ActArgs {
    /// The paths to scan: those given, else the current directory, then each `--reference`
    /// directory not among them.
    pub fn roots(&self) -> Vec<PathBuf> {
        let mut roots =
            if self.paths.is_empty() { vec![PathBuf::from(".")] } else { self.paths.clone() };
        for r in &self.reference {
            if !roots.contains(r) {
                roots.push(r.clone());
            }
        }
        roots
    }

    /// How to run `action` on a report.
    pub fn options(&self, action: Action) -> Result<RunOptions, ArgsError> {
        if let Some((a, b)) = conflicting_rules(&self.keep) {
            return Err(ArgsError::KeepConflict(rule_name(a), rule_name(b)));
        }
        let keep = KeepPolicy::new(&self.keep, &self.prefer).map_err(ArgsError::Prefer)?;
        Ok(RunOptions {
            plan: PlanOptions {
                action,
                keep,
                isolate: self.isolate,
                dirs: self.dirs,
                any_owner: self.any_owner,
            },
            reference: self.reference.clone(),
            script: self.script.then(|| format!("dedup {}", env!("CARGO_PKG_VERSION"))),
            dry_run: self.dry_run,
            quiet: self.quiet,
            log: self.log.clone(),
        })
    }
}

/// A rule as it is written on the command line.
fn rule_name(rule: KeepRule) -> String {
    use clap::ValueEnum;
    rule.to_possible_value().map_or_else(|| format!("{rule:?}"), |v| v.get_name().to_owned())
}

/// Options of `dedup move`.
#[derive(Debug, Args)]
pub struct MoveArgs {
    /// Directory that receives the duplicates (created if missing; same file system).
    #[arg(long, value_name = "DIR", required = true)]
    pub to: PathBuf,

    /// Everything else, as for the other actions.
    #[command(flatten)]
    pub act: ActArgs,
}

impl MoveArgs {
    /// The action: a move under `--to`, made absolute.
    pub fn action(&self) -> Result<Action, ArgsError> {
        Ok(Action::Move { to: std::path::absolute(&self.to).map_err(ArgsError::MoveTo)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<A: Args>(args: &[&str]) -> A {
        let matches = A::augment_args(clap::Command::new("act")).try_get_matches_from(args);
        A::from_arg_matches(&matches.expect("parsed")).expect("parsed")
    }

    #[test]
    fn reference_directories_are_scanned_once_after_the_paths() {
        let args: ActArgs = parse(&["link", "--reference", "r", "--reference", "a", "a", "b"]);
        assert_eq!(args.roots(), [PathBuf::from("a"), "b".into(), "r".into()]);
        let args: ActArgs = parse(&["link", "--reference", "r"]);
        assert_eq!(args.roots(), [PathBuf::from("."), "r".into()]);
    }

    #[test]
    fn options_carry_the_plan_and_a_bad_prefer_glob_is_refused() {
        let args: ActArgs = parse(&["link", "-n", "--isolate", "--keep", "newest,deepest"]);
        let options = args.options(Action::Link).unwrap();
        assert!(options.dry_run && options.plan.isolate && options.script.is_none());
        let args: ActArgs = parse(&["link", "--keep", "newest", "--keep", "oldest"]);
        let err = args.options(Action::Link).unwrap_err();
        assert!(matches!(err, ArgsError::KeepConflict(..)), "{err}");
        assert!(err.to_string().contains("newest and oldest"), "{err}");
        let args: ActArgs = parse(&["link", "--prefer", "a[", "x"]);
        assert!(matches!(args.options(Action::Link), Err(ArgsError::Prefer(_))));
    }

    #[test]
    fn move_goes_under_an_absolute_directory() {
        let args: MoveArgs = parse(&["move", "--to", "dupes", "x"]);
        let Action::Move { to } = args.action().unwrap() else { panic!("not a move") };
        assert!(to.is_absolute() && to.ends_with("dupes"));
    }
}
