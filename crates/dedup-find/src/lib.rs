//! The duplicate finder: from a walked tree to groups of byte-identical files, through stages
//! that each cost more I/O than the last and so see fewer files: size, then identity (hard links
//! are one file), then head/tail samples, then a full byte-for-byte comparison that reads every
//! remaining candidate once. Also the report model, its writers and its reader.

mod candidates;
mod exact;
mod pipeline;
mod reading;
mod report;
mod report_path;
mod sample;
mod write;

pub use pipeline::{find, find_run, FindError, FindOptions, Funnel, Run};
pub use report::{Group, Report, ReportError, ReportFile, Summary, REPORT_VERSION};
pub use sample::Tuning;
pub use write::{write_csv, write_json, write_text, TextStyle};
