//! The settings of the remote backends (S3 and SFTP) that the command line chooses; plain data,
//! present in every build so that the binary's options do not depend on its features.

use std::time::Duration;

/// Settings of the remote backends (S3 and SFTP) the command line chooses.
#[derive(Debug, Clone)]
pub struct S3Options {
    /// Requests in flight at most.
    pub connections: usize,
    /// Address the bucket as `BUCKET.HOST` rather than `HOST/BUCKET`.
    pub virtual_host: bool,
    /// Attempts after the first for a request that timed out or got a 5xx answer.
    pub retries: usize,
    /// Smallest pause before a retry (doubled each time, with jitter).
    pub min_backoff: Duration,
    /// Longest a request may wait for its next bytes.
    pub io_timeout: Duration,
    /// SFTP: accept and record the key of a host not yet known (ssh's
    /// `StrictHostKeyChecking=accept-new`) instead of what the user's ssh configuration says.
    pub accept_new_host_key: bool,
}

impl Default for S3Options {
    fn default() -> Self {
        S3Options {
            connections: 8,
            virtual_host: false,
            retries: 6,
            min_backoff: Duration::from_millis(100),
            io_timeout: Duration::from_secs(30),
            accept_new_host_key: false,
        }
    }
}
