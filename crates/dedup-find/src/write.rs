//! Writing a report: fdupes-style text (optionally NUL-separated), CSV, and JSON.

use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;

use crate::Report;

/// How text output separates paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextStyle {
    /// One path per line, an empty line after each group (fdupes, jdupes).
    Lines,
    /// Each path ends with NUL, each group with one more NUL (for `xargs -0`).
    Nul,
}

/// Write the groups as text.
pub fn write_text(report: &Report, style: TextStyle, out: &mut dyn Write) -> io::Result<()> {
    let end = match style {
        TextStyle::Lines => b'\n',
        TextStyle::Nul => b'\0',
    };
    for group in &report.groups {
        for file in &group.files {
            out.write_all(file.path.as_os_str().as_bytes())?;
            out.write_all(&[end])?;
        }
        out.write_all(&[end])?;
    }
    out.flush()
}

/// Write one CSV row per path: `group,size,path,dev,ino,mtime_ns` (path bytes as they are).
pub fn write_csv(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["group", "size", "path", "dev", "ino", "mtime_ns"])?;
    for (i, group) in report.groups.iter().enumerate() {
        let (number, size) = ((i + 1).to_string(), group.size.to_string());
        for f in &group.files {
            w.write_record([
                number.as_bytes(),
                size.as_bytes(),
                f.path.as_os_str().as_bytes(),
                f.dev.to_string().as_bytes(),
                f.ino.to_string().as_bytes(),
                f.mtime_ns.to_string().as_bytes(),
            ])?;
        }
    }
    w.flush()
}

/// Write the report as JSON (the report contract), followed by a newline.
pub fn write_json(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    out.write_all(b"\n")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Group, ReportFile, Summary, REPORT_VERSION};
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    fn report() -> Report {
        let f = |p: &[u8]| ReportFile {
            path: OsString::from_vec(p.to_vec()).into(),
            dev: 1,
            ino: 2,
            mtime_ns: 3,
            ctime_ns: None,
        };
        Report {
            version: REPORT_VERSION,
            tool: "t".into(),
            roots: vec![],
            groups: vec![
                Group { size: 9, files: vec![f(b"a"), f(b"b,\"c\"")] },
                Group { size: 1, files: vec![f(b"x\xff"), f(b"y\nz")] },
            ],
            summary: Summary::default(),
        }
    }

    #[test]
    fn text_is_fdupes_style() {
        let mut out = Vec::new();
        write_text(&report(), TextStyle::Lines, &mut out).unwrap();
        assert_eq!(out, b"a\nb,\"c\"\n\nx\xff\ny\nz\n\n");
    }

    #[test]
    fn nul_separated() {
        let mut out = Vec::new();
        write_text(&report(), TextStyle::Nul, &mut out).unwrap();
        assert_eq!(out, b"a\0b,\"c\"\0\0x\xff\0y\nz\0\0");
    }

    #[test]
    fn csv_quotes_and_numbers_groups() {
        let mut out = Vec::new();
        write_csv(&report(), &mut out).unwrap();
        let text = String::from_utf8_lossy(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "group,size,path,dev,ino,mtime_ns");
        assert_eq!(lines[1], "1,9,a,1,2,3");
        assert_eq!(lines[2], "1,9,\"b,\"\"c\"\"\",1,2,3");
        assert!(text.contains("2,1,\"y\nz\",1,2,3"));
    }
}
