//! The `linkrev` binary: everything lives in the library's `cli` module.

fn main() -> std::process::ExitCode {
    linkrev::cli::main()
}
