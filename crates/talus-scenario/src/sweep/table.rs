//! The sweep's tables: `sweep.csv`, one row per run (its varied values, its seed and every
//! scalar of its `summary.json`), and `sweep_means.csv`, one row per grid point (the mean
//! and the sample standard deviation of every numeric answer over the seeds).

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::Path;

use serde_json::Value;

use crate::output::atomic::write_atomic_with;
use crate::output::csv::format_value;
use crate::output::run_dir::SUMMARY_FILE;
use crate::sweep::dir::SweepDir;
use crate::sweep::execute::RunEvent;
use crate::sweep::plan::Plan;

/// Summary entries that describe how a run was computed rather than what it found: in the
/// table, but neither averaged nor plotted.
const BOOKKEEPING: [&str; 12] = [
    "contacts",
    "critical_dt",
    "dt",
    "grain_steps_per_second",
    "grains",
    "seed",
    "seeds",
    "sim_time",
    "steps",
    "threads",
    "wall_seconds",
    "stage_seconds",
];

/// Statuses whose answers count in the means (a suspect run's are averaged too, and the
/// number of suspect runs is given beside them).
pub const ANSWERED: [&str; 3] = ["finished", "at_rest", "suspect"];

/// One scalar of a summary.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// A number (`null` in the summary, a value that was not finite, reads as NaN).
    Number(f64),
    /// Text (a status, a name, warnings joined by `; `).
    Text(String),
}

/// One run's row.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// Its folder under `runs/`.
    pub name: String,
    /// Its axis values, in the order of the plan's axes.
    pub values: Vec<String>,
    /// Its seed.
    pub seed: u64,
    /// The status of its summary, or `failed` when it has none.
    pub status: String,
    /// Every scalar of its summary by flattened key (`stage_seconds.narrow`), and `error`
    /// for a run that could not be run.
    pub scalars: BTreeMap<String, Scalar>,
}

/// The rows of every run of `plan`, from their summaries; a run without a summary has the
/// message of its last event as its `error`.
#[must_use]
pub fn collect(plan: &Plan, dir: &SweepDir, events: &[RunEvent]) -> Vec<RunRecord> {
    plan.runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let summary = std::fs::read_to_string(dir.run_path(&run.name).join(SUMMARY_FILE))
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(&text).ok());
            let mut scalars = BTreeMap::new();
            if let Some(summary) = &summary {
                flatten("", summary, &mut scalars);
            }
            if let Some(RunEvent::Failed { message }) = events.get(i) {
                scalars.insert("error".to_string(), Scalar::Text(message.clone()));
            }
            let status = match scalars.get("status") {
                Some(Scalar::Text(s)) => s.clone(),
                _ => "failed".to_string(),
            };
            RunRecord {
                name: run.name.clone(),
                values: run.point.values.clone(),
                seed: run.point.seed,
                status,
                scalars,
            }
        })
        .collect()
}

/// Adds the scalars of `value` under `prefix`: objects flattened with `.`, arrays of text
/// joined with `; ` (the warnings), other arrays left out.
fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, Scalar>) {
    let key = |name: &str| {
        if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        }
    };
    match value {
        Value::Object(map) => {
            for (name, v) in map {
                match v {
                    Value::Object(_) => flatten(&key(name), v, out),
                    _ => {
                        if let Some(s) = scalar(v) {
                            out.insert(key(name), s);
                        }
                    }
                }
            }
        }
        other => {
            if let Some(s) = scalar(other) {
                out.insert(prefix.to_string(), s);
            }
        }
    }
}

fn scalar(value: &Value) -> Option<Scalar> {
    match value {
        Value::Number(n) => n.as_f64().map(Scalar::Number),
        Value::Null => Some(Scalar::Number(f64::NAN)),
        Value::Bool(b) => Some(Scalar::Number(if *b { 1.0 } else { 0.0 })),
        Value::String(s) => Some(Scalar::Text(s.clone())),
        Value::Array(items) => {
            let texts: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
            texts.map(|t| Scalar::Text(t.join("; ")))
        }
        Value::Object(_) => None,
    }
}

/// The numeric answers of one summary by flattened key (`bagnold.coefficient`),
/// bookkeeping left out; `null` (an answer that could not be measured) reads as NaN.
#[must_use]
pub fn numeric_answers(summary: &Value) -> BTreeMap<String, f64> {
    let mut scalars = BTreeMap::new();
    flatten("", summary, &mut scalars);
    scalars
        .into_iter()
        .filter(|(k, _)| !is_bookkeeping(k))
        .filter_map(|(k, v)| match v {
            Scalar::Number(x) => Some((k, x)),
            Scalar::Text(_) => None,
        })
        .collect()
}

/// Whether `key` is one of the run's bookkeeping entries (see [`BOOKKEEPING`]).
fn is_bookkeeping(key: &str) -> bool {
    let head = key.split('.').next().unwrap_or(key);
    BOOKKEEPING.contains(&head)
}

/// The numeric answers of the runs: keys with a number in some run's summary, bookkeeping
/// left out, sorted.
#[must_use]
pub fn answers(records: &[RunRecord]) -> Vec<String> {
    let keys: BTreeSet<&String> = records
        .iter()
        .flat_map(|r| r.scalars.iter())
        .filter(|(k, v)| matches!(v, Scalar::Number(_)) && !is_bookkeeping(k))
        .map(|(k, _)| k)
        .collect();
    keys.into_iter().cloned().collect()
}

/// A field for CSV: quoted (with doubled quotes) when it holds a comma, a quote or a line
/// break.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Writes `sweep.csv`: `run`, the axis keys, `seed`, `status`, then every other scalar key
/// of any run, sorted; a run without a key leaves its field empty.
///
/// # Errors
/// Any I/O error of the atomic write.
pub fn write_table(path: &Path, plan: &Plan, records: &[RunRecord]) -> io::Result<()> {
    let keys: BTreeSet<&String> = records
        .iter()
        .flat_map(|r| r.scalars.keys())
        .filter(|k| *k != "status")
        .collect();
    write_atomic_with(path, |w| {
        let mut header = vec!["run".to_string()];
        header.extend(plan.axes.iter().map(|a| field(&a.key)));
        header.push("seed".into());
        header.push("status".into());
        header.extend(keys.iter().map(|k| field(k)));
        writeln!(w, "{}", header.join(","))?;
        for r in records {
            let mut row = vec![field(&r.name)];
            row.extend(r.values.iter().map(|v| field(v)));
            row.push(r.seed.to_string());
            row.push(field(&r.status));
            row.extend(keys.iter().map(|k| match r.scalars.get(*k) {
                Some(Scalar::Number(x)) => format_value(*x),
                Some(Scalar::Text(t)) => field(t),
                None => String::new(),
            }));
            writeln!(w, "{}", row.join(","))?;
        }
        Ok(())
    })
}

/// Mean and spread of one answer at one grid point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Runs with a finite value.
    pub n: usize,
    /// Their mean (NaN without any).
    pub mean: f64,
    /// Their sample standard deviation (n − 1 in the denominator; 0 for a single run, NaN
    /// without any).
    pub sd: f64,
}

impl Spread {
    /// The mean and sample standard deviation of the finite `values`.
    #[must_use]
    pub fn of(values: impl Iterator<Item = f64>) -> Spread {
        let finite: Vec<f64> = values.filter(|v| v.is_finite()).collect();
        let n = finite.len();
        if n == 0 {
            return Spread {
                n,
                mean: f64::NAN,
                sd: f64::NAN,
            };
        }
        let mean = finite.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (finite.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Spread { n, mean, sd }
    }
}

/// One grid point over its seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct GridStats {
    /// The axis values.
    pub values: Vec<String>,
    /// Runs of this point.
    pub runs: usize,
    /// Of those, runs whose answers count (finished, at rest or suspect).
    pub answered: usize,
    /// Of those, suspect runs.
    pub suspect: usize,
    /// Mean and spread of each answer, in the order of `answers`.
    pub answers: Vec<Spread>,
}

/// The statistics of every grid point (in the plan's order) for the answers `keys`.
#[must_use]
pub fn grid_stats(records: &[RunRecord], keys: &[String]) -> Vec<GridStats> {
    let mut order: Vec<&Vec<String>> = Vec::new();
    for r in records {
        if !order.contains(&&r.values) {
            order.push(&r.values);
        }
    }
    order
        .into_iter()
        .map(|values| {
            let runs: Vec<&RunRecord> = records.iter().filter(|r| &r.values == values).collect();
            let answered: Vec<&&RunRecord> = runs
                .iter()
                .filter(|r| ANSWERED.contains(&r.status.as_str()))
                .collect();
            GridStats {
                values: values.clone(),
                runs: runs.len(),
                answered: answered.len(),
                suspect: answered.iter().filter(|r| r.status == "suspect").count(),
                answers: keys
                    .iter()
                    .map(|k| {
                        Spread::of(answered.iter().map(|r| match r.scalars.get(k) {
                            Some(Scalar::Number(x)) => *x,
                            _ => f64::NAN,
                        }))
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Writes `sweep_means.csv`: the axis keys, `runs`, `answered`, `suspect`, then
/// `<answer>_mean`, `<answer>_sd` and `<answer>_n` for each answer.
///
/// # Errors
/// Any I/O error of the atomic write.
pub fn write_means(
    path: &Path,
    plan: &Plan,
    keys: &[String],
    stats: &[GridStats],
) -> io::Result<()> {
    write_atomic_with(path, |w| {
        let mut header: Vec<String> = plan.axes.iter().map(|a| field(&a.key)).collect();
        header.extend(["runs".into(), "answered".into(), "suspect".into()]);
        for k in keys {
            header.push(field(&format!("{k}_mean")));
            header.push(field(&format!("{k}_sd")));
            header.push(field(&format!("{k}_n")));
        }
        writeln!(w, "{}", header.join(","))?;
        for s in stats {
            let mut row: Vec<String> = s.values.iter().map(|v| field(v)).collect();
            row.extend([s.runs, s.answered, s.suspect].map(|n| n.to_string()));
            for a in &s.answers {
                row.push(format_value(a.mean));
                row.push(format_value(a.sd));
                row.push(a.n.to_string());
            }
            writeln!(w, "{}", row.join(","))?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_the_sample_standard_deviation() {
        let s = Spread::of([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0].into_iter());
        assert_eq!(s.n, 8);
        assert_eq!(s.mean, 5.0);
        // Σ(x − 5)² = 32, over n − 1 = 7.
        assert!((s.sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-15);
        let one = Spread::of([3.0, f64::NAN].into_iter());
        assert_eq!((one.n, one.mean, one.sd), (1, 3.0, 0.0));
        assert!(Spread::of(std::iter::empty()).mean.is_nan());
    }

    #[test]
    fn summaries_flatten_to_scalars() {
        let summary: Value = serde_json::from_str(
            r#"{"status":"finished","angle":24.5,"stage_seconds":{"narrow":1.5},
                "warnings":["a, b","c"],"fit":null,"points":[1,2]}"#,
        )
        .unwrap();
        let mut out = BTreeMap::new();
        flatten("", &summary, &mut out);
        assert_eq!(out["angle"], Scalar::Number(24.5));
        assert_eq!(out["stage_seconds.narrow"], Scalar::Number(1.5));
        assert_eq!(out["warnings"], Scalar::Text("a, b; c".into()));
        assert!(matches!(out["fit"], Scalar::Number(x) if x.is_nan()));
        assert!(!out.contains_key("points"));
        assert!(is_bookkeeping("stage_seconds.narrow"));
        assert!(!is_bookkeeping("angle"));
        assert_eq!(field("a, b"), "\"a, b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
