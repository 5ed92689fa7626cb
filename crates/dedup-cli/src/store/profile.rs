//! Profiles, as rustic has them: `dedup store -P NAME` reads the store settings of
//! `$XDG_CONFIG_HOME/dedup/NAME.toml` (else `~/.config/dedup/`), else `/etc/dedup/NAME.toml`,
//! or of the file itself when NAME ends in `.toml`. This module finds, vets and parses the file;
//! `profile_apply.rs` merges it under the command line.
//!
//! A profile chooses the repository and the command that yields its password, so a file that
//! someone else could change is refused, as ssh refuses such a config: it must be owned by the
//! caller or root and be writable by neither group nor others, and so must its directory.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Deserializer};

use crate::messages::quote_path;

/// The environment variable that stands in for `/etc/dedup` (for tests, which may not write
/// the real one).
pub const SYSTEM_DIR_VAR: &str = "DEDUP_SYSTEM_CONFIG_DIR";

/// The system-wide directory of profiles.
const SYSTEM_DIR: &str = "/etc/dedup";

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

/// A path a profile names: absolute, or `~/…` under $HOME. A relative path is refused, since
/// a profile is read from whatever directory the command runs in (cron's is `/`).
#[derive(Debug, Clone)]
pub struct AbsolutePath(pub PathBuf);

impl<'de> Deserialize<'de> for AbsolutePath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        absolute(&text).map(AbsolutePath).map_err(serde::de::Error::custom)
    }
}

/// A repository location: `s3:…` and `sftp:…` as written, a directory as [`AbsolutePath`].
#[derive(Debug, Clone)]
pub struct Location(pub PathBuf);

impl<'de> Deserialize<'de> for Location {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.starts_with("s3:") || text.starts_with("sftp:") {
            return Ok(Location(PathBuf::from(text)));
        }
        absolute(&text).map(Location).map_err(serde::de::Error::custom)
    }
}

/// A size: a number of bytes, or text as `--exclude-larger-than` takes it.
#[derive(Debug, Clone, Copy)]
pub struct Size(pub u64);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Bytes(u64),
            Text(String),
        }
        match Written::deserialize(deserializer)? {
            Written::Bytes(bytes) => Ok(Size(bytes)),
            Written::Text(text) => {
                crate::size::parse_size(&text).map(Size).map_err(serde::de::Error::custom)
            }
        }
    }
}

/// A duration as `--keep-within` takes it (checked here, so that a bad one is named with its
/// line).
#[derive(Debug, Clone)]
pub struct Duration(pub String);

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        match super::upkeep::parse_duration(&text) {
            Ok(_) => Ok(Duration(text)),
            Err(e) => Err(serde::de::Error::custom(format!("{e:#}"))),
        }
    }
}

fn absolute(text: &str) -> Result<PathBuf, String> {
    if let Some(rest) = text.strip_prefix("~/").or((text == "~").then_some("")) {
        return match std::env::var_os("HOME").filter(|home| Path::new(home).is_absolute()) {
            // Through components, so that `~/` is $HOME as `backup ~` records it, not `$HOME/`.
            Some(home) => Ok(Path::new(&home).join(rest).components().collect()),
            None => Err(format!("{text:?}: HOME is not set to an absolute path")),
        };
    }
    if Path::new(text).is_absolute() {
        Ok(PathBuf::from(text))
    } else {
        Err(format!(
            "{text:?} is a relative path: give it absolute (or as ~/…), since a profile is read \
             from any working directory"
        ))
    }
}

/// Finds, vets and reads the profile `name`; returns it with the file it came from.
pub fn load(name: &OsStr) -> Result<(Profile, PathBuf)> {
    let (path, mut file) = find(name)?;
    vet(&path, &file)?;
    let mut text = String::new();
    file.read_to_string(&mut text)
        .with_context(|| format!("cannot read the profile {}", quote_path(&path)))?;
    let profile = parse(&text).with_context(|| format!("bad profile {}", quote_path(&path)))?;
    Ok((profile, path))
}

/// Parses a profile's text; an unknown key or a bad value is an error naming its line.
pub fn parse(text: &str) -> Result<Profile> {
    let profile: Profile = toml::from_str(text).map_err(|e| anyhow::anyhow!(describe(&e, text)))?;
    let repository = &profile.repository;
    if repository.password_file.is_some() && repository.password_command.is_some() {
        bail!("[repository] has both password-file and password-command: keep one");
    }
    if profile.check.read_data == Some(true) && profile.check.read_data_subset.is_some() {
        bail!("[check] has both read-data and read-data-subset: keep one");
    }
    Ok(profile)
}

/// The error with its line, column and key, but without toml's excerpt of the file: the line
/// quoted could be a secret (`password = "…"`, which profiles do not take, or a password command
/// that holds one).
fn describe(err: &toml::de::Error, text: &str) -> String {
    let message = err.message().trim_end();
    let Some(span) = err.span() else { return message.to_owned() };
    let start = span.start.min(text.len());
    let before = &text.as_bytes()[..start];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let column = start - line_start + 1;
    let line_text = text[line_start..].lines().next().unwrap_or("");
    let key = line_text.split_once('=').map(|(key, _)| key.trim()).filter(|key| {
        !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    });
    match key {
        Some(key) => format!("line {line}, column {column}, key {key}: {message}"),
        None => format!("line {line}, column {column}: {message}"),
    }
}

/// The places a profile of this name is looked for, in order.
fn places(name: &OsStr) -> Result<Vec<PathBuf>> {
    let bytes = name.as_bytes();
    if bytes.ends_with(b".toml") {
        return Ok(vec![PathBuf::from(name)]);
    }
    if bytes.is_empty() || bytes.contains(&b'/') || bytes == b"." || bytes == b".." {
        bail!(
            "bad profile name {}: give a NAME (read from NAME.toml in the profile directories) \
             or a path ending in .toml",
            quote_path(Path::new(name))
        );
    }
    let mut file_name = name.to_os_string();
    file_name.push(".toml");
    let mut dirs = Vec::new();
    if let Some(config) = crate::config::xdg_dir("XDG_CONFIG_HOME", ".config") {
        dirs.push(config.join("dedup"));
    }
    match std::env::var_os(SYSTEM_DIR_VAR) {
        Some(dir) if !dir.is_empty() => dirs.push(PathBuf::from(dir)),
        _ => dirs.push(PathBuf::from(SYSTEM_DIR)),
    }
    Ok(dirs.into_iter().map(|dir| dir.join(&file_name)).collect())
}

/// The first place that holds the profile, opened. A file that exists but cannot be read is
/// an error, not a reason to take the next place's.
fn find(name: &OsStr) -> Result<(PathBuf, File)> {
    use std::io::ErrorKind::{NotADirectory, NotFound};
    let places = places(name)?;
    for path in &places {
        // Non-blocking, so that a FIFO named like a profile is refused (not a regular file)
        // instead of hanging the command; a regular file reads as ever.
        let opened =
            std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path);
        match opened {
            Ok(file) => return Ok((path.clone(), file)),
            Err(e) if matches!(e.kind(), NotFound | NotADirectory) => continue,
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot open the profile {}", quote_path(path)))
            }
        }
    }
    let looked: Vec<String> = places.iter().map(|p| quote_path(p)).collect();
    bail!("profile {} not found: looked for {}", quote_path(Path::new(name)), looked.join(", "))
}

/// Refuses a profile that someone other than the caller and root could have written: the file
/// (checked on the descriptor read, not by name again) and the directory holding it.
fn vet(path: &Path, file: &File) -> Result<()> {
    let meta = file.metadata().with_context(|| format!("cannot stat {}", quote_path(path)))?;
    if !meta.is_file() {
        bail!("the profile {} is not a regular file", quote_path(path));
    }
    refuse_if_open_to_others(path, &meta, "")?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let dir_meta =
        std::fs::metadata(dir).with_context(|| format!("cannot stat {}", quote_path(dir)))?;
    // In a sticky directory (/tmp) others may create names but not replace the file vetted.
    if dir_meta.mode() & STICKY != 0 {
        return Ok(());
    }
    refuse_if_open_to_others(dir, &dir_meta, &format!(", the directory of {}", quote_path(path)))
}

const STICKY: u32 = 0o1000;

fn refuse_if_open_to_others(path: &Path, meta: &std::fs::Metadata, what: &str) -> Result<()> {
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me && meta.uid() != 0 {
        bail!(
            "profile refused: {}{what} belongs to user {}, not to you or root; whoever owns it \
             chooses the repository and the password command",
            quote_path(path),
            meta.uid()
        );
    }
    if meta.mode() & 0o022 != 0 {
        bail!(
            "profile refused: {}{what} is writable by group or others (mode {:04o}); whoever can \
             change it chooses the repository and the password command (chmod go-w {})",
            quote_path(path),
            meta.mode() & 0o7777,
            quote_path(path)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
        let text = format!("{err:#}");
        assert!(text.contains("line 3") && text.contains("exclud"), "{text}");
    }

    #[test]
    fn an_error_never_quotes_the_line_it_is_about() {
        let text = format!("{:#}", parse("[repository]\npassword = \"hunter2\"\n").unwrap_err());
        assert!(text.contains("line 2") && text.contains("password"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        let text = format!(
            "{:#}",
            parse("[repository]\npassword-command = \"echo hunter2\n").unwrap_err()
        );
        assert!(text.contains("line 2") && !text.contains("hunter2"), "{text}");
    }

    #[test]
    fn relative_paths_and_bad_values_are_refused_with_their_line() {
        let text = format!("{:#}", parse("[backup]\n\nsources = [\"home\"]\n").unwrap_err());
        assert!(text.contains("line 3") && text.contains("relative"), "{text}");
        let text = format!("{:#}", parse("[forget]\nkeep-within = \"7x\"\n").unwrap_err());
        assert!(text.contains("line 2") && text.contains("unknown unit"), "{text}");
        let text = format!("{:#}", parse("[backup]\nexclude-larger-than = \"9Q\"\n").unwrap_err());
        assert!(text.contains("line 2"), "{text}");
        assert!(parse("[repository]\nrepository = \"s3:https://h/b\"\n").is_ok());
    }

    #[test]
    fn a_tilde_is_home_without_a_trailing_slash() {
        let Some(home) = std::env::var_os("HOME").filter(|h| Path::new(h).is_absolute()) else {
            return;
        };
        let home: PathBuf = Path::new(&home).components().collect();
        assert_eq!(absolute("~/").unwrap(), home);
        assert_eq!(absolute("~").unwrap(), home);
        assert_eq!(absolute("~/docs/").unwrap(), home.join("docs"));
    }

    #[test]
    fn both_password_sources_are_refused() {
        assert!(
            parse("[repository]\npassword-file = \"/k\"\npassword-command = \"cat /k\"\n").is_err()
        );
    }

    #[test]
    fn a_name_with_a_slash_is_refused_and_a_toml_path_taken_as_is() {
        assert!(places(OsStr::new("../x")).is_err());
        assert!(places(OsStr::new("..")).is_err());
        assert_eq!(places(OsStr::new("a/b.toml")).unwrap(), vec![PathBuf::from("a/b.toml")]);
    }
}
