//! The reference Cortex plugin for OpenClaw (`fixtures/openclaw/cortex-plugin/`): its rules, run
//! by its own `check.mjs` under Node with a stand-in for OpenClaw's plugin API and small HTTP
//! servers on loopback.

use std::process::Command;

use crate::support::repo_root;

#[test]
fn the_reference_cortex_plugin_keeps_its_cooldown_its_queue_cap_and_its_block_rules() {
    let output = Command::new("node")
        .arg("fixtures/openclaw/cortex-plugin/check.mjs")
        .current_dir(repo_root())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    let passed: Vec<&str> = stdout.lines().filter(|line| line.starts_with("ok ")).collect();
    assert_eq!(passed.len(), 8, "{stdout}");
    assert!(passed.iter().any(|line| line.contains("queue of at most 100")), "{stdout}");
    assert!(passed.iter().any(|line| line.contains("three refused recalls")), "{stdout}");
}
