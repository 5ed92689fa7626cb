//! The pieces every `--json` output of the store shares: a path as JSON, an item and an
//! `error` record as restic writes them, and the fraction done of a status record.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use dedup_core::Problem;
use serde_json::{json, Value};

/// A path in JSON: text when UTF-8, else `{"bytes": base64}` (the report's convention).
pub fn json_path(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => Value::from(text),
        Err(_) => json!({ "bytes": STANDARD.encode(bytes) }),
    }
}

/// A path as restic writes an item: text (lossy where it is not UTF-8).
pub fn item(path: &Path) -> String {
    String::from_utf8_lossy(path.as_os_str().as_bytes()).into_owned()
}

/// The `error` record for `problem`, met while `during` (`archival`, `restore`).
pub fn error_record(problem: &Problem, during: &str) -> Value {
    json!({
        "message_type": "error",
        "error": { "message": problem.kind.to_string() },
        "during": during,
        "item": item(&problem.path),
    })
}

/// `part` of `total` as restic's `percent_done` (0 to 1), 0 while the total is unknown.
pub fn fraction(part: u64, total: Option<u64>) -> f64 {
    match total {
        Some(total) if total > 0 => (part as f64 / total as f64).min(1.0),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_core::ProblemKind;

    #[test]
    fn an_error_record_names_the_item_and_the_reason_as_restic_does() {
        let problem =
            Problem::error("/src/secret", ProblemKind::Io(std::io::Error::from_raw_os_error(13)));
        let line = error_record(&problem, "archival");
        assert_eq!(line["message_type"], "error");
        assert_eq!(line["item"], "/src/secret");
        assert_eq!(line["during"], "archival");
        let message = line["error"]["message"].as_str().unwrap();
        assert!(message.contains("Permission denied"), "{message}");
    }

    #[test]
    fn the_fraction_done_is_zero_until_the_total_is_known_and_never_above_one() {
        assert_eq!(fraction(5, None), 0.0);
        assert_eq!(fraction(5, Some(0)), 0.0);
        assert_eq!(fraction(5, Some(20)), 0.25);
        assert_eq!(fraction(30, Some(20)), 1.0);
    }

    #[test]
    fn a_path_is_text_when_it_can_be_and_base64_bytes_else() {
        assert_eq!(json_path(b"/a b"), json!("/a b"));
        assert_eq!(json_path(b"/a\xff"), json!({ "bytes": "L2H/" }));
    }
}
