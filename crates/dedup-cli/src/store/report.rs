//! `stats` and `check`.

use std::collections::HashSet;

use anyhow::Result;
use indicatif::{HumanBytes, HumanCount};

use super::args::{CheckArgs, CommonArgs, StatsArgs};

/// `dedup store stats`: logical size of the snapshots, what is stored, and the ratios between.
pub fn stats(common: &CommonArgs, args: StatsArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let (snapshots, _) = repo.snapshots()?;
    let index = repo.load_index()?.index;
    let packs = repo.backend().list("data").map_err(|e| dedup_store::Error::io("data", e))?;
    let stored: u64 = packs.iter().map(|p| p.size).sum();
    let logical: u64 = snapshots.iter().map(|(_, s)| s.summary.bytes_total).sum();
    let [data, trees] = index.totals();
    let unique_raw = data.2;
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let per_blob = ratio(index.memory_bytes() as u64, index.len() as u64);
    let distinct_packs: HashSet<_> = index.packs().map(|(id, _)| *id).collect();
    if args.json {
        let json = serde_json::json!({
            "snapshots": snapshots.len(), "logical_bytes": logical, "unique_bytes": unique_raw, "stored_bytes": stored,
            "dedup_ratio": ratio(logical, unique_raw), "compression_ratio": ratio(unique_raw, data.1),
            "data_blobs": data.0, "tree_blobs": trees.0, "packs": distinct_packs.len(),
            "index_bytes_per_blob": per_blob,
        });
        println!("{json}");
        return Ok(true);
    }
    println!("snapshots:           {}", snapshots.len());
    println!("logical size:        {} (all snapshots' files)", HumanBytes(logical));
    println!("unique data:         {} in {} chunks", HumanBytes(unique_raw), HumanCount(data.0));
    println!(
        "stored:              {} in {} packs ({} tree blobs)",
        HumanBytes(stored),
        HumanCount(distinct_packs.len() as u64),
        HumanCount(trees.0)
    );
    println!("dedup ratio:         {:.2}", ratio(logical, unique_raw));
    println!("compression ratio:   {:.2}", ratio(unique_raw, data.1));
    println!("index memory:        {per_blob:.1} bytes per blob");
    Ok(true)
}

/// `dedup store check`: findings on stderr, a summary on stdout; `Ok(false)` when damaged.
pub fn check(common: &CommonArgs, args: CheckArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let report = dedup_store::check::check(&repo, args.read_data)?;
    for warning in &report.warnings {
        if !common.quiet {
            eprintln!("dedup: warning: {warning}");
        }
    }
    for error in &report.errors {
        eprintln!("dedup: error: {error}");
    }
    if !common.quiet {
        let read = if args.read_data {
            format!(", {} blobs read and verified", HumanCount(report.blobs_read))
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
