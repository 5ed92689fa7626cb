//! Types shared by every part of dedup: file identity and metadata, the problems a scan can meet,
//! and the channel through which libraries tell the binary what is happening (they never print).

mod events;
mod file;
mod problem;
mod progress;
pub mod size;
pub mod text;

pub use events::Observer;
pub use file::{nanos, FileId, FileMeta};
pub use problem::{Problem, ProblemKind, Severity};
pub use progress::{Phase, Progress, ProgressSnapshot, Shows, MAX_PHASES};
