//! The book is true today (benchstat's doc_test.go): every runnable example of README.md
//! and docs/src/ is run, and its output must be the one written under it.
//!
//! A runnable example is a fenced block whose info string is `console runnable`. Each of
//! its lines that starts with `$ ` is a command, and must start with `$ lmdb-regress `;
//! the lines up to the next command (or the block's end) are its standard output. Each
//! command runs under `sh -c` (so `| sed -n 1,12p` and `2>&1` mean what they mean in a
//! shell), in a fresh folder holding a copy of testdata/'s run files, offline, with an
//! empty cache of its own and 80 columns; it must exit 0 and write nothing to stderr that
//! the example does not show. Trailing spaces and trailing blank lines are not compared.
//! A command's folder is its block's: a later command of a block sees what an earlier one
//! wrote. The book also names every `LMDB_REGRESS_*` variable the code reads, every
//! source file in its architecture map, only files that exist, every chapter in
//! SUMMARY.md, and in its commands' synopses only options they take.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The info string that marks an example as runnable.
const MARKER: &str = "console runnable";

/// One command of an example and the output written under it.
#[derive(Debug)]
struct Step {
    command: String,
    expected: String,
}

/// One runnable block: where it is, and its commands in order.
#[derive(Debug)]
struct Example {
    place: String,
    steps: Vec<Step>,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every chapter under docs/src/, in name order.
fn book_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("docs/src"))
        .expect("docs/src/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files.insert(0, root().join("README.md"));
    files
}

/// The runnable examples of one Markdown text; an error for a block that is malformed.
fn examples(name: &str, markdown: &str) -> Result<Vec<Example>, String> {
    let mut found = Vec::new();
    let mut lines = markdown.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let fence = line.trim_start();
        if !(fence.starts_with("```") && fence.trim_start_matches('`').trim() == MARKER) {
            continue;
        }
        let indent = line.len() - fence.len();
        let body: Vec<&str> = lines
            .by_ref()
            .map(|(_, l)| l.get(indent..).unwrap_or(l.trim_start()))
            .take_while(|l| !l.starts_with("```"))
            .collect();
        let place = format!("{name}:{}", n + 1);
        found.push(Example { steps: steps(&place, &body)?, place });
    }
    Ok(found)
}

/// A block's body as commands, each with the lines under it.
fn steps(place: &str, body: &[&str]) -> Result<Vec<Step>, String> {
    let mut steps: Vec<Step> = Vec::new();
    for line in body {
        match line.strip_prefix("$ ") {
            Some(command) if command.starts_with("lmdb-regress ") => {
                steps.push(Step { command: command.to_string(), expected: String::new() })
            }
            Some(other) => return Err(format!("{place}: a runnable example runs lmdb-regress, not {other:?}")),
            None => match steps.last_mut() {
                Some(step) => step.expected.push_str(&format!("{line}\n")),
                None => return Err(format!("{place}: a runnable example starts with `$ lmdb-regress …`")),
            },
        }
    }
    match steps.is_empty() {
        true => Err(format!("{place}: a runnable example with no command")),
        false => Ok(steps),
    }
}

/// Text as compared: no trailing spaces on a line, no trailing blank lines.
fn normal(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    lines.join("\n").trim_end_matches('\n').to_string()
}

/// A fresh folder for one example: a copy of testdata/'s run files (so that no example
/// writes into the repository) and an empty cache.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let data = dir.path().join("testdata");
    std::fs::create_dir_all(&data).unwrap();
    for e in std::fs::read_dir(common::testdata("")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "jsonl") {
            std::fs::copy(e.path(), data.join(e.file_name())).unwrap();
        }
    }
    std::fs::create_dir_all(dir.path().join("cache")).unwrap();
    dir
}

/// `command` as a shell runs it in `dir`, the binary under test first on PATH.
fn shell(dir: &Path, command: &str) -> Command {
    let bin = Path::new(common::BIN).parent().expect("the binary's folder");
    let path = std::env::join_paths(
        std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let mut c = Command::new("sh");
    c.arg("-c").arg(command).current_dir(dir).env("PATH", path);
    c.env("LMDB_REGRESS_CACHE", dir.join("cache")).env("LMDB_REGRESS_OFFLINE", "1");
    c.env("LMDB_REGRESS_ARCHIVE_URLS", "http://127.0.0.1:9/{ref}.tar.gz");
    for name in ["LMDB_GIT", "COLUMNS", "GITHUB_STEP_SUMMARY", "GITHUB_RUN_ID", "LMDB_REGRESS_TAGS"] {
        c.env_remove(name);
    }
    c
}

/// Runs an example's commands in order; the first that differs from the book is the error.
fn check(example: &Example) -> Result<(), String> {
    let dir = workspace();
    for step in &example.steps {
        let o = shell(dir.path(), &step.command).output().map_err(|e| format!("sh: {e}"))?;
        let (out, err) = (common::stdout(&o), common::stderr(&o));
        let place = format!("{}: `$ {}`", example.place, step.command);
        if !o.status.success() || !err.is_empty() {
            return Err(format!("{place} exited {:?}, stderr:\n{err}", o.status.code()));
        }
        if normal(&out) != normal(&step.expected) {
            return Err(format!("{place} is stale; it prints:\n{out}\nthe book shows:\n{}", step.expected));
        }
    }
    Ok(())
}

/// Every runnable example of `texts` (name, Markdown) checked; how many there were, or
/// every failure. A book with no runnable example fails: nothing of it would be tested.
fn check_all(texts: &[(String, String)]) -> Result<usize, String> {
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, text) in texts {
        match examples(name, text) {
            Ok(found) => {
                count += found.len();
                failures.extend(found.iter().filter_map(|e| check(e).err()));
            }
            Err(e) => failures.push(e),
        }
    }
    match (failures.is_empty(), count) {
        (false, _) => Err(failures.join("\n\n")),
        (true, 0) => Err(format!("no runnable example (a ```{MARKER} block) in {} files", texts.len())),
        (true, n) => Ok(n),
    }
}

fn read(path: &Path) -> (String, String) {
    let name = path.strip_prefix(root()).unwrap_or(path).display().to_string();
    (name, std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

#[test]
fn every_runnable_example_of_the_book_prints_what_the_book_shows() {
    let texts: Vec<(String, String)> = book_files().iter().map(|p| read(p)).collect();
    if let Err(e) = check_all(&texts) {
        panic!("{e}");
    }
}

#[test]
fn a_stale_example_fails() {
    let example =
        |shown: &str| format!("```{MARKER}\n$ lmdb-regress workloads --format json | sed -n 3p\n{shown}\n```\n");
    let e = check_all(&[("stale.md".into(), example(r#"    "name": "readKeys","#))]).unwrap_err();
    assert!(e.contains("stale.md:1") && e.contains("is stale"), "{e}");
    check_all(&[("fresh.md".into(), example(r#"    "name": "readKey","#))]).unwrap();
}

#[test]
fn a_book_without_runnable_examples_fails() {
    let plain = "# A chapter\n\n```console\n$ lmdb-regress workloads\n```\n";
    let e = check_all(&[("plain.md".into(), plain.into())]).unwrap_err();
    assert!(e.contains("no runnable example"), "{e}");
}

#[test]
fn a_runnable_example_runs_only_lmdb_regress_and_must_succeed() {
    let other = "```console runnable\n$ rm -rf testdata\n```\n";
    assert!(check_all(&[("o.md".into(), other.into())]).unwrap_err().contains("runs lmdb-regress, not"));
    let failing = "```console runnable\n$ lmdb-regress report testdata/none.jsonl\n```\n";
    assert!(check_all(&[("f.md".into(), failing.into())]).unwrap_err().contains("exited Some(2)"));
}

/// Every `LMDB_REGRESS_*` name in `text`.
fn variables(text: &str) -> std::collections::BTreeSet<String> {
    let mut found = std::collections::BTreeSet::new();
    for (i, _) in text.match_indices("LMDB_REGRESS_") {
        let name: String = text[i..].chars().take_while(|c| c.is_ascii_uppercase() || *c == '_').collect();
        if name.len() > "LMDB_REGRESS_".len() {
            found.insert(name.trim_end_matches('_').to_string());
        }
    }
    found
}

/// Every file under `dir` whose name ends in `.rs`, relative to the repository.
fn rust_files(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p.strip_prefix(root()).unwrap().display().to_string());
        }
    }
}

#[test]
fn the_environment_chapter_names_every_variable_the_code_reads() {
    let chapter = std::fs::read_to_string(root().join("docs/src/environment.md")).unwrap();
    let mut code = Vec::new();
    rust_files(&root().join("src"), &mut code);
    code.push("build.rs".into());
    let mut missing: Vec<String> = Vec::new();
    for file in &code {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        // A unit test's own variables (src/envvars.rs tests its parsers on them) are no setting.
        let code = text.split("\n#[cfg(test)]").next().unwrap_or_default();
        missing.extend(variables(code).into_iter().filter(|v| !chapter.contains(&format!("`{v}`"))));
    }
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "docs/src/environment.md does not name {missing:?}");
}

#[test]
fn the_architecture_map_names_every_source_file_and_the_book_no_missing_one() {
    let map = std::fs::read_to_string(root().join("docs/src/architecture.md")).unwrap();
    let mut code = Vec::new();
    rust_files(&root().join("src"), &mut code);
    let unlisted: Vec<&String> = code.iter().filter(|f| !map.contains(&format!("`{f}`"))).collect();
    assert!(unlisted.is_empty(), "docs/src/architecture.md has no line for {unlisted:?}");
    let mut gone = Vec::new();
    for (name, text) in book_files().iter().map(|p| read(p)) {
        for path in text.split('`').filter(|s| s.starts_with("src/") && s.ends_with(".rs")) {
            if !root().join(path).exists() {
                gone.push(format!("{name}: {path}"));
            }
        }
    }
    assert!(gone.is_empty(), "the book names source files that do not exist: {gone:?}");
}

#[test]
fn summary_lists_every_chapter() {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    let unlisted: Vec<String> = book_files()
        .iter()
        .skip(1)
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| n != "SUMMARY.md" && !summary.contains(&format!("({n})")))
        .collect();
    assert!(unlisted.is_empty(), "docs/src/SUMMARY.md does not list {unlisted:?}");
}

/// The synopsis of each command in docs/src/commands.md: (command, its lines' text).
fn synopses(chapter: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for line in chapter.lines().filter(|l| l.starts_with("    ")) {
        match line.trim_start().strip_prefix("lmdb-regress ") {
            Some(rest) => found.push((rest.split(' ').next().unwrap_or_default().to_string(), rest.to_string())),
            None => {
                if let Some((_, text)) = found.last_mut() {
                    text.push_str(line);
                }
            }
        }
    }
    found
}

#[test]
fn every_option_the_commands_chapter_names_is_one_its_command_takes() {
    let chapter = std::fs::read_to_string(root().join("docs/src/commands.md")).unwrap();
    let found = synopses(&chapter);
    assert!(found.len() >= 14, "docs/src/commands.md: only {} synopses found", found.len());
    let mut unknown = Vec::new();
    for (command, text) in found {
        let help = common::stdout(&common::run_ok(Command::new(common::BIN).args(["help", &command])));
        let flags = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).filter(|w| w.starts_with("--"));
        unknown.extend(
            flags
                .filter(|f| !help.contains(&format!("{f} ")) && !help.contains(&format!("{f}\n")))
                .map(|f| format!("{command} {f}")),
        );
    }
    assert!(unknown.is_empty(), "docs/src/commands.md names options its commands do not take: {unknown:?}");
}
