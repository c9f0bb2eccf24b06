//! Specifications of workspaces, against the real file system and the real `git`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use super::*;
use crate::capabilities::fs::{ReadPolicy, SandboxFiles};

/// `git` as a program, with the fixed dates the [`Git`] contract asks for.
struct CommandGit;

impl Git for CommandGit {
    fn run(&self, cwd: &Path, args: &[&str]) -> Result<(), String> {
        let output = Command::new("git")
            .args(args)
            .current_dir(cwd)
            .env("GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z")
            .env_remove("GIT_DIR")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_WORK_TREE")
            .output()
            .map_err(|error| error.to_string())?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!("{}: {}", output.status, String::from_utf8_lossy(&output.stderr).trim()))
        }
    }
}

/// A project to copy from (`app/` with a script, a symlink, `node_modules/`, a log and an
/// `EVAL.ts`), and the workspaces of a run whose directory is inside it.
struct Fixture {
    dir: tempfile::TempDir,
    workspaces: Workspaces,
}

fn fixture(keep: bool) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("project");
    for (path, text) in [
        ("app/page.ts", "export const page = 1;"),
        ("app/EVAL.ts", "secret eval"),
        ("app/lib/EVAL.ts", "a lib file of the same name"),
        ("app/node_modules/x/index.js", "module"),
        ("app/build.log", "log"),
        ("app/run.sh", "#!/bin/sh\necho hi"),
        ("app/.git/HEAD", "ref: refs/heads/main"),
        ("outside/secret.txt", "secret"),
    ] {
        let path = project.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("folders");
        std::fs::write(&path, text).expect("file");
    }
    std::fs::set_permissions(project.join("app/run.sh"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::os::unix::fs::symlink("page.ts", project.join("app/link.ts")).expect("symlink");
    let files = SandboxFiles::new(ReadPolicy::new(&project).expect("policy"));
    let settings = WorkspaceSettings { run_id: "run-1".into(), run_dir: project.join("runs/run-1"), keep };
    let workspaces = Workspaces::new(settings, Arc::new(files), Arc::new(CommandGit));
    Fixture { dir, workspaces }
}

fn options(name: &str, from: Option<&str>) -> CreateOptions {
    CreateOptions { name: Some(name.into()), from: from.map(Into::into), under: Under::Run, ..CreateOptions::default() }
}

fn git_output(cwd: &Path, args: &[&str]) -> String {
    let output = Command::new("git").args(args).current_dir(cwd).output().expect("git runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

#[test]
fn a_copy_skips_excluded_names_wildcards_and_relative_paths_and_never_git() {
    let fixture = fixture(false);
    let exclude = ["node_modules", "*.log", "app/EVAL.ts"].map(str::to_string).to_vec();
    let workspace = fixture.workspaces.create(CreateOptions { exclude, ..options("eval", Some("app")) }).expect("made");
    // The relative path `app/EVAL.ts` is relative to the folder copied, so it names nothing here.
    let listed = workspace.list("").expect("listed");
    assert_eq!(listed, ["EVAL.ts", "lib/EVAL.ts", "link.ts", "page.ts", "run.sh"]);
    assert!(!workspace.path().join(".git").exists());
    let relative = CreateOptions { exclude: vec!["EVAL.ts".into()], ..options("eval", Some("app")) };
    let workspace = fixture.workspaces.create(relative).expect("made");
    assert!(!workspace.exists("EVAL.ts").expect("checked") && !workspace.exists("lib/EVAL.ts").expect("checked"));
    let path = CreateOptions { exclude: vec!["lib/EVAL.ts".into()], ..options("eval", Some("app")) };
    let workspace = fixture.workspaces.create(path).expect("made");
    assert!(workspace.exists("EVAL.ts").expect("checked") && !workspace.exists("lib/EVAL.ts").expect("checked"));
}

#[test]
fn a_copy_keeps_executable_bits_and_copies_symlinks_as_links() {
    let fixture = fixture(false);
    let workspace = fixture.workspaces.create(options("eval", Some("app"))).expect("made");
    let mode = std::fs::metadata(workspace.path().join("run.sh")).expect("copied").permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "executable bits of {mode:o}");
    let link = workspace.path().join("link.ts");
    assert!(std::fs::symlink_metadata(&link).expect("copied").file_type().is_symlink());
    assert_eq!(std::fs::read_link(&link).expect("a link"), Path::new("page.ts"));
    assert_eq!(workspace.read("link.ts").expect("followed inside"), "export const page = 1;");
}

#[test]
fn a_copy_of_a_folder_holding_the_run_directory_does_not_copy_itself() {
    let fixture = fixture(false);
    let first = fixture.workspaces.create(options("first", Some("app"))).expect("made");
    let whole = fixture.workspaces.create(options("whole", Some("."))).expect("made");
    let listed = whole.list("runs").expect("listed");
    let own = format!("runs/run-1/workspaces/{}/", whole.name());
    assert!(listed.iter().all(|path| !path.starts_with(&own)), "{listed:?}");
    let earlier = format!("runs/run-1/workspaces/{}/page.ts", first.name());
    assert!(listed.contains(&earlier), "an earlier workspace is just files: {listed:?}");
}

#[test]
fn a_diff_finds_added_modified_and_removed_files_but_not_git_or_excluded() {
    let fixture = fixture(false);
    let exclude = vec!["node_modules".into(), "*.log".into()];
    let create = CreateOptions { exclude, git: true, ..options("eval", Some("app")) };
    let workspace = fixture.workspaces.create(create).expect("made");
    assert_eq!(workspace.diff().expect("diffed"), Diff::default());
    workspace.write("page.ts", "changed").expect("written");
    workspace.write("tests/new.test.ts", "new").expect("written");
    workspace.remove("lib").expect("removed");
    workspace.write("node_modules/y/index.js", "installed").expect("written");
    workspace.write("npm-debug.log", "noise").expect("written");
    workspace.commit("agent").expect("committed");
    let diff = workspace.diff().expect("diffed");
    assert_eq!(diff.added, ["tests/new.test.ts"]);
    assert_eq!(diff.modified, ["page.ts"]);
    assert_eq!(diff.removed, ["lib/EVAL.ts"]);
}

#[test]
fn paths_that_climb_out_or_are_absolute_are_refused_naming_the_workspace() {
    let fixture = fixture(false);
    let workspace = fixture.workspaces.create(options("eval", None)).expect("made");
    let name = workspace.name().to_string();
    let error = workspace.read("../x").expect_err("climbs");
    assert_eq!(
        error.to_string(),
        format!("path `../x` leaves workspace `{name}`; hint: give a path relative to the workspace root")
    );
    let secret = fixture.dir.path().join("project/outside/secret.txt");
    let absolute = secret.display().to_string();
    assert!(matches!(workspace.read(&absolute), Err(WorkspaceError::Leaves { .. })));
    assert!(matches!(workspace.write("a/../../x", "x"), Err(WorkspaceError::Leaves { .. })));
    assert!(matches!(workspace.remove(".."), Err(WorkspaceError::Leaves { .. })));
    assert!(matches!(workspace.write("", "x"), Err(WorkspaceError::NoFile { .. })));
    assert!(matches!(workspace.remove("."), Err(WorkspaceError::NoFile { .. })));
    assert!(matches!(workspace.list("../.."), Err(WorkspaceError::Leaves { .. })));
    assert!(secret.exists() && workspace.path().exists());
}

#[test]
fn a_symlink_pointing_outside_lets_no_read_write_or_remove_leave() {
    let fixture = fixture(false);
    let workspace = fixture.workspaces.create(options("eval", None)).expect("made");
    let outside = fixture.dir.path().join("project/outside");
    std::os::unix::fs::symlink(&outside, workspace.path().join("out")).expect("folder link");
    std::os::unix::fs::symlink(outside.join("secret.txt"), workspace.path().join("secret")).expect("file link");
    std::os::unix::fs::symlink(outside.join("new.txt"), workspace.path().join("dangling")).expect("dangling link");
    for result in [
        workspace.read("out/secret.txt").map(drop),
        workspace.read("secret").map(drop),
        workspace.write("out/new.txt", "x"),
        workspace.write("out/deeper/new.txt", "x"),
        workspace.write("secret", "overwritten"),
        workspace.write("dangling", "created outside"),
        workspace.remove("out/secret.txt"),
        workspace.list("out").map(drop),
    ] {
        assert!(matches!(result, Err(WorkspaceError::LinksOut { .. })), "{result:?}");
    }
    assert_eq!(std::fs::read_to_string(outside.join("secret.txt")).expect("untouched"), "secret");
    assert!(!outside.join("new.txt").exists() && !outside.join("deeper").exists());
    workspace.remove("out").expect("the link itself may go");
    assert!(outside.join("secret.txt").exists(), "removing a link leaves its target");
}

#[test]
fn two_workspaces_with_the_same_name_get_different_directories() {
    let fixture = fixture(false);
    let first = fixture.workspaces.create(CreateOptions { name: Some("eval".into()), ..CreateOptions::default() });
    let second = fixture.workspaces.create(CreateOptions { name: Some("eval".into()), ..CreateOptions::default() });
    let (first, second) = (first.expect("made"), second.expect("made"));
    assert_ne!(first.path(), second.path());
    assert_ne!(first.name(), second.name());
    let leaf = first.path().file_name().expect("leaf").to_string_lossy().into_owned();
    assert_eq!(leaf, format!("host-run-1-{}", first.name()));
    assert!(
        first.name().starts_with("eval-")
            && first.path().starts_with(std::env::temp_dir().canonicalize().expect("temp"))
    );
    fixture.workspaces.finish();
    assert!(!first.path().exists() && !second.path().exists(), "temporary workspaces are removed at the end");
}

#[test]
fn finish_removes_workspaces_unless_kept_and_records_each() {
    let fixture = fixture(false);
    let used = fixture.workspaces.create(options("used", Some("app"))).expect("made");
    let cleaned = fixture.workspaces.create(options("cleaned", None)).expect("made");
    cleaned.cleanup().expect("removed");
    let records = fixture.workspaces.finish();
    assert!(!used.path().exists());
    assert_eq!(records.len(), 2);
    assert_eq!((records[0].from.as_deref(), records[0].kept, records[0].files), (Some("app"), false, 7));
    assert_eq!(records[1].name, cleaned.name());
    assert!(matches!(used.read("page.ts"), Err(WorkspaceError::Closed { .. })));

    let kept = fixture_kept_workspace();
    assert!(kept.0.kept && Path::new(&kept.0.path).join("page.ts").exists());
}

fn fixture_kept_workspace() -> (WorkspaceRecord, Fixture) {
    let fixture = fixture(true);
    let workspace = fixture.workspaces.create(options("kept", Some("app"))).expect("made");
    workspace.cleanup().expect("a no-op when kept");
    let records = fixture.workspaces.finish();
    (records.into_iter().next().expect("one record"), fixture)
}

#[test]
fn git_workspaces_start_at_one_commit_whose_hash_depends_only_on_the_files() {
    let fixture = fixture(false);
    let create = || CreateOptions { git: true, ..options("git", Some("app")) };
    let first = fixture.workspaces.create(create()).expect("made");
    let second = fixture.workspaces.create(create()).expect("made");
    assert_eq!(git_output(first.path(), &["rev-list", "--count", "HEAD"]), "1");
    assert_eq!(git_output(first.path(), &["status", "--porcelain"]), "", "every file is committed");
    let head = git_output(first.path(), &["rev-parse", "HEAD"]);
    assert_eq!(head, git_output(second.path(), &["rev-parse", "HEAD"]));
    first.write("page.ts", "changed").expect("written");
    first.commit("attempt 1").expect("committed");
    assert_eq!(git_output(first.path(), &["rev-list", "--count", "HEAD"]), "2");
    assert_eq!(git_output(first.path(), &["log", "-1", "--format=%s %an"]), "attempt 1 host");
}

#[test]
fn commit_without_git_is_an_error_naming_the_workspace() {
    let fixture = fixture(false);
    let workspace = fixture.workspaces.create(options("plain", None)).expect("made");
    let error = workspace.commit("x").expect_err("no repository");
    let expected =
        format!("workspace `{}` is not a git repository; hint: create it with `git: true`", workspace.name());
    assert_eq!(error.to_string(), expected);
}

#[test]
fn invalid_options_are_refused_naming_what_was_wrong() {
    let fixture = fixture(false);
    let create = |options| fixture.workspaces.create(options).map(drop).expect_err("invalid").to_string();
    assert!(create(options("a/b", None)).starts_with("invalid workspace `name` `a/b`"));
    let pattern = CreateOptions { exclude: vec!["../x".into()], ..options("ws", None) };
    assert!(create(pattern).starts_with("invalid `exclude` pattern `../x`"));
    let error = create(options("ws", Some("../../")));
    assert!(error.starts_with("cannot copy `from` folder `../../` into a workspace"), "{error}");
    assert!(matches!(fixture.workspaces.create(options("ws", Some("missing"))), Err(WorkspaceError::From { .. })));
    assert!(create(options("ws", Some("app/page.ts"))).starts_with("`from` `app/page.ts` is not a folder"));
    assert!(fixture.workspaces.finish().is_empty(), "no workspace was made");
}

#[test]
fn files_are_written_read_and_listed_relative_to_the_root() {
    let fixture = fixture(false);
    let workspace = fixture.workspaces.create(CreateOptions { git: true, ..options("rw", None) }).expect("made");
    workspace.write("src/deep/a.rs", "fn main() {}").expect("folders made");
    workspace.write("b.txt", "b").expect("written");
    assert_eq!(workspace.read("./src/deep/a.rs").expect("read"), "fn main() {}");
    assert_eq!(workspace.list(".").expect("listed"), ["b.txt", "src/deep/a.rs"]);
    assert_eq!(workspace.list("src").expect("listed"), ["src/deep/a.rs"]);
    assert!(matches!(workspace.read("missing.txt"), Err(WorkspaceError::NotFound { .. })));
    workspace.cleanup().expect("removed");
    workspace.cleanup().expect("idempotent");
    assert!(!workspace.path().exists());
    let error = workspace.write("b.txt", "again").expect_err("closed");
    assert!(error.to_string().starts_with(&format!("workspace `{}` was cleaned up", workspace.name())));
}

#[test]
fn a_workspace_can_be_copied_from_an_earlier_one_but_not_from_any_other_folder_outside() {
    let fixture = fixture(false);
    let template = fixture.workspaces.create(options("template", Some("app"))).expect("template");
    template.write("prepared.txt", "installed once").expect("write");
    let from = template.path().display().to_string();
    let attempt = fixture.workspaces.create(options("attempt", Some(&from))).expect("copied from the template");
    assert_eq!(attempt.read("prepared.txt").expect("copied"), "installed once");
    let outside = tempfile::tempdir().expect("another folder");
    let error = fixture.workspaces.create(options("x", Some(&outside.path().display().to_string()))).err();
    assert!(matches!(error, Some(WorkspaceError::From { .. })), "{error:?}");
}
