//! What the scheduler chose for a device, as the line `-v` shows: the level, and the mean
//! throughput measured at each level tried, or why nothing was measured.

use dedup_core::text::Bytes;

use super::DeviceChoice;

impl DeviceChoice {
    /// One line on what the scheduler chose for the device and the measurements behind it.
    pub fn line(&self) -> String {
        let mut levels: Vec<(usize, f64, u32)> = Vec::new();
        for s in &self.history {
            match levels.iter_mut().find(|(l, _, _)| *l == s.level) {
                Some((_, sum, n)) => {
                    *sum += s.rate;
                    *n += 1;
                }
                None => levels.push((s.level, s.rate, 1)),
            }
        }
        levels.sort_by_key(|(l, _, _)| *l);
        let trail: Vec<String> = levels
            .iter()
            .map(|(l, sum, n)| format!("{l}: {}/s", Bytes((sum / f64::from(*n)) as u64)))
            .collect();
        let why = match (self.measured, trail.is_empty()) {
            (_, true) => String::from("too little work to measure, or fixed by --io-threads"),
            (true, false) => format!("chosen by measurement ({})", trail.join(", ")),
            (false, false) => format!("still climbing when the stage ended ({})", trail.join(", ")),
        };
        let from = match self.carried_over {
            Some(level) => format!("; started at {level}, the level listing reached"),
            None => String::new(),
        };
        format!("{}: {} at once, {why}{from}", device_name(self.dev), self.level)
    }
}

/// A device number as `device MAJOR:MINOR`.
pub fn device_name(dev: u64) -> String {
    format!("device {}:{}", rustix::fs::major(dev), rustix::fs::minor(dev))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Sample;

    #[test]
    fn a_measured_choice_shows_the_mean_rate_of_each_level_in_order() {
        let sample = |level, rate| Sample { level, rate };
        let choice = DeviceChoice {
            dev: rustix::fs::makedev(8, 1),
            level: 4,
            measured: true,
            history: vec![sample(4, 3072.0), sample(2, 1024.0), sample(4, 1024.0)],
            carried_over: Some(2),
        };
        assert_eq!(
            choice.line(),
            "device 8:1: 4 at once, chosen by measurement (2: 1.00 KiB/s, 4: 2.00 KiB/s); \
             started at 2, the level listing reached"
        );
        let fixed = DeviceChoice { history: Vec::new(), carried_over: None, ..choice };
        assert!(fixed.line().ends_with("too little work to measure, or fixed by --io-threads"));
    }
}
