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
//!
//! A run whose grains are split between processes writes its checkpoint in pieces: each
//! process writes its own grains and the states of the pairs it evaluates to a piece
//! (`checkpoint/a_pK.bin` or `checkpoint/b_pK.bin` for process `K`, framed like the
//! checkpoint under the magic `TALUSCP\0`), and once every piece is on disk the first
//! process writes `checkpoint.bin` with the rest of the state and each piece's length and
//! checksum. Checkpoints alternate between the two sets of pieces, so that the pieces the
//! last `checkpoint.bin` names are never written over: a kill at any moment leaves a
//! checkpoint whose pieces are whole. No process gathers the others' grains to write it;
//! reading it puts the pieces together, on any number of processes.

use std::path::Path;

use serde::{Deserialize, Serialize};
use talus_sim::WorldSnapshot;
use talus_sim::distribute::{SnapshotFrame, SnapshotPart};

use crate::checksum::crc32c;
use crate::error::ScenarioError;
use crate::grain_shapes::FileShapes;
use crate::journal::{HistoryMark, Journal};
use crate::output::atomic::write_atomic;
use crate::output::run_dir::{CHECKPOINT_PIECES_DIR, HISTORY_FILE, RunDir};
use crate::run::RunState;

/// First bytes of a checkpoint file.
const MAGIC: &[u8; 8] = b"TALUSCK\0";
/// First bytes of a piece of a checkpoint.
const PIECE_MAGIC: &[u8; 8] = b"TALUSCP\0";
/// Layout version of the file (3: each contact keeps the faces that bounded its overlap;
/// 4: and the order its bodies are met in, which renumbering the proxies can reverse; 5: the
/// kinds of grain keep the inverse mass a contact meets, for the critical step; 6: the run
/// keeps the step of each dripping population's last release and its waits, and the shapes
/// read from files; 7: a vibrated bed keeps its stroboscopic samples, and each fitted face of
/// a pile the standard error of its angle; 8: the world keeps its periodic axes and each
/// grain its image count; 9: a dripped heap keeps the slope of each of its flanks; 10: a
/// pile measured over a window keeps the window and its angles; 11: a chute's profile keeps
/// its sums exact; 12: a decomposed run's checkpoint in pieces; 13: the run keeps the
/// populations of the grain ids as stretches of consecutive ids; 15: the run keeps the time
/// of its deepest overlap).
const FORMAT: u32 = 15;
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
    /// The pieces that held the grains and pairs (none when the file held them): `world`
    /// is put together from them and the frame the file holds when the checkpoint is read.
    pub pieces: Pieces,
}

/// The pieces of a checkpoint: the set they were written in (0 or 1, see [`piece_file`]),
/// the grain ids of the run (see [`SnapshotFrame`]) and, per process, the length and
/// checksum of its piece's contents. No records: the checkpoint is one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pieces {
    /// The set of piece files, 0 (`a`) or 1 (`b`).
    pub set: u8,
    /// Grain ids the run has given out.
    pub ids: u32,
    /// Per process, in rank order.
    pub records: Vec<PieceRecord>,
}

/// What the checkpoint knows of one of its pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PieceRecord {
    /// Bytes of the piece's contents (after its header).
    pub length: u64,
    /// CRC-32C of those bytes.
    pub crc: u32,
}

/// The file, relative to the run's directory, of the piece process `rank` writes in set
/// `set` (0 or 1).
#[must_use]
pub fn piece_file(set: u8, rank: usize) -> String {
    let letter = if set == 0 { 'a' } else { 'b' };
    format!("{CHECKPOINT_PIECES_DIR}/{letter}_p{rank}.bin")
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
    /// See [`Checkpoint::pieces`].
    pub pieces: &'a Pieces,
}

/// Writes `checkpoint` to `path` atomically.
///
/// # Errors
/// [`ScenarioError::Io`] if the file cannot be written.
pub fn write(path: &Path, checkpoint: &CheckpointRef<'_>) -> Result<(), ScenarioError> {
    write_framed(path, MAGIC, checkpoint).map(drop)
}

/// Writes this process's `part` of a checkpoint in pieces to `path` atomically and returns
/// what the checkpoint records of it.
///
/// # Errors
/// [`ScenarioError::Io`] if the file cannot be written.
pub fn write_piece(path: &Path, part: &SnapshotPart) -> Result<PieceRecord, ScenarioError> {
    write_framed(path, PIECE_MAGIC, part)
}

/// Writes `value` framed: `magic`, the layout version, the length and checksum of its
/// encoding, the encoding.
fn write_framed(
    path: &Path,
    magic: &[u8; 8],
    value: &impl Serialize,
) -> Result<PieceRecord, ScenarioError> {
    let body = postcard::to_stdvec(value).map_err(|e| ScenarioError::Checkpoint {
        path: path.to_path_buf(),
        problem: format!("cannot be encoded: {e}"),
    })?;
    let record = PieceRecord {
        length: body.len() as u64,
        crc: crc32c(&body),
    };
    let mut bytes = Vec::with_capacity(body.len() + HEADER);
    bytes.extend_from_slice(magic);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&record.length.to_le_bytes());
    bytes.extend_from_slice(&record.crc.to_le_bytes());
    bytes.extend_from_slice(&body);
    write_atomic(path, &bytes).map_err(|source| ScenarioError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(record)
}

/// The contents of the framed file `path` (see [`write_framed`]) with their record, checked.
fn read_framed(
    path: &Path,
    magic: &[u8; 8],
    what: &str,
) -> Result<(Vec<u8>, PieceRecord), ScenarioError> {
    let mut bytes = std::fs::read(path).map_err(|source| ScenarioError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |problem: String| ScenarioError::Checkpoint {
        path: path.to_path_buf(),
        problem,
    };
    if bytes.len() < 12 || &bytes[..8] != magic {
        return Err(bad(format!("not {what}")));
    }
    let format = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if format != FORMAT {
        return Err(bad(format!(
            "layout version {format}; this talus reads version {FORMAT} (a checkpoint is \
             resumed by the talus that wrote it)"
        )));
    }
    let Some(header) = bytes.get(12..HEADER) else {
        return Err(bad(format!(
            "cut short at {} bytes; {DAMAGED}",
            bytes.len()
        )));
    };
    let record = PieceRecord {
        length: u64::from_le_bytes(header[..8].try_into().unwrap_or_default()),
        crc: u32::from_le_bytes(header[8..].try_into().unwrap_or_default()),
    };
    let body = bytes.split_off(HEADER);
    if body.len() as u64 != record.length {
        return Err(bad(format!(
            "holds {} bytes after its header where it says {}; {DAMAGED}",
            body.len(),
            record.length
        )));
    }
    if crc32c(&body) != record.crc {
        return Err(bad(format!(
            "its checksum does not match its contents; {DAMAGED}"
        )));
    }
    Ok((body, record))
}

/// What a damaged checkpoint's message tells the user to do.
const DAMAGED: &str = "it is damaged: start the run again (talus run … --force)";

/// Reads a checkpoint without its history: the state's growing lists are empty and only
/// know their lengths ([`read`] fills them). The pieces of a checkpoint in pieces are read
/// from the checkpoint's directory.
///
/// # Errors
/// [`ScenarioError::Io`] if it cannot be read, [`ScenarioError::Checkpoint`] if it is not a
/// checkpoint of this version, or is damaged, cut short or followed by other bytes, or a
/// piece of it is missing, damaged or of another checkpoint.
pub fn read_without_history(path: &Path) -> Result<Checkpoint, ScenarioError> {
    read_without_history_in(path, path.parent().unwrap_or(Path::new(".")))
}

/// [`read_without_history`] with the pieces read from the run directory `pieces` (a
/// process that reads a copy of the checkpoint file elsewhere).
///
/// # Errors
/// As [`read_without_history`].
pub fn read_without_history_in(path: &Path, pieces: &Path) -> Result<Checkpoint, ScenarioError> {
    let mut cp = read_file(path)?;
    if cp.pieces.records.is_empty() {
        return Ok(cp);
    }
    let parts = read_pieces(&cp, pieces, |_| true)?;
    let frame = SnapshotFrame {
        world: cp.world,
        ids: cp.pieces.ids,
    };
    cp.world = frame.assembled(parts);
    Ok(cp)
}

/// The checkpoint file `path` alone: for a checkpoint in pieces, `world` is the frame.
fn read_file(path: &Path) -> Result<Checkpoint, ScenarioError> {
    let (body, _) = read_framed(path, MAGIC, "a talus checkpoint")?;
    let bad = |problem: String| ScenarioError::Checkpoint {
        path: path.to_path_buf(),
        problem,
    };
    let cp: Checkpoint = postcard::from_bytes(&body)
        .map_err(|e| bad(format!("does not decode ({e}); {DAMAGED}")))?;
    // Every grain id the run gave out has its population in the run's state.
    let known = cp.state.grain_population.len();
    if !cp.pieces.records.is_empty() && cp.pieces.ids as usize > known {
        return Err(bad(format!(
            "names {} grain ids where its run knows {known}; {DAMAGED}",
            cp.pieces.ids
        )));
    }
    Ok(cp)
}

/// The parts of the pieces of `cp` whose process numbers `take` accepts, read from the run
/// directory `dir`, each checked against its record.
fn read_pieces(
    cp: &Checkpoint,
    dir: &Path,
    take: impl Fn(usize) -> bool,
) -> Result<Vec<SnapshotPart>, ScenarioError> {
    cp.pieces
        .records
        .iter()
        .enumerate()
        .filter(|&(rank, _)| take(rank))
        .map(|(rank, &record)| read_piece(&dir.join(piece_file(cp.pieces.set, rank)), record))
        .collect()
}

/// A checkpoint as process `rank` of a decomposed run of `ranks` processes reads it, with
/// its history and the journal that continues it: for a checkpoint in pieces, `world` is the
/// frame and the parts are those of the pieces dealt to this process (piece `k` to process
/// `k mod ranks`), read from the run directory `pieces`; a checkpoint in one file is read
/// whole (no parts).
///
/// # Errors
/// As [`read_with_journal`], for the pieces this process reads.
pub fn read_share_with_journal(
    path: &Path,
    pieces: &Path,
    rank: usize,
    ranks: usize,
) -> Result<(Checkpoint, Vec<SnapshotPart>, Journal), ScenarioError> {
    let mut cp = read_file(path)?;
    let parts = read_pieces(&cp, pieces, |k| k % ranks.max(1) == rank)?;
    let journal = restore_journal(path, &mut cp)?;
    Ok((cp, parts, journal))
}

/// The part in the piece `path` the checkpoint recorded as `record`.
fn read_piece(path: &Path, record: PieceRecord) -> Result<SnapshotPart, ScenarioError> {
    let (body, found) = match read_framed(path, PIECE_MAGIC, "a piece of a talus checkpoint") {
        Err(ScenarioError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Err(ScenarioError::Checkpoint {
                path: path.to_path_buf(),
                problem: format!(
                    "this piece of the checkpoint is missing (the checkpoint holds the grains \
                     in one piece per process, all in the run's directory); {DAMAGED}"
                ),
            });
        }
        other => other?,
    };
    let bad = |problem: String| ScenarioError::Checkpoint {
        path: path.to_path_buf(),
        problem,
    };
    if found != record {
        return Err(bad(format!(
            "this piece is not the one the checkpoint names (its length or checksum differs: \
             a piece of another checkpoint); {DAMAGED}"
        )));
    }
    postcard::from_bytes(&body).map_err(|e| bad(format!("does not decode ({e}); {DAMAGED}")))
}

/// Removes the pieces of earlier checkpoints the last one does not name (`current`: its set
/// and number of pieces; none when it is one file): every listed piece of the other set, and
/// of its own from `current`'s count on. Only files the run's manifest lists are touched.
///
/// # Errors
/// [`ScenarioError::Io`] if a file cannot be removed.
pub fn remove_stale_pieces(
    dir: &RunDir,
    current: Option<(u8, usize)>,
) -> Result<(), ScenarioError> {
    for set in 0..2 {
        let kept = match current {
            Some((s, count)) if s == set => count,
            _ => 0,
        };
        // Pieces are listed from 0 without gaps: the first one not listed ends them.
        for rank in kept.. {
            if !dir.remove_own(&piece_file(set, rank))? {
                break;
            }
        }
    }
    Ok(())
}

/// Reads a checkpoint with its history (the file [`HISTORY_FILE`] in the same directory)
/// and returns it with the journal that continues that history.
///
/// # Errors
/// As [`read_without_history`], and a missing, damaged or foreign history.
pub fn read_with_journal(path: &Path) -> Result<(Checkpoint, Journal), ScenarioError> {
    read_with_journal_in(path, path.parent().unwrap_or(Path::new(".")))
}

/// [`read_with_journal`] with the pieces read from the run directory `pieces`.
///
/// # Errors
/// As [`read_with_journal`].
pub fn read_with_journal_in(
    path: &Path,
    pieces: &Path,
) -> Result<(Checkpoint, Journal), ScenarioError> {
    let mut cp = read_without_history_in(path, pieces)?;
    let journal = restore_journal(path, &mut cp)?;
    Ok((cp, journal))
}

/// The history beside the checkpoint file `path`, read into `cp`'s state, and the journal
/// that continues it.
fn restore_journal(path: &Path, cp: &mut Checkpoint) -> Result<Journal, ScenarioError> {
    let history = path.with_file_name(HISTORY_FILE);
    Journal::restore(&history, cp.history, &mut cp.state.logs_mut())
}

/// Reads a checkpoint with its history.
///
/// # Errors
/// As [`read_with_journal`].
pub fn read(path: &Path) -> Result<Checkpoint, ScenarioError> {
    read_with_journal(path).map(|(cp, _)| cp)
}
