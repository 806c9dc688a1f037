//! The architecture, held by tests: data flows one way (sources → builds → measurements →
//! statistics → reports; the run record, the measurements' types, below the runner), so a module never imports one of a higher layer, and no two
//! source files import each other, directly or around a circle. Read from the source
//! text: every `crate::`/`super::` path outside comments and test modules is an edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules by layer, lowest first; a module may import its own layer and
/// those below it.
const LAYERS: [(&str, &[&str]); 10] = [
    ("foundation", &["envvars", "files", "terminal", "progress", "environment", "ffi", "abi", "artifact", "children"]),
    ("sources", &["manifest", "tags", "source"]),
    ("builds", &["stage", "compile", "matrix", "layout", "harness", "mtest", "paired_twin"]),
    ("workloads", &["workload"]),
    ("run record", &["record"]),
    ("measurements", &["runner"]),
    ("statistics", &["stats"]),
    ("reports", &["report"]),
    ("regression hunting", &["hunt"]),
    ("commands", &["cmd", "cli"]),
];

/// A source file's module path (`["runner", "stop"]`; the crate root is empty).
type Module = Vec<String>;

fn modules() -> BTreeMap<Module, PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("main.rs") {
                let rel = path.strip_prefix(&src).unwrap().with_extension("");
                let mut m: Module = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
                if m.last().is_some_and(|l| l == "mod" || l == "lib") {
                    m.pop();
                }
                out.insert(m, path);
            }
        }
    }
    out
}

/// The code a file's imports are read from: without comments and without its test module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
    text.lines().filter(|l| !l.trim_start().starts_with("//")).map(|l| format!("{l}\n")).collect()
}

/// Every path a file names from `crate::` or `super::`, braces expanded, as module paths
/// from the crate root.
fn paths(module: &Module, code: &str) -> Vec<Module> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for (i, _) in code.match_indices("::") {
        let start = code[..i].rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |p| p + 1);
        let root = &code[start..i];
        if start > 0 && bytes[start - 1] == b':' {
            continue;
        }
        let base: Option<Module> = match root {
            "crate" => Some(Vec::new()),
            // In `a/b.rs` and in `a/b/mod.rs` (both module a::b), super is `a`.
            "super" => Some(module[..module.len().saturating_sub(1)].to_vec()),
            _ => None,
        };
        if let Some(base) = base {
            expand(&code[i + 2..], base, &mut out);
        }
    }
    out
}

/// Reads `a::b::{c, d::e}` after a root into full paths.
fn expand(rest: &str, prefix: Module, out: &mut Vec<Module>) {
    let (mut path, mut rest) = (prefix, rest);
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            for item in split_group(group) {
                expand(item.trim(), path.clone(), out);
            }
            return;
        }
        let ident: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        match ident.as_str() {
            "super" => drop(path.pop()),
            "" | "self" => {}
            _ => path.push(ident.clone()),
        }
        rest = &rest[ident.len()..];
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => return out.push(path),
        }
    }
}

/// The comma-separated items of a `{...}` group (nested groups kept whole).
fn split_group(group: &str) -> Vec<&str> {
    let (mut depth, mut from, mut items) = (0, 0, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[from..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// What each module re-exports (`pub use schedule::Schedule;` in runner/mod.rs): the
/// re-exported name's path → the path it names, so an import lands where the item lives.
fn reexports(modules: &BTreeMap<Module, PathBuf>) -> BTreeMap<Module, Module> {
    let mut out = BTreeMap::new();
    for (module, path) in modules {
        for line in code(path).lines().filter_map(|l| l.trim_start().strip_prefix("pub use ")) {
            let mut named = Vec::new();
            match ["crate::", "super::", "self::"].iter().any(|r| line.starts_with(r)) {
                true => named = paths(module, line),
                false => expand(line, module.clone(), &mut named),
            }
            for target in named {
                if let Some(item) = target.last() {
                    out.insert([module.as_slice(), &[item.clone()]].concat(), target.clone());
                }
            }
        }
    }
    out
}

/// The file module a path lands in: its longest prefix that is a file, after following
/// re-exports.
fn file_of<'a>(
    path: &Module,
    modules: &'a BTreeMap<Module, PathBuf>,
    re: &BTreeMap<Module, Module>,
) -> Option<&'a Module> {
    let mut path = path.clone();
    for _ in 0..4 {
        match (1..=path.len()).rev().find_map(|n| re.get(&path[..n]).map(|t| [t.as_slice(), &path[n..]].concat())) {
            Some(p) if p != path => path = p,
            _ => break,
        }
    }
    (1..=path.len()).rev().find_map(|n| modules.get_key_value(&path[..n]).map(|(k, _)| k))
}

/// Which file imports which, leaving out a module's own ancestors and descendants (a
/// parent declares and re-exports its children; a child uses its parent's items).
fn imports(modules: &BTreeMap<Module, PathBuf>) -> BTreeMap<Module, BTreeSet<Module>> {
    let re = reexports(modules);
    let mut edges = BTreeMap::new();
    for (module, path) in modules {
        let targets: BTreeSet<Module> = paths(module, &code(path))
            .iter()
            .filter_map(|p| file_of(p, modules, &re))
            .filter(|t| !t.starts_with(module) && !module.starts_with(t))
            .cloned()
            .collect();
        edges.insert(module.clone(), targets);
    }
    edges
}

fn layer(module: &Module) -> Option<usize> {
    let top = module.first()?;
    LAYERS.iter().position(|(_, names)| names.contains(&top.as_str()))
}

fn name(m: &Module) -> String {
    m.join("::")
}

#[test]
fn every_top_level_module_has_a_layer() {
    let missing: Vec<String> = modules().keys().filter(|m| m.len() == 1 && layer(m).is_none()).map(name).collect();
    assert!(missing.is_empty(), "modules in no layer of tests/architecture.rs: {missing:?}");
}

#[test]
fn no_module_imports_a_higher_layer() {
    let mut wrong = Vec::new();
    for (from, targets) in imports(&modules()) {
        for to in targets {
            if let (Some(a), Some(b)) = (layer(&from), layer(&to)) {
                if b > a {
                    wrong.push(format!("{} ({}) imports {} ({})", name(&from), LAYERS[a].0, name(&to), LAYERS[b].0));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "a lower layer imports a higher one:\n{}", wrong.join("\n"));
}

#[test]
fn no_files_import_each_other_around_a_circle() {
    let edges = imports(&modules());
    let circles: Vec<String> = strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.iter().map(name).collect::<Vec<_>>().join(" ↔ "))
        .collect();
    assert!(circles.is_empty(), "import circles:\n{}", circles.join("\n"));
}

/// The reader above resolves what it is meant to: a group, `super`, a nested group.
#[test]
fn the_import_reader_resolves_groups_and_super() {
    let me: Module = vec!["report".into(), "outline".into()];
    let got = paths(&me, "use super::{cells::plural, presets::{svg, csv::X}};\nuse crate::stats::ratio;\n");
    let want: Vec<Module> =
        ["report::cells::plural", "report::presets::svg", "report::presets::csv::X", "stats::ratio"]
            .iter()
            .map(|p| p.split("::").map(str::to_string).collect())
            .collect();
    assert_eq!(got, want);
}

/// Tarjan's strongly connected components.
fn strongly_connected(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, (usize, usize)>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let n = s.index.len();
        s.index.insert(v, (n, n));
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.index[w].1.min(s.index[v].1);
                s.index.get_mut(v).unwrap().1 = low;
            } else if s.on_stack.contains(w) {
                let low = s.index[w].0.min(s.index[v].1);
                s.index.get_mut(v).unwrap().1 = low;
            }
        }
        if s.index[v].0 == s.index[v].1 {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut s = State { edges, index: BTreeMap::new(), stack: Vec::new(), on_stack: BTreeSet::new(), out: Vec::new() };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}
