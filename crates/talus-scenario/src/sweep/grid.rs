//! The grid of a sweep: the varied keys with their values, crossed with the seeds.
//!
//! A varied key is written as a `--set` assignment whose value is a list:
//! `force_model.coefficients.friction=0.1,0.2,0.4`. Commas inside parentheses or quotes
//! belong to the value (`gravity=(0,0,-9.81),(0,0,-1.62)`), and two generators stand for
//! evenly spaced numbers: `lin(from, to, count)` and `log(from, to, count)` (geometric
//! spacing, for coefficients that span decades such as a stiffness).

use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;

/// Most values one varied key may take: a larger grid is almost certainly a typo in a
/// `lin`/`log` count, and would take days.
pub const MAX_VALUES: usize = 1000;

/// Most seeds per grid point.
pub const MAX_SEEDS: u64 = 1000;

/// One varied key and the values it takes, as `--set` values (text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    /// The field path, as in `--set` (`force_model.coefficients.friction`).
    pub key: String,
    /// The values in order, each as it would be written after `--set key=`.
    pub values: Vec<String>,
}

impl Axis {
    /// Parses `key=v1,v2,…` (or a `lin`/`log` generator as the whole value list).
    ///
    /// # Errors
    /// [`ScenarioError::Override`] naming the specification: no `=`, an empty key or value,
    /// a generator with bad arguments, a key given twice among its values.
    pub fn parse(spec: &str) -> Result<Axis, ScenarioError> {
        let fail = |problem: String| ScenarioError::Override {
            assignment: format!("(--vary) {spec}"),
            problem,
        };
        let (key, list) = spec.split_once('=').ok_or_else(|| {
            fail(
                "expected key=value,value,… (e.g. force_model.coefficients.friction=0.2,0.4)"
                    .into(),
            )
        })?;
        let key = key.trim();
        if key.is_empty() {
            return Err(fail("the key before '=' is empty".into()));
        }
        let list = list.trim();
        let values = match generator(list) {
            Some(g) => g.map_err(fail)?,
            None => split_top_level(list)
                .into_iter()
                .map(|v| {
                    if v.is_empty() {
                        Err(fail(format!(
                            "an empty value in '{list}'; separate values by single commas"
                        )))
                    } else {
                        Ok(v)
                    }
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        if values.len() > MAX_VALUES {
            return Err(fail(format!(
                "{} values; allowed: at most {MAX_VALUES} per key",
                values.len()
            )));
        }
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(fail(format!(
                    "the value {v} is given twice; each run of a sweep must differ"
                )));
            }
        }
        Ok(Axis {
            key: key.to_string(),
            values,
        })
    }

    /// The key's last name, for run folders and plot titles: `friction` for
    /// `force_model.coefficients.friction`, `count` for `grains[0].count`.
    #[must_use]
    pub fn short_name(&self) -> &str {
        let tail = self.key.rsplit('.').next().unwrap_or(&self.key);
        tail.split('[')
            .next()
            .filter(|t| !t.is_empty())
            .unwrap_or(tail)
    }
}

/// Splits `list` at the commas outside parentheses, brackets, braces and double quotes;
/// each part trimmed.
fn split_top_level(list: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut quoted = false;
    let mut current = String::new();
    for c in list.chars() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => depth += 1,
            ')' | ']' | '}' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                parts.push(current.trim().to_string());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current.trim().to_string());
    parts
}

/// The values of `lin(from, to, count)` or `log(from, to, count)`, or `None` if `list` is
/// not a generator.
fn generator(list: &str) -> Option<Result<Vec<String>, String>> {
    let (name, rest) = list.split_once('(')?;
    let name = name.trim();
    if name != "lin" && name != "log" {
        return None;
    }
    let Some(args) = rest.trim().strip_suffix(')') else {
        return Some(Err(format!("'{list}': expected {name}(from, to, count)")));
    };
    Some(spaced(name == "log", args).map_err(|p| format!("'{list}': {p}")))
}

/// `count` numbers from `from` to `to` inclusive, evenly spaced (geometrically for `log`),
/// printed in the shortest form that reads back as the same number.
fn spaced(log: bool, args: &str) -> Result<Vec<String>, String> {
    let parts: Vec<&str> = args.split(',').map(str::trim).collect();
    let [from, to, count] = parts[..] else {
        return Err("expected three arguments: from, to, count".into());
    };
    let number = |s: &str, what: &str| {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("{what} '{s}' is not a finite number"))
    };
    let (from, to) = (number(from, "from")?, number(to, "to")?);
    let count: usize = count
        .parse()
        .ok()
        .filter(|&n| (2..=MAX_VALUES).contains(&n))
        .ok_or_else(|| format!("count '{count}' must be a whole number from 2 to {MAX_VALUES}"))?;
    if log && (from <= 0.0 || to <= 0.0) {
        return Err("log spacing needs from > 0 and to > 0".into());
    }
    if from == to {
        return Err("from and to are equal: every value would be the same".into());
    }
    let last = (count - 1) as f64;
    Ok((0..count)
        .map(|i| {
            let f = i as f64 / last;
            let v = if i == 0 {
                from
            } else if i == count - 1 {
                to
            } else if log {
                from * (to / from).powf(f)
            } else {
                from + (to - from) * f
            };
            // Rust prints the shortest text that parses back to the same f64.
            format!("{v:?}")
        })
        .collect())
}

/// One run of a sweep: a value of every axis and a seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GridPoint {
    /// The value of each axis, in the order of the axes.
    pub values: Vec<String>,
    /// The scenario's seed for this run.
    pub seed: u64,
}

/// Every combination of the axes' values (the last axis varying fastest), each with every
/// seed in `seeds` (innermost).
#[must_use]
pub fn points(axes: &[Axis], seeds: &[u64]) -> Vec<GridPoint> {
    let mut combos: Vec<Vec<String>> = vec![Vec::new()];
    for axis in axes {
        combos = combos
            .into_iter()
            .flat_map(|combo| {
                axis.values.iter().map(move |v| {
                    let mut next = combo.clone();
                    next.push(v.clone());
                    next
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .flat_map(|values| {
            seeds.iter().map(move |&seed| GridPoint {
                values: values.clone(),
                seed,
            })
        })
        .collect()
}

/// The `--set` assignments of a grid point: each axis' key with its value, then the seed.
#[must_use]
pub fn assignments(axes: &[Axis], point: &GridPoint) -> Vec<String> {
    axes.iter()
        .zip(&point.values)
        .map(|(axis, value)| format!("{}={value}", axis.key))
        .chain(std::iter::once(format!("seed={}", point.seed)))
        .collect()
}

/// The folder name of run `index`: its number, then each axis' short name and value and
/// the seed, with every character outside `[A-Za-z0-9.+=-]` replaced by `_`:
/// `003_friction=0.4_seed=8`.
#[must_use]
pub fn run_name(index: usize, axes: &[Axis], point: &GridPoint) -> String {
    let mut name = format!("{index:03}");
    for (axis, value) in axes.iter().zip(&point.values) {
        name.push('_');
        name.push_str(axis.short_name());
        name.push('=');
        name.push_str(value);
    }
    name.push_str(&format!("_seed={}", point.seed));
    let mut clean = plain_name(&name);
    // Long vectors or strings would make names some file systems refuse; the number keeps
    // the name unique.
    clean.truncate(120);
    clean
}

/// `text` with every character outside `[A-Za-z0-9.+=_-]` replaced by `_`: a name any file
/// system takes, which cannot climb out of its folder.
#[must_use]
pub fn plain_name(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '=' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_split_at_top_level_commas_only() {
        let axis = Axis::parse("gravity=(0, 0, -9.81),(0,0,-1.62)").unwrap();
        assert_eq!(axis.key, "gravity");
        assert_eq!(axis.values, vec!["(0, 0, -9.81)", "(0,0,-1.62)"]);
        let axis = Axis::parse("name=\"a,b\",\"c\"").unwrap();
        assert_eq!(axis.values, vec!["\"a,b\"", "\"c\""]);
        assert_eq!(axis.short_name(), "name");
        let axis = Axis::parse("grains[0].count=10,20").unwrap();
        assert_eq!(axis.short_name(), "count");
        assert_eq!(Axis::parse("walls[2]=None").unwrap().short_name(), "walls");
    }

    #[test]
    fn generators_give_even_spacing_with_exact_ends() {
        let axis = Axis::parse("k=lin(0.1, 0.9, 5)").unwrap();
        let v: Vec<f64> = axis.values.iter().map(|s| s.parse().unwrap()).collect();
        assert_eq!(v[0], 0.1);
        assert_eq!(v[4], 0.9);
        for (i, x) in v.iter().enumerate() {
            assert!((x - (0.1 + 0.2 * i as f64)).abs() < 1e-15);
        }
        let axis = Axis::parse("k=log(1e4,1e7,4)").unwrap();
        let v: Vec<f64> = axis.values.iter().map(|s| s.parse().unwrap()).collect();
        for (i, x) in v.iter().enumerate() {
            let expected = 10f64.powi(4 + i as i32);
            assert!((x / expected - 1.0).abs() < 1e-14, "{x} vs {expected}");
        }
    }

    #[test]
    fn bad_specifications_are_named() {
        for (spec, says) in [
            ("friction", "expected key=value"),
            ("=0.1", "key before '=' is empty"),
            ("k=0.1,,0.2", "empty value"),
            ("k=0.1,0.1", "given twice"),
            ("k=lin(0,1)", "three arguments"),
            ("k=lin(0,1,1)", "count '1'"),
            ("k=lin(0,1,100000)", "count '100000'"),
            ("k=log(0,1,3)", "from > 0"),
            ("k=lin(1,1,3)", "equal"),
            ("k=lin(a,1,3)", "from 'a'"),
            ("k=lin(0,1,3", "expected lin(from, to, count)"),
        ] {
            let e = Axis::parse(spec).unwrap_err().to_string();
            assert!(e.contains(says), "{spec}: {e}");
            assert!(e.contains(spec), "{spec}: {e}");
        }
    }

    #[test]
    fn the_grid_crosses_every_axis_and_seed() {
        let a = Axis::parse("a=1,2").unwrap();
        let b = Axis::parse("b=x,y,z").unwrap();
        let grid = points(&[a.clone(), b.clone()], &[7, 8]);
        assert_eq!(grid.len(), 12);
        assert_eq!(grid[0].values, vec!["1", "x"]);
        assert_eq!(
            (grid[1].values.clone(), grid[1].seed),
            (vec!["1".into(), "x".into()], 8)
        );
        assert_eq!(grid[2].values, vec!["1", "y"]);
        assert_eq!(grid[11].values, vec!["2", "z"]);
        let names: std::collections::BTreeSet<String> = grid
            .iter()
            .enumerate()
            .map(|(i, p)| run_name(i, &[a.clone(), b.clone()], p))
            .collect();
        assert_eq!(names.len(), 12);
        assert_eq!(
            run_name(3, &[a.clone(), b.clone()], &grid[3]),
            "003_a=1_b=y_seed=8"
        );
        assert_eq!(assignments(&[a, b], &grid[3]), vec!["a=1", "b=y", "seed=8"]);
        assert_eq!(points(&[], &[1, 2]).len(), 2);
    }

    #[test]
    fn run_names_are_plain_folder_names() {
        let axis = Axis::parse("gravity=(0, 0, -9.81),\"../x/y\"").unwrap();
        for (i, p) in points(std::slice::from_ref(&axis), &[1]).iter().enumerate() {
            let name = run_name(i, std::slice::from_ref(&axis), p);
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".+=-_".contains(c))
            );
            assert!(!name.contains('/'));
        }
    }
}
