//! Checkpoints: the scenario (overrides included), the run's own state and the world's
//! dynamic state in one binary file, written atomically (temporary file, then rename), so
//! that a run stopped at any moment — even by SIGKILL — resumes from its last checkpoint
//! and ends bit-identical to the same run done in one go.

use std::path::Path;

use serde::{Deserialize, Serialize};
use talus_sim::WorldSnapshot;

use crate::error::ScenarioError;
use crate::output::atomic::write_atomic;
use crate::run::RunState;

/// First bytes of a checkpoint file.
const MAGIC: &[u8; 8] = b"TALUSCK\0";
/// Layout version of the file.
const FORMAT: u32 = 1;

/// What a checkpoint holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The scenario as RON text, with every override applied.
    pub scenario: String,
    /// The file the scenario was read from (for messages).
    pub source: String,
    /// The run's state: outputs so far, probes, pouring progress.
    pub state: RunState,
    /// The world's dynamic state.
    pub world: WorldSnapshot,
}

/// Writes `checkpoint` to `path` atomically.
///
/// # Errors
/// [`ScenarioError::Io`] if the file cannot be written.
pub fn write(path: &Path, checkpoint: &Checkpoint) -> Result<(), ScenarioError> {
    let body = postcard::to_stdvec(checkpoint).map_err(|e| ScenarioError::Checkpoint {
        path: path.to_path_buf(),
        problem: format!("cannot be encoded: {e}"),
    })?;
    let mut bytes = Vec::with_capacity(body.len() + 12);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&body);
    write_atomic(path, &bytes).map_err(|source| ScenarioError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a checkpoint.
///
/// # Errors
/// [`ScenarioError::Io`] if it cannot be read, [`ScenarioError::Checkpoint`] if it is not a
/// checkpoint of this version or is damaged.
pub fn read(path: &Path) -> Result<Checkpoint, ScenarioError> {
    let bytes = std::fs::read(path).map_err(|source| ScenarioError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |problem: String| ScenarioError::Checkpoint {
        path: path.to_path_buf(),
        problem,
    };
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err(bad("not a talus checkpoint".into()));
    }
    let format = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if format != FORMAT {
        return Err(bad(format!(
            "layout version {format}; this talus reads version {FORMAT}"
        )));
    }
    postcard::from_bytes(&bytes[12..]).map_err(|e| bad(format!("damaged: {e}")))
}
