//! Types shared by every part of dedup: file identity and metadata, the problems a scan can meet,
//! and the channel through which libraries tell the binary what is happening (they never print).

pub mod env_setting;
mod events;
mod file;
pub mod mount_table;
mod problem;
mod problem_line;
mod progress;
mod progress_line;
pub mod size;
mod terminal;
pub mod text;
pub mod xdg;

pub use events::Observer;
pub use file::{nanos, FileId, FileMeta};
pub use problem::{Problem, ProblemKind, Severity};
pub use progress::{Phase, Progress, ProgressSnapshot, Shows, MAX_PHASES};
pub use terminal::{KeptLines, Terminal};
