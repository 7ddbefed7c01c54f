//! A sweep file: the sweep's command line as a RON document, so that a study is kept and
//! rerun as a file (`talus sweep docs/validation/studies/repose_friction.ron`).
//!
//! ```ron
//! Sweep(
//!     scenario: "../configs/angle_of_repose.ron", // relative to this file
//!     set: ["time.end=1.2"],                       // as --set, for every run
//!     vary: ["force_model.coefficients.friction=0.1,0.2,0.4,0.6,0.9"], // as --vary
//!     seeds: 3,                                    // as --seeds; default the scenario's, or 1
//! )
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;
use crate::load::from_ron;

/// A sweep file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename = "Sweep")]
pub struct SweepSpec {
    /// The scenario file, relative to the sweep file's folder.
    pub scenario: PathBuf,
    /// `--set` assignments applied to every run.
    #[serde(default)]
    pub set: Vec<String>,
    /// The varied keys, each `key=value,value,…` as after `--vary`.
    pub vary: Vec<String>,
    /// Seeds per grid point; default 1.
    #[serde(default)]
    pub seeds: Option<u64>,
    /// Runs at the same time; default 1.
    #[serde(default)]
    pub jobs: Option<usize>,
}

/// The sweep file at `path`, or `None` when the file is a scenario (its first item is not
/// `Sweep(`).
///
/// # Errors
/// [`ScenarioError::Io`] if it cannot be read; [`ScenarioError::Syntax`] with the line and
/// column of a sweep file that does not parse.
pub fn read_sweep_file(path: &Path) -> Result<Option<SweepSpec>, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if first_word(text) != "Sweep" {
        return Ok(None);
    }
    let mut spec: SweepSpec = from_ron(text, path)?;
    if spec.scenario.is_relative()
        && let Some(folder) = path.parent()
    {
        spec.scenario = folder.join(&spec.scenario);
    }
    Ok(Some(spec))
}

/// The first word of RON text after white space and comments.
fn first_word(text: &str) -> &str {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r);
        } else {
            break;
        }
    }
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    &rest[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_file_is_told_from_a_scenario_by_its_first_word() {
        assert_eq!(first_word("// c\n /* b */ Sweep(x: 1)"), "Sweep");
        assert_eq!(first_word("Scenario(\n"), "Scenario");
        assert_eq!(first_word("(name: \"x\")"), "");
        let dir = std::env::temp_dir().join(format!("talus-sweep-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("study.ron");
        std::fs::write(
            &file,
            "// a study\nSweep(scenario: \"s.ron\", vary: [\"a=1,2\"], seeds: 3)",
        )
        .unwrap();
        let spec = read_sweep_file(&file).unwrap().unwrap();
        assert_eq!(spec.scenario, dir.join("s.ron"));
        assert_eq!(spec.seeds, Some(3));
        assert!(spec.set.is_empty());
        std::fs::write(
            &file,
            "Sweep(scenario: \"s.ron\",\n vary: [\"a=1\"], sedes: 3)",
        )
        .unwrap();
        let e = read_sweep_file(&file).unwrap_err().to_string();
        assert!(e.contains(":2:") && e.contains("sedes"), "{e}");
        std::fs::write(&file, "Scenario(name: \"x\")").unwrap();
        assert!(read_sweep_file(&file).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
