//! Profiles, as rustic has them: `dedup store -P NAME` reads the store settings of
//! `$XDG_CONFIG_HOME/dedup/NAME.toml` (else `~/.config/dedup/`), else `/etc/dedup/NAME.toml`,
//! or of the file itself when NAME ends in `.toml`. This module holds the settings and parses
//! them; `locate.rs` finds and vets the file, `merge.rs` puts a profile under the command line.
//!
//! A profile chooses the repository and the command that yields its password, so a file that
//! someone else could change is refused, as ssh refuses such a config (`locate.rs`).

mod locate;
mod merge;
mod values;

use serde::Deserialize;

pub use locate::{load, SYSTEM_DIR_VAR};
pub use merge::{BackupFields, CheckFields, ForgetFields, RepositoryFields};
pub use values::{AbsolutePath, Duration, Location, Size};

/// A profile that cannot be used, naming the file and, for a bad value, its line, column and
/// key (never the text of the line: it could hold a secret).
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// A name that is neither a NAME nor a path ending in `.toml`.
    #[error(
        "bad profile name {0}: give a NAME (read from NAME.toml in the profile directories) or \
         a path ending in .toml"
    )]
    BadName(String),
    /// No place holds the profile.
    #[error("profile {name} not found: looked for {looked}")]
    NotFound {
        /// The name asked for.
        name: String,
        /// The places looked in, in order.
        looked: String,
    },
    /// The file is there but does not open or read.
    #[error("cannot {doing} {path}")]
    Io {
        /// "open the profile", "read the profile" or "stat".
        doing: &'static str,
        /// The file or directory, quoted for a message.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// Not a regular file.
    #[error("the profile {0} is not a regular file")]
    NotAFile(String),
    /// Someone other than the caller and root could have written the file or its directory.
    #[error("profile refused: {0}")]
    Refused(String),
    /// The text is not a valid profile.
    #[error("bad profile {path}")]
    Bad {
        /// The file, quoted for a message.
        path: String,
        /// What is wrong.
        source: ParseError,
    },
}

/// What is wrong with a profile's text.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// A syntax error, an unknown key or a bad value.
    #[error("line {line}, column {column}{}: {message}", shown_key(key.as_deref()))]
    Value {
        /// From 1.
        line: usize,
        /// From 1.
        column: usize,
        /// The key of the line, when it has one.
        key: Option<String>,
        /// What is wrong, without the line's text.
        message: String,
    },
    /// An error toml could not place in the text.
    #[error("{0}")]
    Unplaced(String),
    /// Two settings that exclude each other.
    #[error("{0}")]
    Conflict(&'static str),
}

fn shown_key(key: Option<&str>) -> String {
    key.map(|key| format!(", key {key}")).unwrap_or_default()
}

/// A profile file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Profile {
    /// `[repository]`.
    #[serde(default)]
    pub repository: RepositorySection,
    /// `[backup]`.
    #[serde(default)]
    pub backup: BackupSection,
    /// `[forget]`.
    #[serde(default)]
    pub forget: ForgetSection,
    /// `[check]`.
    #[serde(default)]
    pub check: CheckSection,
}

/// `[repository]`: where the repository is and how it is opened.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RepositorySection {
    /// `-r`: a directory, `s3:…` or `sftp:…`.
    pub repository: Option<Location>,
    /// `--password-file`.
    pub password_file: Option<AbsolutePath>,
    /// `--password-command`.
    pub password_command: Option<String>,
    /// `--connections`.
    pub connections: Option<usize>,
    /// `--s3-virtual-host`.
    pub s3_virtual_host: Option<bool>,
    /// `--no-cache`.
    pub no_cache: Option<bool>,
    /// `--no-key-cache`.
    pub no_key_cache: Option<bool>,
    /// `--insecure-http`.
    pub insecure_http: Option<bool>,
}

/// `[backup]`: what `backup` saves when no PATH is given, and how it selects.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct BackupSection {
    /// The PATHs.
    #[serde(default)]
    pub sources: Vec<AbsolutePath>,
    /// `--files-from`.
    #[serde(default)]
    pub files_from: Vec<AbsolutePath>,
    /// `--exclude`.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// `--iexclude`.
    #[serde(default)]
    pub iexclude: Vec<String>,
    /// `--exclude-file`.
    #[serde(default)]
    pub exclude_file: Vec<AbsolutePath>,
    /// `--exclude-if-present`.
    #[serde(default)]
    pub exclude_if_present: Vec<String>,
    /// `--exclude-caches`.
    pub exclude_caches: Option<bool>,
    /// `--exclude-larger-than`: a number of bytes or a size such as "1G".
    pub exclude_larger_than: Option<Size>,
    /// `--tag`.
    #[serde(default)]
    pub tags: Vec<String>,
    /// `--host`.
    pub host: Option<String>,
    /// `--one-file-system`.
    pub one_file_system: Option<bool>,
}

/// `[forget]`: the retention policy `forget` applies when given no rule.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ForgetSection {
    /// `--keep-last`.
    pub keep_last: Option<u32>,
    /// `--keep-hourly`.
    pub keep_hourly: Option<u32>,
    /// `--keep-daily`.
    pub keep_daily: Option<u32>,
    /// `--keep-weekly`.
    pub keep_weekly: Option<u32>,
    /// `--keep-monthly`.
    pub keep_monthly: Option<u32>,
    /// `--keep-yearly`.
    pub keep_yearly: Option<u32>,
    /// `--keep-within`.
    pub keep_within: Option<Duration>,
    /// `--keep-tag`.
    #[serde(default)]
    pub keep_tag: Vec<String>,
    /// `--prune`.
    pub prune: Option<bool>,
}

/// `[check]`: how much data `check` reads when the command line does not say.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CheckSection {
    /// `--read-data`.
    pub read_data: Option<bool>,
    /// `--read-data-subset`.
    pub read_data_subset: Option<String>,
}

/// Parses a profile's text; an unknown key or a bad value is an error naming its line.
pub fn parse(text: &str) -> Result<Profile, ParseError> {
    let profile: Profile = toml::from_str(text).map_err(|e| describe(&e, text))?;
    let repository = &profile.repository;
    if repository.password_file.is_some() && repository.password_command.is_some() {
        return Err(ParseError::Conflict(
            "[repository] has both password-file and password-command: keep one",
        ));
    }
    if profile.check.read_data == Some(true) && profile.check.read_data_subset.is_some() {
        return Err(ParseError::Conflict(
            "[check] has both read-data and read-data-subset: keep one",
        ));
    }
    Ok(profile)
}

/// The error with its line, column and key, but without toml's excerpt of the file: the line
/// quoted could be a secret (`password = "…"`, which profiles do not take, or a password command
/// that holds one).
fn describe(err: &toml::de::Error, text: &str) -> ParseError {
    let message = err.message().trim_end().to_owned();
    let Some(span) = err.span() else {
        return ParseError::Unplaced(message);
    };
    let start = span.start.min(text.len());
    let before = &text.as_bytes()[..start];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let column = start - line_start + 1;
    let line_text = text[line_start..].lines().next().unwrap_or("");
    let key = line_text.split_once('=').map(|(key, _)| key.trim()).filter(|key| {
        !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    });
    ParseError::Value { line, column, key: key.map(str::to_owned), message }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn the_issue_example_parses() {
        let profile = parse(
            "[repository]\nrepository = \"/srv/backup\"\npassword-command = \"pass show backup\"\n\
             [backup]\nsources = [\"/home\", \"/etc\"]\nexclude = [\"*.tmp\"]\n\
             exclude-larger-than = \"1G\"\n[forget]\nkeep-last = 3\nkeep-daily = 7\n",
        )
        .unwrap();
        assert_eq!(profile.repository.repository.unwrap().0, Path::new("/srv/backup"));
        assert_eq!(profile.backup.sources.len(), 2);
        assert_eq!(profile.backup.exclude_larger_than.unwrap().0, 1 << 30);
        assert_eq!((profile.forget.keep_last, profile.forget.keep_daily), (Some(3), Some(7)));
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let err = parse("[backup]\nsources = [\"/a\"]\nexclud = [\"x\"]\n").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("line 3") && text.contains("exclud"), "{text}");
    }

    #[test]
    fn an_error_never_quotes_the_line_it_is_about() {
        let text = parse("[repository]\npassword = \"hunter2\"\n").unwrap_err().to_string();
        assert!(text.contains("line 2") && text.contains("password"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        let text =
            parse("[repository]\npassword-command = \"echo hunter2\n").unwrap_err().to_string();
        assert!(text.contains("line 2") && !text.contains("hunter2"), "{text}");
    }

    #[test]
    fn relative_paths_and_bad_values_are_refused_with_their_line() {
        let text = parse("[backup]\n\nsources = [\"home\"]\n").unwrap_err().to_string();
        assert!(text.contains("line 3") && text.contains("relative"), "{text}");
        let text = parse("[forget]\nkeep-within = \"7x\"\n").unwrap_err().to_string();
        assert!(text.contains("line 2") && text.contains("unknown unit"), "{text}");
        let text = parse("[backup]\nexclude-larger-than = \"9Q\"\n").unwrap_err().to_string();
        assert!(text.contains("line 2"), "{text}");
        assert!(parse("[repository]\nrepository = \"s3:https://h/b\"\n").is_ok());
    }

    #[test]
    fn both_password_sources_are_refused() {
        assert!(
            parse("[repository]\npassword-file = \"/k\"\npassword-command = \"cat /k\"\n").is_err()
        );
    }
}
