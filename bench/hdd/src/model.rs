//! The disk model: how long one spinning disk takes to serve one request, from where the
//! previous request left the head.
//!
//! A request costs a seek (head movement: nothing within a track's reach, otherwise a settle
//! time plus a term growing with the square root of the distance, capped at a full stroke), a
//! rotational wait (until the first sector comes under the head) and a transfer at the media
//! rate. The angular position of a byte is where it sits on its track (`offset mod track
//! bytes`, one track being what passes under the head in one revolution), and the head's
//! angle after a request is that of the byte after the request's last. The model keeps no
//! clock: time the disk spends idle between requests is not counted in the angle. A real
//! platter turns meanwhile, but counting host time would make every run's figures depend on
//! the host's scheduling; without it the same requests in the same order cost the same, and
//! the wait of a random request is still spread evenly over one revolution (4.17 ms mean at
//! 7,200 rpm).
//!
//! Reads go through the drive's cache ([`Cache`]): a read of bytes that passed under the head
//! recently (read, or passed over while waiting for a sector) costs only its transfer over the
//! bus and leaves the head where it is.

use crate::cache::Cache;

/// Whether a request reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
}

/// The physical parameters of the modeled disk.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    /// Spindle speed, revolutions per minute.
    pub rpm: f64,
    /// The shortest seek (track to track, head settling), seconds.
    pub settle_s: f64,
    /// The longest seek (across `stroke_bytes`), seconds.
    pub full_stroke_s: f64,
    /// How many bytes a full stroke spans: the modeled disk's capacity.
    pub stroke_bytes: u64,
    /// Media transfer rate, bytes per second.
    pub rate_bps: f64,
    /// The drive's read cache, bytes (0: none).
    pub cache_bytes: u64,
    /// Transfer rate between the drive's cache and the host, bytes per second.
    pub bus_bps: f64,
}

impl Geometry {
    /// One revolution, seconds.
    pub fn revolution_s(&self) -> f64 {
        60.0 / self.rpm
    }

    /// Bytes on one track: what passes under the head in one revolution.
    pub fn track_bytes(&self) -> f64 {
        self.rate_bps * self.revolution_s()
    }

    /// Seek time across `distance` bytes: settle + a·√distance, capped at the full stroke.
    pub fn seek_s(&self, distance: u64) -> f64 {
        if distance == 0 {
            return 0.0;
        }
        let per_root = (self.full_stroke_s - self.settle_s) / (self.stroke_bytes as f64).sqrt();
        (self.settle_s + per_root * (distance as f64).sqrt()).min(self.full_stroke_s)
    }

    /// Where `offset` sits on its track, as a fraction of a revolution in [0, 1).
    fn angle(&self, offset: u64) -> f64 {
        let track = self.track_bytes();
        (offset as f64 % track) / track
    }
}

/// What one request cost, seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    pub seek_s: f64,
    pub rotation_s: f64,
    pub transfer_s: f64,
    /// Answered from the drive's cache (`transfer_s` is then the bus transfer).
    pub cached: bool,
}

impl Cost {
    pub fn total_s(&self) -> f64 {
        self.seek_s + self.rotation_s + self.transfer_s
    }
}

/// One disk: its geometry, where its head is, and what its cache holds.
#[derive(Debug)]
pub struct Disk {
    geometry: Geometry,
    /// The byte under the head: the one after the previous request's last.
    head: u64,
    cache: Cache,
}

impl Disk {
    pub fn new(geometry: Geometry) -> Self {
        Disk { geometry, head: 0, cache: Cache::new(geometry.cache_bytes) }
    }

    /// Parks the head at the start and empties the cache, as a disk just powered on: a cold run
    /// that starts here costs what a replay of its requests on a new disk costs.
    pub fn reset(&mut self) {
        *self = Disk::new(self.geometry);
    }

    /// Serves a request of `len` bytes at `offset`: from the cache when it holds them all,
    /// otherwise from the platter, moving the head past them.
    pub fn serve(&mut self, op: Op, offset: u64, len: u64) -> Cost {
        let end = offset.saturating_add(len);
        match op {
            Op::Read if self.cache.hit(offset, end) => {
                return Cost {
                    transfer_s: len as f64 / self.geometry.bus_bps,
                    cached: true,
                    ..Cost::default()
                };
            }
            Op::Read => {}
            Op::Write => self.cache.invalidate(offset, end),
        }
        let cost = self.position_and_transfer(offset, len);
        if op == Op::Read {
            self.keep_what_passed(offset, end, cost.rotation_s);
        }
        cost
    }

    /// Caches a read's bytes and those that passed under the head during its rotational wait:
    /// the `rotation_s` worth of its track just before `offset`, wrapping round the track.
    fn keep_what_passed(&mut self, offset: u64, end: u64, rotation_s: f64) {
        let track = self.geometry.track_bytes().floor().max(1.0) as u64;
        let passed = ((rotation_s * self.geometry.rate_bps) as u64).min(track);
        let track_start = offset - offset % track;
        let behind = offset - track_start;
        if passed <= behind {
            self.cache.insert(offset - passed, end);
        } else {
            self.cache.insert(track_start, end);
            let wrapped = passed - behind;
            self.cache.insert(track_start + track - wrapped, track_start + track);
        }
    }

    fn position_and_transfer(&mut self, offset: u64, len: u64) -> Cost {
        let g = &self.geometry;
        let revolution = g.revolution_s();
        let distance = offset.abs_diff(self.head);
        // Within a track's reach the head stays where it is and the platter brings the data
        // round: a forward gap passes under the head at the media rate (what a drive's
        // read-ahead makes of ascending reads), a backward one waits for the rest of the turn.
        let seek_s = if (distance as f64) < g.track_bytes() { 0.0 } else { g.seek_s(distance) };
        let head_angle = g.angle(self.head) + seek_s / revolution;
        let rotation_s = (g.angle(offset) - head_angle).rem_euclid(1.0) * revolution;
        self.head = offset.saturating_add(len);
        Cost { seek_s, rotation_s, transfer_s: len as f64 / g.rate_bps, cached: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn geometry() -> Geometry {
        Geometry {
            rpm: 7200.0,
            settle_s: 0.001,
            full_stroke_s: 0.015,
            stroke_bytes: 4 * GIB,
            rate_bps: 170e6,
            cache_bytes: 0,
            bus_bps: 300e6,
        }
    }

    fn cached() -> Geometry {
        Geometry { cache_bytes: 16 << 20, ..geometry() }
    }

    #[test]
    fn seek_grows_with_the_root_of_the_distance_up_to_a_full_stroke() {
        let g = geometry();
        assert_eq!(g.seek_s(0), 0.0);
        assert!((g.seek_s(1) - 0.001).abs() < 1e-6);
        let quarter = g.seek_s(g.stroke_bytes / 4);
        assert!((quarter - (0.001 + 0.014 / 2.0)).abs() < 1e-9, "{quarter}");
        assert_eq!(g.seek_s(g.stroke_bytes), 0.015);
        assert_eq!(g.seek_s(10 * g.stroke_bytes), 0.015);
    }

    #[test]
    fn sequential_requests_cost_only_their_transfer() {
        let mut disk = Disk::new(geometry());
        let mut at = 0;
        for _ in 0..100 {
            let cost = disk.serve(Op::Read, at, 1 << 20);
            assert_eq!(cost.seek_s, 0.0);
            assert!(cost.rotation_s < 1e-9, "{cost:?}");
            assert!((cost.transfer_s - (1 << 20) as f64 / 170e6).abs() < 1e-12);
            at += 1 << 20;
        }
    }

    #[test]
    fn a_short_forward_gap_passes_under_the_head() {
        let mut disk = Disk::new(geometry());
        disk.serve(Op::Read, 0, 4096);
        let cost = disk.serve(Op::Read, 4096 + 170_000, 4096);
        assert_eq!(cost.seek_s, 0.0);
        assert!((cost.rotation_s - 0.001).abs() < 1e-9, "{cost:?}");
    }

    #[test]
    fn a_short_backward_write_waits_for_the_rest_of_the_turn() {
        let mut disk = Disk::new(geometry());
        disk.serve(Op::Read, 0, 8192);
        let cost = disk.serve(Op::Write, 4096, 4096);
        assert_eq!(cost.seek_s, 0.0);
        let turn = 60.0 / 7200.0;
        assert!((cost.rotation_s - (turn - 4096.0 / 170e6)).abs() < 1e-9, "{cost:?}");
    }

    #[test]
    fn random_requests_average_the_published_figures() {
        // Uniform random 4 KiB reads over the whole stroke: mean seek settle + 14 ms x E[√|U-V|]
        // (= 8/15), mean rotational wait half a revolution.
        let g = geometry();
        let mut disk = Disk::new(g);
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let n = 20_000;
        let (mut seek, mut rotation) = (0.0, 0.0);
        for _ in 0..n {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let offset = (state % (g.stroke_bytes / 4096)) * 4096;
            let cost = disk.serve(Op::Read, offset, 4096);
            seek += cost.seek_s;
            rotation += cost.rotation_s;
        }
        let (seek, rotation) = (seek / n as f64, rotation / n as f64);
        assert!((seek - (0.001 + 0.014 * 8.0 / 15.0)).abs() < 0.0003, "{seek}");
        assert!((rotation - 0.5 * 60.0 / 7200.0).abs() < 0.0003, "{rotation}");
    }

    #[test]
    fn the_same_requests_cost_the_same() {
        let run = || {
            let mut disk = Disk::new(geometry());
            [(5 * GIB / 2, 4096), (7, 65536), (GIB, 1 << 20), (3 * GIB, 512)]
                .iter()
                .map(|&(o, l)| disk.serve(Op::Read, o, l).total_s())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn a_read_of_what_passed_under_the_head_comes_from_the_cache() {
        let mut disk = Disk::new(cached());
        disk.serve(Op::Read, 0, 4096);
        // A far read: a seek, then a wait while part of the target's track passes.
        let far = 3 * GIB;
        let first = disk.serve(Op::Read, far, 4096);
        assert!(first.seek_s > 0.0 && !first.cached);
        let passed = (first.rotation_s * 170e6) as u64;
        assert!(passed > 8192, "{first:?}");
        // Bytes read and bytes passed over are in the cache: no movement, bus speed.
        for (offset, len) in [(far, 4096), (far - 4096, 4096), (far - passed + 1, 512)] {
            let again = disk.serve(Op::Read, offset, len);
            assert!(again.cached, "{offset}: {again:?}");
            assert_eq!(again.seek_s + again.rotation_s, 0.0);
            assert!((again.transfer_s - len as f64 / 300e6).abs() < 1e-12);
        }
        // The head did not move for them: reading on from the far request is sequential.
        let next = disk.serve(Op::Read, far + 4096, 4096);
        assert!(!next.cached);
        assert_eq!(next.seek_s + next.rotation_s, 0.0);
    }

    #[test]
    fn a_write_is_never_answered_by_the_cache_and_drops_what_it_replaces() {
        let mut disk = Disk::new(cached());
        disk.serve(Op::Read, GIB, 65536);
        let write = disk.serve(Op::Write, GIB, 4096);
        assert!(!write.cached);
        assert!(!disk.serve(Op::Read, GIB, 4096).cached);
        assert!(disk.serve(Op::Read, GIB + 8192, 4096).cached);
    }

    #[test]
    fn a_reset_disk_costs_what_a_new_one_does() {
        let requests =
            [(Op::Read, 3 * GIB, 4096), (Op::Read, GIB, 65536), (Op::Read, 3 * GIB, 4096)];
        let mut new = Disk::new(cached());
        let fresh: Vec<Cost> = requests.iter().map(|&(op, o, l)| new.serve(op, o, l)).collect();
        let mut used = Disk::new(cached());
        used.serve(Op::Read, 2 * GIB, 1 << 20);
        used.serve(Op::Read, 3 * GIB, 8192);
        used.reset();
        let again: Vec<Cost> = requests.iter().map(|&(op, o, l)| used.serve(op, o, l)).collect();
        assert_eq!(fresh, again);
    }

    #[test]
    fn without_a_cache_every_read_reaches_the_platter() {
        let mut disk = Disk::new(geometry());
        disk.serve(Op::Read, GIB, 4096);
        assert!(!disk.serve(Op::Read, GIB, 4096).cached);
    }
}
