//! Reading callgrind's profiles (its "callgrind out" format) into per-function costs: each
//! function's self cost and inclusive cost, as vectors over the profile's `events:` line,
//! its per-line self costs, and the caller → callee edges with their inclusive costs.
//!
//! Functions are keyed by name with compiler clone suffixes removed (`.isra.0`, `.part.1`,
//! `.constprop.0`, `.cold`, and combinations), so a clone's cost is summed under its
//! function; files are keyed by file name, so the same file built in two folders is one.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// One profile (one dumped part): its events and, per function, what it cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    /// The events of the `events:` line, in its order (`Ir`, or `Ir Dr Dw I1mr …`).
    pub events: Vec<String>,
    /// What dumped the part (`desc: Trigger: `): a timed function's return, or the
    /// worker's request naming its workload.
    pub trigger: Option<super::counter::Trigger>,
    /// The sum of every cost line: the `totals:` (or `summary:`) line's figures.
    pub totals: Vec<u64>,
    pub functions: BTreeMap<String, FunctionCost>,
    /// (caller, callee) → the calls' inclusive cost; self-calls (after normalising names) are left out.
    pub calls: BTreeMap<(String, String), Vec<u64>>,
}

/// What one function (its clones summed) cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FunctionCost {
    /// The file name (no folder) of its source, as `fl=` gives it.
    pub file: Option<String>,
    pub self_cost: Vec<u64>,
    /// Self cost plus the inclusive cost of its calls to other functions.
    pub inclusive: Vec<u64>,
    /// Self cost by source line: (file name, line) → cost. Inlined code counts in the
    /// file it comes from (`fi=`/`fe=`).
    pub lines: BTreeMap<(String, u32), Vec<u64>>,
}

impl Profile {
    /// The index of event `name` (`Ir`) in this profile's vectors.
    pub fn event(&self, name: &str) -> Option<usize> {
        self.events.iter().position(|e| e == name)
    }
}

/// A function's name without the suffixes compilers give its clones: `mdb_page_get.isra.0`,
/// `mdb_node_add.part.0`, `mdb_cursor_set.constprop.0.isra.0`, `mdb_txn_commit.cold` are
/// `mdb_page_get`, `mdb_node_add`, `mdb_cursor_set`, `mdb_txn_commit`.
pub fn normalise_function(name: &str) -> &str {
    const CLONES: [&str; 8] = ["isra", "part", "constprop", "cold", "lto_priv", "llvm", "clone", "localalias"];
    let mut rest = name;
    loop {
        let Some((head, last)) = rest.rsplit_once('.') else { return rest };
        if head.is_empty() {
            return rest;
        }
        let numbered = !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit());
        let stripped = match numbered {
            // `.isra.0`: the number and its clone's name.
            true => match head.rsplit_once('.') {
                Some((before, kind)) if !before.is_empty() && CLONES.contains(&kind) => before,
                _ => return rest,
            },
            false if CLONES.contains(&last) => head,
            false => return rest,
        };
        rest = stripped;
    }
}

/// A source file's name without its folder: builds of two folders name the same file.
pub fn normalise_file(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Reads a profile file.
pub fn read(path: &Path) -> Result<Profile> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    parse(&text).with_context(|| format!("{} is not a callgrind profile callgrind's format describes", path.display()))
}

/// The three name spaces of name compression: files, functions, objects.
#[derive(Default)]
struct Names {
    files: BTreeMap<u64, String>,
    functions: BTreeMap<u64, String>,
    objects: BTreeMap<u64, String>,
}

/// `(id) name` defines id as name, `(id)` refers back to it; a name without `(` is itself.
fn compressed(table: &mut BTreeMap<u64, String>, value: &str, n: usize) -> Result<String> {
    let value = value.trim();
    let Some(rest) = value.strip_prefix('(') else { return Ok(value.to_string()) };
    let (id, name) = rest.split_once(')').with_context(|| format!("line {n}: unclosed name id in {value:?}"))?;
    let id: u64 = id.trim().parse().with_context(|| format!("line {n}: name id {id:?} is not a number"))?;
    let name = name.trim();
    if name.is_empty() {
        table.get(&id).cloned().with_context(|| format!("line {n}: name id ({id}) is used before it is defined"))
    } else {
        table.insert(id, name.to_string());
        Ok(name.to_string())
    }
}

/// What the next cost line is: a function's own cost, a call's inclusive cost, or a jump's (no cost).
enum Next {
    Own,
    Call { callee: String },
    Jump,
}

/// Parses callgrind's out format: the header (`events:`, `positions:`, `totals:`), the
/// position specifications (`fl=`, `fi=`, `fe=`, `fn=`, `ob=` and the call's `cob=`, `cfi=`/`cfl=`,
/// `cfn=`, `calls=`, each with name compression), and the cost lines with subposition
/// compression (`+N`, `-N`, `*`).
pub fn parse(text: &str) -> Result<Profile> {
    let mut p = Profile::default();
    let mut names = Names::default();
    let mut positions = 1usize;
    let mut line_index: Option<usize> = Some(0);
    let mut last = vec![0i64; 1];
    let mut fn_file: Option<String> = None;
    let mut cur_file: Option<String> = None;
    let mut function: Option<String> = None;
    let mut callee: Option<String> = None;
    let mut next = Next::Own;
    let mut totals: Option<Vec<u64>> = None;
    let mut sum: Vec<u64> = Vec::new();
    // Per raw function: its self cost and lines; the calls after normalising both ends.
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let l = raw.trim_end();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let first = l.as_bytes()[0];
        if first.is_ascii_digit() || first == b'+' || first == b'-' || first == b'*' {
            let mut tokens = l.split_whitespace();
            let mut line_no = None;
            for (k, previous) in last.iter_mut().enumerate() {
                let t = tokens.next().with_context(|| format!("line {n}: {positions} positions expected: {l:?}"))?;
                let v = match t.as_bytes()[0] {
                    b'*' => *previous,
                    b'+' => *previous + number(&t[1..], n)? as i64,
                    b'-' => *previous - number(&t[1..], n)? as i64,
                    _ => number(t, n)? as i64,
                };
                *previous = v;
                if Some(k) == line_index {
                    line_no = Some(v.max(0) as u32);
                }
            }
            let costs: Vec<u64> = tokens.map(|t| number(t, n)).collect::<Result<_>>()?;
            if costs.len() > p.events.len() {
                bail!("line {n}: {} costs for {} events: {l:?}", costs.len(), p.events.len());
            }
            match std::mem::replace(&mut next, Next::Own) {
                Next::Jump => {}
                Next::Call { callee } => {
                    let caller = function.clone().with_context(|| format!("line {n}: a call outside any function"))?;
                    let caller = normalise_function(&caller).to_string();
                    let callee = normalise_function(&callee).to_string();
                    if caller != callee {
                        add(p.calls.entry((caller, callee)).or_default(), &costs);
                    }
                }
                Next::Own => {
                    let f = function.as_deref().with_context(|| format!("line {n}: a cost outside any function"))?;
                    let entry = p.functions.entry(normalise_function(f).to_string()).or_default();
                    if entry.file.is_none() {
                        entry.file = fn_file.as_deref().map(|f| normalise_file(f).to_string());
                    }
                    add(&mut entry.self_cost, &costs);
                    if let (Some(file), Some(line)) = (&cur_file, line_no) {
                        add(entry.lines.entry((normalise_file(file).to_string(), line)).or_default(), &costs);
                    }
                    add(&mut sum, &costs);
                }
            }
            continue;
        }
        let spec = l.split_once('=').filter(|(key, _)| key.bytes().all(|b| b.is_ascii_lowercase()));
        if let Some((key, value)) = spec {
            match key {
                "fl" => {
                    let f = compressed(&mut names.files, value, n)?;
                    fn_file = Some(f.clone());
                    cur_file = Some(f);
                }
                "fi" | "fe" => cur_file = Some(compressed(&mut names.files, value, n)?),
                "fn" => {
                    function = Some(compressed(&mut names.functions, value, n)?);
                    cur_file = fn_file.clone();
                }
                "cfi" | "cfl" => drop(compressed(&mut names.files, value, n)?),
                "ob" | "cob" => drop(compressed(&mut names.objects, value, n)?),
                "cfn" => callee = Some(compressed(&mut names.functions, value, n)?),
                "calls" => {
                    let callee = callee.clone().with_context(|| format!("line {n}: calls= without cfn="))?;
                    next = Next::Call { callee };
                }
                "jump" | "jcnd" => next = Next::Jump,
                _ => {}
            }
            continue;
        }
        if let Some((key, value)) = l.split_once(':') {
            let value = value.trim();
            match key.trim() {
                "events" => {
                    p.events = value.split_whitespace().map(str::to_string).collect();
                }
                "positions" => {
                    let kinds: Vec<&str> = value.split_whitespace().collect();
                    positions = kinds.len().max(1);
                    line_index = kinds.iter().position(|k| *k == "line");
                    last = vec![0; positions];
                }
                "totals" | "summary" => {
                    totals = Some(value.split_whitespace().map(|t| number(t, n)).collect::<Result<_>>()?);
                }
                "desc" => {
                    if let Some(t) = value.strip_prefix("Trigger: ") {
                        p.trigger = super::counter::Trigger::parse(t);
                    }
                }
                _ => {}
            }
        }
    }
    if p.events.is_empty() {
        bail!("no events: line");
    }
    let width = p.events.len();
    sum.resize(width, 0);
    p.totals = match totals {
        Some(mut t) => {
            t.resize(width, 0);
            if t != sum {
                bail!("its cost lines sum to {sum:?}, but its totals line says {t:?}");
            }
            t
        }
        None => sum,
    };
    for f in p.functions.values_mut() {
        f.self_cost.resize(width, 0);
        f.inclusive = f.self_cost.clone();
        for c in f.lines.values_mut() {
            c.resize(width, 0);
        }
    }
    for ((caller, callee), cost) in p.calls.iter_mut() {
        cost.resize(width, 0);
        // A caller with no cost of its own (outside collection, or a frame above the timed
        // function) still has an inclusive cost.
        let f = p.functions.entry(caller.clone()).or_insert_with(|| FunctionCost {
            self_cost: vec![0; width],
            inclusive: vec![0; width],
            ..FunctionCost::default()
        });
        add(&mut f.inclusive, cost);
        let _ = callee;
    }
    // Around a cycle of calls (f → g → f) a call's inclusive cost holds the caller's own
    // again: no function's inclusive cost can exceed the whole profile's.
    for f in p.functions.values_mut() {
        for (v, t) in f.inclusive.iter_mut().zip(&p.totals) {
            *v = (*v).min(*t);
        }
    }
    Ok(p)
}

fn add(to: &mut Vec<u64>, costs: &[u64]) {
    if to.len() < costs.len() {
        to.resize(costs.len(), 0);
    }
    for (t, c) in to.iter_mut().zip(costs) {
        *t += c;
    }
}

/// A decimal or 0x-hexadecimal number of the format.
fn number(t: &str, n: usize) -> Result<u64> {
    let parsed = match t.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.with_context(|| format!("line {n}: {t:?} is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clone_suffixes_are_removed_in_any_combination() {
        for (raw, name) in [
            ("mdb_page_get", "mdb_page_get"),
            ("mdb_page_get.isra.0", "mdb_page_get"),
            ("mdb_node_add.part.1", "mdb_node_add"),
            ("mdb_cursor_set.constprop.0", "mdb_cursor_set"),
            ("mdb_txn_commit.cold", "mdb_txn_commit"),
            ("mdb_page_search_root.constprop.0.isra.0", "mdb_page_search_root"),
            ("mdb_cursor_sibling.isra.0.part.0.cold", "mdb_cursor_sibling"),
            ("mdb_xcursor_init1.lto_priv.0", "mdb_xcursor_init1"),
            ("foo.llvm.123456", "foo"),
            // Not clone suffixes: left as they are.
            ("main.rs", "main.rs"),
            ("version.2", "version.2"),
            (".isra.0", ".isra.0"),
            ("<T as core::fmt::Debug>::fmt", "<T as core::fmt::Debug>::fmt"),
        ] {
            assert_eq!(normalise_function(raw), name, "{raw}");
        }
        assert_eq!(normalise_file("/cache/builds/LMDB_0.9.33-ab12/src/mdb.c"), "mdb.c");
        assert_eq!(normalise_file("mdb.c"), "mdb.c");
    }

    /// Written by hand after callgrind's format description: name compression in each of
    /// its spaces, subposition compression, a clone summed under its function, inlined code
    /// (`fi=`), recursion and a call from a frame that has no cost of its own.
    const PROFILE: &str = "\
# callgrind format
version: 1
creator: callgrind-3.22.0
pid: 4242
cmd:  worker run
part: 1

desc: I1 cache: 
desc: Trigger: --dump-after=lmdbregress_timed_readKey

positions: line
events: Ir Dr
summary: 890 260

ob=(1) /usr/bin/worker
fl=(1) /src/worker.rs
fn=(1) lmdbregress_timed_readKey
10 5
+2 5 1
cob=(2) /cache/builds/LMDB_0.9.33-aa/liblmdb.so
cfi=(2) /cache/builds/LMDB_0.9.33-aa/mdb.c
cfn=(2) mdb_cursor_get
calls=100 500
* 880 259

ob=(2)
fl=(2)
fn=(2)
500 400 100
+1 100 50
fi=(3) /cache/builds/LMDB_0.9.33-aa/midl.h
20 30
fe=(2)
-1 10
cfn=(3) mdb_page_search.isra.0
calls=3 700
520 340 109
cfn=(2)
calls=1 500
* 50 10

fn=(3)
700 300 100
cfn=(4) mdb_page_search
calls=1 710
+3 40 9

fn=(4)
710 40 9
cfn=(3)
calls=1 700
* 10 1
";

    #[test]
    fn a_hand_written_profile_parses_with_its_compressed_names() {
        let p = parse(PROFILE).unwrap();
        assert_eq!(p.events, ["Ir", "Dr"]);
        assert_eq!(p.trigger, Some(super::super::counter::Trigger::After("lmdbregress_timed_readKey".into())));
        assert_eq!(p.totals, [890, 260]);
        let names: Vec<&str> = p.functions.keys().map(String::as_str).collect();
        assert_eq!(names, ["lmdbregress_timed_readKey", "mdb_cursor_get", "mdb_page_search"]);
        let timed = &p.functions["lmdbregress_timed_readKey"];
        assert_eq!((timed.self_cost.clone(), timed.inclusive.clone()), (vec![10, 1], vec![890, 260]));
        assert_eq!(timed.file.as_deref(), Some("worker.rs"));
        // Lines 10 and 12 (+2), each 5.
        assert_eq!(timed.lines[&("worker.rs".to_string(), 12)], [5, 1]);
        let get = &p.functions["mdb_cursor_get"];
        // 400 + 100 + 30 + 10; the self-call (`cfn=(2)`) is no call to another function.
        assert_eq!(get.self_cost, [540, 150]);
        assert_eq!(get.inclusive, [880, 259]);
        assert_eq!(get.file.as_deref(), Some("mdb.c"));
        // Line 501 (+1) in mdb.c; line 20 of midl.h (fi=); then -1 from 20 is 19 in mdb.c (fe=(2)).
        assert_eq!(get.lines[&("mdb.c".to_string(), 501)], [100, 50]);
        assert_eq!(get.lines[&("midl.h".to_string(), 20)], [30, 0]);
        assert_eq!(get.lines[&("mdb.c".to_string(), 19)], [10, 0]);
        // The clone and its function are one: 300 + 40, and their calls to each other are
        // self-calls.
        let search = &p.functions["mdb_page_search"];
        assert_eq!(search.self_cost, [340, 109]);
        assert_eq!(search.inclusive, [340, 109]);
        assert!(p.calls.keys().all(|(a, b)| a != b));
        // Self costs sum to the totals.
        let sum: u64 = p.functions.values().map(|f| f.self_cost[0]).sum();
        assert_eq!(sum, p.totals[0]);
    }

    #[test]
    fn totals_that_disagree_with_the_cost_lines_are_refused() {
        let bad = "events: Ir\nsummary: 10\nfn=(1) f\n1 9\n";
        assert!(format!("{:#}", parse(bad).unwrap_err()).contains("sum to [9]"));
        let undefined = "events: Ir\nfn=(1)\n1 9\n";
        assert!(format!("{:#}", parse(undefined).unwrap_err()).contains("used before it is defined"));
        assert!(parse("fn=f\n1 2\n").is_err(), "no events line");
    }
}
