//! Reading a scenario: RON text to [`Scenario`], with positions in syntax errors, and
//! `--set key=value` overrides applied to the parsed scenario.

use std::path::Path;

use ron::extensions::Extensions;
use serde_json::Value;

use crate::error::ScenarioError;
use crate::schema::Scenario;

/// Parses the RON text of a scenario. `path` is only used in messages.
///
/// `Some(…)` may be left out around optional values (RON's `implicit_some`). A UTF-8
/// byte-order mark at the start, as some editors write, is skipped.
///
/// # Errors
/// [`ScenarioError::Syntax`] with the line and column of the first problem: bad syntax, a
/// wrong type, a missing or an unknown field.
pub fn parse(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
    from_ron(text, path)
}

/// Parses RON `text` into any document type as [`parse`] does a scenario (byte-order mark
/// skipped, `Some(…)` optional, errors with line and column).
///
/// # Errors
/// [`ScenarioError::Syntax`] with the line and column of the first problem.
pub fn from_ron<T: serde::de::DeserializeOwned>(
    text: &str,
    path: &Path,
) -> Result<T, ScenarioError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    ron::Options::default()
        .with_default_extension(Extensions::IMPLICIT_SOME)
        .from_str(text)
        .map_err(|e| ScenarioError::Syntax {
            path: path.to_path_buf(),
            line: e.span.start.line,
            column: e.span.start.col,
            message: e.code.to_string(),
        })
}

/// Reads and parses a scenario file.
///
/// # Errors
/// [`ScenarioError::Io`] if it cannot be read, else as [`parse`].
pub fn read(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path)
}

/// The scenario as RON text (used in checkpoints, so a resumed run has exactly the
/// scenario it started with, overrides included).
///
/// # Errors
/// [`ScenarioError::Override`] is never returned; serialisation of a valid scenario does
/// not fail, but a failure is reported as [`ScenarioError::Checkpoint`].
pub fn to_ron(scenario: &Scenario) -> Result<String, ScenarioError> {
    ron::ser::to_string_pretty(scenario, ron::ser::PrettyConfig::default()).map_err(|e| {
        ScenarioError::Checkpoint {
            path: Path::new("<scenario>").to_path_buf(),
            problem: format!("the scenario cannot be written as RON: {e}"),
        }
    })
}

/// Applies overrides `key=value` in order. Keys are field paths: `time.end`,
/// `grains[0].count` (or `grains.0.count`), `force_model.coefficients.friction`; the name
/// of an enum variant on the way may be left out (`grains[0].placement.rate`). Values are
/// numbers, vectors `(x, y, z)`, names (`Verlet`), quoted strings, `true`/`false` or `None`.
///
/// # Errors
/// [`ScenarioError::Override`] naming the assignment: no `=`, an unknown path, a value that
/// does not parse or does not fit the field.
pub fn apply_overrides(
    scenario: &Scenario,
    assignments: &[String],
) -> Result<Scenario, ScenarioError> {
    if assignments.is_empty() {
        return Ok(scenario.clone());
    }
    let fail = |assignment: &str, problem: String| ScenarioError::Override {
        assignment: assignment.to_string(),
        problem,
    };
    let mut tree = serde_json::to_value(scenario)
        .map_err(|e| fail("", format!("the scenario cannot be edited: {e}")))?;
    for assignment in assignments {
        let (key, value) = assignment
            .split_once('=')
            .ok_or_else(|| fail(assignment, "expected key=value".into()))?;
        let value = parse_value(value.trim()).map_err(|p| fail(assignment, p))?;
        let path = split_path(key.trim()).map_err(|p| fail(assignment, p))?;
        let slot = locate(&mut tree, &path).map_err(|p| fail(assignment, p))?;
        *slot = value;
        // Checked after each assignment, so that a value that does not fit names its own
        // assignment.
        serde_json::from_value::<Scenario>(tree.clone()).map_err(|e| {
            fail(
                assignment,
                format!("the value does not fit '{}': {e}", key.trim()),
            )
        })?;
    }
    serde_json::from_value(tree).map_err(|e| ScenarioError::Override {
        assignment: assignments.join(" "),
        problem: format!("the result is not a valid scenario: {e}"),
    })
}

/// Errors of a scenario edited by `assignments`, each blamed on the `--set` that gave the
/// value when its field is the assignment's (or lies inside or around it), not on the file
/// that no longer holds that value. The last matching assignment is named: it wins.
#[must_use]
pub fn blame_overrides(errors: Vec<ScenarioError>, assignments: &[String]) -> Vec<ScenarioError> {
    let keys: Vec<(String, &String)> = assignments
        .iter()
        .filter_map(|a| {
            let key = a.split_once('=')?.0.trim();
            Some((canonical_path(&split_path(key).ok()?), a))
        })
        .collect();
    let related = |field: &str, key: &str| {
        let inside = |outer: &str, inner: &str| {
            inner == outer
                || inner
                    .strip_prefix(outer)
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
        };
        inside(key, field) || inside(field, key)
    };
    errors
        .into_iter()
        .map(|e| match e {
            ScenarioError::Invalid {
                path,
                field,
                problem,
                allowed,
            } => match keys.iter().rev().find(|(key, _)| related(&field, key)) {
                Some((_, assignment)) => ScenarioError::InvalidOverride {
                    assignment: (*assignment).clone(),
                    field,
                    problem,
                    allowed,
                },
                None => ScenarioError::Invalid {
                    path,
                    field,
                    problem,
                    allowed,
                },
            },
            other => other,
        })
        .collect()
}

/// A field path as validation messages write it: `grains[0].placement.rate`.
/// The canonical form of a `--set` key (`grains.0.count` and `grains[0].count` both read
/// `grains[0].count`), or the key as given if it is not a path.
#[must_use]
pub fn split_key(key: &str) -> String {
    split_path(key).map_or_else(|_| key.to_string(), |steps| canonical_path(&steps))
}

fn canonical_path(steps: &[Step]) -> String {
    let mut text = String::new();
    for step in steps {
        match step {
            Step::Field(name) => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(name);
            }
            Step::Index(i) => text.push_str(&format!("[{i}]")),
        }
    }
    text
}

/// One step of a field path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(usize),
}

fn split_path(key: &str) -> Result<Vec<Step>, String> {
    if key.is_empty() {
        return Err("empty key".into());
    }
    let mut steps = Vec::new();
    for part in key.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            steps.push(match name.parse::<usize>() {
                Ok(i) => Step::Index(i),
                Err(_) => Step::Field(name.to_string()),
            });
        }
        while let Some(stripped) = rest.strip_prefix('[') {
            let close = stripped
                .find(']')
                .ok_or_else(|| format!("unclosed '[' in '{key}'"))?;
            let index = stripped[..close]
                .parse::<usize>()
                .map_err(|_| format!("'{}' is not an index in '{key}'", &stripped[..close]))?;
            steps.push(Step::Index(index));
            rest = &stripped[close + 1..];
        }
        if !rest.is_empty() {
            return Err(format!("unexpected '{rest}' in '{key}'"));
        }
        if name.is_empty() && steps.is_empty() {
            return Err(format!("empty field name in '{key}'"));
        }
    }
    Ok(steps)
}

fn locate<'a>(tree: &'a mut Value, path: &[Step]) -> Result<&'a mut Value, String> {
    let mut node = tree;
    let mut walked = String::new();
    for step in path {
        // An enum variant is an object with one key, the variant's name: its fields are
        // reached through it without naming it.
        if let (Step::Field(name), Value::Object(map)) = (step, &*node)
            && !map.contains_key(name)
            && map.len() == 1
            && map.values().next().is_some_and(Value::is_object)
        {
            let variant = map.keys().next().cloned().unwrap_or_default();
            node = node
                .get_mut(&variant)
                .ok_or_else(|| format!("no field '{variant}' at '{walked}'"))?;
        }
        node = match step {
            Step::Field(name) => match node {
                // Coefficients (the force model's, its parts', a material's, a pair's) are
                // maps: a coefficient the file leaves out can be set too.
                Value::Object(map) => {
                    if walked.ends_with(".coefficients") {
                        map.entry(name.clone()).or_insert(Value::Null)
                    } else {
                        let known = map.keys().cloned().collect::<Vec<_>>().join(", ");
                        map.get_mut(name).ok_or_else(|| {
                            format!("no field '{name}' at '{walked}'; fields here: {known}")
                        })?
                    }
                }
                _ => return Err(format!("'{walked}' has no fields")),
            },
            Step::Index(i) => match node {
                Value::Array(items) => {
                    let n = items.len();
                    items
                        .get_mut(*i)
                        .ok_or_else(|| format!("'{walked}' has {n} entries, no [{i}]"))?
                }
                _ => return Err(format!("'{walked}' is not a list")),
            },
        };
        match step {
            Step::Field(name) if walked.is_empty() => walked.push_str(name),
            Step::Field(name) => {
                walked.push('.');
                walked.push_str(name);
            }
            Step::Index(i) => walked.push_str(&format!("[{i}]")),
        }
    }
    Ok(node)
}

fn parse_value(text: &str) -> Result<Value, String> {
    if text.is_empty() {
        return Err("empty value".into());
    }
    if let Some(inner) = text
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .or_else(|| text.strip_prefix('[').and_then(|t| t.strip_suffix(']')))
    {
        return inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(parse_value)
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if let Some(inner) = text.strip_prefix("Some(").and_then(|t| t.strip_suffix(')')) {
        return parse_value(inner.trim());
    }
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        return Ok(Value::String(inner.to_string()));
    }
    match text {
        "true" => return Ok(Value::Bool(true)),
        "false" => return Ok(Value::Bool(false)),
        "None" => return Ok(Value::Null),
        _ => {}
    }
    if let Ok(i) = text.parse::<u64>() {
        return Ok(Value::from(i));
    }
    if let Ok(x) = text.parse::<f64>() {
        // A whole number written as 1e3 fits integer fields (counts) as well as real ones.
        if x.fract() == 0.0 && (0.0..9.007_199_254_740_992e15).contains(&x) {
            return Ok(Value::from(x as u64));
        }
        return serde_json::Number::from_f64(x)
            .map(Value::Number)
            .ok_or_else(|| format!("'{text}' is not a finite number"));
    }
    if text.chars().next().is_some_and(char::is_alphabetic)
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
    {
        return Ok(Value::String(text.to_string()));
    }
    Err(format!(
        "'{text}' is not a value; use a number, (x, y, z), a name, \"text\", true, false or None"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_fields_and_indices() {
        assert_eq!(
            split_path("grains[0].count").unwrap(),
            vec![
                Step::Field("grains".into()),
                Step::Index(0),
                Step::Field("count".into())
            ]
        );
        assert_eq!(split_path("grains.0.count"), split_path("grains[0].count"));
        assert!(split_path("grains[x].count").is_err());
        assert!(split_path("").is_err());
    }

    #[test]
    fn errors_are_blamed_on_the_assignment_that_set_the_field() {
        let invalid = |field: &str| ScenarioError::Invalid {
            path: "s.ron".into(),
            field: field.into(),
            problem: "bad".into(),
            allowed: "good".into(),
        };
        let set = vec![
            "grains.0.count=0".to_string(),
            "grains[0].placement.min=(1,1,1)".to_string(),
        ];
        let blamed = blame_overrides(
            vec![
                invalid("grains[0].count"),
                invalid("grains[0].placement"),
                invalid("grains[0].counter"),
                invalid("time.dt"),
            ],
            &set,
        );
        let text: Vec<String> = blamed.iter().map(ToString::to_string).collect();
        assert_eq!(
            text[0],
            "--set grains.0.count=0: grains[0].count: bad; allowed: good"
        );
        assert!(text[1].starts_with("--set grains[0].placement.min=(1,1,1): "));
        assert!(text[2].starts_with("s.ron: "), "{}", text[2]);
        assert!(text[3].starts_with("s.ron: "), "{}", text[3]);
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let text = "\u{feff}Scenario(";
        match parse(text, Path::new("s.ron")) {
            Err(ScenarioError::Syntax { message, .. }) => {
                assert!(!message.contains("opening `(`"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn values_keep_full_precision() {
        assert_eq!(parse_value("1e-4").unwrap().as_f64(), Some(1e-4));
        assert_eq!(parse_value("0.1").unwrap().as_f64(), Some(0.1));
        assert_eq!(
            parse_value("(1, 2.5, -3)").unwrap(),
            serde_json::json!([1, 2.5, -3.0])
        );
        assert_eq!(parse_value("Verlet").unwrap(), serde_json::json!("Verlet"));
        assert!(parse_value("NaN").is_err());
        assert!(parse_value("1..2").is_err());
    }
}
