//! The history of a run beside its checkpoint, append-only, so that a long run's checkpoint
//! I/O grows with its state and not with its past.
//!
//! A run keeps lists that only grow — the rows of its time series, its frames, the samples
//! of its measurements. Written whole into every checkpoint, they would make the checkpoint
//! I/O of a run quadratic in its length. Instead each such list is an [`AppendLog`]: in a
//! checkpoint only its length is stored, and the items added since the previous checkpoint
//! go, as one record, into the history file ([`HISTORY_FILE`]) just before the checkpoint is
//! written. The checkpoint names the history it belongs to with a [`HistoryMark`] (length,
//! record count and a digest of the records' checksums), so a resume reads exactly the
//! records of its checkpoint and drops any written by a checkpoint that a kill interrupted.
//!
//! The file: the magic `TALUSHI\0` and a little-endian `u32` layout version, then records of
//! `[payload length: u64][CRC-32C of the payload: u32][payload]`; a payload is the postcard
//! encoding of one byte string per log (its new items, postcard-encoded), in the fixed order
//! in which the run state lists its logs.
//!
//! [`HISTORY_FILE`]: crate::output::run_dir::HISTORY_FILE

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::checksum::{crc32c, crc32c_append};
use crate::error::ScenarioError;
use crate::run::io_error;

/// First bytes of a history file.
const MAGIC: &[u8; 8] = b"TALUSHI\0";
/// Layout version of the history file.
const FORMAT: u32 = 1;
/// Bytes of the file header.
const HEADER: u64 = 12;
/// Bytes of a record's header (payload length and checksum).
const RECORD_HEADER: u64 = 12;

/// A list that only grows. In memory it holds every item; serialized (in a checkpoint) it
/// is only its length, its items being kept in the run's history (see the [module
/// docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct AppendLog<T> {
    items: Vec<T>,
    /// The length a log read from a checkpoint has once its history is restored.
    expected: usize,
}

impl<T> AppendLog<T> {
    /// An empty log.
    #[must_use]
    pub fn new() -> Self {
        AppendLog {
            items: Vec::new(),
            expected: 0,
        }
    }

    /// Appends an item.
    pub fn push(&mut self, item: T) {
        self.items.push(item);
        self.expected = self.items.len();
    }
}

impl<T> Default for AppendLog<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> From<Vec<T>> for AppendLog<T> {
    fn from(items: Vec<T>) -> Self {
        let expected = items.len();
        AppendLog { items, expected }
    }
}

impl<T> Deref for AppendLog<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items
    }
}

impl<T> Serialize for AppendLog<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.items.len() as u64)
    }
}

impl<'de, T> Deserialize<'de> for AppendLog<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let expected = u64::deserialize(deserializer)?;
        Ok(AppendLog {
            items: Vec::new(),
            expected: usize::try_from(expected).map_err(serde::de::Error::custom)?,
        })
    }
}

/// A log whose new items can be written to and read back from the history, whatever their
/// type.
pub trait Journaled {
    /// Items now.
    fn len(&self) -> usize;
    /// Whether it holds no item.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The items from index `from` on, encoded.
    ///
    /// # Errors
    /// An item that cannot be encoded.
    fn encode_since(&self, from: usize) -> Result<Vec<u8>, postcard::Error>;
    /// Appends the items of a byte string made by [`Journaled::encode_since`].
    ///
    /// # Errors
    /// Bytes that do not decode.
    fn extend_encoded(&mut self, bytes: &[u8]) -> Result<(), postcard::Error>;
    /// The length the log must have once its history is restored.
    fn expected_len(&self) -> usize;
}

impl<T: Serialize + DeserializeOwned> Journaled for AppendLog<T> {
    fn len(&self) -> usize {
        self.items.len()
    }

    fn encode_since(&self, from: usize) -> Result<Vec<u8>, postcard::Error> {
        postcard::to_stdvec(&self.items[from.min(self.items.len())..])
    }

    fn extend_encoded(&mut self, bytes: &[u8]) -> Result<(), postcard::Error> {
        let more: Vec<T> = postcard::from_bytes(bytes)?;
        self.items.extend(more);
        Ok(())
    }

    fn expected_len(&self) -> usize {
        self.expected
    }
}

/// Where the history of a checkpoint ends: the file's length, the number of records and a
/// digest of their checksums (CRC-32C over the little-endian checksums in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryMark {
    /// Length of the history file up to the last record of the checkpoint.
    pub bytes: u64,
    /// Records up to there.
    pub records: u64,
    /// Digest of the records' checksums.
    pub digest: u32,
}

impl HistoryMark {
    /// The mark of a history without records.
    pub const EMPTY: HistoryMark = HistoryMark {
        bytes: HEADER,
        records: 0,
        digest: 0,
    };
}

/// The history file of a run being written.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    /// The mark of the last checkpoint written.
    committed: HistoryMark,
    /// The log lengths of the last checkpoint written.
    persisted: Vec<usize>,
    /// A record written but not yet covered by a checkpoint: its mark and log lengths.
    pending: Option<(HistoryMark, Vec<usize>)>,
}

impl Journal {
    /// The history of a new run at `path` before its file is written (by
    /// [`Journal::create`], which replaces it): nothing is read or written.
    pub(crate) fn unwritten(path: &Path) -> Journal {
        Journal {
            path: path.to_path_buf(),
            committed: HistoryMark::EMPTY,
            persisted: Vec::new(),
            pending: None,
        }
    }

    /// Starts the history of a new run at `path` (an earlier file there is replaced).
    ///
    /// # Errors
    /// [`ScenarioError::Io`] if the file cannot be written.
    pub fn create(path: &Path) -> Result<Journal, ScenarioError> {
        let io = |source| io_error(path, source);
        let mut file = File::create(path).map_err(io)?;
        file.write_all(MAGIC).map_err(io)?;
        file.write_all(&FORMAT.to_le_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(Journal {
            path: path.to_path_buf(),
            committed: HistoryMark::EMPTY,
            persisted: Vec::new(),
            pending: None,
        })
    }

    /// Reads the history of a checkpoint whose mark is `mark` from `path` into `logs` (read
    /// from that checkpoint, in the run state's order) and returns the journal to continue
    /// it. Records after the mark (from a checkpoint that was never completed) are ignored
    /// and overwritten by the journal's next record.
    ///
    /// # Errors
    /// [`ScenarioError::Checkpoint`] if the file is missing, damaged, or not the history of
    /// this checkpoint.
    pub fn restore(
        path: &Path,
        mark: HistoryMark,
        logs: &mut [&mut dyn Journaled],
    ) -> Result<Journal, ScenarioError> {
        let bad = |problem: String| ScenarioError::Checkpoint {
            path: path.to_path_buf(),
            problem,
        };
        let mut file = File::open(path).map_err(|e| {
            bad(format!(
                "the history of the checkpoint cannot be opened ({e}); it is written beside \
                     checkpoint.bin and both are needed to resume"
            ))
        })?;
        let len = file.metadata().map_err(|e| io_error(path, e))?.len();
        if len < mark.bytes {
            return Err(bad(format!(
                "is {len} bytes long, shorter than the {} bytes its checkpoint was written with: \
                 it was truncated or replaced",
                mark.bytes
            )));
        }
        let mut bytes = vec![0u8; usize::try_from(mark.bytes).map_err(|e| bad(e.to_string()))?];
        file.read_exact(&mut bytes).map_err(|e| io_error(path, e))?;
        if bytes.len() < HEADER as usize || &bytes[..8] != MAGIC {
            return Err(bad("is not a talus checkpoint history".into()));
        }
        let format = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if format != FORMAT {
            return Err(bad(format!(
                "history layout version {format}; this talus reads version {FORMAT}"
            )));
        }
        let mut at = HEADER as usize;
        let mut records = 0u64;
        let mut digest = 0u32;
        while at < bytes.len() {
            let Some(header) = bytes.get(at..at + RECORD_HEADER as usize) else {
                return Err(bad(format!("a record header at byte {at} is cut off")));
            };
            let length = u64::from_le_bytes(header[..8].try_into().unwrap_or_default());
            let crc = u32::from_le_bytes(header[8..].try_into().unwrap_or_default());
            let start = at + RECORD_HEADER as usize;
            let end = usize::try_from(length)
                .ok()
                .and_then(|l| start.checked_add(l))
                .filter(|&e| e <= bytes.len())
                .ok_or_else(|| bad(format!("the record at byte {at} is cut off or damaged")))?;
            let payload = &bytes[start..end];
            if crc32c(payload) != crc {
                return Err(bad(format!(
                    "the record at byte {at} is damaged (its checksum does not match)"
                )));
            }
            let parts: Vec<Vec<u8>> = postcard::from_bytes(payload)
                .map_err(|e| bad(format!("the record at byte {at} does not decode: {e}")))?;
            if parts.len() != logs.len() {
                return Err(bad(format!(
                    "a record holds {} lists where the run has {}",
                    parts.len(),
                    logs.len()
                )));
            }
            for (log, part) in logs.iter_mut().zip(&parts) {
                log.extend_encoded(part)
                    .map_err(|e| bad(format!("the record at byte {at} does not decode: {e}")))?;
            }
            digest = crc32c_append(digest, &crc.to_le_bytes());
            records += 1;
            at = end;
        }
        if records != mark.records || digest != mark.digest {
            return Err(bad(
                "does not belong to checkpoint.bin (its records differ from those the \
                 checkpoint was written with)"
                    .into(),
            ));
        }
        for (k, log) in logs.iter().enumerate() {
            if log.len() != log.expected_len() {
                return Err(bad(format!(
                    "list {k} has {} items where the checkpoint expects {}",
                    log.len(),
                    log.expected_len()
                )));
            }
        }
        // Records after the mark belong to a checkpoint that was never completed; the next
        // append writes over them. (They are not cut off here: reading a checkpoint must not
        // change the files of a run that may still be going on.)
        Ok(Journal {
            path: path.to_path_buf(),
            committed: mark,
            persisted: logs.iter().map(|l| l.len()).collect(),
            pending: None,
        })
    }

    /// Appends the items added to `logs` since the last checkpoint as one record, synced
    /// to disk, and returns the mark for the checkpoint about to be written; the record
    /// counts once [`Journal::commit`] is called after the checkpoint is safely written.
    /// A record of an earlier attempt that was never committed is overwritten.
    ///
    /// # Errors
    /// [`ScenarioError::Io`] if the file cannot be written.
    pub fn append(&mut self, logs: &[&dyn Journaled]) -> Result<HistoryMark, ScenarioError> {
        let parts: Vec<Vec<u8>> = logs
            .iter()
            .enumerate()
            .map(|(k, log)| log.encode_since(self.persisted.get(k).copied().unwrap_or(0)))
            .collect::<Result<_, _>>()
            .map_err(|e| self.encode_error(&e))?;
        let payload = postcard::to_stdvec(&parts).map_err(|e| self.encode_error(&e))?;
        let crc = crc32c(&payload);
        let io = |source| io_error(&self.path, source);
        let mut file = OpenOptions::new()
            .write(true)
            .open(&self.path)
            .map_err(io)?;
        file.set_len(self.committed.bytes).map_err(io)?;
        file.seek(SeekFrom::Start(self.committed.bytes))
            .map_err(io)?;
        let mut record = Vec::with_capacity(payload.len() + RECORD_HEADER as usize);
        record.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        record.extend_from_slice(&crc.to_le_bytes());
        record.extend_from_slice(&payload);
        file.write_all(&record).map_err(io)?;
        file.sync_data().map_err(io)?;
        let mark = HistoryMark {
            bytes: self.committed.bytes + record.len() as u64,
            records: self.committed.records + 1,
            digest: crc32c_append(self.committed.digest, &crc.to_le_bytes()),
        };
        self.pending = Some((mark, logs.iter().map(|l| l.len()).collect()));
        Ok(mark)
    }

    /// Marks the record of the last [`Journal::append`] as covered by a checkpoint.
    pub fn commit(&mut self) {
        if let Some((mark, lengths)) = self.pending.take() {
            self.committed = mark;
            self.persisted = lengths;
        }
    }

    fn encode_error(&self, e: &postcard::Error) -> ScenarioError {
        ScenarioError::Checkpoint {
            path: self.path.clone(),
            problem: format!("the run's history cannot be encoded: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh file path in a directory of its own, removed again when the guard drops.
    fn scratch(name: &str) -> (PathBuf, Cleanup) {
        let dir = std::env::temp_dir().join(format!("talus-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        (dir.join("history.bin"), Cleanup(dir))
    }

    /// Removes a test's directory when dropped, whether the test passed or not.
    struct Cleanup(PathBuf);

    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Two logs of different types, as a run state has them.
    #[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
    struct State {
        rows: AppendLog<Vec<f64>>,
        names: AppendLog<String>,
        step: u64,
    }

    impl State {
        fn logs(&self) -> [&dyn Journaled; 2] {
            [&self.rows, &self.names]
        }
        fn logs_mut(&mut self) -> [&mut dyn Journaled; 2] {
            [&mut self.rows, &mut self.names]
        }
    }

    fn checkpoint(journal: &mut Journal, state: &State) -> (Vec<u8>, HistoryMark) {
        let mark = journal.append(&state.logs()).unwrap();
        journal.commit();
        (postcard::to_stdvec(state).unwrap(), mark)
    }

    fn restored(path: &Path, bytes: &[u8], mark: HistoryMark) -> Result<State, ScenarioError> {
        let mut state: State = postcard::from_bytes(bytes).unwrap();
        Journal::restore(path, mark, &mut state.logs_mut())?;
        Ok(state)
    }

    #[test]
    fn history_restores_every_checkpoint_and_each_record_holds_only_new_items() {
        let (path, _cleanup) = scratch("restore");
        let mut journal = Journal::create(&path).unwrap();
        let mut state = State::default();
        let mut saved = Vec::new();
        let mut sizes = vec![std::fs::metadata(&path).unwrap().len()];
        for k in 0..5u64 {
            for i in 0..3 {
                state.rows.push(vec![k as f64, i as f64, 0.1 * i as f64]);
            }
            state.names.push(format!("frame {k}"));
            state.step = k;
            saved.push(checkpoint(&mut journal, &state));
            sizes.push(std::fs::metadata(&path).unwrap().len());
        }
        // Every record is the same size: it holds the new items only.
        let records: Vec<u64> = sizes.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(records.windows(2).all(|w| w[0] == w[1]), "{records:?}");
        // The last checkpoint restores everything.
        let (bytes, mark) = saved.last().unwrap();
        assert_eq!(restored(&path, bytes, *mark).unwrap(), state);
    }

    #[test]
    fn an_uncommitted_record_is_dropped_on_resume_and_overwritten_by_the_next() {
        let (path, _cleanup) = scratch("uncommitted");
        let mut journal = Journal::create(&path).unwrap();
        let mut state = State::default();
        state.rows.push(vec![1.0]);
        state.names.push("a".into());
        let (bytes, mark) = checkpoint(&mut journal, &state);
        // A checkpoint that was killed after its history record was written.
        state.rows.push(vec![2.0]);
        journal.append(&state.logs()).unwrap();
        let mut earlier: State = postcard::from_bytes(&bytes).unwrap();
        let mut resumed = Journal::restore(&path, mark, &mut earlier.logs_mut()).unwrap();
        assert_eq!(earlier.rows.len(), 1);
        earlier.rows.push(vec![3.0]);
        let mark = resumed.append(&earlier.logs()).unwrap();
        resumed.commit();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), mark.bytes);
        let bytes = postcard::to_stdvec(&earlier).unwrap();
        assert_eq!(restored(&path, &bytes, mark).unwrap(), earlier);

        // Within one run, a failed checkpoint's record is replaced by the next one.
        let mut journal = Journal::create(&path).unwrap();
        let mut state = State::default();
        state.rows.push(vec![1.0]);
        journal.append(&state.logs()).unwrap();
        state.rows.push(vec![2.0]);
        let (bytes, mark) = checkpoint(&mut journal, &state);
        assert_eq!(restored(&path, &bytes, mark).unwrap(), state);
    }

    #[test]
    fn damage_and_a_foreign_history_are_refused() {
        let (path, _cleanup) = scratch("damage");
        let mut journal = Journal::create(&path).unwrap();
        let mut state = State::default();
        for k in 0..4 {
            state.rows.push(vec![k as f64; 4]);
            state.names.push(k.to_string());
            checkpoint(&mut journal, &state);
        }
        let (bytes, mark) = checkpoint(&mut journal, &state);
        let good = std::fs::read(&path).unwrap();
        for i in 0..good.len() {
            let mut damaged = good.clone();
            damaged[i] ^= 0x5A;
            std::fs::write(&path, &damaged).unwrap();
            let err = restored(&path, &bytes, mark);
            assert!(
                matches!(err, Err(ScenarioError::Checkpoint { .. })),
                "byte {i}: {err:?}"
            );
        }
        // Cut short.
        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert!(restored(&path, &bytes, mark).is_err());
        // The history of another run with the same shape.
        let mut other = Journal::create(&path).unwrap();
        let mut state = State::default();
        for k in 0..5 {
            if k < 4 {
                state.rows.push(vec![k as f64 + 0.5; 4]);
                state.names.push(k.to_string());
            }
            other.append(&state.logs()).unwrap();
            other.commit();
        }
        assert_eq!(std::fs::read(&path).unwrap().len(), good.len());
        let err = restored(&path, &bytes, mark).unwrap_err().to_string();
        assert!(err.contains("does not belong"), "{err}");
    }
}
