//! Checkpoints: the scenario (overrides included), the run's own state and the world's
//! dynamic state in one binary file, written atomically (temporary file, then rename), so
//! that a run stopped at any moment — even by SIGKILL — resumes from its last checkpoint
//! and ends bit-identical to the same run done in one go.
//!
//! The file is the magic `TALUSCK\0`, a little-endian `u32` layout version, the payload's
//! length (`u64`) and its CRC-32C (`u32`), then the payload (postcard). A file whose length
//! or checksum does not match is refused as damaged, never resumed from: a flipped bit in a
//! grain's position would otherwise continue as a plausible, wrong run. The lists that only
//! grow (time-series rows, frames, measurement samples) are kept in the append-only history
//! beside the checkpoint ([`crate::journal`]); the checkpoint holds their lengths and the
//! mark of its history.

use std::path::Path;

use serde::{Deserialize, Serialize};
use talus_sim::WorldSnapshot;

use crate::checksum::crc32c;
use crate::error::ScenarioError;
use crate::grain_shapes::FileShapes;
use crate::journal::{HistoryMark, Journal};
use crate::output::atomic::write_atomic;
use crate::output::run_dir::HISTORY_FILE;
use crate::run::RunState;

/// First bytes of a checkpoint file.
const MAGIC: &[u8; 8] = b"TALUSCK\0";
/// Layout version of the file (3: each contact keeps the faces that bounded its overlap;
/// 4: and the order its bodies are met in, which renumbering the proxies can reverse; 5: the
/// kinds of grain keep the inverse mass a contact meets, for the critical step; 6: the run
/// keeps the step of each dripping population's last release and its waits, and the shapes
/// read from files; 7: a vibrated bed keeps its stroboscopic samples, and each fitted face of
/// a pile the standard error of its angle; 8: the world keeps its periodic axes and each
/// grain its image count; 9: a dripped heap keeps the slope of each of its flanks; 10: a
/// pile measured over a window keeps the window and its angles; 11: a chute's profile keeps
/// its sums exact).
const FORMAT: u32 = 11;
/// Bytes before the payload: magic, version, length, checksum.
const HEADER: usize = 24;

/// What a checkpoint holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The scenario as RON text, with every override applied.
    pub scenario: String,
    /// The file the scenario was read from (for messages).
    pub source: String,
    /// The shapes the populations read from files when the run started: a resumed run uses
    /// these, not the files, which may have changed since.
    pub shapes: FileShapes,
    /// The run's state: outputs so far, probes, pouring progress.
    pub state: RunState,
    /// The world's dynamic state.
    pub world: WorldSnapshot,
    /// Where the run's history ends for this checkpoint.
    pub history: HistoryMark,
}

/// A checkpoint to be written, borrowing the run's state (which may be large) instead of
/// copying it; it encodes to the same bytes as a [`Checkpoint`].
#[derive(Debug, Serialize)]
pub struct CheckpointRef<'a> {
    /// See [`Checkpoint::scenario`].
    pub scenario: &'a str,
    /// See [`Checkpoint::source`].
    pub source: &'a str,
    /// See [`Checkpoint::shapes`].
    pub shapes: &'a FileShapes,
    /// See [`Checkpoint::state`].
    pub state: &'a RunState,
    /// See [`Checkpoint::world`].
    pub world: &'a WorldSnapshot,
    /// See [`Checkpoint::history`].
    pub history: HistoryMark,
}

/// Writes `checkpoint` to `path` atomically.
///
/// # Errors
/// [`ScenarioError::Io`] if the file cannot be written.
pub fn write(path: &Path, checkpoint: &CheckpointRef<'_>) -> Result<(), ScenarioError> {
    let body = postcard::to_stdvec(checkpoint).map_err(|e| ScenarioError::Checkpoint {
        path: path.to_path_buf(),
        problem: format!("cannot be encoded: {e}"),
    })?;
    let mut bytes = Vec::with_capacity(body.len() + HEADER);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32c(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    write_atomic(path, &bytes).map_err(|source| ScenarioError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a checkpoint without its history: the state's growing lists are empty and only
/// know their lengths ([`read`] fills them).
///
/// # Errors
/// [`ScenarioError::Io`] if it cannot be read, [`ScenarioError::Checkpoint`] if it is not a
/// checkpoint of this version, or is damaged, cut short or followed by other bytes.
pub fn read_without_history(path: &Path) -> Result<Checkpoint, ScenarioError> {
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
            "layout version {format}; this talus reads version {FORMAT} (a checkpoint is \
             resumed by the talus that wrote it)"
        )));
    }
    let damaged = "it is damaged: start the run again (talus run … --force)";
    let Some(header) = bytes.get(12..HEADER) else {
        return Err(bad(format!(
            "cut short at {} bytes; {damaged}",
            bytes.len()
        )));
    };
    let length = u64::from_le_bytes(header[..8].try_into().unwrap_or_default());
    let crc = u32::from_le_bytes(header[8..].try_into().unwrap_or_default());
    let body = &bytes[HEADER..];
    if body.len() as u64 != length {
        return Err(bad(format!(
            "holds {} bytes after its header where it says {length}; {damaged}",
            body.len()
        )));
    }
    if crc32c(body) != crc {
        return Err(bad(format!(
            "its checksum does not match its contents; {damaged}"
        )));
    }
    postcard::from_bytes(body).map_err(|e| bad(format!("does not decode ({e}); {damaged}")))
}

/// Reads a checkpoint with its history (the file [`HISTORY_FILE`] in the same directory)
/// and returns it with the journal that continues that history.
///
/// # Errors
/// As [`read_without_history`], and a missing, damaged or foreign history.
pub fn read_with_journal(path: &Path) -> Result<(Checkpoint, Journal), ScenarioError> {
    let mut cp = read_without_history(path)?;
    let history = path.with_file_name(HISTORY_FILE);
    let journal = Journal::restore(&history, cp.history, &mut cp.state.logs_mut())?;
    Ok((cp, journal))
}

/// Reads a checkpoint with its history.
///
/// # Errors
/// As [`read_with_journal`].
pub fn read(path: &Path) -> Result<Checkpoint, ScenarioError> {
    read_with_journal(path).map(|(cp, _)| cp)
}
