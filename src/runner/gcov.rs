//! gcov's account of a coverage build's run, read from its JSON (`gcov --json-format`,
//! gcc 9 and later): per source file, its executable lines, which of them ran, and its
//! functions with the lines they span.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use crate::record::Lines;

/// One source file's lines as gcov marks them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileCoverage {
    /// Every executable line, by number: whether it ran.
    pub lines: BTreeMap<u32, bool>,
    pub functions: Vec<FunctionCoverage>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionCoverage {
    pub name: String,
    /// Its first and last lines in the source.
    pub start: u32,
    pub end: u32,
    pub executed: bool,
}

impl FileCoverage {
    /// Its executable lines, and how many of them ran.
    pub fn lines(&self) -> Lines {
        Lines { executable: self.executable(), executed: self.executed() }
    }

    pub fn executable(&self) -> usize {
        self.lines.len()
    }

    pub fn executed(&self) -> usize {
        self.lines.values().filter(|ran| **ran).count()
    }

    /// The function whose lines hold `line` (the innermost, should two ranges nest).
    pub fn function_at(&self, line: u32) -> Option<&FunctionCoverage> {
        self.functions.iter().filter(|f| (f.start..=f.end).contains(&line)).min_by_key(|f| f.end - f.start)
    }
}

#[derive(Deserialize)]
struct GcovJson {
    files: Vec<GcovFile>,
}

#[derive(Deserialize)]
struct GcovFile {
    file: String,
    #[serde(default)]
    lines: Vec<GcovLine>,
    #[serde(default)]
    functions: Vec<GcovFunction>,
}

#[derive(Deserialize)]
struct GcovLine {
    line_number: u32,
    count: u64,
}

#[derive(Deserialize)]
struct GcovFunction {
    name: String,
    start_line: u32,
    end_line: u32,
    execution_count: u64,
}

/// gcov's JSON documents (one per object, as `--stdout` prints them one after another),
/// by each source file's name without its folder. A line gcov lists twice ran if either did.
pub fn parse(text: &str) -> Result<BTreeMap<String, FileCoverage>> {
    let mut out: BTreeMap<String, FileCoverage> = BTreeMap::new();
    for doc in serde_json::Deserializer::from_str(text).into_iter::<GcovJson>() {
        for f in doc.context("gcov's output is not the JSON of gcov --json-format")?.files {
            let name = Path::new(&f.file).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or(f.file);
            let cov = out.entry(name).or_default();
            for l in f.lines {
                *cov.lines.entry(l.line_number).or_default() |= l.count > 0;
            }
            cov.functions.extend(f.functions.into_iter().map(|g| FunctionCoverage {
                name: g.name,
                start: g.start_line,
                end: g.end_line,
                executed: g.execution_count > 0,
            }));
        }
    }
    Ok(out)
}

/// The gcov of gcc `compiler` (`gcc-12` → `gcov-12`); coverage builds need gcc.
pub fn gcov_of(compiler: &Path) -> Result<String> {
    let name = compiler.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match name.strip_prefix("gcc") {
        Some(rest) if rest.is_empty() || rest.starts_with('-') => {
            let gcov = format!("gcov{rest}");
            Ok(compiler.with_file_name(gcov).to_string_lossy().into_owned())
        }
        _ => bail!("coverage is measured by gcc's gcov, and {} is not gcc (give --cc gcc)", compiler.display()),
    }
}

/// gcov run in `dir` on `objects` (their `.gcno` notes there, with the `.gcda` counts a run
/// left; an object without counts is read as never run), read by [`parse`].
pub fn run(gcov: &str, dir: &Path, objects: &[String]) -> Result<BTreeMap<String, FileCoverage>> {
    let mut cmd = Command::new(gcov);
    cmd.current_dir(dir).args(["--json-format", "--stdout"]).args(objects);
    let out = crate::children::output(&mut cmd).with_context(|| format!("cannot run {gcov} (install gcc)"))?;
    if !out.status.success() {
        bail!("{gcov} failed in {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr).trim_end());
    }
    parse(&String::from_utf8_lossy(&out.stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"{"gcc_version": "12.2.0", "files": [{"file": "src/mdb.c",
 "functions": [{"name": "mdb_put", "start_line": 10, "end_line": 14, "execution_count": 3},
               {"name": "mdb_drop", "start_line": 20, "end_line": 22, "execution_count": 0}],
 "lines": [{"line_number": 11, "count": 3}, {"line_number": 12, "count": 0},
           {"line_number": 12, "count": 2}, {"line_number": 21, "count": 0}]},
 {"file": "/usr/include/stdlib.h", "functions": [], "lines": [{"line_number": 5, "count": 1}]}]}
{"gcc_version": "12.2.0", "files": [{"file": "src/midl.c", "functions": [],
 "lines": [{"line_number": 7, "count": 0}]}]}"#;

    #[test]
    fn gcov_json_gives_each_files_lines_and_functions() {
        let files = parse(TWO).unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["mdb.c", "midl.c", "stdlib.h"]);
        let mdb = &files["mdb.c"];
        assert_eq!(mdb.lines, BTreeMap::from([(11, true), (12, true), (21, false)]));
        assert_eq!((mdb.executable(), mdb.executed()), (3, 2));
        assert_eq!(mdb.function_at(21).map(|f| (f.name.as_str(), f.executed)), Some(("mdb_drop", false)));
        assert_eq!(mdb.function_at(15), None);
        assert_eq!((files["midl.c"].executable(), files["midl.c"].executed()), (1, 0));
    }

    #[test]
    fn other_output_is_refused_and_gcov_follows_gcc() {
        assert!(parse("gcov: cannot open notes file").is_err());
        assert_eq!(gcov_of(Path::new("/usr/bin/gcc")).unwrap(), "/usr/bin/gcov");
        assert_eq!(gcov_of(Path::new("gcc-12")).unwrap(), "gcov-12");
        assert!(gcov_of(Path::new("clang")).unwrap_err().to_string().contains("not gcc"));
    }
}
