//! Paths in JSON without loss: `{"text": "..."}` when the bytes are UTF-8, otherwise
//! `{"bytes": "<base64>"}` (ripgrep's convention), so any path survives a round trip. For
//! `#[serde(with = "dedup_report::json_path")]` on a `PathBuf` field (`json_path::list` on a
//! `Vec<PathBuf>`), in the report and in any other JSON that carries paths.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
enum Encoded<'a> {
    #[serde(rename = "text")]
    Text(std::borrow::Cow<'a, str>),
    #[serde(rename = "bytes")]
    Bytes(String),
}

/// Serialize one path.
pub fn serialize<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    let bytes = path.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) => Encoded::Text(text.into()).serialize(s),
        Err(_) => Encoded::Bytes(STANDARD.encode(bytes)).serialize(s),
    }
}

/// Deserialize one path.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    let bytes = match Encoded::deserialize(d)? {
        Encoded::Text(text) => text.into_owned().into_bytes(),
        Encoded::Bytes(b64) => STANDARD.decode(b64).map_err(D::Error::custom)?,
    };
    Ok(PathBuf::from(OsString::from_vec(bytes)))
}

/// The same for a list of paths.
pub mod list {
    use super::*;
    use serde::ser::SerializeSeq;

    #[derive(Deserialize)]
    struct One(#[serde(deserialize_with = "super::deserialize")] PathBuf);

    struct Ref<'a>(&'a Path);

    impl Serialize for Ref<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            super::serialize(self.0, s)
        }
    }

    /// Serialize a list of paths.
    pub fn serialize<S: Serializer>(paths: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(paths.len()))?;
        for p in paths {
            seq.serialize_element(&Ref(p))?;
        }
        seq.end()
    }

    /// Deserialize a list of paths.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PathBuf>, D::Error> {
        Ok(Vec::<One>::deserialize(d)?.into_iter().map(|o| o.0).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Wrap(#[serde(with = "super")] PathBuf);

    fn round_trip(bytes: &[u8]) -> String {
        let original = Wrap(PathBuf::from(OsString::from_vec(bytes.to_vec())));
        let json = serde_json::to_string(&original).unwrap();
        let back: Wrap = serde_json::from_str(&json).unwrap();
        assert_eq!(back, original);
        json
    }

    #[test]
    fn utf8_paths_are_text() {
        assert_eq!(round_trip("a/é b\n`".as_bytes()), r#"{"text":"a/é b\n`"}"#);
    }

    #[test]
    fn other_bytes_are_base64() {
        assert_eq!(round_trip(b"a/\xff\xfe"), r#"{"bytes":"YS///g=="}"#);
    }

    #[test]
    fn rejects_unknown_encodings() {
        assert!(serde_json::from_str::<Wrap>(r#"{"hex":"00"}"#).is_err());
        assert!(serde_json::from_str::<Wrap>(r#"{"bytes":"***"}"#).is_err());
    }
}
