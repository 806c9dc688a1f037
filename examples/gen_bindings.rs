//! `make bindings`: regenerates src/ffi/bindings.rs from a verified LMDB_0.9.33 lmdb.h.
#[path = "../tools/bindings_gen.rs"]
mod bindings_gen;

fn main() {
    let header = std::env::args().nth(1).expect("usage: gen_bindings PATH/TO/lmdb.h [OUT]");
    let out = std::env::args().nth(2).unwrap_or_else(|| "src/ffi/bindings.rs".into());
    match bindings_gen::generate(std::path::Path::new(&header)) {
        Ok(text) => std::fs::write(&out, text).expect("cannot write bindings"),
        Err(e) => {
            eprintln!("{e} (bindgen needs libclang: apt-get install libclang-dev)");
            std::process::exit(1);
        }
    }
}
