//! Git sources pinned by revision: `git clone` into a temporary folder inside the cache, the
//! revision checked out (only the folders asked for, when some are), then moved into place in one
//! rename, like npm packages. A commit pins exactly; a tag or branch is resolved to its commit,
//! which is what gets recorded. The cache also remembers, per repository, the revision last asked
//! for (its pin), so that a later call may leave the revision out: `setup --commit <sha>` once,
//! then every run uses that commit.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use super::{GitCheckout, GitSource, PackagesError, move_into_place};

/// Checkouts under `<cache>/git/<name>-<hash of the repository>/<revision>/`: `tree/` (the work
/// tree, with its `.git`) and `commit` (the full commit id, written last); `pinned` beside the
/// revisions holds the revision last asked for.
pub struct GitCache {
    root: PathBuf,
    /// The git client and any leading arguments (`["git"]`).
    command: Vec<String>,
    notify: Box<dyn Fn(&str) + Send + Sync>,
}

impl GitCache {
    pub fn new(root: &Path, command: &[&str], notify: Box<dyn Fn(&str) + Send + Sync>) -> Self {
        GitCache { root: root.join("git"), command: command.iter().map(|part| (*part).to_owned()).collect(), notify }
    }

    /// The checkout of `source`, cloned when not cached. Without a revision, the repository and
    /// revision last given for a repository of the same name (its pin): a suite set up from a
    /// bundle file is the one later runs that name the suite's public address get.
    pub fn checkout(&self, source: &GitSource) -> Result<GitCheckout, PackagesError> {
        let pin = self.root.join("pins").join(format!("{}.json", repository_name(&source.repo)));
        let (repo, rev) = match &source.rev {
            Some(rev) => (absolute_if_local(&source.repo), checked_revision(rev)?),
            None => read_pin(&pin).ok_or_else(|| PackagesError::NotSetUp { repo: source.repo.clone() })?,
        };
        for path in &source.paths {
            let plain = Path::new(path).components().all(|part| matches!(part, std::path::Component::Normal(_)));
            if path.is_empty() || !plain || path.starts_with('-') {
                return Err(PackagesError::BadGitPath { path: path.clone() });
            }
        }
        let repo_dir = self.root.join(repository_folder(&repo));
        let cache = |source| PackagesError::Cache { path: repo_dir.clone(), source };
        let target = repo_dir.join(rev.replace('/', "+"));
        let fetched = !target.join("commit").is_file();
        if fetched {
            fs_err::create_dir_all(&repo_dir).map_err(cache)?;
            self.clone_into(&repo, &source.paths, &rev, &repo_dir, &target)?;
        }
        let commit = fs_err::read_to_string(target.join("commit")).map_err(cache)?.trim().to_owned();
        if source.rev.is_some() {
            fs_err::create_dir_all(pin.parent().unwrap_or(&self.root)).map_err(cache)?;
            let record = serde_json::json!({ "repo": repo, "rev": rev }).to_string();
            crate::atomic::write(&pin, record.as_bytes()).map_err(cache)?;
        }
        Ok(GitCheckout { repo, rev, commit, dir: target.join("tree"), fetched })
    }

    fn clone_into(
        &self,
        repo: &str,
        paths: &[String],
        rev: &str,
        repo_dir: &Path,
        target: &Path,
    ) -> Result<(), PackagesError> {
        let cache = |error| PackagesError::Cache { path: repo_dir.to_path_buf(), source: error };
        let fail = |reason: String| PackagesError::GitFetch { repo: repo.to_owned(), rev: rev.to_owned(), reason };
        let staging = tempfile::Builder::new().prefix(".fetch-").tempdir_in(repo_dir).map_err(cache)?;
        let tree = staging.path().join("tree");
        (self.notify)(&format!("cloning {repo} at {rev} into {}", target.display()));
        let tree_text = tree.display().to_string();
        let mut clone = vec!["clone", "--quiet", "--no-checkout"];
        if !is_commit(rev) {
            // A tag or a branch: only its commit is needed.
            clone.extend(["--depth", "1", "--branch", rev]);
        }
        clone.extend(["--", repo, &tree_text]);
        self.git(None, &clone).map_err(fail)?;
        if !paths.is_empty() {
            let mut sparse = vec!["sparse-checkout", "set", "--"];
            sparse.extend(paths.iter().map(String::as_str));
            self.git(Some(&tree), &sparse).map_err(fail)?;
        }
        self.git(Some(&tree), &["checkout", "--quiet", "--detach", rev, "--"]).map_err(fail)?;
        let commit = self.git(Some(&tree), &["rev-parse", "HEAD"]).map_err(fail)?.trim().to_owned();
        if is_commit(rev) && !commit.starts_with(&rev.to_ascii_lowercase()) {
            return Err(fail(format!("it checked out {commit}, not {rev}")));
        }
        fs_err::write(staging.path().join("commit"), &commit).map_err(cache)?;
        move_into_place(staging, target, |target| target.join("commit").is_file()).map_err(cache)
    }

    /// Runs git (never prompting for credentials) and returns its standard output.
    fn git(&self, cwd: Option<&Path>, args: &[&str]) -> Result<String, String> {
        let (program, leading) = self.command.split_first().ok_or("no git client was given")?;
        let mut command = Command::new(program);
        command.args(leading).args(args).env("GIT_TERMINAL_PROMPT", "0");
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        let output = command.output().map_err(|error| format!("cannot run `{program}`: {error}"))?;
        if !output.status.success() {
            let said = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            return Err(format!("`git {}` failed: {said}", args.first().copied().unwrap_or_default()));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

/// A commit id, full or abbreviated (7 to 40 hex digits).
fn is_commit(rev: &str) -> bool {
    (7..=40).contains(&rev.len()) && rev.chars().all(|c| c.is_ascii_hexdigit())
}

/// `rev` if it is a commit, tag or branch name git takes and a folder name can hold.
fn checked_revision(rev: &str) -> Result<String, PackagesError> {
    let ok = !rev.is_empty()
        && rev.len() <= 200
        && !rev.starts_with('-')
        && !rev.contains("..")
        && rev.chars().all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c));
    if ok { Ok(rev.to_owned()) } else { Err(PackagesError::BadRevision { rev: rev.to_owned() }) }
}

/// A repository on this machine (a clone or a bundle file) by its absolute path, so that its pin
/// holds wherever a later run starts; a URL as it is.
fn absolute_if_local(repo: &str) -> String {
    match std::fs::canonicalize(repo) {
        Ok(path) if !repo.contains("://") => path.display().to_string(),
        _ => repo.to_owned(),
    }
}

/// A repository's name: its address's last part without `.git` or `.bundle`
/// (`https://github.com/vercel/next-evals-oss` and `next-evals-oss.bundle` are both
/// `next-evals-oss`).
fn repository_name(repo: &str) -> String {
    let last = repo.trim_end_matches('/').rsplit(['/', ':']).next().unwrap_or_default();
    let name = last.trim_end_matches(".git").trim_end_matches(".bundle");
    let name: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '-' }).collect();
    if name.is_empty() || name.starts_with('.') { "repository".to_owned() } else { name }
}

/// A folder name for a repository: its name and a hash of the whole address, so two
/// repositories with one name never share a folder.
fn repository_folder(repo: &str) -> String {
    let hash = hex::encode(Sha256::digest(repo.as_bytes()));
    format!("{}-{}", repository_name(repo), &hash[..12])
}

/// The repository and revision a pin file holds.
fn read_pin(path: &Path) -> Option<(String, String)> {
    let pin: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    Some((pin["repo"].as_str()?.to_owned(), pin["rev"].as_str()?.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository with `evals/a/PROMPT.md` and `docs/x.md` in its first commit, tagged `v1.0.0`,
    /// and `docs/x.md` changed in a second commit.
    fn repository(dir: &Path) -> (PathBuf, String, String) {
        let repo = dir.join("suite");
        std::fs::create_dir_all(repo.join("evals/a")).unwrap();
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        std::fs::write(repo.join("evals/a/PROMPT.md"), "do a").unwrap();
        std::fs::write(repo.join("docs/x.md"), "# first").unwrap();
        let git = |args: &[&str]| {
            let output = Command::new("git").args(args).current_dir(&repo).output().unwrap();
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
            String::from_utf8_lossy(&output.stdout).trim().to_owned()
        };
        git(&["init", "--quiet"]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "add", "."]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "one"]);
        git(&["tag", "v1.0.0"]);
        let first = git(&["rev-parse", "HEAD"]);
        std::fs::write(repo.join("docs/x.md"), "# second").unwrap();
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "two"]);
        let second = git(&["rev-parse", "HEAD"]);
        (repo, first, second)
    }

    fn source(repo: &Path, rev: Option<&str>, paths: &[&str]) -> GitSource {
        GitSource {
            repo: repo.display().to_string(),
            rev: rev.map(String::from),
            paths: paths.iter().map(|path| path.to_string()).collect(),
        }
    }

    #[test]
    fn a_commit_is_cloned_once_pinned_and_then_read_from_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, first, _) = repository(dir.path());
        let cache = GitCache::new(&dir.path().join("cache"), &["git"], Box::new(|_| {}));
        let checkout = cache.checkout(&source(&repo, Some(&first[..10]), &[])).unwrap();
        assert!(checkout.fetched);
        assert_eq!(checkout.commit, first);
        assert_eq!(std::fs::read_to_string(checkout.dir.join("docs/x.md")).unwrap(), "# first");
        let again = cache.checkout(&source(&repo, None, &[])).unwrap();
        assert!(!again.fetched, "the pinned revision comes from the cache");
        assert_eq!((again.commit, again.dir), (first.clone(), checkout.dir.clone()));
        // Another address with the repository's name gets the pinned repository.
        let public = GitSource { repo: "https://example.invalid/team/suite.git".into(), rev: None, paths: vec![] };
        let by_name = cache.checkout(&public).unwrap();
        assert_eq!((by_name.repo, by_name.commit), (repo.display().to_string(), first));
    }

    #[test]
    fn a_tag_resolves_to_its_commit_and_paths_check_out_only_those_folders() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, first, _) = repository(dir.path());
        let cache = GitCache::new(&dir.path().join("cache"), &["git"], Box::new(|_| {}));
        let repo_url = format!("file://{}", repo.display());
        let source = GitSource { repo: repo_url, rev: Some("v1.0.0".into()), paths: vec!["docs".into()] };
        let checkout = cache.checkout(&source).unwrap();
        assert_eq!(checkout.commit, first);
        assert!(checkout.dir.join("docs/x.md").is_file());
        assert!(!checkout.dir.join("evals").exists(), "only the folders asked for");
    }

    #[test]
    fn a_missing_pin_an_unknown_commit_and_a_bad_revision_are_errors_that_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, _, _) = repository(dir.path());
        let cache = GitCache::new(&dir.path().join("cache"), &["git"], Box::new(|_| {}));
        assert!(matches!(cache.checkout(&source(&repo, None, &[])), Err(PackagesError::NotSetUp { .. })));
        let unknown = cache.checkout(&source(&repo, Some("0123456789abcdef"), &[])).unwrap_err();
        assert!(matches!(unknown, PackagesError::GitFetch { .. }), "{unknown:?}");
        assert!(
            !dir.path().join("cache/git").read_dir().unwrap().flatten().any(|entry| {
                entry
                    .path()
                    .read_dir()
                    .unwrap()
                    .flatten()
                    .any(|inner| inner.file_name().to_string_lossy().starts_with(".fetch-"))
            }),
            "a failed clone leaves nothing behind"
        );
        for bad in ["--upload-pack=x", "a..b", "a b", ""] {
            assert!(
                matches!(cache.checkout(&source(&repo, Some(bad), &[])), Err(PackagesError::BadRevision { .. })),
                "{bad}"
            );
        }
        let climbing = cache.checkout(&source(&repo, Some("v1.0.0"), &["../x"]));
        assert!(matches!(climbing, Err(PackagesError::BadGitPath { .. })));
    }

    #[test]
    fn two_repositories_with_one_name_never_share_a_folder() {
        assert_ne!(repository_folder("https://a.example/x/suite.git"), repository_folder("/tmp/suite.bundle"));
        assert!(repository_folder("../shared/datasets/next-evals-oss.bundle").starts_with("next-evals-oss-"));
    }
}
