//! `host runs`: the runs under some folders, one line each, with their status as it stands: a
//! run recorded as `running` whose process is gone is `killed`. It reads manifests only and
//! changes nothing.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

use super::Outcome;
use crate::cli::RunsArgs;
use crate::run_record::{ProcessRecord, observed_status};

/// What the listing reads of a manifest.
#[derive(Debug, Deserialize)]
struct Listed {
    run_id: String,
    experiment: String,
    status: String,
    started_at: String,
    process: Option<ProcessRecord>,
}

/// A run directory holds its manifest at its top; nothing below a run is searched.
const MAX_DEPTH: usize = 8;

pub fn runs(args: &RunsArgs) -> anyhow::Result<Outcome> {
    let mut found: Vec<(Listed, PathBuf)> = Vec::new();
    for dir in &args.dirs {
        if !dir.is_dir() {
            anyhow::bail!("`{}` is not a folder; hint: give folders that hold run directories", dir.display());
        }
        collect(dir, &mut found)?;
    }
    found.sort_by(|(a, _), (b, _)| a.started_at.cmp(&b.started_at).then_with(|| a.run_id.cmp(&b.run_id)));
    let rows: Vec<[String; 5]> = found
        .into_iter()
        .map(|(listed, dir)| {
            let status = observed_status(&listed.status, listed.process.as_ref());
            [status, listed.run_id, listed.experiment, listed.started_at, dir.display().to_string()]
        })
        .collect();
    print!("{}", render(&rows));
    Ok(Outcome::Success)
}

/// Every run directory under `root` (a folder with a `manifest.json`), not looking inside runs.
fn collect(root: &Path, found: &mut Vec<(Listed, PathBuf)>) -> anyhow::Result<()> {
    let mut walk = walkdir::WalkDir::new(root).max_depth(MAX_DEPTH).sort_by_file_name().into_iter();
    while let Some(entry) = walk.next() {
        let entry = entry.with_context(|| format!("cannot list `{}`", root.display()))?;
        if !entry.file_type().is_dir() {
            continue;
        }
        let manifest = entry.path().join("manifest.json");
        let Ok(text) = fs_err::read_to_string(&manifest) else { continue };
        walk.skip_current_dir();
        // A folder with a manifest that is not a run's (or a half-written one) is left out.
        if let Ok(listed) = serde_json::from_str::<Listed>(&text) {
            found.push((listed, entry.path().to_path_buf()));
        }
    }
    Ok(())
}

/// Columns padded to their widest cell, under a header.
fn render(rows: &[[String; 5]]) -> String {
    let header = ["STATUS", "RUN", "EXPERIMENT", "STARTED", "DIR"].map(str::to_owned);
    let all: Vec<&[String; 5]> = std::iter::once(&header).chain(rows).collect();
    let widths: Vec<usize> = (0..5).map(|column| all.iter().map(|row| row[column].len()).max().unwrap_or(0)).collect();
    let mut text = String::new();
    for row in all {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text
}
