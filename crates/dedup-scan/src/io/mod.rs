//! The I/O scheduler: how many reads may be in flight on each device at once. Adaptive by
//! default: each device starts low and its concurrency doubles while measured throughput rises
//! clearly ([`Tuner`]), so one binary does the right thing on NVMe, cloud disks, loop devices
//! and spinning disks. `--io-threads N` fixes the level instead.

mod choice_line;
mod gate;
mod tuner;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use choice_line::device_name;
pub use gate::Gate;
pub use tuner::{Sample, Tuner};

/// How concurrency is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concurrency {
    /// Exactly this many operations in flight, on every device.
    Fixed(usize),
    /// Measured per device, from `start` up to `max`.
    Adaptive {
        /// First level tried.
        start: usize,
        /// Highest level tried (and the number of worker threads).
        max: usize,
    },
}

impl Default for Concurrency {
    fn default() -> Self {
        Concurrency::Adaptive { start: 2, max: 64 }
    }
}

/// Level listing starts at, at least, when adaptive. A listing is small random metadata reads on
/// every kind of device, so more of them in flight cannot turn streams into seeks as large reads
/// can; on a cold tree they are served from the device, and a walk of a small tree ends before
/// a climb from 2 gets anywhere; starting higher measured no better (docs/benchmarks/find.md).
const LISTING_START: usize = 4;

impl Concurrency {
    /// The policy for listing directories: as `self`, but an adaptive climb starts at
    /// [`LISTING_START`] or above.
    pub fn for_listing(self) -> Concurrency {
        match self {
            Concurrency::Fixed(n) => Concurrency::Fixed(n),
            Concurrency::Adaptive { start, max } => {
                Concurrency::Adaptive { start: start.max(LISTING_START).min(max.max(1)), max }
            }
        }
    }
}

/// A measuring window lasts at least this long and this many operations, so one slow file does
/// not decide.
const WINDOW: Duration = Duration::from_millis(150);
const WINDOW_OPS: u64 = 16;
/// While the first climb lasts, windows are shorter: a small tree is walked and sampled in less
/// time than a few full windows, so a climb of full-length steps never left the start level
/// there (docs/benchmarks/find.md). On a slow device the operation count, not the time, still
/// ends the window.
const CLIMB_WINDOW: Duration = Duration::from_millis(10);

/// Fixed cost of one request, in bytes of transfer it is worth: a device that serves many small
/// requests well is as good as one that streams large ones.
const REQUEST_COST: u64 = 64 * 1024;

/// What the scheduler chose for one device, for `-v`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceChoice {
    /// Device number (`st_dev`).
    pub dev: u64,
    /// Concurrency in use at the end.
    pub level: usize,
    /// True when chosen by measurement (false: fixed, or too little work to measure).
    pub measured: bool,
    /// Every measured window: level and throughput in bytes per second (request cost included).
    pub history: Vec<Sample>,
    /// The level measuring started from when it was carried over from an earlier stage that
    /// measured a gain above the start level on this device.
    pub carried_over: Option<usize>,
}

/// Hands out permission to do I/O, per device.
#[derive(Debug)]
pub struct IoScheduler {
    policy: Concurrency,
    devices: Mutex<HashMap<u64, Arc<Device>>>,
    /// Sum of the devices' current levels: how many workers can be busy at once.
    total_level: Arc<AtomicUsize>,
    /// Level to start measuring at, per device, where an earlier stage measured one.
    start_at: HashMap<u64, usize>,
}

#[derive(Debug)]
struct Device {
    gate: Gate,
    /// The level it started at, when an earlier stage's measurement chose it.
    carried_over: Option<usize>,
    /// The scheduler's sum of levels, kept up to date when this device's level changes.
    total_level: Arc<AtomicUsize>,
    /// Counters of the current window, bumped without locks on every operation.
    in_flight: AtomicUsize,
    /// Most operations seen in flight this window: a window that never filled the gate measured
    /// the lack of work, not the device.
    peak_in_flight: AtomicUsize,
    units: AtomicU64,
    ops: AtomicU64,
    /// Taken once per window, by whichever operation ends it.
    window: Mutex<Window>,
}

#[derive(Debug)]
struct Window {
    tuner: Option<Tuner>,
    started: Instant,
}

/// Permission for one operation on one device; give it back with [`Permit::done`].
#[derive(Debug)]
pub struct Permit {
    device: Arc<Device>,
    finished: bool,
}

impl IoScheduler {
    /// A scheduler with the given policy.
    pub fn new(policy: Concurrency) -> IoScheduler {
        IoScheduler {
            policy,
            devices: Mutex::new(HashMap::new()),
            total_level: Arc::default(),
            start_at: HashMap::new(),
        }
    }

    /// A scheduler for the next stage on the same devices, with `policy`: where `earlier`
    /// measured that a device gains from more concurrency than its start level, this one starts
    /// at the level `earlier` reached there instead of climbing again from the start. A device
    /// that answers many directory listings at once well is not a spinning disk, and every
    /// climbing window spent below its level costs a cold read stage time.
    pub fn following(earlier: &IoScheduler, policy: Concurrency) -> IoScheduler {
        let mut next = IoScheduler::new(policy);
        if let (Concurrency::Adaptive { start, .. }, Concurrency::Adaptive { .. }) =
            (earlier.policy, policy)
        {
            next.start_at = earlier
                .choices()
                .into_iter()
                .filter(|c| !c.history.is_empty() && c.level > start)
                .map(|c| (c.dev, c.level))
                .collect();
        }
        next
    }

    /// How many operations may be in flight now, over all devices (the level a device starts
    /// at before any is seen): callers that run one worker per operation start this many, and
    /// more when a device's level rises, instead of parking a thread per possible operation.
    pub fn workers_wanted(&self) -> usize {
        let total = self.total_level.load(Relaxed);
        if total > 0 {
            return total.min(self.threads());
        }
        match self.policy {
            Concurrency::Fixed(n) => n.max(1),
            Concurrency::Adaptive { start, max } => start.clamp(1, max.max(1)),
        }
    }

    /// Worker threads needed to reach the highest level the policy may choose.
    pub fn threads(&self) -> usize {
        match self.policy {
            Concurrency::Fixed(n) => n.max(1),
            Concurrency::Adaptive { max, .. } => max.max(1),
        }
    }

    /// Move every device still in its first measuring window up to `level`, as if it had
    /// started there: for a caller that learns, before that window closes, that there is work
    /// enough for `level` workers (a warm walk of tens of thousands of entries, which one worker
    /// would spend the whole first window on: a large share of a big tree's sync no-op). A
    /// device that has measured a window already, or is at `level` or above, and a fixed
    /// policy, are left as they are; the climb goes on from `level`, up to `most` (and the policy's maximum): work
    /// found that fast is served from memory, where more workers than processors only add
    /// threads.
    pub fn hurry(&self, level: usize, most: usize) {
        let Concurrency::Adaptive { max, .. } = self.policy else { return };
        let devices = self.devices.lock().unwrap();
        for device in devices.values() {
            let Ok(mut window) = device.window.lock() else { continue };
            let Window { tuner, started } = &mut *window;
            let Some(tuner) = tuner.as_mut() else { continue };
            if !tuner.history().is_empty() || tuner.level() >= level {
                continue;
            }
            *tuner = Tuner::new(level, max.min(most.max(level)));
            // The window so far ran below the new level: the next one starts now.
            *started = Instant::now();
            device.ops.store(0, Relaxed);
            device.units.store(0, Relaxed);
            device.peak_in_flight.store(device.in_flight.load(Relaxed), Relaxed);
            let old = device.gate.limit();
            device.gate.set_limit(tuner.level());
            device.total_level.fetch_add(tuner.level(), Relaxed);
            device.total_level.fetch_sub(old, Relaxed);
        }
    }

    /// Wait until an operation on `dev` may start.
    pub fn acquire(&self, dev: u64) -> Permit {
        let device = self.device(dev);
        device.gate.enter();
        let now = device.in_flight.fetch_add(1, Relaxed) + 1;
        device.peak_in_flight.fetch_max(now, Relaxed);
        Permit { device, finished: false }
    }

    /// What was chosen for each device seen, by device number.
    pub fn choices(&self) -> Vec<DeviceChoice> {
        let devices = self.devices.lock().unwrap();
        let mut out: Vec<DeviceChoice> = devices
            .iter()
            .map(|(&dev, d)| {
                let w = d.window.lock().unwrap();
                DeviceChoice {
                    dev,
                    level: d.gate.limit(),
                    measured: w.tuner.as_ref().is_some_and(|t| t.settled()),
                    history: w.tuner.as_ref().map(|t| t.history().to_vec()).unwrap_or_default(),
                    carried_over: d.carried_over,
                }
            })
            .collect();
        out.sort_by_key(|c| c.dev);
        out
    }

    fn device(&self, dev: u64) -> Arc<Device> {
        let mut devices = self.devices.lock().unwrap();
        devices
            .entry(dev)
            .or_insert_with(|| {
                let carried_over = self.start_at.get(&dev).copied();
                let (level, tuner) = match self.policy {
                    Concurrency::Fixed(n) => (n, None),
                    Concurrency::Adaptive { start, max } => {
                        let t = Tuner::new(carried_over.unwrap_or(start), max);
                        (t.level(), Some(t))
                    }
                };
                self.total_level.fetch_add(level.max(1), Relaxed);
                Arc::new(Device {
                    carried_over,
                    total_level: self.total_level.clone(),
                    gate: Gate::new(level),
                    in_flight: AtomicUsize::new(0),
                    peak_in_flight: AtomicUsize::new(0),
                    units: AtomicU64::new(0),
                    ops: AtomicU64::new(0),
                    window: Mutex::new(Window { tuner, started: Instant::now() }),
                })
            })
            .clone()
    }
}

impl Permit {
    /// The operation is over and moved `bytes`.
    pub fn done(mut self, bytes: u64) {
        self.finish(bytes);
    }

    fn finish(&mut self, bytes: u64) {
        if self.finished {
            return;
        }
        self.finished = true;
        let device = &*self.device;
        device.in_flight.fetch_sub(1, Relaxed);
        device.units.fetch_add(bytes + REQUEST_COST, Relaxed);
        let ops = device.ops.fetch_add(1, Relaxed) + 1;
        device.gate.leave();
        if ops >= WINDOW_OPS {
            if let Some(level) = device.close_window() {
                let old = device.gate.limit();
                device.gate.set_limit(level);
                device.total_level.fetch_add(level.max(1), Relaxed);
                device.total_level.fetch_sub(old, Relaxed);
            }
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.finish(0);
    }
}

impl Device {
    /// At the end of a full window, feed the tuner; returns a new level if it changed. Whoever
    /// finds the window lock taken simply goes on: another operation is closing this window.
    fn close_window(&self) -> Option<usize> {
        let mut window = self.window.try_lock().ok()?;
        let Window { tuner, started } = &mut *window;
        let tuner = tuner.as_mut()?;
        let elapsed = started.elapsed();
        let least = if tuner.settled() { WINDOW } else { CLIMB_WINDOW };
        if elapsed < least || self.ops.load(Relaxed) < WINDOW_OPS {
            return None;
        }
        *started = Instant::now();
        self.ops.store(0, Relaxed);
        let units = self.units.swap(0, Relaxed);
        let peak = self.peak_in_flight.swap(self.in_flight.load(Relaxed), Relaxed);
        let level = tuner.level();
        if peak < level {
            return None;
        }
        let next = tuner.record(units as f64 / elapsed.as_secs_f64());
        (next != level).then_some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_policy_never_measures() {
        let s = IoScheduler::new(Concurrency::Fixed(3));
        assert_eq!(s.threads(), 3);
        for _ in 0..100 {
            s.acquire(7).done(4096);
        }
        let c = s.choices();
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].dev, c[0].level, c[0].measured), (7, 3, false));
        assert!(c[0].history.is_empty());
    }

    #[test]
    fn hurrying_raises_only_devices_still_in_their_first_window() {
        let s = IoScheduler::new(Concurrency::Adaptive { start: 1, max: 64 });
        s.acquire(1).done(1);
        s.acquire(2).done(1);
        assert_eq!(s.workers_wanted(), 2, "two devices at level 1");
        s.hurry(2, 2);
        let levels: Vec<usize> = s.choices().iter().map(|c| c.level).collect();
        assert_eq!(levels, [2, 2]);
        assert_eq!(s.workers_wanted(), 4);
        s.hurry(1, 1);
        assert_eq!(s.workers_wanted(), 4, "never lowered");
        // A device that has measured a window keeps what it measured.
        let measured = IoScheduler::new(Concurrency::Adaptive { start: 1, max: 64 });
        let until = Instant::now() + CLIMB_WINDOW + Duration::from_millis(5);
        while measured.choices().first().is_none_or(|c| c.history.is_empty()) {
            assert!(Instant::now() < until + Duration::from_secs(5), "no window closed");
            measured.acquire(1).done(1);
        }
        let before = measured.choices()[0].level;
        measured.hurry(before + 1, 64);
        assert_eq!(measured.choices()[0].level, before);
        // A fixed policy is left as asked.
        let fixed = IoScheduler::new(Concurrency::Fixed(1));
        fixed.acquire(1).done(1);
        fixed.hurry(2, 2);
        assert_eq!(fixed.choices()[0].level, 1);
    }

    #[test]
    fn devices_are_tracked_apart() {
        let s = IoScheduler::new(Concurrency::default());
        s.acquire(1).done(1);
        drop(s.acquire(2));
        let devs: Vec<u64> = s.choices().iter().map(|c| c.dev).collect();
        assert_eq!(devs, [1, 2]);
    }

    #[test]
    fn the_first_climb_is_measured_in_short_windows() {
        // A short run (a small tree) must still get to measure and climb: several windows fit
        // in 200 ms while climbing, where one settled window alone lasts 150 ms.
        let climb = || {
            let s = IoScheduler::new(Concurrency::Adaptive { start: 2, max: 64 });
            let until = Instant::now() + Duration::from_millis(200);
            std::thread::scope(|scope| {
                for _ in 0..16 {
                    scope.spawn(|| {
                        while Instant::now() < until {
                            let permit = s.acquire(1);
                            std::thread::sleep(Duration::from_millis(1));
                            permit.done(1 << 20);
                        }
                    });
                }
            });
            let choice = s.choices().remove(0);
            assert_eq!(s.workers_wanted(), choice.level, "workers follow the level as it climbs");
            choice
        };
        // It climbed to 8 at least once; whether it stays there depends on the last windows.
        // The device is threads sleeping 1 ms, and on a loaded machine (the test suite itself,
        // or CI beside other work) waking them late can make 4 at once look no faster than 2:
        // a climb that never happens in three tries is a failure.
        let climbed = |c: &DeviceChoice| {
            c.history.len() >= 3 && c.history.iter().any(|sample| sample.level >= 8)
        };
        let mut tries = Vec::new();
        while tries.len() < 3 {
            let choice = climb();
            if climbed(&choice) {
                return;
            }
            tries.push(choice);
        }
        panic!("no climb to 8 in three tries: {tries:#?}");
    }

    #[test]
    fn a_following_stage_starts_where_the_earlier_one_measured_a_gain() {
        let policy = Concurrency::Adaptive { start: 2, max: 32 };
        let walk = IoScheduler::new(policy);
        // Device 1 climbed to 8 by measurement; device 2 was seen but never measured.
        {
            let device = walk.device(1);
            let mut w = device.window.lock().unwrap();
            let tuner = w.tuner.as_mut().unwrap();
            for rate in [1.0, 2.0, 3.0, 3.0] {
                let level = tuner.record(rate);
                device.gate.set_limit(level);
            }
        }
        walk.acquire(2).done(1);
        let walked = walk.choices()[0].level;
        assert!(walked > 2, "{:?}", walk.choices());
        let read = IoScheduler::following(&walk, policy);
        read.acquire(1).done(1);
        read.acquire(2).done(1);
        read.acquire(3).done(1);
        let started: Vec<(u64, Option<usize>, usize)> =
            read.choices().iter().map(|c| (c.dev, c.carried_over, c.level)).collect();
        assert_eq!(started, [(1, Some(walked), walked), (2, None, 2), (3, None, 2)]);
        let fixed =
            IoScheduler::following(&IoScheduler::new(Concurrency::Fixed(3)), Concurrency::Fixed(3));
        fixed.acquire(1).done(1);
        assert_eq!(fixed.choices()[0].level, 3);
    }

    #[test]
    fn listing_starts_higher_but_never_above_the_maximum_or_a_fixed_level() {
        let adaptive = Concurrency::Adaptive { start: 2, max: 64 };
        assert_eq!(adaptive.for_listing(), Concurrency::Adaptive { start: LISTING_START, max: 64 });
        let low_ceiling = Concurrency::Adaptive { start: 1, max: 3 };
        assert_eq!(low_ceiling.for_listing(), Concurrency::Adaptive { start: 3, max: 3 });
        let high_start = Concurrency::Adaptive { start: 8, max: 64 };
        assert_eq!(high_start.for_listing(), high_start);
        assert_eq!(Concurrency::Fixed(1).for_listing(), Concurrency::Fixed(1));
    }

    #[test]
    fn a_following_stage_does_not_carry_over_a_start_it_never_measured_past() {
        // The listing started at 4 and measured nothing above it: reading starts at its own 2.
        let listing = IoScheduler::new(Concurrency::default().for_listing());
        listing.acquire(1).done(1);
        let read = IoScheduler::following(&listing, Concurrency::default());
        read.acquire(1).done(1);
        assert_eq!(read.choices()[0].level, 2);
        assert_eq!(read.choices()[0].carried_over, None);
    }

    #[test]
    fn workers_wanted_are_the_sum_of_the_devices_levels_within_the_threads() {
        let s = IoScheduler::new(Concurrency::Adaptive { start: 2, max: 5 });
        assert_eq!(s.workers_wanted(), 2, "before any device is seen: the start level");
        s.acquire(1).done(1);
        assert_eq!(s.workers_wanted(), 2);
        s.acquire(2).done(1);
        assert_eq!(s.workers_wanted(), 4);
        s.acquire(3).done(1);
        assert_eq!(s.workers_wanted(), 5, "never more than the threads");
        assert_eq!(IoScheduler::new(Concurrency::Fixed(3)).workers_wanted(), 3);
    }

    #[test]
    fn an_unsaturated_window_is_not_taken_as_the_device_limit() {
        // One operation at a time while the gate allows two: the window measured the caller,
        // so the tuner must not settle on it.
        let s = IoScheduler::new(Concurrency::Adaptive { start: 2, max: 8 });
        let until = Instant::now() + WINDOW * 3;
        while Instant::now() < until {
            s.acquire(1).done(1 << 20);
        }
        let c = &s.choices()[0];
        assert!(c.history.is_empty(), "{c:?}");
        assert!(!c.measured);
    }
}
