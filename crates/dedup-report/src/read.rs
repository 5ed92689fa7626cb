//! Reading a JSON report back (for `dedup act --from`), checking its format version.
//!
//! A report is parsed once, straight into [`Report`]. Only when that fails, or finds another
//! version, is the text looked at again to say why, in the words users have always seen: the
//! version is judged first (a report of another version is refused as such even when its shape
//! differs), and only then the shape. The second look costs nothing on the path that succeeds.

use std::io::Read;

use crate::{Report, REPORT_VERSION};

/// A report that cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Not JSON, truncated, or not shaped like a report.
    #[error("not a valid dedup report: {0}")]
    Malformed(#[from] serde_json::Error),
    /// Written by a version of dedup whose format this one does not understand.
    #[error("report format version {found} is not supported (this dedup reads version {REPORT_VERSION})")]
    Version {
        /// The version found in the report.
        found: u32,
    },
}

impl Report {
    /// Read a JSON report, checking its version.
    pub fn from_json(mut reader: impl Read) -> Result<Report, ReportError> {
        let mut json = Vec::new();
        reader.read_to_end(&mut json).map_err(serde_json::Error::io)?;
        Report::from_json_slice(&json)
    }

    /// Read a JSON report held in memory, checking its version.
    pub fn from_json_slice(json: &[u8]) -> Result<Report, ReportError> {
        match serde_json::from_slice::<Report>(json) {
            Ok(report) if report.version == REPORT_VERSION => Ok(report),
            Ok(report) => Err(ReportError::Version { found: report.version }),
            Err(_) => read_loosely(json),
        }
    }
}

/// The reader as it was before it parsed once: as a JSON value first, whose `version` is checked
/// before its shape. It decides every report the direct parse refused, so that each is refused
/// with the same message as ever, and the few it accepted (a report whose object repeats a key
/// keeps the last value) are still accepted.
fn read_loosely(json: &[u8]) -> Result<Report, ReportError> {
    let value: serde_json::Value = serde_json::from_reader(json)?;
    let found = value.get("version").and_then(|v| v.as_u64()).unwrap_or(0);
    if found != u64::from(REPORT_VERSION) {
        return Err(ReportError::Version { found: found.min(u64::from(u32::MAX)) as u32 });
    }
    Ok(serde_json::from_value(value)?)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::{Group, ReportFile, Summary};

    fn sample() -> Report {
        Report {
            version: REPORT_VERSION,
            tool: "dedup test".into(),
            roots: vec![PathBuf::from("r")],
            groups: vec![Group {
                size: 3,
                files: vec![
                    ReportFile {
                        path: "r/a".into(),
                        dev: 1,
                        ino: 2,
                        mtime_ns: 3,
                        ctime_ns: Some(7),
                    },
                    ReportFile { path: "r/b".into(), dev: 1, ino: 4, mtime_ns: 5, ctime_ns: None },
                ],
                cached: false,
            }],
            summary: Summary {
                files_scanned: 2,
                groups: 1,
                redundant_files: 1,
                redundant_bytes: 3,
                errors: 0,
            },
            dirs: None,
            unique: None,
            dir_summary: None,
        }
    }

    fn message(json: &str) -> String {
        Report::from_json(json.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn json_round_trip() {
        let r = sample();
        let json = serde_json::to_vec(&r).unwrap();
        assert_eq!(Report::from_json(&json[..]).unwrap(), r);
    }

    #[test]
    fn reports_without_ctime_still_load() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v["groups"][0]["files"][0].as_object_mut().unwrap().remove("ctime_ns");
        let r = Report::from_json(v.to_string().as_bytes()).unwrap();
        assert_eq!(r.groups[0].files[0].ctime_ns, None);
    }

    #[test]
    fn other_versions_are_refused() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v["version"] = 2.into();
        let err = Report::from_json(v.to_string().as_bytes()).unwrap_err();
        assert!(matches!(err, ReportError::Version { found: 2 }), "{err}");
    }

    #[test]
    fn truncated_reports_are_refused() {
        let json = serde_json::to_string(&sample()).unwrap();
        assert!(Report::from_json(&json.as_bytes()[..json.len() / 2]).is_err());
    }

    #[test]
    fn the_version_is_judged_before_the_shape() {
        // A later format may change any field; it must be refused for its version, not its shape.
        assert_eq!(
            message(r#"{"groups": 7, "version": 3}"#),
            "report format version 3 is not supported (this dedup reads version 1)"
        );
        assert_eq!(
            message(r#"{"tool": "x"}"#),
            "report format version 0 is not supported (this dedup reads version 1)"
        );
        assert_eq!(
            message(r#"{"version": 99999999999}"#),
            format!(
                "report format version {} is not supported (this dedup reads version 1)",
                u32::MAX
            )
        );
    }

    #[test]
    fn shape_errors_name_the_field_without_a_position() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v.as_object_mut().unwrap().remove("tool");
        assert_eq!(message(&v.to_string()), "not a valid dedup report: missing field `tool`");
        v["tool"] = "t".into();
        v["groups"][0]["size"] = "big".into();
        assert_eq!(
            message(&v.to_string()),
            "not a valid dedup report: invalid type: string \"big\", expected u64"
        );
    }

    #[test]
    fn syntax_errors_give_their_position() {
        assert_eq!(
            message("{\"version\": 1,\n  \"tool\": }"),
            "not a valid dedup report: expected value at line 2 column 11"
        );
        assert_eq!(
            message(""),
            "not a valid dedup report: EOF while parsing a value at line 1 column 0"
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let json = serde_json::to_string(&sample()).unwrap();
        let repeated =
            json.replacen("\"tool\":\"dedup test\"", "\"tool\":\"old\",\"tool\":\"new\"", 1);
        assert_eq!(Report::from_json(repeated.as_bytes()).unwrap().tool, "new");
    }

    #[test]
    fn parsing_once_decides_as_the_loose_reader_does() {
        // Every prefix of a report, and reports with one field damaged: the direct parse must
        // accept exactly what the reader before it accepted, and refuse with its message.
        let describe = |r: Result<Report, ReportError>| match r {
            Ok(report) => format!("{report:?}"),
            Err(e) => e.to_string(),
        };
        let json = serde_json::to_string_pretty(&sample()).unwrap();
        let mut inputs: Vec<String> = (0..=json.len()).map(|n| json[..n].to_owned()).collect();
        let full = serde_json::to_value(sample()).unwrap();
        for (pointer, bad) in [
            ("/version", serde_json::json!(1.0)),
            ("/version", serde_json::json!("1")),
            ("/version", serde_json::json!(-1)),
            ("/roots/0", serde_json::json!({"hex": "00"})),
            ("/groups/0/files/0/path", serde_json::json!({"bytes": "***"})),
            ("/groups/0/files/1/mtime_ns", serde_json::json!(u64::MAX)),
            ("/summary", serde_json::json!([])),
        ] {
            let mut v = full.clone();
            *v.pointer_mut(pointer).unwrap() = bad;
            inputs.push(v.to_string());
        }
        inputs.push(format!("{json} trailing"));
        inputs.push("[1]".into());
        for input in &inputs {
            let once = describe(Report::from_json_slice(input.as_bytes()));
            assert_eq!(once, describe(read_loosely(input.as_bytes())), "{input}");
        }
    }

    #[test]
    fn read_errors_are_reported_as_such() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk on fire"))
            }
        }
        let err = Report::from_json(Failing).unwrap_err();
        assert_eq!(err.to_string(), "not a valid dedup report: disk on fire");
    }
}
