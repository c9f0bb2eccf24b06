//! ONNX Runtime's shared library: where it comes from, and loading it once per process.
//!
//! Resolution order: `HOST_ONNXRUNTIME_LIB` (a `libonnxruntime.so` of version 1.31 or later);
//! host's cached copy; otherwise the pinned `onnxruntime` wheel is fetched from PyPI (its sha256
//! checked) and only the library is unpacked from it, about 29 MB. The wheel is the one for
//! CPython 3.11 on manylinux 2.28 x86_64 whatever Python is installed: the library inside does
//! not depend on Python, and one pinned file makes every machine run the same runtime.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ort::environment::Environment;

/// The pinned release; `ort`'s `api-31` needs at least this one.
pub const VERSION: &str = "1.31.0";
const WHEEL_SHA256: &str = "d4092b78fc5bab77ce6522393098cdb2535423045ecdcff15cc0d022162d6b66";
const MEMBER: &str = "onnxruntime/capi/libonnxruntime.so.1.31.0";
const PIP_ARGS: [&str; 9] = [
    "--only-binary=:all:",
    "--platform",
    "manylinux_2_28_x86_64",
    "--python-version",
    "3.11",
    "--implementation",
    "cp",
    "--abi",
    "cp311",
];
/// Overrides where the library is loaded from.
pub const LIBRARY_VARIABLE: &str = "HOST_ONNXRUNTIME_LIB";

/// A library found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Library {
    pub path: PathBuf,
    /// `explicit` (from [`LIBRARY_VARIABLE`]) or `fetched` (host's cached copy of the wheel's).
    pub source: &'static str,
}

/// The folder host keeps the pinned library in.
pub fn cache_folder(cache_root: &Path) -> PathBuf {
    cache_root.join("runtimes").join(format!("onnxruntime-{VERSION}"))
}

/// Finds the library, fetching it as a last resort; `notify` gets a line before a download.
pub fn locate(cache_root: &Path, notify: &(dyn Fn(&str) + Sync)) -> Result<Library, String> {
    if let Some(path) = std::env::var_os(LIBRARY_VARIABLE).filter(|path| !path.is_empty()) {
        let path = PathBuf::from(path);
        return match path.is_file() {
            true => Ok(Library { path, source: "explicit" }),
            false => Err(format!("{LIBRARY_VARIABLE} names `{}`, which is not a file", path.display())),
        };
    }
    let folder = cache_folder(cache_root);
    let path = folder.join(MEMBER);
    if path.is_file() {
        return Ok(Library { path, source: "fetched" });
    }
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return Err(format!("no ONNX Runtime build is pinned for this platform; set {LIBRARY_VARIABLE}"));
    }
    notify(&format!(
        "fetching ONNX Runtime {VERSION} (pip download onnxruntime=={VERSION}, its library only) into {}",
        folder.display()
    ));
    let requirement = format!("onnxruntime=={VERSION}");
    let wheel = super::super::wheel::Wheel {
        requirement: &requirement,
        pip_args: &PIP_ARGS,
        sha256: Some(WHEEL_SHA256),
        members: &[MEMBER],
    };
    super::super::wheel::fetch(&wheel, &folder)?;
    match path.is_file() {
        true => Ok(Library { path, source: "fetched" }),
        false => Err(format!("the onnxruntime wheel held no `{MEMBER}`")),
    }
}

/// The process's ONNX Runtime environment, the library at `path` loaded into it the first time.
/// A process loads one library: later calls get the first one's environment (or its error).
pub fn environment(path: &Path) -> Result<&'static Environment, String> {
    static ENVIRONMENT: OnceLock<Result<Environment, String>> = OnceLock::new();
    ENVIRONMENT
        .get_or_init(|| {
            let builder = ort::init_from(path).map_err(|error| format!("cannot load ONNX Runtime: {error}"))?;
            builder.with_name("host").build().map_err(|error| format!("cannot start ONNX Runtime: {error}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}
