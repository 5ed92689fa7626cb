//! A repository in an S3-compatible bucket, through OpenDAL: one whole PUT per object with
//! `If-None-Match: *` (write-once without rename), or for an object above
//! [`MULTIPART_THRESHOLD`] a multipart upload whose completion carries the same condition, so a
//! failed part is sent again alone; ranged GETs, recursive listings. The store's
//! callers are synchronous threads, so each call is driven to completion on a small tokio runtime
//! owned by the backend; several threads block on it at once, which is what makes uploads and
//! downloads parallel (bounded by `connections`).

use std::io;
use std::time::Duration;

use opendal::layers::{ConcurrentLimitLayer, RetryLayer, TimeoutLayer};
use opendal::services::S3;
use opendal::{ErrorKind, HttpTransporter, Operator};
use opendal_http_transport_reqwest::ReqwestTransport;

use super::dal::{self, to_io};
use super::s3_location::S3Location;
use super::{Backend, DeleteFailure, ObjectInfo, PutOutcome, S3Options};

/// Objects larger than this are uploaded in parts. A default pack (16 MiB) stays one PUT, since
/// a multipart upload costs two more requests; a pack made larger at init is split.
pub const MULTIPART_THRESHOLD: usize = 32 << 20;
/// The size of each part but the last (S3 wants at least 5 MiB).
pub const PART_SIZE: usize = 16 << 20;
/// Parts of one object in flight at once (within `connections`).
const PARTS_IN_FLIGHT: usize = 4;

/// Keys per DeleteObjects request: S3's limit, and the batch OpenDAL's S3 service sends.
const KEYS_PER_DELETE: usize = 1000;

/// Objects stored in a bucket under a prefix.
pub struct S3Backend {
    location: String,
    op: Operator,
    connections: usize,
    runtime: tokio::runtime::Runtime,
}

impl S3Backend {
    /// The repository at `location` (`s3:http[s]://HOST[:PORT]/BUCKET[/PREFIX]`). Credentials
    /// and region come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    /// AWS_DEFAULT_REGION or AWS_REGION) or AWS_PROFILE's entry in ~/.aws.
    pub fn new(location: &str, options: &S3Options) -> io::Result<Self> {
        let parsed = S3Location::parse(location)
            .map_err(|why| io::Error::new(io::ErrorKind::InvalidInput, why))?;
        // reqwest is built without a TLS provider of its own; ring is the one linked in. A second
        // install (another backend in the same process) fails harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let region = ["AWS_DEFAULT_REGION", "AWS_REGION"]
            .iter()
            .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
            .unwrap_or_else(|| "us-east-1".into());
        let mut builder = S3::default()
            .endpoint(&parsed.endpoint)
            .bucket(&parsed.bucket)
            .root(&format!("/{}", parsed.prefix))
            .region(&region)
            // Without this a machine outside EC2 waits on 169.254.169.254 when keys are missing.
            .disable_ec2_metadata();
        if let Ok(profile) = std::env::var("AWS_PROFILE") {
            builder = builder.profile(&profile);
        }
        if options.virtual_host {
            builder = builder.enable_virtual_host_style();
        }
        let connections = options.connections.max(1);
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(connections)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(io::Error::other)?;
        let transport = HttpTransporter::new(ReqwestTransport::new(client));
        let op = Operator::new(builder).map_err(to_io)?;
        let context = op.context().with_http_transport(transport);
        let op = op
            .with_context(context)
            .layer(TimeoutLayer::new().with_io_timeout(options.io_timeout))
            .layer(
                RetryLayer::new()
                    .with_max_times(options.retries)
                    .with_min_delay(options.min_backoff)
                    .with_max_delay(Duration::from_secs(10))
                    .with_jitter(),
            )
            .layer(ConcurrentLimitLayer::new(connections));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("dedup-s3")
            .enable_io()
            .enable_time()
            .build()?;
        Ok(S3Backend { location: location.to_string(), op, connections, runtime })
    }
}

impl S3Backend {
    /// Uploads `bytes` as a multipart upload of [`PART_SIZE`] parts. The retry layer sends a
    /// failed part again by itself (OpenDAL keeps each part's bytes until it is stored); the
    /// object appears only when the completion succeeds, and the completion carries
    /// `If-None-Match: *`, so write-once holds as for a single PUT. An upload that fails is
    /// aborted, so that its stored parts are not kept (and billed).
    fn put_in_parts(&self, name: &str, bytes: &[u8]) -> io::Result<PutOutcome> {
        let data = bytes.to_vec();
        let in_flight = PARTS_IN_FLIGHT.min(self.connections).max(1);
        let written = self.runtime.block_on(async {
            let mut writer = self
                .op
                .writer_with(name)
                .if_not_exists(true)
                .chunk(PART_SIZE)
                .concurrent(in_flight)
                .await?;
            let result = match writer.write(data).await {
                Ok(()) => writer.close().await.map(|_| ()),
                Err(err) => Err(err),
            };
            if result.is_err() {
                let _ = writer.abort().await;
            }
            result
        });
        match written {
            Ok(()) => Ok(PutOutcome::Created),
            Err(err) if err.kind() == ErrorKind::ConditionNotMatch => {
                Ok(PutOutcome::AlreadyExisted)
            }
            // A completion whose answer was lost and that was sent again finds its upload gone
            // (NoSuchUpload): the object is there, whole, if the first one succeeded.
            Err(err) => match self.runtime.block_on(self.op.stat(name)) {
                Ok(meta) if meta.content_length() == bytes.len() as u64 => {
                    Ok(PutOutcome::AlreadyExisted)
                }
                _ => Err(to_io(err)),
            },
        }
    }
}

impl Backend for S3Backend {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn put(&self, name: &str, bytes: &[u8]) -> io::Result<PutOutcome> {
        if bytes.len() > MULTIPART_THRESHOLD {
            return self.put_in_parts(name, bytes);
        }
        let data = bytes.to_vec();
        let written = self
            .runtime
            .block_on(async { self.op.write_with(name, data).if_not_exists(true).await });
        match written {
            Ok(_) => Ok(PutOutcome::Created),
            // The object exists: either another writer's, or ours from an attempt whose answer
            // was lost and was retried. Objects are named by their content or are written once,
            // so both mean the same.
            Err(err) if err.kind() == ErrorKind::ConditionNotMatch => {
                Ok(PutOutcome::AlreadyExisted)
            }
            // Storage that may not overwrite (an append-only arrangement) may answer a PUT to a
            // name already taken with 403 rather than 412: a retried PUT whose first answer was
            // lost, or a content-named object another writer stored. The same name and length
            // are the same object, as with 412; anything else is a refusal.
            Err(err) if err.kind() == ErrorKind::PermissionDenied => {
                match self.runtime.block_on(self.op.stat(name)) {
                    Ok(meta) if meta.content_length() == bytes.len() as u64 => {
                        Ok(PutOutcome::AlreadyExisted)
                    }
                    _ => Err(to_io(err)),
                }
            }
            Err(err) => Err(to_io(err)),
        }
    }

    fn get(&self, name: &str) -> io::Result<Vec<u8>> {
        dal::get(&self.runtime, &self.op, name)
    }

    fn get_range(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        dal::get_range(&self.runtime, &self.op, name, offset, len)
    }

    fn list(&self, prefix: &str) -> io::Result<Vec<ObjectInfo>> {
        let mut out = dal::list_files(&self.runtime, &self.op, prefix)?;
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn delete(&self, name: &str) -> io::Result<()> {
        dal::delete(&self.runtime, &self.op, name)
    }

    /// One DeleteObjects request per [`KEYS_PER_DELETE`] keys, up to `connections` of them at
    /// once. When a batch fails, OpenDAL names a failed key only sometimes (a batch with no
    /// success names none), so its keys are deleted again one by one: the first that fails alone
    /// is the one named, and a server without DeleteObjects still gets its objects deleted.
    fn delete_many(&self, names: &[String]) -> Result<(), DeleteFailure> {
        let batches: Vec<&[String]> = names.chunks(KEYS_PER_DELETE).collect();
        for wave in batches.chunks(self.connections) {
            let deleted = self.runtime.block_on(async {
                let mut running = tokio::task::JoinSet::new();
                for (at, batch) in wave.iter().enumerate() {
                    let (op, keys) = (self.op.clone(), batch.to_vec());
                    running.spawn(async move { (at, op.delete_iter(keys).await.is_ok()) });
                }
                let mut deleted = vec![false; wave.len()];
                while let Some(joined) = running.join_next().await {
                    if let Ok((at, ok)) = joined {
                        deleted[at] = ok;
                    }
                }
                deleted
            });
            for (batch, _) in wave.iter().zip(deleted).filter(|(_, ok)| !ok) {
                for name in *batch {
                    self.delete(name)
                        .map_err(|cause| DeleteFailure { name: name.clone(), cause })?;
                }
            }
        }
        Ok(())
    }

    fn exists(&self, name: &str) -> io::Result<bool> {
        self.runtime.block_on(self.op.exists(name)).map_err(to_io)
    }
}
