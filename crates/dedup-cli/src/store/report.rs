//! `stats` and `check`.

use std::collections::HashSet;

use anyhow::Result;
use dedup_store::blob::BlobKind;
use dedup_store::check::ReadData;
use indicatif::{HumanBytes, HumanCount};

use super::args::{CheckArgs, CommonArgs, StatsArgs};

/// `dedup store stats`: what the snapshots hold, what the repository stores, and the ratios
/// between (the terms are defined in the help of `StoreCommand::Stats`).
pub fn stats(common: &CommonArgs, args: StatsArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let (snapshots, _) = repo.snapshots()?;
    let index = repo.load_index()?.index;
    let mut stored = 0;
    let mut pack_bytes = 0;
    for folder in ["data", "index", "snapshots", "keys", "writers", "deletions"] {
        let size: u64 = repo
            .backend()
            .list(folder)
            .map_err(|e| dedup_store::Error::io(folder, e))?
            .iter()
            .map(|o| o.size)
            .sum();
        stored += size;
        if folder == "data" {
            pack_bytes = size;
        }
    }
    stored +=
        repo.backend().get("config").map_err(|e| dedup_store::Error::io("config", e))?.len() as u64;
    let logical: u64 = snapshots.iter().map(|(_, s)| s.summary.bytes_total).sum();
    let [data, trees] = index.totals();
    let (chunks, stored_data, unique) = data;
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let per_blob = ratio(index.memory_bytes() as u64, index.len() as u64);
    let packs: HashSet<_> = index.packs().collect();
    let data_packs = packs.iter().filter(|(_, kind)| *kind == BlobKind::Data).count() as u64;
    let tree_packs = packs.len() as u64 - data_packs;
    if args.json {
        let json = serde_json::json!({
            "snapshots": snapshots.len(), "logical_bytes": logical, "unique_bytes": unique,
            "stored_data_bytes": stored_data, "pack_bytes": pack_bytes, "stored_bytes": stored,
            "dedup_ratio": ratio(logical, unique), "compression_ratio": ratio(unique, stored_data),
            "total_ratio": ratio(logical, stored),
            "data_blobs": chunks, "tree_blobs": trees.0, "stored_tree_bytes": trees.1,
            "tree_bytes": trees.2, "packs": packs.len(),
            "data_packs": data_packs, "tree_packs": tree_packs, "index_bytes_per_blob": per_blob,
        });
        println!("{json}");
        return Ok(true);
    }
    println!("snapshots:          {}", snapshots.len());
    println!("logical size:       {}   (every snapshot's files, as restored)", HumanBytes(logical));
    println!(
        "unique data:        {}   ({} distinct chunks, uncompressed)",
        HumanBytes(unique),
        HumanCount(chunks)
    );
    println!(
        "stored data:        {}   (those chunks compressed and encrypted)",
        HumanBytes(stored_data)
    );
    println!(
        "stored trees:       {}   ({} tree blobs, {} before compression)",
        HumanBytes(trees.1),
        HumanCount(trees.0),
        HumanBytes(trees.2)
    );
    println!(
        "repository size:    {}   ({} data packs, {} tree packs; index, snapshots, keys)",
        HumanBytes(stored),
        HumanCount(data_packs),
        HumanCount(tree_packs)
    );
    println!("dedup ratio:        {:.2}   (logical size / unique data)", ratio(logical, unique));
    println!("compression ratio:  {:.2}   (unique data / stored data)", ratio(unique, stored_data));
    println!(
        "total ratio:        {:.2}   (logical size / repository size)",
        ratio(logical, stored)
    );
    println!("index memory:       {per_blob:.1} bytes per blob");
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
    let report = dedup_store::check::check(&repo, read)?;
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
