//! What the command-line tests share: running the `talus` binary and reading its output.

use std::process::{Command, Output};

/// The `talus` binary under test.
pub const TALUS: &str = env!("CARGO_BIN_EXE_talus");

/// Runs `talus` with `args` and waits for it.
pub fn talus(args: &[&str]) -> Output {
    Command::new(TALUS)
        .args(args)
        .output()
        .expect("talus starts")
}

/// Output bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
