//! The integration tests, as one test binary: each file under tests/ is a module here.
//! One binary links once, not once per file, and its tests share both cores and the
//! fixture cache (`common::fixture`) instead of running file after file.
//! Cargo.toml sets `autotests = false`, so a file not named below would never run:
//! `every_test_file_is_a_module_of_this_binary` fails on such a file.

mod common;

mod architecture;
mod bindings;
mod book;
mod browser;
mod build_cache;
mod cache;
mod commands;
mod concurrent;
mod console;
mod coverage;
mod explain;
mod findings;
mod gate;
mod github;
mod harness;
mod history;
mod hunt;
mod layout_coverage;
mod layouts;
mod lmdb_suite;
mod makefile;
mod mtest;
mod names;
mod overhead;
mod paired;
mod patched;
mod presets;
mod program;
mod releases;
mod reports;
mod resolution_study;
mod safety;
mod shard;
mod site;
mod sources;
mod space;
mod toolchains;
mod verdicts;
mod verified;
mod watchdog;

#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = include_str!("main.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(module) = name.strip_suffix(".rs") else { continue };
        if module != "main" && !this.contains(&format!("\nmod {module};\n")) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "tests/main.rs does not include {missing:?}: their tests would never run");
}
