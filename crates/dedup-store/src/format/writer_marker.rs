//! The plaintext of a writer marker (docs/store-format.md §12): which host and process is
//! writing, since when, and when it last said so.

use super::wire::{Reader, Writer};
use super::DecodeError;

/// Longest host name accepted.
const MAX_HOST: usize = 1024;

/// A decoded writer marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterInfo {
    /// The host the session runs on.
    pub host: String,
    /// Its process id there.
    pub pid: u32,
    /// When the session started, ns since the epoch.
    pub started: i64,
    /// When this marker was written, ns since the epoch.
    pub refreshed: i64,
}

impl WriterInfo {
    /// The plaintext.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Writer::default();
        out.u8(1);
        out.bytes(self.host.as_bytes());
        out.u32(self.pid);
        out.i64(self.started);
        out.i64(self.refreshed);
        out.buf
    }

    /// Decodes untrusted bytes.
    pub fn decode(bytes: &[u8]) -> Result<WriterInfo, DecodeError> {
        let mut r = Reader::new(bytes);
        r.version(1)?;
        let host = r.str(MAX_HOST, "host")?;
        let info = WriterInfo { host, pid: r.u32()?, started: r.i64()?, refreshed: r.i64()? };
        r.finish()?;
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn markers_round_trip(host in "[a-z.-]{0,40}", pid: u32, started: i64, refreshed: i64) {
            let info = WriterInfo { host, pid, started, refreshed };
            prop_assert_eq!(WriterInfo::decode(&info.encode()).unwrap(), info);
        }

        #[test]
        fn mutated_markers_never_panic(cut in 0usize..40, at in 0usize..40, bit in 0u8..8) {
            let info = WriterInfo { host: "host".into(), pid: 7, started: 1, refreshed: 2 };
            let mut bytes = info.encode();
            if let Some(b) = bytes.get_mut(at) {
                *b ^= 1 << bit;
            }
            bytes.truncate(cut);
            let _ = WriterInfo::decode(&bytes);
        }
    }
}
