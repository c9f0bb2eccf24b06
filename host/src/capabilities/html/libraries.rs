//! The charting libraries a report page inlines: Vega (the renderer) and Vega-Lite (the grammar
//! the scripts write), pinned, as their own minified browser builds from the npm registry, fetched
//! once into host's cache. Both are BSD-3-Clause; the page carries their licences.

use crate::capabilities::packages::{Packages, PackagesError};

/// The pinned packages and the browser build each page inlines, in load order (Vega-Lite needs
/// Vega).
pub const PINNED: [(&str, &str); 2] =
    [("vega@6.4.0", "build/vega.min.js"), ("vega-lite@6.5.0", "build/vega-lite.min.js")];

/// A library as a page inlines it.
#[derive(Debug, Clone)]
pub struct Library {
    pub name: String,
    pub version: String,
    /// The archive's sha256, as the manifest records it.
    pub sha256: String,
    /// The browser build, safe inside `<script>` (see [`inline_script`]).
    pub script: String,
    pub license: String,
}

#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error(transparent)]
    Package(#[from] PackagesError),
    #[error("cannot read `{path}` of the package `{spec}`")]
    Read {
        spec: String,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Every pinned library, fetched when not cached.
pub fn load(packages: &dyn Packages) -> Result<Vec<Library>, LibraryError> {
    PINNED
        .iter()
        .map(|(spec, build)| {
            let package = packages.npm(spec)?;
            let read = |path: &str| {
                std::fs::read_to_string(package.dir.join(path)).map_err(|source| LibraryError::Read {
                    spec: (*spec).to_owned(),
                    path: path.to_owned(),
                    source,
                })
            };
            Ok(Library {
                script: inline_script(&read(build)?),
                license: read("LICENSE")?,
                name: package.name,
                version: package.version,
                sha256: package.sha256,
            })
        })
        .collect()
}

/// `source` made safe to sit between `<script>` and `</script>`: without its source-map comment
/// (which would point the browser's tools at a file the page does not have), and with `</script`
/// written `<\/script`, the only text that ends the element early. (Not every `</`: in a regular
/// expression like `/</g`, `<\/` would escape the closing slash.)
pub fn inline_script(source: &str) -> String {
    let kept = source.lines().filter(|line| !line.starts_with("//# sourceMappingURL=")).collect::<Vec<_>>().join("\n");
    let mut out = String::with_capacity(kept.len());
    let mut rest = kept.as_str();
    while let Some(at) = rest.to_ascii_lowercase().find("</script") {
        out.push_str(&rest[..at + 1]);
        out.push('\\');
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
    out
}
