//! What a guest module for `host` depends on: [`export!`] turns plain Rust functions into the
//! guest's exports, and [`log`], [`embed`] and [`llm`] call the host's capabilities safely.
//!
//! A guest is a `cdylib` built for `wasm32-wasip1`. Each exported function takes one serde
//! input and returns `Result<Output, Failure>`; the host passes JSON in and gets JSON out, and a
//! `Failure` reaches the caller as a value (a catchable script error), not a crash.
//!
//! Bulk text is the exception to JSON: when the input is an object with a string `content`
//! field (a source file, a document), the host writes that text into the guest's memory as
//! raw UTF-8, and the SDK checks it is UTF-8 once and hands it to the input type as the field
//! `content`. Declare the field as `Cow<'a, str>` with `#[serde(borrow)]`, as
//! [`imports::Source`] does, and the function reads the text where the host wrote it, with no
//! copy; a `String` field works too, at the cost of one copy. (A `&'a str` field borrows as
//! well, but refuses the same text sent as a JSON string with escapes.) Nothing else changes for
//! the guest: the same input sent as plain JSON decodes to the same value.
//!
//! A guest never starts a program or makes a directory: the host's `proc` and `workspace`
//! capabilities are for scripts only, and no grant gives them to a guest.
//!
//! # A complete guest
//!
//! `Cargo.toml`:
//!
//! ```toml
//! [package]
//! name = "lang-kotlin"
//! version = "0.1.0"
//! edition = "2024"
//!
//! [lib]
//! crate-type = ["cdylib", "rlib"]
//!
//! [dependencies]
//! guest-sdk = { path = "../../guest-sdk" }
//! ```
//!
//! `src/lib.rs`:
//!
//! ```
//! use guest_sdk::Failure;
//! use guest_sdk::imports::{ImportList, Imports, Source};
//!
//! guest_sdk::export!(extract_imports);
//!
//! /// `source.content` borrows the file's text from the host's raw transfer.
//! pub fn extract_imports(source: Source<'_>) -> Result<Imports, Failure> {
//!     let mut imports = ImportList::default();
//!     for line in source.content.lines() {
//!         if let Some(path) = line.trim().strip_prefix("import ") {
//!             // `import a.b.C` names `C` in module `a.b`.
//!             match path.trim().rsplit_once('.') {
//!                 Some((module, name)) => imports.push_named(module, Some(name)),
//!                 None => imports.push(path.trim()),
//!             }
//!         }
//!     }
//!     guest_sdk::log::debug(format!("{}: {} imports", source.path, imports.len()));
//!     Ok(Imports { language: "kotlin".into(), imports: imports.into_vec() })
//! }
//!
//! let source = Source { path: "Main.kt".into(), content: "import a.b.C\n".into() };
//! assert_eq!(extract_imports(source).unwrap().imports, ["a.b.C"]);
//! ```
//!
//! Built with `cargo build --release --target wasm32-wasip1`, it answers
//! `host guest call lang-kotlin extract_imports '{"path": "Main.kt", "content": "import a.b.C"}'`.
//! Off wasm the same crate compiles natively, so its logic can be unit tested and benchmarked
//! like any Rust code; there the host calls fail with [`FailureKind::Unsupported`] and logging
//! goes to stderr.
//!
//! All of the SDK's `unsafe` code is in one file, `ffi.rs`.

mod ffi;
mod input;
#[cfg(not(target_family = "wasm"))]
pub mod testing;

pub use abi::imports;
pub use abi::markdown;
pub use abi::{ABI_VERSION, Chat, ChatMessage, Failure, FailureKind};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Exports functions `fn(Input) -> Result<Output, E>` (with `Input: Deserialize`, which may
/// borrow from the call's input, `Output: Serialize`, `E: Into<Failure>`) under their own
/// names, together with the ABI exports the host needs. Invoke it once per crate, listing every
/// function. On targets other than wasm it expands to nothing, so the crate still builds
/// natively.
#[macro_export]
macro_rules! export {
    ($($function:ident),+ $(,)?) => {
        #[cfg(target_family = "wasm")]
        #[doc(hidden)]
        #[allow(unsafe_code, non_snake_case)]
        mod __guest_exports {
            #[unsafe(export_name = "guest_abi_version")]
            extern "C" fn abi_version() -> u32 {
                $crate::ABI_VERSION
            }

            #[unsafe(export_name = "guest_alloc")]
            extern "C" fn alloc(len: u32) -> u32 {
                $crate::__private::alloc(len)
            }

            #[unsafe(export_name = "guest_free")]
            extern "C" fn free(ptr: u32, len: u32) {
                $crate::__private::free(ptr, len)
            }

            $(
                mod $function {
                    #[unsafe(export_name = concat!("guest:", stringify!($function)))]
                    extern "C" fn call(ptr: u32, json_len: u32, raw_len: i32) -> u64 {
                        // Held here so that the function's input may borrow from it.
                        let input = $crate::__private::take_input(ptr, json_len, raw_len);
                        $crate::__private::call(&input, super::super::$function)
                    }
                }
            )+
        }
    };
}

#[doc(hidden)]
pub mod __private {
    pub use crate::ffi::{alloc, call, free, take_input};
}

/// Calls operation `op` of a host capability with a serde input.
fn call_host<I: Serialize, O: DeserializeOwned>(import: ffi::Import, op: &str, input: &I) -> Result<O, Failure> {
    let input = serde_json::to_vec(input).map_err(|error| Failure::invalid_input(error.to_string()))?;
    let reply = ffi::call_host(import, op, &input)?;
    let reply: abi::Reply<O> = serde_json::from_slice(&reply)
        .map_err(|error| Failure::failed(format!("the host's reply to `{op}` did not decode: {error}")))?;
    reply.into()
}

/// `host:log`: lines in the run's log, tagged with the guest's name.
pub mod log {
    use abi::{LogLevel, LogRecord};

    fn write(level: LogLevel, message: String) {
        let record = LogRecord { level, message };
        // Logging is best effort: a guest should not fail because a line could not be written.
        let _: Result<(), _> = crate::call_host(crate::ffi::LOG, "write", &record);
    }

    pub fn debug(message: impl Into<String>) {
        write(LogLevel::Debug, message.into());
    }

    pub fn info(message: impl Into<String>) {
        write(LogLevel::Info, message.into());
    }

    pub fn warn(message: impl Into<String>) {
        write(LogLevel::Warn, message.into());
    }

    pub fn error(message: impl Into<String>) {
        write(LogLevel::Error, message.into());
    }
}

/// `host:embed`: the host's embedding model.
pub mod embed {
    use crate::Failure;

    /// One L2-normalised vector per text, in order.
    pub fn texts(texts: &[String]) -> Result<Vec<Vec<f32>>, Failure> {
        let request = abi::EmbedTexts { texts: texts.to_vec() };
        let embeddings: abi::EmbedVectors = crate::call_host(crate::ffi::EMBED, "texts", &request)?;
        Ok(embeddings.vectors)
    }
}

/// `host:llm`: chat completions through the host's LLM stack (cache, budget, retries, metering).
pub mod llm {
    use crate::{Chat, Failure};

    /// The completion's text.
    pub fn chat(request: &Chat) -> Result<String, Failure> {
        let reply: abi::ChatReply = crate::call_host(crate::ffi::LLM, "chat", request)?;
        Ok(reply.text)
    }
}
