fn main() {
    if let Err(e) = lmdb_regress::cli::main() {
        let status = lmdb_regress::cli::exit_status(&e);
        let text = format!("{e:#}");
        // An interruption, an unconfirmed slowdown or the gate's finding is no error of the
        // tool's: said without "error: ".
        match lmdb_regress::cli::is_tool_error(&e) {
            true => eprintln!("{}", lmdb_regress::terminal::error_text(&text)),
            false => eprintln!("{text}"),
        }
        std::process::exit(status);
    }
}
