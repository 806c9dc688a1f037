fn main() {
    if let Err(e) = lmdb_regress::cli::main() {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
}
