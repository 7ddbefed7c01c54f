//! Self-contained HTML pages: the report of a run (`report.html` in its directory) and of a
//! sweep.
//!
//! A report is read where it lies, often on a cluster's login node or an archive without a
//! network, and is mailed or attached as one file: so it loads nothing from anywhere, not
//! even from beside it. The style is a few lines inside the page and every plot is embedded
//! as a PNG data URI; only the links to the run's other files (the time series, the summary)
//! point outside, relative to the page.
//!
//! Every text a page shows goes through [`escape`], since names and messages come from the
//! user's scenario file and could hold markup.
//!
//! ```
//! use talus_scenario::output::report::{Cell, ReportPage};
//!
//! let mut page = ReportPage::new("pile <A>");
//! page.section("Answers");
//! page.table(&["name", "value"], &[vec![Cell::text("angle"), Cell::number("31.2")]]);
//! let html = page.finish();
//! assert!(html.contains("<h1>pile &lt;A&gt;</h1>"));
//! ```

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use base64::Engine as _;

/// The page's whole style: plain, readable, printable, wide tables scrolled rather than
/// squeezed.
const STYLE: &str = "\
body{font-family:sans-serif;max-width:1000px;margin:1em auto;padding:0 1em;color:#222;\
line-height:1.4}\
h1{font-size:1.6em;border-bottom:2px solid #ccc;padding-bottom:.2em}\
h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}\
.scroll{overflow-x:auto}\
table{border-collapse:collapse;margin:.5em 0}\
th,td{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}\
th{background:#f2f2f2}\
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
figure{margin:1em 0}\
figure img{max-width:100%;height:auto;border:1px solid #ddd}\
figcaption{font-size:.95em;color:#444}\
.status{display:inline-block;padding:.15em .6em;border-radius:.3em;font-weight:bold;color:#fff}\
.good{background:#2a7d2a}.warn{background:#b36b00}.bad{background:#b22222}\
";

/// A plot shown in a report: its PNG file, relative to the page's directory, and the
/// caption under it (the plot's title).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figure {
    /// The PNG file, relative to the page (`plots/kinetic_energy.png`).
    pub file: String,
    /// The caption.
    pub title: String,
}

/// One cell of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// Text, left-aligned.
    Text(String),
    /// A number already formatted, right-aligned so that columns of numbers line up.
    Number(String),
    /// A link: the relative address and the text shown.
    Link {
        /// Where it points, relative to the page.
        href: String,
        /// What it shows.
        text: String,
    },
}

impl Cell {
    /// A text cell.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Cell {
        Cell::Text(text.into())
    }

    /// A number cell.
    #[must_use]
    pub fn number(text: impl Into<String>) -> Cell {
        Cell::Number(text.into())
    }

    fn html(&self) -> String {
        match self {
            Cell::Text(t) => format!("<td>{}</td>", escape(t)),
            Cell::Number(t) => format!("<td class=\"num\">{}</td>", escape(t)),
            Cell::Link { href, text } => {
                format!("<td><a href=\"{}\">{}</a></td>", escape(href), escape(text))
            }
        }
    }
}

/// An HTML page being built, section by section; [`ReportPage::finish`] gives the document.
#[derive(Debug, Clone)]
pub struct ReportPage {
    title: String,
    body: String,
}

impl ReportPage {
    /// A page titled `title`, which is also its first heading.
    #[must_use]
    pub fn new(title: &str) -> ReportPage {
        ReportPage {
            title: title.to_string(),
            body: format!("<h1>{}</h1>\n", escape(title)),
        }
    }

    /// Starts a section headed `heading`.
    pub fn section(&mut self, heading: &str) {
        let _ = writeln!(self.body, "<h2>{}</h2>", escape(heading));
    }

    /// A paragraph of `text`.
    pub fn paragraph(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
    }

    /// A run's (or a sweep's) status as a coloured label: green for `finished` and
    /// `at_rest`, amber for `suspect`, red for anything else; then `notes` (the warnings or
    /// the error) as a list.
    pub fn status(&mut self, status: &str, notes: &[String]) {
        let _ = writeln!(
            self.body,
            "<p><span class=\"status {}\">{}</span></p>",
            status_class(status),
            escape(status)
        );
        self.list(notes);
    }

    /// A bulleted list of `items` (nothing for none).
    pub fn list(&mut self, items: &[String]) {
        if items.is_empty() {
            return;
        }
        self.body.push_str("<ul>\n");
        for item in items {
            let _ = writeln!(self.body, "<li>{}</li>", escape(item));
        }
        self.body.push_str("</ul>\n");
    }

    /// A table with a `header` row and `rows` (which may be shorter or longer than the
    /// header: cells are not padded), inside a box that scrolls sideways when it is wide.
    pub fn table(&mut self, header: &[&str], rows: &[Vec<Cell>]) {
        self.body.push_str("<div class=\"scroll\"><table>\n<tr>");
        for h in header {
            let _ = write!(self.body, "<th>{}</th>", escape(h));
        }
        self.body.push_str("</tr>\n");
        for row in rows {
            self.body.push_str("<tr>");
            for cell in row {
                self.body.push_str(&cell.html());
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</table></div>\n");
    }

    /// The PNG image `png` embedded in the page, with `caption` under it.
    pub fn figure(&mut self, png: &[u8], caption: &str) {
        let _ = writeln!(
            self.body,
            "<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>",
            png_data_uri(png),
            escape(caption),
            escape(caption)
        );
    }

    /// Every figure of `figures`, read from their files under `dir` and embedded.
    ///
    /// # Errors
    /// The error of reading a PNG file.
    pub fn figures(&mut self, dir: &Path, figures: &[Figure]) -> io::Result<()> {
        for f in figures {
            let png = std::fs::read(dir.join(&f.file))?;
            self.figure(&png, &f.title);
        }
        Ok(())
    }

    /// A list of links, `(href, text)` each, relative to the page.
    pub fn links(&mut self, links: &[(String, String)]) {
        if links.is_empty() {
            return;
        }
        self.body.push_str("<ul>\n");
        for (href, text) in links {
            let _ = writeln!(
                self.body,
                "<li><a href=\"{}\">{}</a></li>",
                escape(href),
                escape(text)
            );
        }
        self.body.push_str("</ul>\n");
    }

    /// The whole document.
    #[must_use]
    pub fn finish(self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
            escape(&self.title),
            self.body
        )
    }
}

/// The class of the label of `status` (see [`ReportPage::status`]).
fn status_class(status: &str) -> &'static str {
    match status {
        "finished" | "at_rest" => "good",
        "suspect" => "warn",
        _ => "bad",
    }
}

/// `text` safe inside an HTML element or a quoted attribute: `&`, `<`, `>`, `"` and `'` as
/// character references.
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// `png` as a `data:image/png;base64,…` address, which a browser shows without fetching
/// anything.
#[must_use]
pub fn png_data_uri(png: &[u8]) -> String {
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_is_escaped_everywhere() {
        assert_eq!(
            escape(r#"<script>alert("x") & 'y'</script>"#),
            "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;"
        );
        let evil = "<b onclick=\"x\">";
        let mut page = ReportPage::new(evil);
        page.section(evil);
        page.paragraph(evil);
        page.status(evil, &[evil.to_string()]);
        page.table(
            &[evil],
            &[vec![
                Cell::text(evil),
                Cell::number(evil),
                Cell::Link {
                    href: evil.into(),
                    text: evil.into(),
                },
            ]],
        );
        page.links(&[(evil.into(), evil.into())]);
        page.figure(b"not a png", evil);
        let html = page.finish();
        assert!(!html.contains("<b "), "{html}");
        assert!(!html.contains("\"x\""), "{html}");
        // Title, heading, section, paragraph, label, note, header, 3 cells, link ×2, alt and
        // caption.
        assert_eq!(html.matches("&lt;b onclick=&quot;x&quot;&gt;").count(), 15);
    }

    #[test]
    fn images_are_standard_base64() {
        // RFC 4648 §10's test vectors.
        for (bytes, encoded) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(
                png_data_uri(bytes),
                format!("data:image/png;base64,{encoded}")
            );
        }
    }

    #[test]
    fn statuses_are_coloured_by_trust() {
        assert_eq!(status_class("finished"), "good");
        assert_eq!(status_class("at_rest"), "good");
        assert_eq!(status_class("suspect"), "warn");
        assert_eq!(status_class("blew_up"), "bad");
        assert_eq!(status_class("failed"), "bad");
    }
}
