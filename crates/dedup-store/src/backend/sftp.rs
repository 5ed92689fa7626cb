//! A repository on an SFTP server, through OpenDAL's sftp service, which drives the system `ssh`
//! binary (one ssh master connection per pooled session, reusing the user's ssh configuration,
//! keys and agent).
//!
//! SFTP has no whole-object write: a file exists, empty, from the moment it is opened. OpenDAL's
//! write-if-absent opens the final name exclusively and then sends the bytes, so a writer killed
//! half-way would leave a truncated object under its final name, which every later put would take
//! for the complete one. Objects are therefore written as on a local disk: to a temporary name
//! `.tmp-HOST-PID-RANDOM` beside the final one (through OpenDAL), flushed to the server's disk
//! (`fsync@openssh.com`), then linked to the final name with `hardlink@openssh.com` (link(2) on
//! the server, which refuses to replace an existing name) and the temporary removed. OpenDAL's
//! rename cannot do this last step: it prefers `posix-rename@openssh.com`, which replaces. That
//! one step goes through a session of our own opened with the crate OpenDAL itself uses
//! (openssh-sftp-client); everything else (reads, ranged reads, listings, deletes) goes through
//! OpenDAL with the same retry, timeout and concurrency layers as the S3 backend.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opendal::layers::{ConcurrentLimitLayer, RetryLayer, TimeoutLayer};
use opendal::services::Sftp as SftpService;
use opendal::Operator;
use openssh::{KnownHosts, SessionBuilder};
use openssh_sftp_client::error::SftpErrorKind;
use openssh_sftp_client::{Error as SftpError, Sftp, SftpOptions};

use super::dal::{self, to_io as opendal_to_io};
use super::s3::S3Options;
use super::sftp_location::SftpLocation;
use super::temporary::{is_hidden, temporary_is_stale, temporary_name, TEMP_PREFIX};
use super::{Backend, ObjectInfo, PutOutcome};

/// Objects stored as files under a folder of an SFTP server.
pub struct SftpBackend {
    location: String,
    // Fields drop in this order: OpenDAL's sessions and ours end (each runs `ssh -O exit`) while
    // the runtime that drives them still exists.
    op: Operator,
    /// Our own session, for the step OpenDAL cannot do; replaced when its connection breaks.
    linker: Mutex<Arc<Sftp>>,
    /// `ssh://[USER@]HOST[:PORT]`, to open it again.
    destination: String,
    /// The repository's folder on the server, absolute.
    root: PathBuf,
    /// Attempts after the first of a link whose connection broke, and the first pause.
    retries: usize,
    min_backoff: Duration,
    runtime: tokio::runtime::Runtime,
}

/// Opens an SFTP session of our own to `destination` through the system ssh.
async fn open_session(destination: &str) -> io::Result<Sftp> {
    let mut session = SessionBuilder::default();
    session
        .known_hosts_check(KnownHosts::Add)
        .connect_timeout(Duration::from_secs(20))
        .server_alive_interval(Duration::from_secs(15));
    let session = session
        .connect(destination)
        .await
        .map_err(|err| io::Error::other(format!("ssh {destination}: {}", with_causes(&err))))?;
    Sftp::from_session(session, SftpOptions::default())
        .await
        .map_err(|err| sftp_to_io("starting the sftp subsystem", err))
}

/// Opens a session as [`open_session`], trying again twice after a failure (a server starting,
/// a dropped connection), with the backoff of the other requests.
async fn open_session_retrying(destination: &str, options: &S3Options) -> io::Result<Sftp> {
    let mut pause = options.min_backoff;
    let mut attempts_left = options.retries.min(2);
    loop {
        match open_session(destination).await {
            Err(_) if attempts_left > 0 => {
                attempts_left -= 1;
                tokio::time::sleep(pause).await;
                pause *= 2;
            }
            result => return result,
        }
    }
}

/// `err`'s message followed by those of its causes (openssh's say what ssh printed).
fn with_causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

/// Whether `err` says the session broke (rather than the server refusing a request), so that
/// the request may be sent again on a new one.
fn connection_broke(err: &SftpError) -> bool {
    !matches!(err, SftpError::SftpError(..) | SftpError::UnsupportedExtension(..))
}

impl SftpBackend {
    /// The repository at `location` (`sftp://[USER@]HOST[:PORT]/PATH` or
    /// `sftp:[USER@]HOST:PATH`). ssh reads its usual configuration (`~/.ssh/config`, keys, agent);
    /// an unknown host key is added to known_hosts (accept-new), a changed one is refused.
    pub fn new(location: &str, options: &S3Options) -> io::Result<Self> {
        let parsed = SftpLocation::parse(location)
            .map_err(|why| io::Error::new(io::ErrorKind::InvalidInput, why))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("dedup-sftp")
            .enable_io()
            .enable_time()
            .build()?;
        let destination = parsed.destination();
        let (linker, root) = runtime.block_on(async {
            let sftp = open_session_retrying(&destination, options).await?;
            let root = if parsed.path.starts_with('/') {
                PathBuf::from(&parsed.path)
            } else {
                let home = sftp
                    .fs()
                    .canonicalize(".")
                    .await
                    .map_err(|err| sftp_to_io("finding the login directory", err))?;
                home.join(&parsed.path)
            };
            Ok::<_, io::Error>((sftp, normalize(&root)))
        })?;
        let root_text = root
            .to_str()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "non-UTF-8 path"))?;
        let service = SftpService::default()
            .endpoint(&destination)
            .root(root_text)
            .known_hosts_strategy("add");
        let op = Operator::new(service)
            .map_err(opendal_to_io)?
            .layer(TimeoutLayer::new().with_io_timeout(options.io_timeout))
            .layer(
                RetryLayer::new()
                    .with_max_times(options.retries)
                    .with_min_delay(options.min_backoff)
                    .with_max_delay(Duration::from_secs(10))
                    .with_jitter(),
            )
            .layer(ConcurrentLimitLayer::new(options.connections.max(1)));
        Ok(SftpBackend {
            location: location.to_string(),
            op,
            linker: Mutex::new(Arc::new(linker)),
            destination,
            root,
            retries: options.retries,
            min_backoff: options.min_backoff,
            runtime,
        })
    }

    /// `name`'s path on the server.
    fn remote(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// The session of our own now in use.
    fn linker(&self) -> Arc<Sftp> {
        Arc::clone(&self.linker.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// Replaces the session `broken` by a new one (unless another thread already did).
    async fn reconnect(&self, broken: &Arc<Sftp>) -> io::Result<()> {
        let fresh = Arc::new(open_session(&self.destination).await?);
        let mut current = self.linker.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if Arc::ptr_eq(&current, broken) {
            *current = fresh;
        }
        Ok(())
    }

    /// Flushes the complete temporary `temp` and links it to `name`, on a new session when the
    /// connection breaks (a link whose answer was lost and that is sent again finds the name
    /// taken by itself: `AlreadyExisted`, the same object).
    async fn commit(&self, temp: &str, name: &str) -> io::Result<PutOutcome> {
        let mut pause = self.min_backoff;
        for attempt in 0.. {
            let linker = self.linker();
            match self.flush_and_link(&linker, temp, name).await {
                Err(Step::Sftp(_, err)) if connection_broke(&err) && attempt < self.retries => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(10));
                    // A failed reconnection leaves the broken session, and the next attempt fails.
                    let _ = self.reconnect(&linker).await;
                }
                Err(Step::Sftp(what, err)) => return Err(sftp_to_io(&what, err)),
                Err(Step::Io(err)) => return Err(err),
                Ok(outcome) => return Ok(outcome),
            }
        }
        unreachable!("the loop returns")
    }

    /// Flushes `temp` to the server's disk, then gives it the name `name` unless `name` exists.
    async fn flush_and_link(
        &self,
        linker: &Sftp,
        temp: &str,
        name: &str,
    ) -> Result<PutOutcome, Step> {
        let sftp = |what: &str| {
            let what = what.to_string();
            move |err| Step::Sftp(what, err)
        };
        if linker.support_fsync() {
            let mut file =
                linker.options().write(true).open(self.remote(temp)).await.map_err(sftp(temp))?;
            file.sync_all().await.map_err(sftp(temp))?;
            file.close().await.map_err(sftp(temp))?;
        }
        if linker.support_hardlink() {
            return match linker.fs().hard_link(self.remote(temp), self.remote(name)).await {
                Ok(()) => Ok(PutOutcome::Created),
                // link(2) reports EEXIST, which SFTP only knows as a generic failure: tell it
                // from the others by looking.
                Err(SftpError::SftpError(SftpErrorKind::Failure, msg)) => {
                    if self.exists_async(name).await.map_err(Step::Io)? {
                        Ok(PutOutcome::AlreadyExisted)
                    } else {
                        Err(Step::Sftp(
                            name.to_string(),
                            SftpError::SftpError(SftpErrorKind::Failure, msg),
                        ))
                    }
                }
                Err(err) => Err(Step::Sftp(name.to_string(), err)),
            };
        }
        // A server without the extension (not OpenSSH's): look, then rename. Two writers of the
        // same name may then both rename; objects are content-named or randomly named (§12), so
        // the later one replaces the object with the same bytes.
        if self.exists_async(name).await.map_err(Step::Io)? {
            return Ok(PutOutcome::AlreadyExisted);
        }
        self.op.rename(temp, name).await.map_err(|err| Step::Io(opendal_to_io(err)))?;
        Ok(PutOutcome::Created)
    }

    async fn exists_async(&self, name: &str) -> io::Result<bool> {
        self.op.exists(name).await.map_err(opendal_to_io)
    }

    /// Every file under `folder` (`""` for all), hidden ones included.
    fn list_all(&self, folder: &str) -> io::Result<Vec<ObjectInfo>> {
        dal::list_files(&self.runtime, &self.op, folder)
    }
}

/// How a step of [`SftpBackend::commit`] failed.
enum Step {
    /// A request of our session, about the object named.
    Sftp(String, SftpError),
    /// A request through OpenDAL.
    Io(io::Error),
}

/// `path` without `.` parts (the server's canonical form of the login directory has none).
fn normalize(path: &Path) -> PathBuf {
    path.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect()
}

/// An SFTP client error as an I/O error of the matching kind, naming what it was about.
fn sftp_to_io(what: &str, err: SftpError) -> io::Error {
    let kind = match &err {
        SftpError::SftpError(SftpErrorKind::NoSuchFile, _) => io::ErrorKind::NotFound,
        SftpError::SftpError(SftpErrorKind::PermDenied, _) => io::ErrorKind::PermissionDenied,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, format!("sftp: {what}: {err}"))
}

/// The last part of an object path.
fn file_name(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

impl Backend for SftpBackend {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<PutOutcome> {
        if name.split('/').any(|part| part.is_empty() || is_hidden(part) || part == "..") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad object name {name:?}"),
            ));
        }
        let dir = name.rsplit_once('/').map(|(dir, _)| dir).unwrap_or("");
        let temp = temporary_name(dir);
        let data = bytes.to_vec();
        self.runtime.block_on(async {
            let outcome = match self.op.write_with(&temp, data).if_not_exists(true).await {
                Ok(_) => self.commit(&temp, name).await,
                Err(err) => Err(opendal_to_io(err)),
            };
            // Left behind only if the connection is gone; prune removes it later.
            let _ = self.op.delete(&temp).await;
            outcome
        })
    }

    fn get(&self, name: &str) -> io::Result<Vec<u8>> {
        dal::get(&self.runtime, &self.op, name)
    }

    fn get_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        dal::get_range(&self.runtime, &self.op, name, offset, len)
    }

    fn list(&self, prefix: &str) -> io::Result<Vec<ObjectInfo>> {
        let mut out: Vec<ObjectInfo> = self
            .list_all(prefix)?
            .into_iter()
            .filter(|object| !object.name.split('/').any(is_hidden))
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn delete(&self, name: &str) -> io::Result<()> {
        dal::delete(&self.runtime, &self.op, name)
    }

    fn exists(&self, name: &str) -> io::Result<bool> {
        self.runtime.block_on(self.exists_async(name))
    }

    fn remove_stale_temporaries(&self, stale_after: Duration) -> io::Result<u64> {
        let mut removed = 0;
        for object in self.list_all("")? {
            let file = file_name(&object.name);
            // Without a time from the server a temporary is judged by its name alone.
            let modified = object.modified.unwrap_or_else(std::time::SystemTime::now);
            if file.starts_with(TEMP_PREFIX) && temporary_is_stale(file, modified, stale_after) {
                self.delete(&object.name)?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}
