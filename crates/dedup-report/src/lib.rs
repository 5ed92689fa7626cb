//! The dedup report: what a scan found ([`Report`] and its parts), the writers that print it
//! (fdupes-style text, NUL-separated text, CSV, JSON) and the reader that loads a JSON report
//! back. The format is docs/report-format.md.
//!
//! A crate of its own so that whatever only reads or prints a report (the actions, the binary)
//! does not pull in the finder's pipeline, as ripgrep keeps its printer apart from its searcher.
//! The finder builds a [`Report`]; ordering its groups is the finder's business.

mod format;
pub mod json_path;
mod load;
mod model;
mod read;
mod summary_line;
mod write;

pub use format::ReportFormat;
pub use load::{load, LoadError};
pub use model::{
    DirCopy, DirGroup, DirKind, DirSummary, Group, Report, ReportFile, SharedWith, Summary,
    REPORT_VERSION,
};
pub use read::ReportError;
pub use write::{write_csv, write_dir_summary, write_json, write_text, TextStyle};
