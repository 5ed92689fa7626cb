//! The words of the progress line a job's phase asks for (`scanning: 1,204 files, 3.20 MiB`):
//! the binary only draws them.

use crate::text::{Bytes, Count};
use crate::{Phase, ProgressSnapshot, Shows};

impl Phase {
    /// The progress line while this phase runs, with the counters of `s`.
    pub fn line(&self, s: &ProgressSnapshot) -> String {
        let label = self.label;
        match self.shows {
            Shows::Label => label.to_owned(),
            Shows::Found { unit } => {
                format!("{label} {} {unit}, {}", Count(s.files_found), Bytes(s.bytes_found))
            }
            Shows::Items { unit } => format!(
                "{label} {}/{}{} ({} read)",
                Count(s.phase_done),
                Count(s.phase_total),
                unit.map(|unit| format!(" {unit}")).unwrap_or_default(),
                Bytes(s.bytes_read)
            ),
        }
    }
}

impl ProgressSnapshot {
    /// The progress line of the phase this snapshot is in, among `phases`; empty for a job that
    /// named no phases.
    pub fn line(&self, phases: &[Phase]) -> String {
        phases.get(self.phase).map(|phase| phase.line(self)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Phase, ProgressSnapshot, Shows};

    #[test]
    fn each_kind_of_phase_shows_its_counters() {
        let s = ProgressSnapshot {
            phase: 1,
            files_found: 12_345,
            bytes_found: 3 << 20,
            phase_total: 4_000,
            phase_done: 1_234,
            bytes_read: 1536,
        };
        let phases = [
            Phase { name: "walk", label: "scanning:", shows: Shows::Found { unit: "files" } },
            Phase { name: "read", label: "reading:", shows: Shows::Items { unit: None } },
            Phase { name: "end", label: "writing report", shows: Shows::Label },
        ];
        assert_eq!(phases[0].line(&s), "scanning: 12,345 files, 3.00 MiB");
        assert_eq!(s.line(&phases), "reading: 1,234/4,000 (1.50 KiB read)");
        assert_eq!(phases[2].line(&s), "writing report");
        assert_eq!(s.line(&[]), "");
    }
}
