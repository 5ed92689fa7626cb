//! The requests that every OpenDAL-backed store (S3, SFTP) makes the same way, blocking on the
//! backend's runtime: whole and ranged reads, a recursive listing of files, a delete that
//! treats an absent object as deleted, and OpenDAL's errors as `io::Error`s.

use std::io;

use opendal::{ErrorKind, Operator};
use tokio::runtime::Runtime;

use super::ObjectInfo;

/// What an S3 request says when no credentials could be found to sign it, where OpenDAL's
/// own words ("failed to load signing credential") name none of the places it looked.
const NO_CREDENTIALS: &str = "no S3 credentials found: set AWS_ACCESS_KEY_ID and \
    AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN with temporary ones), or AWS_PROFILE naming a \
    profile of ~/.aws/credentials; the region comes from AWS_DEFAULT_REGION or AWS_REGION";

/// An OpenDAL error as an `io::Error` of the nearest kind, its message kept.
pub(super) fn to_io(err: opendal::Error) -> io::Error {
    let text = err.to_string();
    if text.contains("signing credential") {
        return io::Error::new(io::ErrorKind::PermissionDenied, NO_CREDENTIALS);
    }
    let kind = match err.kind() {
        ErrorKind::NotFound => io::ErrorKind::NotFound,
        ErrorKind::PermissionDenied => io::ErrorKind::PermissionDenied,
        ErrorKind::AlreadyExists => io::ErrorKind::AlreadyExists,
        ErrorKind::RangeNotSatisfied => io::ErrorKind::UnexpectedEof,
        ErrorKind::ConfigInvalid => io::ErrorKind::InvalidInput,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, super::printable(&text))
}

/// `name` whole.
pub(super) fn get(runtime: &Runtime, op: &Operator, name: &str) -> io::Result<Vec<u8>> {
    let buffer = runtime.block_on(op.read(name)).map_err(to_io)?;
    Ok(buffer.to_vec())
}

/// `len` bytes of `name` from `offset`; `UnexpectedEof` when the object is shorter.
pub(super) fn get_range(
    runtime: &Runtime,
    op: &Operator,
    name: &str,
    offset: u64,
    len: u64,
) -> io::Result<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let end = offset
        .checked_add(len)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "range too large"))?;
    let buffer =
        runtime.block_on(async { op.read_with(name).range(offset..end).await }).map_err(to_io)?;
    if buffer.len() as u64 != len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("{name}: {} bytes from {offset}, {len} asked", buffer.len()),
        ));
    }
    Ok(buffer.to_vec())
}

/// Every file under the folder `prefix` (`""` for all), at any depth, in the store's order.
pub(super) fn list_files(
    runtime: &Runtime,
    op: &Operator,
    prefix: &str,
) -> io::Result<Vec<ObjectInfo>> {
    let folder = format!("{}/", prefix.trim_end_matches('/'));
    let entries = match runtime.block_on(async { op.list_with(&folder).recursive(true).await }) {
        Ok(entries) => entries,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(to_io(err)),
    };
    Ok(entries
        .into_iter()
        .filter(|entry| {
            entry.metadata().is_file()
                && !entry.path().ends_with('/')
                && super::listable(entry.path())
        })
        .map(|entry| ObjectInfo {
            name: entry.path().trim_start_matches('/').to_string(),
            size: entry.metadata().content_length(),
            modified: entry.metadata().last_modified().map(std::time::SystemTime::from),
        })
        .collect())
}

/// Deletes `name`; an absent object counts as deleted.
pub(super) fn delete(runtime: &Runtime, op: &Operator, name: &str) -> io::Result<()> {
    match runtime.block_on(op.delete(name)) {
        Err(err) if err.kind() == ErrorKind::PermissionDenied => Err(deletion_refused(err)),
        Err(err) if err.kind() != ErrorKind::NotFound => Err(to_io(err)),
        _ => Ok(()),
    }
}

/// A refused DELETE, said plainly: the usual cause is credentials that may create and read
/// objects but not delete them (an append-only arrangement), which only `forget`, `prune` and
/// `repair` need.
pub(super) fn deletion_refused(err: opendal::Error) -> io::Error {
    let cause = to_io(err);
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "the storage refused to delete it (DELETE denied: these credentials may not delete, \
             as append-only ones may not; forget, prune and repair need credentials that may): \
             {cause}"
        ),
    )
}
