//! End-to-end tests: the real `host` binary on real scripts, results read back with DuckDB.
//! One binary, one module per surface.

#![allow(clippy::expect_used, reason = "test helpers: a failed expectation is a failed test")]

mod cli;
mod cortex_http;
mod cortex_judge;
mod cortex_local;
mod cortex_plugin;
mod cortex_v1;
mod cortex_v11;
mod cortex_v2;
mod embed;
mod errors;
mod fake_cortex;
mod fake_llm;
mod fake_server;
mod guest_abi;
mod guests;
mod killed;
mod llm;
mod locomo;
mod manifest;
mod memory_hook;
mod memory_hook_bench;
mod memory_hook_suite;
mod merge;
mod proc;
mod report_html;
mod resume;
mod rhai_tests;
mod scripts;
mod search;
mod support;
mod verify;
mod verify_checkout;
