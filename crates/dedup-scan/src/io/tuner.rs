//! The decision rule of the I/O scheduler, free of clocks and threads so it can be tested:
//! start with few concurrent reads, double while throughput rises clearly, and settle on the
//! best level once doubling stops paying. Virtual disks report `rotational=1` even on SSD
//! storage, so the flag cannot tell; only measuring can.

/// A throughput gain smaller than this (relative) does not justify more concurrency: on a
/// spinning disk extra readers cost seeks, and noise alone moves a window by a few percent.
const MIN_GAIN: f64 = 0.08;

/// While holding a level, probe the next one up after this many windows: one noisy window must
/// not decide for the rest of a run, and the load may change (directories, then large files).
const WINDOWS_BETWEEN_PROBES: u32 = 6;

/// Weight of the newest window in the smoothed rate of a level.
const SMOOTHING: f64 = 0.4;

/// Outcome of one measured window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Concurrency the window ran at.
    pub level: usize,
    /// Work units per second measured in it.
    pub rate: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Doubling from the start level while it pays.
    Climbing,
    /// Staying at the best level found; counts windows until the next probe.
    Holding { windows: u32 },
    /// Trying one level above `from` for one window.
    Probing { from: usize },
}

/// Hill-climbing over concurrency levels start, 2·start, 4·start, … up to a maximum.
#[derive(Debug, Clone)]
pub struct Tuner {
    level: usize,
    max: usize,
    phase: Phase,
    /// Smoothed rate per level measured so far.
    rates: Vec<(usize, f64)>,
    history: Vec<Sample>,
}

impl Tuner {
    /// Start at `start` concurrent operations, never exceeding `max`.
    pub fn new(start: usize, max: usize) -> Tuner {
        let max = max.max(1);
        Tuner {
            level: start.clamp(1, max),
            max,
            phase: Phase::Climbing,
            rates: Vec::new(),
            history: Vec::new(),
        }
    }

    /// Concurrency to use now.
    pub fn level(&self) -> usize {
        self.level
    }

    /// True once the first climb has ended (later probes may still raise the level).
    pub fn settled(&self) -> bool {
        self.phase != Phase::Climbing
    }

    /// Every window measured so far, in order.
    pub fn history(&self) -> &[Sample] {
        &self.history
    }

    fn rate_of(&self, level: usize) -> Option<f64> {
        self.rates.iter().find(|(l, _)| *l == level).map(|(_, r)| *r)
    }

    fn smooth(&mut self, level: usize, rate: f64) {
        match self.rates.iter_mut().find(|(l, _)| *l == level) {
            Some((_, r)) => *r = *r * (1.0 - SMOOTHING) + rate * SMOOTHING,
            None => self.rates.push((level, rate)),
        }
    }

    fn up(&self) -> usize {
        (self.level * 2).min(self.max)
    }

    /// Feed the rate measured at the current level; returns the level to use next.
    pub fn record(&mut self, rate: f64) -> usize {
        let level = self.level;
        self.history.push(Sample { level, rate });
        let below = self.rates.iter().filter(|(l, _)| *l < level).max_by_key(|(l, _)| *l).copied();
        self.smooth(level, rate);
        match self.phase {
            Phase::Climbing => match below {
                Some((lower, lower_rate)) if rate < lower_rate * (1.0 + MIN_GAIN) => {
                    self.level = lower;
                    self.phase = Phase::Holding { windows: 0 };
                }
                _ if level >= self.max => self.phase = Phase::Holding { windows: 0 },
                _ => self.level = self.up(),
            },
            Phase::Holding { windows }
                if windows + 1 >= WINDOWS_BETWEEN_PROBES && level < self.max =>
            {
                self.phase = Phase::Probing { from: level };
                self.level = self.up();
            }
            Phase::Holding { windows } => self.phase = Phase::Holding { windows: windows + 1 },
            Phase::Probing { from } => {
                let held = self.rate_of(from).unwrap_or(0.0);
                if rate >= held * (1.0 + MIN_GAIN) {
                    // The probe paid: keep climbing from here.
                    self.phase = Phase::Climbing;
                    self.level = if level >= self.max { level } else { self.up() };
                    if level >= self.max {
                        self.phase = Phase::Holding { windows: 0 };
                    }
                } else {
                    self.level = from;
                    self.phase = Phase::Holding { windows: 0 };
                }
            }
        }
        self.level
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed a device model (rate as a function of concurrency) until the tuner settles.
    fn settle(start: usize, max: usize, device: impl Fn(usize) -> f64) -> Tuner {
        let mut t = Tuner::new(start, max);
        for _ in 0..20 {
            let rate = device(t.level());
            t.record(rate);
            if t.settled() {
                break;
            }
        }
        t
    }

    #[test]
    fn ssd_like_device_climbs_until_throughput_flattens() {
        // Throughput grows with queue depth up to 16, then is flat.
        let t = settle(2, 64, |n| 100.0 * n.min(16) as f64);
        assert!(t.settled());
        assert_eq!(t.level(), 16);
    }

    #[test]
    fn spinning_disk_stays_low() {
        // Extra readers only add seeks.
        let t = settle(2, 64, |n| if n <= 2 { 100.0 } else { 80.0 });
        assert_eq!(t.level(), 2);
    }

    #[test]
    fn small_gains_are_not_worth_more_readers() {
        let t = settle(1, 64, |n| 100.0 + n as f64);
        assert_eq!(t.level(), 1);
    }

    #[test]
    fn one_unlucky_window_is_corrected_by_a_later_probe() {
        // The first window at 8 comes out low by noise; later windows show the truth.
        let mut t = Tuner::new(2, 64);
        let mut unlucky = true;
        for _ in 0..40 {
            let n = t.level();
            let mut rate = 100.0 * n.min(16) as f64;
            if n == 8 && unlucky {
                rate = 410.0;
                unlucky = false;
            }
            t.record(rate);
        }
        assert_eq!(t.level(), 16);
    }

    #[test]
    fn probes_that_do_not_pay_return_to_the_held_level() {
        let mut t = Tuner::new(2, 64);
        for _ in 0..40 {
            let n = t.level();
            t.record(if n <= 4 { 100.0 * n as f64 } else { 380.0 });
        }
        assert_eq!(t.level(), 4);
        // It did look above 4 more than once, and came back each time.
        assert!(t.history().iter().filter(|s| s.level == 8).count() >= 2);
    }

    #[test]
    fn never_exceeds_the_maximum() {
        let t = settle(2, 24, |n| 100.0 * n as f64);
        assert_eq!(t.level(), 24);
        assert!(t.history().iter().all(|s| s.level <= 24));
    }
}
