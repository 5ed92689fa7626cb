//! Writing a report: fdupes-style text (optionally NUL-separated), CSV, and JSON.

use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;

use crate::{DirKind, Report};

/// How text output separates paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextStyle {
    /// One path per line, an empty line after each group (fdupes, jdupes).
    Lines,
    /// Each path ends with NUL, each group with one more NUL (for `xargs -0`).
    Nul,
}

/// Write the groups as text: duplicated directories first when the report has them (each path
/// ending with `/`; with [`TextStyle::Lines`] a `# ` line above each says how they relate), then
/// the groups of files, then the files listed by `--unique`/`--rf-under`, one group per file.
pub fn write_text(report: &Report, style: TextStyle, out: &mut dyn Write) -> io::Result<()> {
    let end = match style {
        TextStyle::Lines => b'\n',
        TextStyle::Nul => b'\0',
    };
    for dir in report.dirs.iter().flatten() {
        if style == TextStyle::Lines {
            let header = match dir.kind {
                DirKind::Identical => format!(
                    "# identical directories: {} files, {} bytes in each\n",
                    dir.file_count, dir.size
                ),
                DirKind::Contained => format!(
                    "# all {} files ({} bytes) of the first directory also exist under the second\n",
                    dir.file_count, dir.size
                ),
            };
            out.write_all(header.as_bytes())?;
        }
        for copy in &dir.dirs {
            out.write_all(copy.path.as_os_str().as_bytes())?;
            if !copy.path.as_os_str().as_bytes().ends_with(b"/") {
                out.write_all(b"/")?;
            }
            out.write_all(&[end])?;
        }
        out.write_all(&[end])?;
    }
    for group in report.groups.iter().chain(report.unique.iter().flatten()) {
        for file in &group.files {
            out.write_all(file.path.as_os_str().as_bytes())?;
            out.write_all(&[end])?;
        }
        out.write_all(&[end])?;
    }
    out.flush()
}

/// Write the `--summary` section as text: per top-level directory, most reclaimable first, the
/// bytes it holds in duplicated files and the directories that hold their copies.
pub fn write_dir_summary(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    for s in report.dir_summary.iter().flatten() {
        out.write_all(s.path.as_os_str().as_bytes())?;
        writeln!(
            out,
            ": {} reclaimable; {} in {} duplicated files; {} duplicated within",
            human(s.reclaimable_bytes),
            human(s.duplicated_bytes),
            s.duplicated_files,
            human(s.internal_bytes),
        )?;
        for w in &s.shared_with {
            write!(out, "    {} also in ", human(w.bytes))?;
            out.write_all(w.path.as_os_str().as_bytes())?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()
}

/// Bytes in binary units with one decimal (`1.5 GiB`), exact below 1 KiB.
fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Write one CSV row per path: `group,size,path,dev,ino,mtime_ns` (path bytes as they are).
/// When the report has directory or unique sections, a last column `kind` says what a row is
/// (`identical_dir`, `contained_dir`, `copies_dir`, `file`, `unique`) and directory rows come
/// first, with the bytes of the directory's files as size and no dev, ino or mtime.
pub fn write_csv(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let kinds = report.dirs.is_some() || report.unique.is_some();
    let mut header = vec!["group", "size", "path", "dev", "ino", "mtime_ns"];
    if kinds {
        header.push("kind");
    }
    w.write_record(&header)?;
    let mut number = 0;
    for dir in report.dirs.iter().flatten() {
        number += 1;
        for (i, copy) in dir.dirs.iter().enumerate() {
            let kind = match (dir.kind, i) {
                (DirKind::Identical, _) => "identical_dir",
                (DirKind::Contained, 0) => "contained_dir",
                (DirKind::Contained, _) => "copies_dir",
            };
            w.write_record([
                number.to_string().as_bytes(),
                dir.size.to_string().as_bytes(),
                copy.path.as_os_str().as_bytes(),
                b"",
                b"",
                b"",
                kind.as_bytes(),
            ])?;
        }
    }
    let files = report.groups.iter().map(|g| (g, "file"));
    for (group, kind) in files.chain(report.unique.iter().flatten().map(|g| (g, "unique"))) {
        number += 1;
        let (n, size) = (number.to_string(), group.size.to_string());
        for f in &group.files {
            let mut row = vec![
                n.clone().into_bytes(),
                size.clone().into_bytes(),
                f.path.as_os_str().as_bytes().to_vec(),
                f.dev.to_string().into_bytes(),
                f.ino.to_string().into_bytes(),
                f.mtime_ns.to_string().into_bytes(),
            ];
            if kinds {
                row.push(kind.as_bytes().to_vec());
            }
            w.write_record(&row)?;
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
    use crate::{
        DirCopy, DirGroup, DirSummary, Group, ReportFile, SharedWith, Summary, REPORT_VERSION,
    };
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
                Group { size: 9, files: vec![f(b"a"), f(b"b,\"c\"")], cached: false },
                Group { size: 1, files: vec![f(b"x\xff"), f(b"y\nz")], cached: false },
            ],
            summary: Summary::default(),
            dirs: None,
            unique: None,
            dir_summary: None,
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

    fn with_sections() -> Report {
        let mut r = report();
        let f =
            |p: &str| ReportFile { path: p.into(), dev: 1, ino: 2, mtime_ns: 3, ctime_ns: None };
        r.dirs = Some(vec![
            DirGroup {
                kind: DirKind::Identical,
                file_count: 1,
                size: 9,
                dirs: vec![
                    DirCopy { path: "p".into(), files: vec![f("p/a")] },
                    DirCopy { path: "q".into(), files: vec![f("q/a")] },
                ],
            },
            DirGroup {
                kind: DirKind::Contained,
                file_count: 1,
                size: 4,
                dirs: vec![
                    DirCopy { path: "old".into(), files: vec![f("old/x")] },
                    DirCopy { path: "new".into(), files: vec![f("new/y/x")] },
                ],
            },
        ]);
        r.groups.truncate(1);
        r.unique = Some(vec![Group { size: 2, files: vec![f("u")], cached: false }]);
        r
    }

    #[test]
    fn text_lists_directories_then_groups_then_unique_files() {
        let mut out = Vec::new();
        write_text(&with_sections(), TextStyle::Lines, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "# identical directories: 1 files, 9 bytes in each\np/\nq/\n\n\
             # all 1 files (4 bytes) of the first directory also exist under the second\n\
             old/\nnew/\n\na\nb,\"c\"\n\nu\n\n"
        );
        let mut out = Vec::new();
        write_text(&with_sections(), TextStyle::Nul, &mut out).unwrap();
        assert_eq!(out, b"p/\0q/\0\0old/\0new/\0\0a\0b,\"c\"\0\0u\0\0");
    }

    #[test]
    fn csv_has_a_kind_column_with_sections() {
        let mut out = Vec::new();
        write_csv(&with_sections(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "group,size,path,dev,ino,mtime_ns,kind");
        assert_eq!(lines[1], "1,9,p,,,,identical_dir");
        assert_eq!(lines[3], "2,4,old,,,,contained_dir");
        assert_eq!(lines[4], "2,4,new,,,,copies_dir");
        assert_eq!(lines[5], "3,9,a,1,2,3,file");
        assert_eq!(*lines.last().unwrap(), "4,2,u,1,2,3,unique");
    }

    #[test]
    fn summary_text_names_sizes_and_other_directories() {
        let mut r = report();
        r.dir_summary = Some(vec![DirSummary {
            path: "r/photos".into(),
            duplicated_files: 3,
            duplicated_bytes: 3 << 20,
            reclaimable_bytes: 2 << 20,
            internal_bytes: 1000,
            shared_with: vec![SharedWith { path: "r/backup".into(), bytes: 1536 }],
        }]);
        let mut out = Vec::new();
        write_dir_summary(&r, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "r/photos: 2.0 MiB reclaimable; 3.0 MiB in 3 duplicated files; 1000 B duplicated \
             within\n    1.5 KiB also in r/backup\n"
        );
    }
}
