//! The plan: for every group of a report, which file is kept and which steps act on the others.
//! Building it stats every path once more (a report may be old): a path that is no longer the
//! file the report describes is skipped now, with its reason, before anything is touched.

use std::collections::BTreeSet;
use std::path::Path;

use dedup_core::FileId;
use dedup_fs::{find_strays, is_temp_name};
use dedup_report::Report;

use crate::action::Action;
use crate::anchor::holds_our_entries;
use crate::dir_plan::plan_dirs;
use crate::keep::Candidate;
use crate::place::Places;
use crate::skip::SkipReason;
use crate::steps::{current, destination, Plan, PlanError, PlanFile, PlanOptions, Skipped, Step};

/// Make the plan for `report`.
pub fn build_plan(
    report: &Report,
    places: &Places,
    options: &PlanOptions,
) -> Result<Plan, PlanError> {
    if let Action::Move { to } = &options.action {
        if !to.is_absolute() {
            return Err(PlanError::RelativeDestination(to.clone()));
        }
    }
    let mut plan = Plan {
        action: options.action.clone(),
        roots: places.roots().to_vec(),
        any_owner: options.any_owner,
        steps: Vec::new(),
        skipped: Vec::new(),
        strays: Vec::new(),
        groups_left_alone: 0,
        dir_removals: Vec::new(),
    };
    let mut dirs = BTreeSet::new();
    for (index, group) in report.groups.iter().enumerate() {
        let mut files = Vec::with_capacity(group.files.len());
        for file in &group.files {
            if let Some(parent) = file.path.parent() {
                dirs.insert(parent.to_path_buf());
            }
            if file.path.file_name().is_some_and(is_temp_name) {
                continue;
            }
            match current(file, Some(group.size), places.roots()) {
                Ok(meta) => files.push(PlanFile {
                    path: file.path.clone(),
                    meta,
                    root: places.root_of(&file.path),
                    reference: places.is_reference(&file.path),
                }),
                Err(reason) => plan.skipped.push(Skipped { path: file.path.clone(), reason }),
            }
        }
        plan_group(index, files, places, options, &mut plan);
    }
    if options.dirs {
        dirs.extend(plan_dirs(report, places, options, &mut plan));
    }
    // Temporary names are looked for only where this tool may act: a report naming other
    // directories must not make it remove anything there.
    plan.strays = find_strays(
        dirs.iter()
            .map(|d| if d.as_os_str().is_empty() { Path::new(".") } else { d.as_path() })
            .filter(|d| holds_our_entries(d, places.roots())),
    );
    Ok(plan)
}

fn plan_group(
    index: usize,
    files: Vec<PlanFile>,
    places: &Places,
    options: &PlanOptions,
    plan: &mut Plan,
) {
    let inodes: BTreeSet<FileId> = files.iter().map(|f| f.meta.id).collect();
    if inodes.len() < 2 {
        return;
    }
    let any_reference = files.iter().any(|f| f.reference);
    if files.iter().all(|f| f.reference) {
        plan.groups_left_alone += 1;
        return;
    }
    // The kept file comes from the reference directories whenever the group has one there.
    let eligible: Vec<&PlanFile> = files.iter().filter(|f| f.reference || !any_reference).collect();
    let candidates: Vec<Candidate<'_>> = eligible
        .iter()
        .map(|f| Candidate {
            path: &f.path,
            mtime_ns: f.meta.mtime_ns,
            root: f.root,
            depth: places.depth(&f.path),
        })
        .collect();
    let Some(kept) = options.keep.choose(&candidates).map(|i| eligible[i].clone()) else {
        return;
    };
    let link_text = match &options.action {
        Action::Symlink => match places.resolve(&kept.path) {
            Some(text) => Some(text),
            None => {
                plan.skipped
                    .push(Skipped { path: kept.path.clone(), reason: SkipReason::Vanished });
                return;
            }
        },
        _ => None,
    };
    let before = plan.steps.len();
    for target in files {
        if target.reference || target.meta.id == kept.meta.id {
            continue;
        }
        if options.isolate && target.root == kept.root {
            continue;
        }
        let needs_same_fs = matches!(options.action, Action::Link | Action::Reflink);
        if needs_same_fs && target.meta.id.dev != kept.meta.id.dev {
            plan.skipped.push(Skipped { path: target.path, reason: SkipReason::OtherFileSystem });
            continue;
        }
        let dest = match &options.action {
            Action::Move { to } => match destination(to, &target.path, places) {
                Some(dest) => Some(dest),
                None => {
                    let reason = SkipReason::Vanished;
                    plan.skipped.push(Skipped { path: target.path, reason });
                    continue;
                }
            },
            _ => None,
        };
        plan.steps.push(Step {
            group: index,
            kept: kept.clone(),
            target,
            dest,
            link_text: link_text.clone(),
        });
    }
    if plan.steps.len() == before && options.isolate {
        plan.groups_left_alone += 1;
    }
}
