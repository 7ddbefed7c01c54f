//! Text for the terminal: names and paths from a scenario file may hold control characters
//! (an escape sequence in a population's name would otherwise recolour or clear the user's
//! terminal); they are shown escaped, as `\u{1b}`.

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
