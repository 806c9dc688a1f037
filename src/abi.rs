//! The C layout the bindings assume, proved against each build's own `lmdb.h`.
//!
//! The bindings were generated from 0.9.33's header; 1.0 changes types (`mdb_size_t` for
//! `size_t` in MDB_stat, MDB_envinfo, mdb_env_set_mapsize, mdb_txn_id, mdb_cursor_count).
//! Each build compiles a small probe against its verified header that prints the sizes,
//! offsets and constants the harness relies on; the build record keeps them, and a build
//! whose figures differ from [`EXPECTED`] is refused, at build time and whenever its record
//! is read again before a run. A unit test holds [`EXPECTED`] to the bindings themselves.
//! Shared with build.rs.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

/// Name → value, as the probe prints them.
pub type AbiLayout = BTreeMap<String, i64>;

/// What the bindings (src/ffi/bindings.rs, x86-64) have: sizes and offsets of the structs
/// the workloads pass, the width of the API's size type, and the constants they use.
pub const EXPECTED: [(&str, i64); 30] = [
    ("sizeof(MDB_val)", 16),
    ("offsetof(MDB_val.mv_size)", 0),
    ("offsetof(MDB_val.mv_data)", 8),
    ("sizeof(MDB_stat)", 40),
    ("offsetof(MDB_stat.ms_psize)", 0),
    ("offsetof(MDB_stat.ms_depth)", 4),
    ("offsetof(MDB_stat.ms_branch_pages)", 8),
    ("offsetof(MDB_stat.ms_leaf_pages)", 16),
    ("offsetof(MDB_stat.ms_overflow_pages)", 24),
    ("offsetof(MDB_stat.ms_entries)", 32),
    ("sizeof(MDB_envinfo)", 40),
    ("offsetof(MDB_envinfo.me_mapaddr)", 0),
    ("offsetof(MDB_envinfo.me_mapsize)", 8),
    ("offsetof(MDB_envinfo.me_last_pgno)", 16),
    ("offsetof(MDB_envinfo.me_last_txnid)", 24),
    ("offsetof(MDB_envinfo.me_maxreaders)", 32),
    ("offsetof(MDB_envinfo.me_numreaders)", 36),
    ("sizeof(size type)", 8),
    ("sizeof(MDB_dbi)", 4),
    ("MDB_FIRST", 0),
    ("MDB_LAST", 6),
    ("MDB_NEXT", 8),
    ("MDB_PREV", 12),
    ("MDB_SET_KEY", 16),
    ("MDB_NOSYNC", 0x10000),
    ("MDB_RDONLY", 0x20000),
    ("MDB_WRITEMAP", 0x80000),
    ("MDB_INTEGERKEY", 0x08),
    ("MDB_CREATE", 0x40000),
    ("MDB_APPEND", 0x20000),
];

/// The probe: compiled against a build's `lmdb.h` with the build's flags (a flag such as
/// `-DMDB_VL32` changes `mdb_size_t`), it prints one `name value` line per figure.
const PROBE_C: &str = r#"#include <stddef.h>
#include <stdio.h>
#include "lmdb.h"
/* 1.0's API takes mdb_size_t (MDB_SIZE_MAX comes with it) where 0.9's takes size_t. */
#ifdef MDB_SIZE_MAX
typedef mdb_size_t api_size;
#else
typedef size_t api_size;
#endif
#define S(t) printf("sizeof(%s) %zu\n", #t, sizeof(t))
#define O(t, f) printf("offsetof(%s.%s) %zu\n", #t, #f, offsetof(t, f))
#define V(c) printf("%s %lld\n", #c, (long long)(c))
int main(void) {
    S(MDB_val); O(MDB_val, mv_size); O(MDB_val, mv_data);
    S(MDB_stat); O(MDB_stat, ms_psize); O(MDB_stat, ms_depth); O(MDB_stat, ms_branch_pages);
    O(MDB_stat, ms_leaf_pages); O(MDB_stat, ms_overflow_pages); O(MDB_stat, ms_entries);
    S(MDB_envinfo); O(MDB_envinfo, me_mapaddr); O(MDB_envinfo, me_mapsize); O(MDB_envinfo, me_last_pgno);
    O(MDB_envinfo, me_last_txnid); O(MDB_envinfo, me_maxreaders); O(MDB_envinfo, me_numreaders);
    printf("sizeof(size type) %zu\n", sizeof(api_size)); S(MDB_dbi);
    V(MDB_FIRST); V(MDB_LAST); V(MDB_NEXT); V(MDB_PREV); V(MDB_SET_KEY);
    V(MDB_NOSYNC); V(MDB_RDONLY); V(MDB_WRITEMAP); V(MDB_INTEGERKEY); V(MDB_CREATE); V(MDB_APPEND);
    return 0;
}
"#;

/// Compiles and runs the probe against the `lmdb.h` in `src_dir`, in `scratch`, with the
/// compiler and flags of the build (less `-shared`: the probe is a program).
pub fn probe(src_dir: &Path, compiler: &Path, cflags: &[String], scratch: &Path) -> Result<AbiLayout> {
    let (source, exe) = (scratch.join("abi-probe.c"), scratch.join("abi-probe"));
    std::fs::write(&source, PROBE_C).with_context(|| format!("cannot write {}", source.display()))?;
    let mut cmd = Command::new(compiler);
    cmd.args(cflags.iter().filter(|f| f.as_str() != "-shared")).arg("-I").arg(src_dir).arg("-o").arg(&exe).arg(&source);
    let out = crate::children::output(&mut cmd).with_context(|| format!("cannot run {}", compiler.display()))?;
    if !out.status.success() {
        bail!("the ABI probe does not compile against {}/lmdb.h:\n{}", src_dir.display(), stderr(&out));
    }
    let run =
        crate::children::output(&mut Command::new(&exe)).with_context(|| format!("cannot run {}", exe.display()))?;
    if !run.status.success() {
        bail!("the ABI probe failed: {}", stderr(&run));
    }
    let _ = std::fs::remove_file(&source);
    let _ = std::fs::remove_file(&exe);
    parse(&String::from_utf8_lossy(&run.stdout))
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim_end().to_string()
}

fn parse(text: &str) -> Result<AbiLayout> {
    text.lines()
        .map(|line| {
            let (name, value) = line.rsplit_once(' ').with_context(|| format!("ABI probe line {line:?}"))?;
            Ok((name.to_string(), value.parse().with_context(|| format!("ABI probe line {line:?}"))?))
        })
        .collect()
}

/// Refuses a layout that is not the bindings' one, naming every figure that differs.
pub fn check(label: &str, layout: &AbiLayout) -> Result<()> {
    if layout.is_empty() {
        bail!("{label}: the build record has no ABI layout (a build from before layouts were proved)");
    }
    let differs: Vec<String> = EXPECTED
        .iter()
        .filter(|(name, want)| layout.get(*name) != Some(want))
        .map(|(name, want)| match layout.get(*name) {
            Some(got) => format!("{name} is {got} in its lmdb.h, {want} in the bindings"),
            None => format!("{name} is missing from its probe"),
        })
        .collect();
    if !differs.is_empty() {
        bail!("{label}: its C layout differs from the bindings', so it is not loaded: {}", differs.join("; "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_that_differs_is_refused_by_name() {
        let good: AbiLayout = EXPECTED.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        check("LMDB_1.0.1", &good).unwrap();
        let mut vl32 = good.clone();
        vl32.insert("sizeof(size type)".into(), 4);
        let e = check("LMDB_1.0.1", &vl32).unwrap_err().to_string();
        assert!(e.contains("sizeof(size type) is 4 in its lmdb.h, 8 in the bindings"), "{e}");
        let e = check("x", &AbiLayout::new()).unwrap_err().to_string();
        assert!(e.contains("no ABI layout"), "{e}");
        assert_eq!(parse("sizeof(MDB_val) 16\nMDB_NEXT 8\n").unwrap().len(), 2);
        assert!(parse("garbage").is_err());
    }
}
