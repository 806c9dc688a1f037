fn main() {
    if let Err(e) = lmdb_regress::cli::main() {
        let status = lmdb_regress::cli::exit_status(&e);
        // An interruption, an unconfirmed slowdown or the gate's finding is no error of the
        // tool's: said without "error: ".
        let text = match lmdb_regress::cli::is_tool_error(&e) {
            true => format!("error: {e:#}"),
            false => format!("{e:#}"),
        };
        eprintln!("{}", lmdb_regress::terminal::stderr_text(&text));
        std::process::exit(status);
    }
}
