//! Command line. (Being written.)

pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
