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
//!
//! What this backend creates is private whatever the server's umask: directories are made by
//! our session with mode 0700 before anything is written into them, and each temporary file is
//! set to 0600 before it gets its final name. The server's host key is checked as the user's
//! ssh configuration says (`StrictHostKeyChecking`, read with `ssh -G`): `yes` and `ask` (the
//! default, which cannot ask here) refuse a host not in known_hosts, `accept-new` records it,
//! and [`S3Options::accept_new_host_key`] asks for `accept-new` explicitly.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opendal::layers::{ConcurrentLimitLayer, RetryLayer, TimeoutLayer};
use opendal::services::Sftp as SftpService;
use opendal::Operator;
use openssh::SessionBuilder;
use openssh_sftp_client::error::SftpErrorKind;
use openssh_sftp_client::metadata::Permissions;
use openssh_sftp_client::{Error as SftpError, Sftp, SftpOptions};

use super::dal::{self, to_io as opendal_to_io};
use super::host_keys::HostKeyPolicy;
use super::sftp_location::SftpLocation;
use super::temporary::{is_hidden, temporary_is_stale, temporary_name, TEMP_PREFIX};
use super::{Backend, ObjectInfo, PutOutcome, S3Options};

/// Objects stored as files under a folder of an SFTP server.
pub struct SftpBackend {
    location: String,
    // Fields drop in this order: OpenDAL's sessions and ours end (each runs `ssh -O exit`) while
    // the runtime that drives them still exists.
    op: Operator,
    /// Our own session, for the steps OpenDAL cannot do (a private directory, a link that does
    /// not replace); replaced when its connection breaks.
    linker: Mutex<Arc<Sftp>>,
    /// Folders (relative to the root) made private or found, each made once.
    made_dirs: Mutex<HashSet<String>>,
    /// `ssh://[USER@]HOST[:PORT]`, to open it again.
    destination: String,
    /// How the server's host key is checked.
    policy: HostKeyPolicy,
    /// The repository's folder on the server, absolute.
    root: PathBuf,
    /// Attempts after the first of a link whose connection broke, and the first pause.
    retries: usize,
    min_backoff: Duration,
    runtime: tokio::runtime::Runtime,
}

/// Opens an SFTP session of our own to `destination` through the system ssh, checking the
/// server's host key as `policy` says.
async fn open_session(destination: &str, policy: &HostKeyPolicy) -> io::Result<Sftp> {
    let mut session = SessionBuilder::default();
    session
        .known_hosts_check(policy.check.clone())
        .connect_timeout(Duration::from_secs(20))
        .server_alive_interval(Duration::from_secs(15));
    let session = session.connect(destination).await.map_err(|err| {
        let text = super::printable(&with_causes(&err));
        if text.contains("Host key verification failed") {
            return io::Error::new(io::ErrorKind::PermissionDenied, policy.refusal(destination));
        }
        io::Error::other(format!("ssh {destination}: {text}"))
    })?;
    Sftp::from_session(session, SftpOptions::default())
        .await
        .map_err(|err| sftp_to_io("starting the sftp subsystem", err))
}

/// Opens a session as [`open_session`], trying again twice after a failure (a server starting,
/// a dropped connection), with the backoff of the other requests; a refused host key is final.
async fn open_session_retrying(
    destination: &str,
    policy: &HostKeyPolicy,
    options: &S3Options,
) -> io::Result<Sftp> {
    let mut pause = options.min_backoff;
    let mut attempts_left = options.retries.min(2);
    loop {
        match open_session(destination, policy).await {
            Err(err) if attempts_left > 0 && err.kind() != io::ErrorKind::PermissionDenied => {
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
    /// the host key is checked as that configuration says (module documentation).
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
        let policy = HostKeyPolicy::for_destination(&destination, options.accept_new_host_key);
        let (linker, root) = runtime.block_on(async {
            let sftp = open_session_retrying(&destination, &policy, options).await?;
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
            let root = normalize(&root);
            // The repository's folder and those above it that are missing, private, before
            // OpenDAL's sessions connect: each makes the root at connection, with the server's
            // default mode, where it does not exist yet.
            let chain: Vec<PathBuf> = root.ancestors().map(Path::to_path_buf).collect();
            make_private_dirs(&sftp, chain.into_iter().rev()).await?;
            Ok::<_, io::Error>((sftp, root))
        })?;
        let root_text = root
            .to_str()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "non-UTF-8 path"))?;
        let service = SftpService::default()
            .endpoint(&destination)
            .root(root_text)
            .known_hosts_strategy(policy.opendal_strategy());
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
            made_dirs: Mutex::new(HashSet::new()),
            destination,
            policy,
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
        let fresh = Arc::new(open_session(&self.destination, &self.policy).await?);
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
        // Private before it has its final name, whatever the server's umask made it.
        let private = Permissions::from(0o600u16);
        if linker.support_fsync() {
            let mut file =
                linker.options().write(true).open(self.remote(temp)).await.map_err(sftp(temp))?;
            file.set_permissions(private).await.map_err(sftp(temp))?;
            file.sync_all().await.map_err(sftp(temp))?;
            file.close().await.map_err(sftp(temp))?;
        } else {
            linker.fs().set_permissions(self.remote(temp), private).await.map_err(sftp(temp))?;
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

    /// Makes the folder `dir` (relative to the root) and those above it up to the root (made
    /// by [`SftpBackend::new`]), each with mode 0700, before OpenDAL writes into them (it
    /// would make them with the server's default mode).
    async fn make_dirs(&self, dir: &str) -> io::Result<()> {
        let mut levels = Vec::new();
        let mut path = String::new();
        for part in dir.split('/').filter(|p| !p.is_empty()) {
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(part);
            levels.push(path.clone());
        }
        let made = |level: &String| {
            self.made_dirs.lock().unwrap_or_else(|p| p.into_inner()).contains(level)
        };
        let missing: Vec<String> = levels.into_iter().filter(|level| !made(level)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        make_private_dirs(&self.linker(), missing.iter().map(|level| self.remote(level))).await?;
        self.made_dirs.lock().unwrap_or_else(|p| p.into_inner()).extend(missing);
        Ok(())
    }

    /// Every file under `folder` (`""` for all), hidden ones included.
    fn list_all(&self, folder: &str) -> io::Result<Vec<ObjectInfo>> {
        dal::list_files(&self.runtime, &self.op, folder)
    }
}

/// Makes each folder of `paths` in turn with mode 0700. A folder that exists is left as it is;
/// one that cannot be made is left for the write into it to report.
async fn make_private_dirs(sftp: &Sftp, paths: impl Iterator<Item = PathBuf>) -> io::Result<()> {
    for path in paths {
        let made =
            sftp.fs().dir_builder().permissions(Permissions::from(0o700u16)).create(&path).await;
        match made {
            Ok(()) | Err(SftpError::SftpError(..)) => {}
            Err(err) => return Err(sftp_to_io(&path.display().to_string(), err)),
        }
    }
    Ok(())
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
    io::Error::new(kind, super::printable(&format!("sftp: {what}: {err}")))
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
            self.make_dirs(dir).await?;
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
