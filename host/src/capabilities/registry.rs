//! The one list of capabilities. Each capability declares, in its own folder's `mod.rs`, a
//! [`Capability`]: its Rhai namespace, the types its functions return, the guest import it
//! answers if guests may call it, what it records and stops when a run ends, and what it
//! becomes where scripts run without a run (`host check`, `test`, `api`). The host reads
//! everything else from [`ALL`]: the engine's namespaces and types, `host api`, which
//! capabilities a guest manifest may be granted and how a guest's call is dispatched, and the
//! end of a run. Adding a capability is its folder plus one line here (and, where other parts
//! of the host share its state, a field of [`Capabilities`] built in `commands/setup.rs`).

use std::future::Future;
use std::pin::Pin;

use super::{Capabilities, GuestImports};
use crate::run_record::Manifest;

/// What a guest's call to `host:<name>` returns.
pub type GuestReply<'a> = Pin<Box<dyn Future<Output = Result<serde_json::Value, abi::Failure>> + Send + 'a>>;

/// Answers a guest's call: `(imports, guest, op, input)`.
pub type GuestCall = for<'a> fn(&'a GuestImports, &'a str, &'a str, &'a [u8]) -> GuestReply<'a>;

/// What the host needs from one capability.
#[derive(Clone, Copy)]
pub struct Capability {
    /// The Rhai namespace (`name::`), the folder's name, and the guest import module `host:<name>`.
    pub name: &'static str,
    /// The namespace's functions, bound to this run's capabilities.
    pub rhai: fn(&Capabilities) -> rhai::Module,
    /// The types the functions return, registered with the engine (their methods, their names).
    pub types: fn(&mut rhai::Engine),
    /// Where guests may be granted the capability: how their calls are answered.
    pub guest: Option<GuestCall>,
    /// At the end of a run, however the script ended: what it stops, and what it adds to the
    /// manifest.
    pub finish: fn(&Capabilities, &mut Manifest),
    /// Where scripts run without a run of their own (`host check`, `host test`, `host api`):
    /// what the capability becomes so that nothing leaves the process (no network, no
    /// programs, no downloads). Applied in [`ALL`]'s order; `None` keeps the run's.
    pub scratch: Option<fn(&mut Capabilities)>,
}

impl std::fmt::Debug for Capability {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Capability").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Capability {
    /// A capability scripts call through `name::` and that nothing else needs: no types of its
    /// own, no guest import, nothing to do at the end of a run.
    pub const fn script(name: &'static str, rhai: fn(&Capabilities) -> rhai::Module) -> Self {
        Capability { name, rhai, types: |_| {}, guest: None, finish: |_, _| {}, scratch: None }
    }

    /// This capability, becoming `scratch` where scripts run without a run.
    pub const fn with_scratch(self, scratch: fn(&mut Capabilities)) -> Self {
        Capability { scratch: Some(scratch), ..self }
    }
}

/// Every capability, in the order the API reference lists them. The end of a run goes through
/// them in this order too: `proc` stops the run's programs before `workspace` removes their
/// folders.
pub static ALL: [Capability; 20] = [
    super::run::CAPABILITY,
    super::fs::CAPABILITY,
    super::json::CAPABILITY,
    super::results::CAPABILITY,
    super::html::CAPABILITY,
    super::log::CAPABILITY,
    super::progress::CAPABILITY,
    super::llm::CAPABILITY,
    super::http::CAPABILITY,
    super::time::CAPABILITY,
    super::proc::CAPABILITY,
    super::workspace::CAPABILITY,
    super::packages::CAPABILITY,
    super::loopback::CAPABILITY,
    super::embed::CAPABILITY,
    super::search::CAPABILITY,
    super::stats::CAPABILITY,
    super::qa::CAPABILITY,
    super::text::CAPABILITY,
    super::guest::CAPABILITY,
];

/// The capabilities a guest can be granted, in [`ALL`]'s order.
pub fn grantable() -> impl Iterator<Item = &'static str> {
    ALL.iter().filter(|capability| capability.guest.is_some()).map(|capability| capability.name)
}

/// `capabilities` as scratch ones: each capability's [`Capability::scratch`], in order.
pub fn to_scratch(capabilities: &mut Capabilities) {
    for scratch in ALL.iter().filter_map(|capability| capability.scratch) {
        scratch(capabilities);
    }
}

/// The capability named `name`.
pub fn find(name: &str) -> Option<&'static Capability> {
    ALL.iter().find(|capability| capability.name == name)
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
