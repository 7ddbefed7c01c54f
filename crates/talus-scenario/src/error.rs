//! Why a scenario could not be read, checked, built or run.
//!
//! Every message says where (file and line/column, or the field's path such as
//! `grains[0].count`), what is wrong and what is allowed.

use std::path::PathBuf;

use thiserror::Error;

/// A scenario error.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The RON text does not parse into a scenario (syntax, types, missing or unknown fields).
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// Line (from 1).
        line: usize,
        /// Column (from 1).
        column: usize,
        /// What ron reported.
        message: String,
    },
    /// A value is out of its allowed range or refers to something that does not exist.
    #[error("{path}: {field}: {problem}; allowed: {allowed}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The field's path, e.g. `grains[0].count`.
        field: String,
        /// What is wrong.
        problem: String,
        /// What would be accepted.
        allowed: String,
    },
    /// A `--set key=value` override could not be applied.
    #[error("--set {assignment}: {problem}")]
    Override {
        /// The assignment as given.
        assignment: String,
        /// What is wrong.
        problem: String,
    },
    /// A value given by a `--set key=value` override is out of its allowed range.
    #[error("--set {assignment}: {field}: {problem}; allowed: {allowed}")]
    InvalidOverride {
        /// The assignment as given.
        assignment: String,
        /// The field's path, e.g. `grains[0].count`.
        field: String,
        /// What is wrong.
        problem: String,
        /// What would be accepted.
        allowed: String,
    },
    /// The engine refused a part of the scenario.
    #[error("{path}: {context}: {message}")]
    Engine {
        /// The file.
        path: PathBuf,
        /// Which part of the scenario.
        context: String,
        /// The engine's message.
        message: String,
    },
    /// The output directory cannot be used: files of the user's under names a run writes,
    /// an earlier run, another process writing into it, or not a directory.
    #[error("{path}: {problem}")]
    OutputDir {
        /// The directory or file.
        path: PathBuf,
        /// What is wrong and what to do.
        problem: String,
    },
    /// The machine cannot take the run: not enough memory or disk for it.
    #[error("{path}: {problem}")]
    Resources {
        /// The scenario file.
        path: PathBuf,
        /// What the run needs and what the machine has.
        problem: String,
    },
    /// A checkpoint could not be read or does not fit its scenario.
    #[error("checkpoint {path}: {problem}")]
    Checkpoint {
        /// The checkpoint file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A grain shape file cannot be used: unreadable, of an unknown kind, malformed, or not
    /// enclosing a volume.
    #[error("{}", located(path, *line, problem))]
    ShapeFile {
        /// The shape file.
        path: PathBuf,
        /// The line of the problem (from 1), where there is one.
        line: Option<usize>,
        /// What is wrong.
        problem: String,
    },
    /// The simulation became unphysical.
    #[error("{0}")]
    BlowUp(String),
}

/// `path:line: problem`, or `path: problem` without a line.
fn located(path: &std::path::Path, line: Option<usize>, problem: &str) -> String {
    match line {
        Some(line) => format!("{}:{line}: {problem}", path.display()),
        None => format!("{}: {problem}", path.display()),
    }
}
