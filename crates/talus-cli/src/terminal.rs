//! Text for the terminal: names and paths from a scenario file may hold control characters
//! (an escape sequence in a population's name would otherwise recolour or clear the user's
//! terminal); they are shown escaped, as `\u{1b}`. Output goes through [`outln!`], which
//! ends the process quietly when the reader of a pipe has gone (`talus check F | head`)
//! instead of panicking as `println!` does.

use std::io::{ErrorKind, Write};

/// Exit code when standard output is a pipe whose reader has gone: 128 + SIGPIPE, what a
/// shell reports for a program the signal ended.
pub const EXIT_BROKEN_PIPE: i32 = 141;

/// `println!` that never panics: see [`print_line`].
macro_rules! outln {
    () => {
        $crate::terminal::print_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::terminal::print_line(format_args!($($arg)*))
    };
}

/// Writes `args` and a line break to standard output. When the reader has gone, the process
/// ends with [`EXIT_BROKEN_PIPE`] (nothing more can be shown); another write error ends it
/// with exit code 1 and a message on standard error.
pub fn print_line(args: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(EXIT_BROKEN_PIPE);
        }
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

/// `text` with every control character escaped; line breaks are kept when `keep_lines`.
#[must_use]
pub fn escape_controls(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && !(keep_lines && c == '\n') {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(
            escape_controls("a\u{1b}[2Jb\u{9b}c\n\u{7f}é", false),
            "a\\u{1b}[2Jb\\u{9b}c\\n\\u{7f}é"
        );
        assert_eq!(escape_controls("x\ny\rz", true), "x\ny\\rz");
    }
}
