//! What `check` says: each finding with its reason, and the summary line; and the subset of
//! packs `--read-data-subset` names.

use dedup_core::text::Count;

use super::Line;
use crate::commands::{CheckReport, ReadData};

impl ReadData {
    /// `N%` (0 to 100) or `K/N` (1 <= K <= N); `None` for anything else.
    pub fn parse_subset(spec: &str) -> Option<ReadData> {
        if let Some(percent) = spec.strip_suffix('%') {
            let p: f64 = percent.parse().ok()?;
            return (0.0..=100.0).contains(&p).then_some(ReadData::Fraction(p / 100.0));
        }
        let (k, n) = spec.split_once('/')?;
        let (k, n): (u64, u64) = (k.parse().ok()?, n.parse().ok()?);
        (k != 0 && k <= n).then_some(ReadData::Slice { k, n })
    }

    /// What `--read-data-subset` (`subset`) or `--read-data` (`all`) asks to read.
    pub fn from_options(subset: Option<&str>, all: bool) -> crate::error::Result<ReadData> {
        let Some(spec) = subset else { return Ok(ReadData::from(all)) };
        ReadData::parse_subset(spec).ok_or_else(|| {
            crate::Error::Invalid(format!(
                "--read-data-subset {spec}: give N% (0-100) or K/N (1 <= K <= N)"
            ))
        })
    }
}

impl CheckReport {
    /// The findings (warnings, then errors) and the summary; `read`: which packs were read.
    pub fn lines(&self, read: ReadData) -> Vec<Line> {
        let mut lines: Vec<Line> =
            self.warnings.iter().map(|w| Line::Warning(format!("warning: {w}"))).collect();
        lines.extend(self.errors.iter().map(|e| Line::Problem(format!("error: {e}"))));
        let read = if read != ReadData::None {
            format!(
                ", {} packs and {} blobs read and verified",
                Count(self.packs_read),
                Count(self.blobs_read)
            )
        } else {
            String::new()
        };
        let verdict = match self.errors.len() {
            0 => "no errors".to_string(),
            n => format!("{n} errors"),
        };
        lines.push(Line::Info(format!(
            "checked {} snapshots, {} trees, {} packs{read}: {verdict}",
            self.snapshots, self.trees, self.packs
        )));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsets_are_a_share_or_a_slice() {
        assert_eq!(ReadData::parse_subset("25%"), Some(ReadData::Fraction(0.25)));
        assert_eq!(ReadData::parse_subset("2/7"), Some(ReadData::Slice { k: 2, n: 7 }));
        for bad in ["101%", "-1%", "0/3", "4/3", "1/", "x", ""] {
            assert_eq!(ReadData::parse_subset(bad), None, "{bad}");
        }
    }
}
