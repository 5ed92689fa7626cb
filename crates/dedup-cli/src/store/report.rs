//! `stats` and `check`.

use anyhow::Result;
use dedup_store::commands::ReadData;
use indicatif::{HumanBytes, HumanCount};

use super::args::{CheckArgs, CommonArgs, StatsArgs};

/// `dedup store stats`: what the snapshots hold, what the repository stores, and the ratios
/// between (the terms are defined in the help of `StoreCommand::Stats`).
pub fn stats(common: &CommonArgs, args: StatsArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let s = dedup_store::commands::stats(&repo)?;
    if args.json {
        let json = serde_json::json!({
            "snapshots": s.snapshots, "logical_bytes": s.logical_bytes,
            "unique_bytes": s.unique_bytes, "stored_data_bytes": s.stored_data_bytes,
            "pack_bytes": s.pack_bytes, "stored_bytes": s.stored_bytes,
            "dedup_ratio": s.dedup_ratio(), "compression_ratio": s.compression_ratio(),
            "total_ratio": s.total_ratio(), "data_blobs": s.data_blobs,
            "tree_blobs": s.tree_blobs, "stored_tree_bytes": s.stored_tree_bytes,
            "tree_bytes": s.tree_bytes, "packs": s.packs, "data_packs": s.data_packs,
            "tree_packs": s.tree_packs, "index_bytes_per_blob": s.index_bytes_per_blob,
        });
        println!("{json}");
        return Ok(true);
    }
    println!("snapshots:          {}", s.snapshots);
    println!(
        "logical size:       {}   (every snapshot's files, as restored)",
        HumanBytes(s.logical_bytes)
    );
    println!(
        "unique data:        {}   ({} distinct chunks, uncompressed)",
        HumanBytes(s.unique_bytes),
        HumanCount(s.data_blobs)
    );
    println!(
        "stored data:        {}   (those chunks compressed and encrypted)",
        HumanBytes(s.stored_data_bytes)
    );
    println!(
        "stored trees:       {}   ({} tree blobs, {} before compression)",
        HumanBytes(s.stored_tree_bytes),
        HumanCount(s.tree_blobs),
        HumanBytes(s.tree_bytes)
    );
    println!(
        "repository size:    {}   ({} data packs, {} tree packs; index, snapshots, keys)",
        HumanBytes(s.stored_bytes),
        HumanCount(s.data_packs),
        HumanCount(s.tree_packs)
    );
    println!("dedup ratio:        {:.2}   (logical size / unique data)", s.dedup_ratio());
    println!("compression ratio:  {:.2}   (unique data / stored data)", s.compression_ratio());
    println!("total ratio:        {:.2}   (logical size / repository size)", s.total_ratio());
    println!("index memory:       {:.1} bytes per blob", s.index_bytes_per_blob);
    Ok(true)
}

/// `--read-data-subset`: `N%` or `K/N`.
fn parse_subset(spec: &str) -> Result<ReadData> {
    let bad = || anyhow::anyhow!("--read-data-subset {spec}: give N% (0-100) or K/N (1 <= K <= N)");
    if let Some(percent) = spec.strip_suffix('%') {
        let p: f64 = percent.parse().map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&p) {
            return Err(bad());
        }
        return Ok(ReadData::Fraction(p / 100.0));
    }
    let (k, n) = spec.split_once('/').ok_or_else(bad)?;
    let (k, n): (u64, u64) = (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if k == 0 || k > n {
        return Err(bad());
    }
    Ok(ReadData::Slice { k, n })
}

/// `dedup store check`: findings on stderr, a summary on stdout; `Ok(false)` when damaged.
pub fn check(common: &CommonArgs, args: CheckArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let read = match &args.read_data_subset {
        Some(spec) => parse_subset(spec)?,
        None => ReadData::from(args.read_data),
    };
    let report = dedup_store::commands::check(&repo, read)?;
    for warning in &report.warnings {
        if !common.quiet {
            eprintln!("dedup: warning: {warning}");
        }
    }
    for error in &report.errors {
        eprintln!("dedup: error: {error}");
    }
    if !common.quiet {
        let read = if read != ReadData::None {
            format!(
                ", {} packs and {} blobs read and verified",
                HumanCount(report.packs_read),
                HumanCount(report.blobs_read)
            )
        } else {
            String::new()
        };
        println!(
            "checked {} snapshots, {} trees, {} packs{read}: {}",
            report.snapshots,
            report.trees,
            report.packs,
            if report.errors.is_empty() {
                "no errors".to_string()
            } else {
                format!("{} errors", report.errors.len())
            }
        );
    }
    Ok(report.errors.is_empty())
}
