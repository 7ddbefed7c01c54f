//! Atomic file replacement: a reader sees either the old file or the complete new one.
//!
//! Output files are watched while a run goes on (ParaView reloads, a plot viewer refreshes)
//! and a run can be killed at any moment, so a half-written file must never appear under the
//! final name. The bytes go to a temporary file in the same directory (a rename is atomic only
//! within one file system), are flushed to disk, and the temporary file is renamed over the
//! target; finally the directory is synced so that the rename itself survives a crash.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temporary files of concurrent writes from the same process (threads writing
/// the same target); the process id distinguishes processes.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically (see the [module docs](self)).
///
/// # Errors
/// Any I/O error of creating, writing, syncing or renaming the temporary file, or
/// [`io::ErrorKind::InvalidInput`] when `path` has no file name. The temporary file is removed
/// on failure.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Streams the output of `f` to `path` atomically through a [`BufWriter`].
///
/// `f` writes the whole content; when it fails, the target is left untouched and its error is
/// returned.
///
/// # Errors
/// The error of `f`, or any I/O error as for [`write_atomic`].
pub fn write_atomic_with(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let file_name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("no file name in output path {}", path.display()),
        )
    })?;
    let dir = parent_dir(path);
    let temp = dir.join(temp_name(file_name));
    // `create_new` so that a stale file of another writer is never truncated under it.
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)?;
    match fill_and_rename(file, &temp, path, f) {
        Ok(()) => {
            sync_dir(dir);
            Ok(())
        }
        Err(error) => {
            // Best effort: the original error matters more than a failed clean-up.
            let _ = fs::remove_file(&temp);
            Err(error)
        }
    }
}

fn fill_and_rename(
    file: File,
    temp: &Path,
    target: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut writer = BufWriter::new(file);
    f(&mut writer)?;
    let file = writer
        .into_inner()
        .map_err(io::IntoInnerError::into_error)?;
    // Data must be on disk before the rename makes it visible, or a crash could leave an
    // empty file under the final name on file systems that reorder metadata and data.
    file.sync_all()?;
    drop(file);
    fs::rename(temp, target)
}

/// The directory holding `path`; a bare file name lives in the current directory.
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `.name.tmp.<pid>.<n>`: hidden, recognisably ours, unique per process and call.
fn temp_name(file_name: &std::ffi::OsStr) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut name = OsString::from(".");
    name.push(file_name);
    name.push(format!(".tmp.{}.{n}", std::process::id()));
    PathBuf::from(name)
}

/// Syncs the directory entry of the rename. Some platforms (Windows) cannot open a directory
/// as a file and some file systems refuse to sync one; the data itself is already safe then,
/// so errors are ignored.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("talus-output-atomic-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_overwrites_and_leaves_no_temp_file() {
        let dir = scratch_dir("basic");
        let path = dir.join("a.txt");
        write_atomic(&path, b"first version, longer").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"first version, longer");
        write_atomic(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        write_atomic_with(&path, |w| {
            w.write_all(b"third ")?;
            write!(w, "{}", 3)
        })
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"third 3");
        assert_eq!(entries(&dir), vec!["a.txt".to_string()]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn failed_writer_keeps_old_content_and_cleans_up() {
        let dir = scratch_dir("fail");
        let path = dir.join("b.txt");
        write_atomic(&path, b"old").unwrap();
        let result = write_atomic_with(&path, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("generator failed"))
        });
        assert_eq!(result.unwrap_err().to_string(), "generator failed");
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(entries(&dir), vec!["b.txt".to_string()]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_directory_is_an_error_not_a_panic() {
        let dir = scratch_dir("missing");
        let result = write_atomic(&dir.join("no/such/dir/c.txt"), b"x");
        assert_eq!(result.unwrap_err().kind(), io::ErrorKind::NotFound);
        assert!(write_atomic(Path::new("/"), b"x").is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
