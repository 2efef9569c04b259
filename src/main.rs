//! The `flakesense` binary: everything happens in the library's command line module.

fn main() -> std::process::ExitCode {
    flakesense::cli::run()
}
