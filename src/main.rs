fn main() {
    if let Err(e) = lmdb_regress::cli::main() {
        let status = lmdb_regress::cli::exit_status(&e);
        // An interruption or an unconfirmed slowdown is no error of the tool's.
        let text = match status {
            2 => format!("error: {e:#}"),
            _ => format!("{e:#}"),
        };
        eprintln!("{}", lmdb_regress::terminal::stderr_text(&text));
        std::process::exit(status);
    }
}
