//! Time series as CSV: one header line `name [unit],…`, then one line of numbers per sample.
//!
//! Numbers are written with the shortest text that parses back to the same `f64` (Rust's
//! `Display`, switching to exponent notation for very large or small magnitudes so that
//! `1e-300` does not become three hundred zeros), so a series read back is bit-identical.
//! Non-finite values are written `nan`, `inf` and `-inf`, which Rust, NumPy and pandas parse.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::journal::AppendLog;
use crate::output::atomic::write_atomic_with;

/// One column of a [`TimeSeries`]: a quantity and its unit.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Column {
    /// Name of the quantity, e.g. `kinetic_energy`.
    pub name: String,
    /// SI unit, e.g. `J`; empty for a dimensionless quantity (written as `[1]`).
    pub unit: String,
}

impl Column {
    /// A column from a name and a unit.
    #[must_use]
    pub fn new(name: impl Into<String>, unit: impl Into<String>) -> Self {
        Column {
            name: name.into(),
            unit: unit.into(),
        }
    }

    /// The header field, `name [unit]`, or `name [1]` for a dimensionless quantity.
    #[must_use]
    pub fn header(&self) -> String {
        let unit = if self.unit.is_empty() {
            "1"
        } else {
            &self.unit
        };
        format!("{} [{unit}]", self.name)
    }
}

/// A row whose length does not match the number of columns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("time-series row has {found} values but the series has {expected} columns")]
pub struct RowLengthError {
    /// Number of columns of the series.
    pub expected: usize,
    /// Number of values in the rejected row.
    pub found: usize,
}

/// Samples of several quantities over time, kept in memory and written as CSV.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TimeSeries {
    /// The quantities, in the order of the values of each row.
    pub columns: Vec<Column>,
    /// One row per sample, each as long as `columns`. Serialized (in a checkpoint), only
    /// their number is stored: the values go into the run's history ([`crate::journal`]).
    pub rows: AppendLog<Vec<f64>>,
}

impl TimeSeries {
    /// An empty series with the given columns.
    #[must_use]
    pub fn new(columns: Vec<Column>) -> Self {
        TimeSeries {
            columns,
            rows: AppendLog::new(),
        }
    }

    /// Appends a sample.
    ///
    /// # Errors
    /// [`RowLengthError`] when `row` does not have one value per column; the series is
    /// unchanged then.
    pub fn push(&mut self, row: Vec<f64>) -> Result<(), RowLengthError> {
        if row.len() != self.columns.len() {
            return Err(RowLengthError {
                expected: self.columns.len(),
                found: row.len(),
            });
        }
        self.rows.push(row);
        Ok(())
    }

    /// The header line without line break, e.g. `time [s],kinetic_energy [J]`.
    #[must_use]
    pub fn header_line(&self) -> String {
        let fields: Vec<String> = self
            .columns
            .iter()
            .map(|c| quote_field(&c.header()))
            .collect();
        fields.join(",")
    }

    /// One data line without line break, each value in round-trip precision.
    #[must_use]
    pub fn row_line(&self, row: &[f64]) -> String {
        let fields: Vec<String> = row.iter().map(|&v| format_value(v)).collect();
        fields.join(",")
    }

    /// The values of the column called `name`, or `None` when there is no such column.
    #[must_use]
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let k = self.columns.iter().position(|c| c.name == name)?;
        // Rows are checked on `push`, but the fields are public: a short row gives NaN
        // rather than a panic.
        Some(
            self.rows
                .iter()
                .map(|r| r.get(k).copied().unwrap_or(f64::NAN))
                .collect(),
        )
    }

    /// Writes the whole series (header and all rows) to `path`, atomically.
    ///
    /// # Errors
    /// Any I/O error of [`write_atomic_with`].
    pub fn write(&self, path: &Path) -> io::Result<()> {
        write_atomic_with(path, |w| {
            writeln!(w, "{}", self.header_line())?;
            for row in self.rows.iter() {
                writeln!(w, "{}", self.row_line(row))?;
            }
            Ok(())
        })
    }

    /// Appends the last row to the CSV file at `path`, for progress that can be watched while
    /// a run goes on; a missing or empty file is created with the header first. Does nothing
    /// when the series has no rows.
    ///
    /// This is not atomic (a crash can leave a partial last line, which the next append
    /// terminates); the complete file is written atomically by [`TimeSeries::write`].
    ///
    /// # Errors
    /// Any I/O error, or [`io::ErrorKind::InvalidData`] when the existing file starts with a
    /// different header (it belongs to another series, and appending would mix columns).
    pub fn append_last_row(&self, path: &Path) -> io::Result<()> {
        let Some(last) = self.rows.last() else {
            return Ok(());
        };
        let header = self.header_line();
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)?;
        let len = file.metadata()?.len();
        let mut text = String::new();
        if len == 0 {
            text.push_str(&header);
            text.push('\n');
        } else {
            let existing = first_line(&file)?;
            if existing != header {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{} starts with header `{existing}`, expected `{header}`",
                        path.display()
                    ),
                ));
            }
            if last_byte(&mut file, len)? != b'\n' {
                text.push('\n');
            }
        }
        text.push_str(&self.row_line(last));
        text.push('\n');
        // One write call per row so that a concurrent reader rarely sees half a line.
        file.write_all(text.as_bytes())?;
        file.flush()
    }
}

/// Quotes a header field that would otherwise break the comma-separated layout (RFC 4180).
fn quote_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// Shortest round-trip text of `v`: plain decimal for moderate magnitudes, exponent notation
/// outside `[1e-5, 1e16)` where plain decimal would be a long run of zeros.
#[must_use]
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "nan".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if v == 0.0 || (1e-5..1e16).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// The first line of `file` without its line break, read from the start.
fn first_line(file: &File) -> io::Result<String> {
    let mut reader = BufReader::new(file);
    reader.seek(SeekFrom::Start(0))?;
    let mut line = String::new();
    reader.read_line(&mut line)?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

fn last_byte(file: &mut File, len: u64) -> io::Result<u8> {
    file.seek(SeekFrom::Start(len - 1))?;
    let mut byte = [0u8];
    file.read_exact(&mut byte)?;
    Ok(byte[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An independent, deliberately naive reader: split on newlines and commas, parse with
    /// `str::parse`.
    fn parse_csv(text: &str) -> (Vec<String>, Vec<Vec<f64>>) {
        let mut lines = text.lines();
        let header = lines
            .next()
            .unwrap()
            .split(',')
            .map(str::to_string)
            .collect();
        let rows = lines
            .map(|l| l.split(',').map(|f| f.parse::<f64>().unwrap()).collect())
            .collect();
        (header, rows)
    }

    fn series() -> TimeSeries {
        TimeSeries::new(vec![
            Column::new("time", "s"),
            Column::new("kinetic_energy", "J"),
            Column::new("coordination", ""),
        ])
    }

    fn temp_path(name: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!(
            "talus-output-csv-{name}-{}.csv",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        path
    }

    #[test]
    fn header_has_units_in_brackets() {
        assert_eq!(
            series().header_line(),
            "time [s],kinetic_energy [J],coordination [1]"
        );
        let odd = TimeSeries::new(vec![Column::new("a,b", "m")]);
        assert_eq!(odd.header_line(), "\"a,b [m]\"");
    }

    #[test]
    fn push_checks_row_length() {
        let mut s = series();
        assert_eq!(
            s.push(vec![1.0, 2.0]),
            Err(RowLengthError {
                expected: 3,
                found: 2
            })
        );
        assert!(s.rows.is_empty());
        s.push(vec![0.0, 1.0, 2.0]).unwrap();
        assert_eq!(s.column("kinetic_energy"), Some(vec![1.0]));
        assert_eq!(s.column("missing"), None);
    }

    #[test]
    fn written_file_round_trips_bit_for_bit() {
        let mut s = series();
        let values = [
            0.1 + 0.2,
            1.0 / 3.0,
            -2.5e-300,
            6.02214076e23,
            f64::MIN_POSITIVE,
            f64::MAX,
            -0.0,
            1e16,
            9.999999999999998e15,
            1e-5,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for (k, &v) in values.iter().enumerate() {
            s.push(vec![k as f64 * 1e-3, v, -v]).unwrap();
        }
        s.push(vec![1.0, f64::NAN, 2.0]).unwrap();
        let path = temp_path("roundtrip");
        s.write(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.lines().last().unwrap().contains(",nan,"));
        // Exponent notation at the extremes: no line is a long run of zeros.
        assert!(text.lines().all(|l| l.len() < 80), "{text}");
        let (header, rows) = parse_csv(&text);
        assert_eq!(header.join(","), s.header_line());
        assert_eq!(rows.len(), s.rows.len());
        for (read, written) in rows.iter().zip(s.rows.iter()) {
            for (a, b) in read.iter().zip(written) {
                assert!(
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    "{a} != {b}"
                );
            }
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn append_creates_then_extends_and_checks_header() {
        let path = temp_path("append");
        let mut s = series();
        s.append_last_row(&path).unwrap(); // no rows: nothing to do
        assert!(!path.exists());
        for k in 0..3 {
            s.push(vec![k as f64, 0.5 * k as f64, 4.0]).unwrap();
            s.append_last_row(&path).unwrap();
        }
        let appended = std::fs::read_to_string(&path).unwrap();
        s.write(&path).unwrap();
        assert_eq!(appended, std::fs::read_to_string(&path).unwrap());

        // A partial last line (crash mid-append) is terminated, not joined.
        std::fs::write(&path, format!("{}\n1,2", s.header_line())).unwrap();
        s.append_last_row(&path).unwrap();
        let (_, rows) = parse_csv(&std::fs::read_to_string(&path).unwrap());
        assert_eq!(rows, vec![vec![1.0, 2.0], vec![2.0, 1.0, 4.0]]);

        let other = TimeSeries {
            columns: vec![Column::new("time", "s")],
            rows: vec![vec![1.0]].into(),
        };
        let err = other.append_last_row(&path).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        std::fs::remove_file(&path).unwrap();
    }
}
