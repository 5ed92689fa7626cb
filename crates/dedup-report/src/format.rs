//! Which writer a report goes through: text (lines or NUL-separated), the per-directory summary,
//! JSON or CSV, chosen once from the options and written in one call.

use std::io::{self, Write};

use crate::{write_csv, write_dir_summary, write_json, write_text, Report, TextStyle};

/// How a report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// Groups as text.
    Text(TextStyle),
    /// Where the duplicated bytes are, per directory, as text.
    DirSummary,
    /// The JSON report (docs/report-format.md).
    Json,
    /// One CSV row per file.
    Csv,
}

impl ReportFormat {
    /// Write `report` to `out` in this format.
    pub fn write(self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        match self {
            ReportFormat::Text(style) => write_text(report, style, out),
            ReportFormat::DirSummary => write_dir_summary(report, out),
            ReportFormat::Json => write_json(report, out),
            ReportFormat::Csv => write_csv(report, out),
        }
    }
}
