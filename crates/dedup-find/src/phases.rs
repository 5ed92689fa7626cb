//! The finder's phases, in the order they run, as its progress names and shows them
//! (`dedup_core::Progress`): the binary draws and times them from [`PHASES`] alone.

use dedup_core::{Phase, Shows};

/// Listing directories.
pub(crate) const WALK: usize = 0;
/// Grouping by size and identity (no I/O).
pub(crate) const GROUP: usize = 1;
/// Reading samples of candidate files.
pub(crate) const SAMPLE: usize = 2;
/// Comparing full contents.
pub(crate) const COMPARE: usize = 3;
/// Finished: building and writing the report.
pub(crate) const DONE: usize = 4;

/// Every phase of a scan, in order: make the scan's `Progress` with `Progress::new(PHASES)`.
pub static PHASES: &[Phase] = &[
    Phase { name: "walk", label: "scanning:", shows: Shows::Found { unit: "files" } },
    Phase { name: "group", label: "grouping", shows: Shows::Found { unit: "files" } },
    Phase { name: "sample", label: "sampling candidates:", shows: Shows::Items { unit: None } },
    Phase {
        name: "compare",
        label: "comparing contents:",
        shows: Shows::Items { unit: Some("files") },
    },
    Phase { name: "done", label: "writing report", shows: Shows::Label },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_index_names_its_phase() {
        let named = [(WALK, "walk"), (GROUP, "group"), (SAMPLE, "sample"), (COMPARE, "compare")];
        for (index, name) in named.into_iter().chain([(DONE, "done")]) {
            assert_eq!(PHASES[index].name, name);
        }
        assert_eq!(PHASES.len(), DONE + 1);
    }
}
