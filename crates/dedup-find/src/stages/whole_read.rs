//! The switch from samples to whole reads, chosen per device by measuring its first head reads.
//!
//! Sampling pays where a request is cheap next to the bytes a whole read would add. On a device
//! that answers a small read only every few milliseconds (a spinning disk, a cloud disk capped
//! in operations per second, the HDD proxy of docs/benchmarks/find.md) a request costs as much
//! time as streaming a large file. With `t` that time, `B` the streaming rate and `p` the share
//! of same-size files whose heads differ, sampling a file of size `S` costs `t` plus, when its
//! head is alike, a tail read `t` and the full read `t + S/B`; a whole read costs `t + S/B`. The
//! whole read costs less while `S < 2·t·B·(1 − p)/p`. On real trees most same-size files of
//! moderate size are copies (docs/benchmarks/find.md has the shares). Taking `p = 1/2`, below
//! what real trees show, files up to `2·t·B` are read whole, never more than one chunk of the
//! full comparison, and only where `t` is a seek or an operation cap ([`SLOW_REQUEST`]): where
//! requests are fast, trees whose same-size files all differ pay for the premise in bandwidth.
//! A device throttled in operations rather than seeks (the proxy) gains even more: there a request
//! of up to `t·B` bytes costs the same whatever its size. Virtual disks report `rotational=1`
//! even on SSD storage, so only measuring can tell the devices apart.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::stages::candidates::{Class, Inode};
use crate::stages::keyed::{keyed, same_key_runs, sort_keyed};
use crate::stages::physical::{self, keyed_in_order, Order};
use crate::stages::reading::Reading;
use crate::tuning::{Tuning, FIRST_CHUNK};
use dedup_scan::layout;
use dedup_scan::read::direct;

/// Head reads timed before the switch is chosen: enough that one slow open does not decide.
pub(crate) const PROBE_READS: usize = 16;

/// Fewest timed reads on a device for its own measurement to count; below that it keeps the
/// default switch.
const PROBE_READS_PER_DEVICE: usize = 8;

/// Only a device slower than this per request reads more whole: a seek or an operation cap,
/// not a queue of fast requests: below it, reading whole where heads do differ costs far more
/// than it saves (docs/benchmarks/find.md).
const SLOW_REQUEST: Duration = Duration::from_millis(2);

/// Streaming rate, in bytes per second, assumed of a device whose requests are slow: a spinning
/// disk's (and the HDD proxy's) order of magnitude: `B` in the module doc, turning the measured
/// time of a request into the bytes that time could have streamed.
const SLOW_DEVICE_STREAM_RATE: f64 = 150e6;

/// What the measurement chose for one device, for `-v`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WholeRead {
    /// Device number (`st_dev`).
    pub dev: u64,
    /// Time per head read, at the concurrency the reads ran at.
    pub per_read: Duration,
    /// Same-size files up to this size are read whole instead of sampled.
    pub up_to: u64,
    /// On a device slow per request, the full comparison reads around the page cache in
    /// requests of this many bytes (`dedup_scan::read::direct`).
    pub direct: Option<u64>,
    /// The kernel gave a direct read buffer small pages, so the full comparison read through
    /// the page cache after all.
    pub direct_refused: bool,
    /// Candidates on the device are read in the order of the disk (`crate::stages::physical`).
    pub physical_order: bool,
}

/// The devices whose candidates the measurement chose to read in the order of the disk.
pub(crate) fn ordered_devices(whole_reads: &[WholeRead]) -> impl Iterator<Item = u64> + '_ {
    whole_reads.iter().filter(|c| c.physical_order).map(|c| c.dev)
}

/// The heads of the classes to sample, and the classes read whole instead.
pub(crate) struct Heads {
    /// Classes whose heads were read.
    pub classes: Vec<Class>,
    /// For each of them, the members read with their head's hash, sorted by hash.
    pub heads: Vec<Vec<(u64, Inode)>>,
    /// Classes a slow device reads whole instead, not sampled.
    pub whole: Vec<Class>,
    /// With its size, every head of each class read whole whose members were all timed: the
    /// cache's fingerprints of the members alone in their head, which are read no further.
    pub whole_heads: Vec<(u64, Vec<(u64, Inode)>)>,
    /// The switch measured on each device.
    pub whole_reads: Vec<WholeRead>,
}

/// Read the heads of `sampled` with `head` (which gives a member's hash), choosing from the
/// first of them which classes are read whole instead. Timed first are the members of every
/// class too large ever to be read whole, and where those are fewer than [`PROBE_READS`], the
/// first members of the other classes, then whole reads of one member each of some of the
/// classes of `small` files (read whole anyway, so the page cache keeps them for the full
/// comparison): every device with candidates gets measured, also in a tree of small files. A
/// class read whole then joins the full comparison with the members whose head was read and
/// those not yet touched; one whose members were all timed joins it split by their heads. The
/// heads not timed are read in the order of the disk where the measurement chose that.
pub(crate) fn heads_measured(
    sampled: Vec<Class>,
    small: &[Class],
    ctx: &Reading,
    tuning: Tuning,
    head: &(dyn Fn(usize, &Inode) -> Option<u64> + Sync),
) -> Heads {
    let floor = tuning.whole_read_max;
    let large = |class: &Class| class.size > FIRST_CHUNK;
    let mut reads: usize = sampled.iter().filter(|c| large(c)).map(|c| c.inodes.len()).sum();
    // How many members of each class are timed: all of a large class, some of the first others.
    let timed: Vec<usize> = sampled
        .iter()
        .map(|class| {
            if large(class) {
                return class.inodes.len();
            }
            let borrowed = PROBE_READS.saturating_sub(reads).min(class.inodes.len());
            reads += borrowed;
            borrowed
        })
        .collect();
    let probe = sampled.iter().zip(&timed).map(|(c, &n)| c.inodes[..n].to_vec()).collect();
    let borrowed_whole = spread_members(small, PROBE_READS.saturating_sub(reads));
    let started = Instant::now();
    let timings = Mutex::new(Vec::with_capacity(reads + borrowed_whole.len()));
    let timed_read = |inode: &Inode, read: &dyn Fn() -> Option<u64>| {
        let read_started = Instant::now();
        let key = read();
        let took = read_started.elapsed();
        timings.lock().unwrap_or_else(PoisonError::into_inner).push((ctx.dev(inode), took));
        key
    };
    let probed = keyed(ctx, probe, &|set, inode| timed_read(inode, &|| head(set, inode)));
    ctx.each(borrowed_whole, ctx.reader.io.threads(), &|inode| {
        timed_read(&inode, &|| ctx.read_into_cache(&inode).then_some(0))
    });
    let wall = started.elapsed();
    let timings = timings.into_inner().unwrap_or_else(PoisonError::into_inner);
    let mut whole_reads = choose(wall, &timings, floor, FIRST_CHUNK);
    for choice in &mut whole_reads {
        let slow = choice.per_read >= SLOW_REQUEST;
        if slow && tuning.direct_reads {
            choice.direct = direct::request_size(choice.dev);
        }
        let rotates = layout::rotational(choice.dev);
        choice.physical_order = physical::chosen(tuning.physical_order, slow, rotates);
    }
    let order = Order::new(tuning, ordered_devices(&whole_reads));

    let mut out = Heads {
        classes: Vec::new(),
        heads: Vec::new(),
        whole: Vec::new(),
        whole_heads: Vec::new(),
        whole_reads,
    };
    // Members still to read, and the index in `out.classes` of the class they belong to.
    let mut untouched: Vec<(usize, Vec<Inode>)> = Vec::new();
    for ((class, heads), timed) in sampled.into_iter().zip(probed).zip(timed) {
        let rest = &class.inodes[timed..];
        let device_of = |inode: &Inode| inode.meta(ctx.tree).id.dev;
        let slow_everywhere =
            class.inodes.iter().all(|i| class.size <= up_to(&out.whole_reads, device_of(i), floor));
        if !large(&class) && slow_everywhere {
            if rest.is_empty() {
                // Every member was timed, so every head is known: only members alike in theirs
                // are read whole (one alone in its head drops out as no group).
                for inodes in same_key_runs(&heads) {
                    out.whole.push(Class { size: class.size, inodes, cached: class.cached });
                }
                out.whole_heads.push((class.size, heads));
            } else {
                // A member whose head could not be read has been reported and drops out.
                let mut inodes: Vec<Inode> = heads.iter().map(|&(_, inode)| inode).collect();
                inodes.extend_from_slice(rest);
                inodes.sort_unstable_by_key(|i| i.first());
                ctx.progress().done(rest.len() as u64);
                out.whole.push(Class { inodes, ..class });
            }
            continue;
        }
        if !rest.is_empty() {
            untouched.push((out.classes.len(), rest.to_vec()));
        }
        out.classes.push(class);
        out.heads.push(heads);
    }
    if !untouched.is_empty() {
        let (indices, sets): (Vec<usize>, Vec<Vec<Inode>>) = untouched.into_iter().unzip();
        let part = |_: usize, _: &Inode| (0, tuning.sample_len());
        let more = keyed_in_order(ctx, &order, sets, &part, head);
        for (index, more) in indices.into_iter().zip(more) {
            let heads = &mut out.heads[index];
            heads.extend(more);
            sort_keyed(heads);
        }
    }
    out
}

/// Up to `count` members of `classes`, one a class, from classes spread over the whole list
/// (classes are sorted by size, and files of one size often lie together): what the timed
/// whole reads take, so that they measure reads from all over the device.
fn spread_members(classes: &[Class], count: usize) -> Vec<Inode> {
    let readable: Vec<&Class> =
        classes.iter().filter(|c| c.size > 0 && !c.inodes.is_empty()).collect();
    if count == 0 || readable.is_empty() {
        return Vec::new();
    }
    let step = (readable.len() / count).max(1);
    readable.iter().step_by(step).take(count).map(|c| c.inodes[0]).collect()
}

/// Choose the switch of every device from timed head reads: `wall` is the time all of `reads`
/// (device and duration of each) took together. Each device is charged the share of `wall`
/// its reads kept threads busy for, so on one device the time per read is `wall` over the
/// number of reads. Files up to `floor` are read whole anyway, never more than `most` are.
pub(crate) fn choose(
    wall: Duration,
    reads: &[(u64, Duration)],
    floor: u64,
    most: u64,
) -> Vec<WholeRead> {
    let mut per_device: HashMap<u64, (usize, Duration)> = HashMap::new();
    for &(dev, took) in reads {
        let entry = per_device.entry(dev).or_default();
        entry.0 += 1;
        entry.1 += took;
    }
    let busy: Duration = per_device.values().map(|&(_, took)| took).sum();
    let mut chosen: Vec<WholeRead> = per_device
        .into_iter()
        .filter(|&(_, (count, _))| count >= PROBE_READS_PER_DEVICE)
        .map(|(dev, (count, took))| {
            let share = if busy.is_zero() { 0.0 } else { took.as_secs_f64() / busy.as_secs_f64() };
            let per_read = wall.mul_f64(share) / count as u32;
            // Break-even for p = 1/2 (module doc).
            let streamed = (2.0 * per_read.as_secs_f64() * SLOW_DEVICE_STREAM_RATE) as u64;
            let up_to = if per_read < SLOW_REQUEST { floor } else { streamed.clamp(floor, most) };
            WholeRead {
                dev,
                per_read,
                up_to: up_to.max(floor),
                direct: None,
                direct_refused: false,
                physical_order: false,
            }
        })
        .collect();
    chosen.sort_unstable_by_key(|choice| choice.dev);
    chosen
}

/// The request size of direct reads on `dev`, if it reads around the page cache.
pub(crate) fn direct_request(chosen: &[WholeRead], dev: u64) -> Option<u64> {
    chosen.iter().find(|choice| choice.dev == dev).and_then(|choice| choice.direct)
}

/// Largest size read whole on `dev`: its measured switch, or `floor` where none was measured.
pub(crate) fn up_to(chosen: &[WholeRead], dev: u64, floor: u64) -> u64 {
    chosen.iter().find(|choice| choice.dev == dev).map_or(floor, |choice| choice.up_to)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;

    fn ms(n: f64) -> Duration {
        Duration::from_secs_f64(n / 1000.0)
    }

    #[test]
    fn a_device_answering_every_8_ms_reads_a_mebibyte_whole() {
        // 16 reads, two at a time, each waiting 16.6 ms: 120 reads per second.
        let reads = vec![(7, ms(16.6)); 16];
        let chosen = choose(ms(133.0), &reads, 64 * KIB, MIB);
        assert_eq!(chosen.len(), 1);
        assert!((chosen[0].per_read.as_secs_f64() - 0.0083).abs() < 0.0001);
        assert_eq!(chosen[0].up_to, MIB, "2.5 MB, capped at the first chunk");
    }

    #[test]
    fn a_fast_device_keeps_the_default() {
        let reads = vec![(7, ms(0.08)); 32];
        let chosen = choose(ms(1.5), &reads, 64 * KIB, MIB);
        assert_eq!(up_to(&chosen, 7, 64 * KIB), 64 * KIB);
    }

    #[test]
    fn a_slow_device_reads_whole_twice_the_size_its_request_time_streams() {
        // 3 ms per read: 450 kB streamed, 900 kB read whole.
        let reads = vec![(7, ms(3.0)); 16];
        let chosen = choose(ms(48.0), &reads, 64 * KIB, MIB);
        assert_eq!(chosen[0].up_to, 900_000);
    }

    #[test]
    fn a_device_answering_within_2_ms_keeps_the_default() {
        let reads = vec![(7, ms(1.9)); 16];
        let chosen = choose(ms(30.0), &reads, 64 * KIB, MIB);
        assert_eq!(up_to(&chosen, 7, 64 * KIB), 64 * KIB);
    }

    #[test]
    fn each_device_is_charged_for_the_time_its_reads_took() {
        // A slow disk and a fast one read side by side; the run's time is the slow disk's.
        let mut reads = vec![(1, ms(8.0)); 8];
        reads.extend(vec![(2, ms(0.05)); 8]);
        let chosen = choose(ms(64.0), &reads, 64 * KIB, MIB);
        assert_eq!(up_to(&chosen, 1, 64 * KIB), MIB);
        assert_eq!(up_to(&chosen, 2, 64 * KIB), 64 * KIB);
    }

    /// A tree of small files alone has nothing to sample, but its device must still be
    /// measured: the measurement also decides whether it reads in the order of the disk.
    #[test]
    fn a_tree_of_small_files_alone_is_measured_too() {
        let dir = tempfile::tempdir().unwrap();
        for class in 0..20u8 {
            for copy in 0..2 {
                let bytes = vec![class; 100 + usize::from(class)];
                std::fs::write(dir.path().join(format!("{class}-{copy}")), bytes).unwrap();
            }
        }
        let roots = [dir.path().to_owned()];
        let progress = dedup_core::Progress::default();
        let run = crate::find_run(&roots, &crate::FindOptions::default(), &(), &progress);
        assert_eq!(run.report.groups.len(), 20);
        assert_eq!(run.whole_reads.len(), 1, "the device was measured: {:?}", run.whole_reads);
    }

    #[test]
    fn the_timed_whole_reads_take_one_member_each_of_classes_spread_over_the_list() {
        let class = |size: u64, first: u32| Class {
            size,
            inodes: vec![Inode::numbered(first), Inode::numbered(first + 1)],
            cached: false,
        };
        let classes: Vec<Class> = (0..10).map(|i| class(100 + i, 2 * i as u32)).collect();
        let firsts = |n| spread_members(&classes, n).iter().map(|i| i.first()).collect::<Vec<_>>();
        assert_eq!(firsts(5), [0, 4, 8, 12, 16]);
        assert_eq!(firsts(20), (0..10).map(|i| 2 * i).collect::<Vec<_>>());
        assert!(firsts(0).is_empty());
        assert!(spread_members(&[class(0, 0)], 4).is_empty(), "empty files are not timed");
    }

    #[test]
    fn a_device_with_too_few_reads_keeps_the_default() {
        let reads = vec![(3, ms(10.0)); PROBE_READS_PER_DEVICE - 1];
        let chosen = choose(ms(70.0), &reads, 64 * KIB, MIB);
        assert!(chosen.is_empty());
        assert_eq!(up_to(&chosen, 3, 64 * KIB), 64 * KIB);
    }
}
