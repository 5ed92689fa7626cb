//! Finding a profile and vetting it before it is read: the places a NAME is looked for, and
//! the refusal of a file that someone other than the caller and root could have written (the
//! file, checked on the descriptor read rather than by name again, and its directory).

use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use dedup_core::text::quote_path;

use super::{parse, Profile, ProfileError};

/// The environment variable that stands in for `/etc/dedup` (for tests, which may not write
/// the real one).
pub const SYSTEM_DIR_VAR: &str = "DEDUP_SYSTEM_CONFIG_DIR";

/// The system-wide directory of profiles.
const SYSTEM_DIR: &str = "/etc/dedup";

/// Finds, vets and reads the profile `name`; returns it with the file it came from.
pub fn load(name: &OsStr) -> Result<(Profile, PathBuf), ProfileError> {
    let (path, mut file) = find(name)?;
    vet(&path, &file)?;
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(io("read the profile", &path))?;
    let profile =
        parse(&text).map_err(|source| ProfileError::Bad { path: quote_path(&path), source })?;
    Ok((profile, path))
}

fn io<'a>(doing: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> ProfileError + 'a {
    move |source| ProfileError::Io { doing, path: quote_path(path), source }
}

/// The places a profile of this name is looked for, in order.
fn places(name: &OsStr) -> Result<Vec<PathBuf>, ProfileError> {
    let bytes = name.as_bytes();
    if bytes.ends_with(b".toml") {
        return Ok(vec![PathBuf::from(name)]);
    }
    if bytes.is_empty() || bytes.contains(&b'/') || bytes == b"." || bytes == b".." {
        return Err(ProfileError::BadName(quote_path(Path::new(name))));
    }
    let mut file_name = name.to_os_string();
    file_name.push(".toml");
    let mut dirs = Vec::new();
    if let Some(config) = dedup_core::xdg::xdg_dir("XDG_CONFIG_HOME", ".config") {
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
fn find(name: &OsStr) -> Result<(PathBuf, File), ProfileError> {
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
            Err(e) => return Err(io("open the profile", path)(e)),
        }
    }
    let looked: Vec<String> = places.iter().map(|p| quote_path(p)).collect();
    Err(ProfileError::NotFound { name: quote_path(Path::new(name)), looked: looked.join(", ") })
}

/// Refuses a profile that someone other than the caller and root could have written: the file
/// (checked on the descriptor read, not by name again) and the directory holding it.
fn vet(path: &Path, file: &File) -> Result<(), ProfileError> {
    let meta = file.metadata().map_err(io("stat", path))?;
    if !meta.is_file() {
        return Err(ProfileError::NotAFile(quote_path(path)));
    }
    refuse_if_open_to_others(path, &meta, "")?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let dir_meta = std::fs::metadata(dir).map_err(io("stat", dir))?;
    // In a sticky directory (/tmp) others may create names but not replace the file vetted.
    if dir_meta.mode() & STICKY != 0 {
        return Ok(());
    }
    refuse_if_open_to_others(dir, &dir_meta, &format!(", the directory of {}", quote_path(path)))
}

const STICKY: u32 = 0o1000;

fn refuse_if_open_to_others(
    path: &Path,
    meta: &std::fs::Metadata,
    what: &str,
) -> Result<(), ProfileError> {
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me && meta.uid() != 0 {
        return Err(ProfileError::Refused(format!(
            "{}{what} belongs to user {}, not to you or root; whoever owns it chooses the \
             repository and the password command",
            quote_path(path),
            meta.uid()
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(ProfileError::Refused(format!(
            "{}{what} is writable by group or others (mode {:04o}); whoever can change it \
             chooses the repository and the password command (chmod go-w {})",
            quote_path(path),
            meta.mode() & 0o7777,
            quote_path(path)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_a_slash_is_refused_and_a_toml_path_taken_as_is() {
        assert!(places(OsStr::new("../x")).is_err());
        assert!(places(OsStr::new("..")).is_err());
        assert_eq!(places(OsStr::new("a/b.toml")).unwrap(), vec![PathBuf::from("a/b.toml")]);
    }
}
