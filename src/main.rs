//! The `flakesense` binary: everything happens in the library's command line module.

fn main() -> std::process::ExitCode {
    // SAFETY: the first thing the process does, before any thread or tree-sitter call.
    unsafe { flakesense::extract::count_parser_memory() };
    flakesense::cli::run()
}
