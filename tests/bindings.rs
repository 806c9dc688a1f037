//! The committed bindings are what bindgen makes of LMDB_0.9.33's lmdb.h today.

use crate::common;

#[path = "../tools/bindings_gen.rs"]
mod bindings_gen;

#[test]
fn committed_bindings_match_a_fresh_generation() {
    let header = common::source_dir("LMDB_0.9.33").join("lmdb.h");
    // bindgen loads libclang at run time and panics when there is none: that is a failure,
    // with the reason (`make test` installs libclang-dev).
    let fresh = match std::panic::catch_unwind(|| bindings_gen::generate(&header)) {
        Ok(Ok(text)) => text,
        Ok(Err(e)) => panic!("bindgen failed on {}: {e}", header.display()),
        Err(_) => {
            panic!("bindgen could not run: is libclang installed? (apt-get install libclang-dev; make test does)")
        }
    };
    let committed = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/ffi/bindings.rs")).unwrap();
    assert!(fresh == committed, "src/ffi/bindings.rs is stale: run `make bindings`");
    assert!(!committed.contains("///") && !committed.contains("#[doc"), "no doc comments from lmdb.h");
}
