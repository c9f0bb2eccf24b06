//! `host model`: where the local embedding model is, fetching it when it is nowhere.

use crate::capabilities::embed::model;
use crate::cli::ModelArgs;

use super::Outcome;

pub fn model(args: &ModelArgs) -> anyhow::Result<Outcome> {
    let located = model::locate(args.model_dir.as_deref(), &crate::project::cache_root(), &|line| eprintln!("{line}"))?;
    eprintln!("{} ({}) from {}", model::MODEL_ID, located.source, located.path.display());
    println!("{}", located.path.display());
    Ok(Outcome::Success)
}
