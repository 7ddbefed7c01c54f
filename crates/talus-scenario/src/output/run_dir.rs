//! The output directory of a run: talus writes there only files it names as its own, keeps a
//! manifest of them, and holds a lock while it writes.
//!
//! Users keep their own things next to a run (a commented scenario file, figures for a
//! paper, a notebook), so talus must never overwrite or remove a file it did not write:
//! * every file a run writes is recorded in the manifest [`MANIFEST_FILE`] *before* it is
//!   first created, so a run killed at any moment never leaves a file of its own unlisted;
//! * a new run refuses a directory that holds a file under a name talus would write when
//!   that file is not listed in the directory's manifest (it belongs to the user), and
//!   refuses to replace an earlier run unless asked to; replacing removes exactly the files
//!   the manifest lists, and only names that talus writes, so a damaged or edited manifest
//!   cannot make it delete anything else;
//! * the directory is locked for as long as a run or resume writes into it (an advisory
//!   `flock` on [`LOCK_FILE`], released by the operating system when the process ends, so a
//!   killed run never leaves a stale lock): a second process on the same directory is
//!   refused instead of interleaving its rows with the first one's;
//! * temporary files of an atomic write that a killed run left behind are removed when the
//!   directory is next opened.
//!
//! The machinery ([`OwnedDir`]) serves every kind of directory talus writes into: a run's
//! ([`RunDir`], the names of [`RunNames`]) and a sweep's (`crate::sweep::dir`), each with its
//! own names and manifest; all take the same lock file, so that two talus processes never
//! write into one directory, whatever each of them is doing there.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};

use crate::error::ScenarioError;
use crate::run::io_error;

/// The scenario as run, overrides applied.
pub const SCENARIO_FILE: &str = "scenario.ron";
/// The machine-readable result of a run.
pub const SUMMARY_FILE: &str = "summary.json";
/// The run on one page for a person: parameters, status, answers, plots, timings.
pub const REPORT_FILE: &str = "report.html";
/// A vibrated bed's stroboscopic samples, one row per cycle of its drive.
pub const STROBE_FILE: &str = "stroboscopic.csv";
/// A chute flow's mean profiles across the depth, one row per layer.
pub const CHUTE_PROFILE_FILE: &str = "chute_profile.csv";
/// One row per output interval.
pub const TIMESERIES_FILE: &str = "timeseries.csv";
/// The ParaView collection of the frames.
pub const PVD_FILE: &str = "frames.pvd";
/// The state to resume from.
pub const CHECKPOINT_FILE: &str = "checkpoint.bin";
/// The append-only history beside the checkpoint (time-series rows, frames, measurements).
pub const HISTORY_FILE: &str = "checkpoint-history.bin";
/// The lock held while a process writes into the directory.
pub const LOCK_FILE: &str = ".talus.lock";
/// The list of files the run in this directory wrote, one relative path per line.
pub const MANIFEST_FILE: &str = ".talus-files";
/// Folder of the ParaView frames.
pub const FRAMES_DIR: &str = "frames";
/// Folder of the pieces of a checkpoint written by several processes.
pub const CHECKPOINT_PIECES_DIR: &str = "checkpoint";
/// Folder of the PNG plots.
pub const PLOTS_DIR: &str = "plots";
/// The file stems of every plot a run can draw (`plots/<stem>.png`).
pub const PLOT_STEMS: [&str; 13] = [
    "kinetic_energy",
    "coordination",
    "pile_profile",
    "density_profile",
    "intruder_height",
    "discharged_mass",
    "wall_force",
    "force_spectrum",
    "heap_slope",
    "transport_velocity",
    "chute_velocity_profile",
    "chute_solid_fraction",
    "chute_mean_velocity",
];

/// Files at the top of the directory that a run writes.
const TOP_FILES: [&str; 9] = [
    SCENARIO_FILE,
    SUMMARY_FILE,
    REPORT_FILE,
    TIMESERIES_FILE,
    STROBE_FILE,
    CHUTE_PROFILE_FILE,
    PVD_FILE,
    CHECKPOINT_FILE,
    HISTORY_FILE,
];

/// Most names listed in a message about the files found in a directory.
const LISTED_NAMES: usize = 6;

/// Whether `rel` (a `/`-separated path relative to the output directory) is a name a run
/// writes: one of the top-level files, a frame `frames/grains_NNNNNN.vtu` or
/// `frames/walls_NNNNNN.vtu`, a frame in pieces `frames/grains_NNNNNN.pvtu` with its pieces
/// `frames/grains_NNNNNN_pK.vtu`, a plot `plots/<stem>.png` of [`PLOT_STEMS`], or a piece
/// of a checkpoint `checkpoint/a_pK.bin` or `checkpoint/b_pK.bin`.
#[must_use]
pub fn is_own_name(rel: &str) -> bool {
    if TOP_FILES.contains(&rel) {
        return true;
    }
    if let Some(name) = rel.strip_prefix("frames/") {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let index = |s: &str| s.len() >= 6 && digits(s);
        if let Some(rest) = name.strip_prefix("walls_") {
            return rest.strip_suffix(".vtu").is_some_and(index);
        }
        let Some(rest) = name.strip_prefix("grains_") else {
            return false;
        };
        if let Some(frame) = rest.strip_suffix(".pvtu") {
            return index(frame);
        }
        return rest
            .strip_suffix(".vtu")
            .is_some_and(|stem| match stem.split_once("_p") {
                Some((frame, piece)) => index(frame) && digits(piece),
                None => index(stem),
            });
    }
    if let Some(name) = rel.strip_prefix("checkpoint/") {
        return name
            .strip_prefix("a_p")
            .or_else(|| name.strip_prefix("b_p"))
            .and_then(|rest| rest.strip_suffix(".bin"))
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
    }
    if let Some(name) = rel.strip_prefix("plots/") {
        return name
            .strip_suffix(".png")
            .is_some_and(|stem| PLOT_STEMS.contains(&stem));
    }
    false
}

/// The file name a temporary file of an atomic write of `name` has (`.name.tmp.PID.N`), or
/// `None` if `file_name` is not such a temporary file.
fn temp_target(file_name: &str) -> Option<&str> {
    let rest = file_name.strip_prefix('.')?;
    let (target, suffix) = rest.split_once(".tmp.")?;
    let (pid, n) = suffix.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(pid) && digits(n)).then_some(target)
}

/// The names of the files talus writes into one kind of output directory: what its
/// manifest may list, what is looked for before anything is written there, and which
/// temporary files are stale.
pub trait OwnNames {
    /// The manifest's file name (at the top of the directory).
    fn manifest(&self) -> &'static str;
    /// The folders, besides the top of the directory, that hold files of talus's.
    fn folders(&self) -> &'static [&'static str];
    /// Whether `rel` (a `/`-separated path relative to the directory) names one of those
    /// files.
    fn is_own(&self, rel: &str) -> bool;
}

/// The names of a run's files (see [`is_own_name`]), listed in [`MANIFEST_FILE`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RunNames;

impl OwnNames for RunNames {
    fn manifest(&self) -> &'static str {
        MANIFEST_FILE
    }

    fn folders(&self) -> &'static [&'static str] {
        &[FRAMES_DIR, PLOTS_DIR, CHECKPOINT_PIECES_DIR]
    }

    fn is_own(&self, rel: &str) -> bool {
        is_own_name(rel)
    }
}

/// A directory talus writes into, locked for as long as the value lives, with the manifest
/// of the files talus wrote there. Nothing is written into the directory until a file is
/// claimed (or stale temporaries are removed), so a directory refused after locking keeps
/// everything it held.
#[derive(Debug)]
pub struct OwnedDir<N> {
    root: PathBuf,
    names: N,
    /// Held open for the lifetime of the value: closing it releases the lock.
    _lock: File,
    /// The manifest opened for appending, once a file is first recorded.
    manifest: Option<File>,
    /// Files listed in the manifest.
    listed: BTreeSet<String>,
}

impl<N: OwnNames> OwnedDir<N> {
    /// Locks `root` (an existing directory) and reads its manifest.
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`] if another process writes into it;
    /// [`ScenarioError::Io`] for failures of the file system.
    pub fn lock(root: &Path, names: N) -> Result<OwnedDir<N>, ScenarioError> {
        let lock = lock(root, LOCK_FILE)?;
        let listed = read_manifest(root, &names)?;
        Ok(OwnedDir {
            root: root.to_path_buf(),
            names,
            _lock: lock,
            manifest: None,
            listed,
        })
    }

    /// The directory.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The path of `rel` (a `/`-separated name relative to the directory).
    #[must_use]
    pub fn join(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Whether the manifest lists `rel`.
    #[must_use]
    pub fn lists(&self, rel: &str) -> bool {
        self.listed.contains(rel)
    }

    /// Whether the directory has a manifest at all.
    #[must_use]
    pub fn has_manifest(&self) -> bool {
        self.manifest.is_some() || self.join(self.names.manifest()).is_file()
    }

    /// The files in the directory under names talus writes, listed or not.
    ///
    /// # Errors
    /// [`ScenarioError::Io`] if a folder cannot be read.
    pub fn present(&self) -> Result<BTreeSet<String>, ScenarioError> {
        let mut found = BTreeSet::new();
        for folder in std::iter::once(None).chain(self.names.folders().iter().map(Some)) {
            let dir = folder.map_or_else(|| self.root.clone(), |f| self.root.join(f));
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e)
                    if folder.is_some()
                        && matches!(
                            e.kind(),
                            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                        ) =>
                {
                    continue;
                }
                Err(source) => return Err(io_error(&dir, source)),
            };
            for entry in entries {
                let entry = entry.map_err(|source| io_error(&dir, source))?;
                if let Some(name) = entry.file_name().to_str() {
                    let rel = folder.map_or_else(|| name.to_string(), |f| format!("{f}/{name}"));
                    if self.names.is_own(&rel) {
                        found.insert(rel);
                    }
                }
            }
        }
        Ok(found)
    }

    /// Refuses the directory if it holds a file under a name talus writes that the manifest
    /// does not list: that file is the user's. `note` is added to the message (say, what a
    /// flag of the command does not do).
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`] naming those files; [`ScenarioError::Io`] if a folder
    /// cannot be read.
    pub fn refuse_foreign(&self, note: &str) -> Result<(), ScenarioError> {
        let present = self.present()?;
        let foreign: Vec<&String> = present.iter().filter(|f| !self.lists(f)).collect();
        if foreign.is_empty() {
            return Ok(());
        }
        Err(dir_error(
            &self.root,
            format!(
                "holds {} that talus would write but did not write here ({}): talus never \
                 overwrites files that are not its own{note}; move them elsewhere or choose \
                 another --out",
                plural(foreign.len(), "file"),
                list(foreign.iter().map(|s| s.as_str())),
            ),
        ))
    }

    /// The files the manifest lists that are in the directory.
    ///
    /// # Errors
    /// [`ScenarioError::Io`] if a folder cannot be read.
    pub fn listed_present(&self) -> Result<Vec<String>, ScenarioError> {
        let present = self.present()?;
        Ok(self
            .listed
            .iter()
            .filter(|f| present.contains(*f))
            .cloned()
            .collect())
    }

    /// Records `rel` in the manifest (once), before the file is first written, and returns
    /// its path. Folders on the way are created.
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`] if a file the manifest does not list is already there
    /// (a file of the user's under a name talus writes); [`ScenarioError::Io`] if the
    /// manifest cannot be extended or a folder created.
    pub fn claim(&mut self, rel: &str) -> Result<PathBuf, ScenarioError> {
        let path = self.join(rel);
        if self.listed.contains(rel) {
            return Ok(path);
        }
        debug_assert!(
            self.names.is_own(rel),
            "{rel} is not a name talus writes here"
        );
        if path.symlink_metadata().is_ok() {
            return Err(dir_error(
                &path,
                "is not a file of talus's here (the list of the files talus wrote in this \
                 directory does not name it): talus never overwrites files that are not its \
                 own; move it elsewhere"
                    .into(),
            ));
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|source| io_error(parent, source))?;
        }
        self.record(rel)?;
        Ok(path)
    }

    /// Records `rel`, a file already in the directory, as one of talus's: for directories
    /// an older talus wrote without a manifest.
    ///
    /// # Errors
    /// [`ScenarioError::Io`] if the manifest cannot be extended.
    pub fn adopt(&mut self, rel: &str) -> Result<(), ScenarioError> {
        if self.listed.contains(rel) || !self.names.is_own(rel) {
            return Ok(());
        }
        self.record(rel)
    }

    /// Appends `rel` to the manifest, synced: the line is on disk before the file it names
    /// exists.
    fn record(&mut self, rel: &str) -> Result<(), ScenarioError> {
        let path = self.join(self.names.manifest());
        let manifest = match &mut self.manifest {
            Some(file) => file,
            None => self.manifest.insert(open_manifest(&path)?),
        };
        manifest
            .write_all(format!("{rel}\n").as_bytes())
            .and_then(|()| manifest.sync_data())
            .map_err(|source| io_error(&path, source))?;
        self.listed.insert(rel.to_string());
        Ok(())
    }

    /// Removes exactly the files the manifest lists, then the folders if they are left
    /// empty, and empties the manifest. Anything else stays.
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`] naming a file that cannot be removed;
    /// [`ScenarioError::Io`] if the manifest cannot be emptied.
    pub fn remove_listed(&mut self) -> Result<(), ScenarioError> {
        for rel in &self.listed {
            let path = self.root.join(rel);
            match fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(dir_error(
                        &path,
                        format!("cannot remove this file of the earlier run: {e}"),
                    ));
                }
                _ => {}
            }
        }
        for folder in self.names.folders() {
            // Fails (and is meant to) when the folder holds files of the user's.
            let _ = fs::remove_dir(self.root.join(folder));
        }
        let path = self.join(self.names.manifest());
        if self.manifest.is_none() && path.is_file() {
            self.manifest = Some(open_manifest(&path)?);
        }
        if let Some(manifest) = &mut self.manifest {
            manifest
                .set_len(0)
                .and_then(|()| manifest.sync_data())
                .map_err(|source| io_error(&path, source))?;
        }
        self.listed.clear();
        Ok(())
    }

    /// Removes temporary files of atomic writes of talus's files, which a process killed
    /// during a write leaves behind. Only called while the lock is held, so no other talus
    /// process is writing them.
    ///
    /// # Errors
    /// [`ScenarioError::Io`] if one cannot be removed.
    pub fn remove_stale_temps(&self) -> Result<(), ScenarioError> {
        for folder in std::iter::once(None).chain(self.names.folders().iter().map(Some)) {
            let dir = folder.map_or_else(|| self.root.clone(), |f| self.root.join(f));
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(target) = name.to_str().and_then(temp_target) else {
                    continue;
                };
                let rel = folder.map_or_else(|| target.to_string(), |f| format!("{f}/{target}"));
                if self.names.is_own(&rel) {
                    let path = entry.path();
                    fs::remove_file(&path).map_err(|source| io_error(&path, source))?;
                }
            }
        }
        Ok(())
    }

    /// Whether nothing was ever recorded in the manifest.
    fn is_empty(&self) -> bool {
        self.listed.is_empty()
    }
}

/// An output directory of a run opened for writing: locked, with its manifest.
#[derive(Debug)]
pub struct RunDir {
    dir: OwnedDir<RunNames>,
    /// Whether the files of an earlier run are to be removed before the new one writes.
    replace: bool,
    /// Whether the directory was made for this run (then it goes again if nothing is
    /// ever written into it, e.g. when the scenario fails to build).
    created: bool,
}

impl RunDir {
    /// Opens `root` for a new run, creating it if needed, and locks it.
    ///
    /// With `replace` false, a directory that holds the files of an earlier run is refused;
    /// with `replace` true they are removed by [`RunDir::remove_earlier_run`] (called when the
    /// new run has been built, so a scenario that fails to build loses nothing). In either
    /// case a file under a name a run writes that the manifest does not list is the user's,
    /// and the directory is refused.
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`] for a path that is not a directory, a directory another
    /// process is writing into, an earlier run without `replace`, or files of the user's;
    /// [`ScenarioError::Io`] for failures of the file system.
    pub fn create(root: &Path, replace: bool) -> Result<RunDir, ScenarioError> {
        if root.exists() && !root.is_dir() {
            return Err(dir_error(
                root,
                "is not a directory; choose a directory for the outputs with --out".into(),
            ));
        }
        let created = !root.exists();
        fs::create_dir_all(root).map_err(|source| io_error(root, source))?;
        let dir = OwnedDir::lock(root, RunNames)?;
        let run = RunDir {
            dir,
            replace,
            created,
        };
        run.dir.refuse_foreign(if replace {
            " (--force replaces only the files of an earlier talus run)"
        } else {
            ""
        })?;
        let earlier = run.dir.listed_present()?;
        if !earlier.is_empty() && !replace {
            return Err(dir_error(
                root,
                format!(
                    "already holds a run ({}); continue it with `talus resume {}`, choose another \
                     --out, or pass --force to replace that run's files",
                    list(earlier.iter().map(String::as_str)),
                    root.display()
                ),
            ));
        }
        run.dir.remove_stale_temps()?;
        Ok(run)
    }

    /// Opens the directory of an existing run to continue it, and locks it.
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`] if it is not a directory, another process writes into
    /// it, or it holds no run of this talus (no manifest); [`ScenarioError::Io`] for
    /// failures of the file system.
    pub fn open(root: &Path) -> Result<RunDir, ScenarioError> {
        if !root.is_dir() {
            return Err(dir_error(
                root,
                "is not a directory of a run; give the --out directory of a `talus run`".into(),
            ));
        }
        let dir = OwnedDir::lock(root, RunNames)?;
        if !dir.has_manifest() {
            return Err(dir_error(
                root,
                format!(
                    "holds no run of this talus (no {MANIFEST_FILE}, the list of a run's files); \
                     start the run again with `talus run`"
                ),
            ));
        }
        dir.remove_stale_temps()?;
        Ok(RunDir {
            dir,
            replace: false,
            created: false,
        })
    }

    /// The directory.
    #[must_use]
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The path of `rel` (a `/`-separated name relative to the directory).
    #[must_use]
    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Whether the manifest lists `rel` (the run in this directory wrote it).
    #[must_use]
    pub fn lists(&self, rel: &str) -> bool {
        self.dir.lists(rel)
    }

    /// Removes the file `rel` when the manifest lists it (one already gone is fine); a
    /// file the run did not write is left alone. Returns whether the manifest lists it.
    ///
    /// # Errors
    /// [`ScenarioError::Io`] if the file cannot be removed.
    pub fn remove_own(&self, rel: &str) -> Result<bool, ScenarioError> {
        if !self.lists(rel) {
            return Ok(false);
        }
        let path = self.join(rel);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error(&path, e)),
            _ => Ok(true),
        }
    }

    /// Records `rel` in the manifest (once), before the file is first written, and returns
    /// its path. Folders on the way are created.
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`] if a file the manifest does not list is already there
    /// (a file of the user's, under a name that an older talus did not write, in the
    /// directory of a run it started); [`ScenarioError::Io`] if the manifest cannot be
    /// extended or a folder created.
    pub fn claim(&mut self, rel: &str) -> Result<PathBuf, ScenarioError> {
        self.dir.claim(rel)
    }

    /// Removes the files of the earlier run the directory held, if it was opened with
    /// `replace`: exactly the files its manifest lists, then the `frames` and `plots`
    /// folders if they are left empty. Anything else stays.
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`] naming a file that cannot be removed.
    pub fn remove_earlier_run(&mut self) -> Result<(), ScenarioError> {
        if !self.replace {
            return Ok(());
        }
        self.dir.remove_listed()?;
        self.replace = false;
        Ok(())
    }
}

impl Drop for RunDir {
    /// A directory made for a run that never wrote a file is removed again, so a scenario
    /// that fails to build leaves nothing behind.
    fn drop(&mut self) {
        if self.created && self.dir.is_empty() {
            let root = self.dir.path();
            let _ = fs::remove_file(root.join(MANIFEST_FILE));
            let _ = fs::remove_file(root.join(LOCK_FILE));
            let _ = fs::remove_dir(root);
        }
    }
}

/// Takes the directory's lock (the advisory lock of its file `name`), writing this
/// process's id into the lock file for messages.
pub(crate) fn lock(root: &Path, name: &str) -> Result<File, ScenarioError> {
    let path = root.join(name);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|source| io_error(&path, source))?;
    // fs4's flock (std's `File::try_lock` needs a newer Rust than this crate asks for).
    match fs4::FileExt::try_lock(&file) {
        Ok(()) => {}
        Err(fs4::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let who = if !holder.is_empty() && holder.bytes().all(|b| b.is_ascii_digit()) {
                format!("another talus process (pid {holder})")
            } else {
                "another talus process".to_string()
            };
            return Err(dir_error(
                root,
                format!(
                    "{who} is writing into this directory; wait until it has ended, or choose \
                     another --out"
                ),
            ));
        }
        Err(fs4::TryLockError::Error(source)) => return Err(io_error(&path, source)),
    }
    let pid = std::process::id().to_string();
    file.set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)).map(|_| ()))
        .and_then(|()| file.write_all(pid.as_bytes()))
        .map_err(|source| io_error(&path, source))?;
    Ok(file)
}

/// The names the manifest of `root` lists that are names of `names`'s files; anything else
/// in it (a partial last line of a killed write, an edited line) is ignored.
fn read_manifest(root: &Path, names: &impl OwnNames) -> Result<BTreeSet<String>, ScenarioError> {
    let path = root.join(names.manifest());
    let text = match fs::read(&path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(source) => return Err(io_error(&path, source)),
    };
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    Ok(complete
        .lines()
        .filter(|l| names.is_own(l) && is_plain_relative(l))
        .map(str::to_string)
        .collect())
}

/// Opens the manifest at `path` for appending, creating it; a partial last line (a killed
/// write) is ended first.
fn open_manifest(path: &Path) -> Result<File, ScenarioError> {
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(|source| io_error(path, source))?;
    let len = file
        .metadata()
        .map_err(|source| io_error(path, source))?
        .len();
    if len > 0 {
        let mut last = [0u8];
        file.seek(SeekFrom::Start(len - 1))
            .and_then(|_| file.read_exact(&mut last))
            .map_err(|source| io_error(path, source))?;
        if last[0] != b'\n' {
            file.write_all(b"\n")
                .map_err(|source| io_error(path, source))?;
        }
    }
    Ok(file)
}

/// Whether `rel` is relative and has no `..` or `.` parts.
fn is_plain_relative(rel: &str) -> bool {
    Path::new(rel)
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
}

/// Up to [`LISTED_NAMES`] names, then how many more.
fn list<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let n = names.len();
    let mut text: Vec<&str> = names.take(LISTED_NAMES).collect();
    let more = n.saturating_sub(text.len());
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    text.sort_unstable();
    format!("{}{tail}", text.join(", "))
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("a {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub(crate) fn dir_error(path: &Path, problem: String) -> ScenarioError {
    ScenarioError::OutputDir {
        path: path.to_path_buf(),
        problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("talus-run-dir-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn own_names_are_recognised_and_nothing_else() {
        for own in [
            "scenario.ron",
            "report.html",
            "checkpoint.bin",
            "checkpoint-history.bin",
            "frames/grains_000000.vtu",
            "frames/walls_1234567.vtu",
            "frames/grains_000003.pvtu",
            "frames/grains_000003_p0.vtu",
            "frames/grains_000003_p12.vtu",
            "plots/kinetic_energy.png",
            "checkpoint/a_p0.bin",
            "checkpoint/b_p63.bin",
        ] {
            assert!(is_own_name(own), "{own}");
        }
        for other in [
            "notes.txt",
            "plots/fig1.png",
            "frames/grains_12.vtu",
            "frames/grains_00000x.vtu",
            "frames/other.vtu",
            "frames/walls_000003.pvtu",
            "frames/grains_000003_p.vtu",
            "frames/grains_000003_px.vtu",
            "frames/grains_000003_p1.pvtu",
            "frames/grains_03_p1.vtu",
            "../scenario.ron",
            "sub/scenario.ron",
            ".talus-files",
            "checkpoint/c_p0.bin",
            "checkpoint/a_p.bin",
            "checkpoint/a_p1x.bin",
            "checkpoint/a_p1.vtu",
            "checkpoint/notes.txt",
        ] {
            assert!(!is_own_name(other), "{other}");
        }
        assert_eq!(temp_target(".summary.json.tmp.123.0"), Some("summary.json"));
        assert_eq!(temp_target(".summary.json.tmp.12x.0"), None);
        assert_eq!(temp_target("summary.json.tmp.1.0"), None);
    }

    #[test]
    fn a_second_opener_is_refused_while_the_first_holds_the_lock() {
        let root = scratch("lock");
        fs::create_dir_all(&root).unwrap();
        fs::write(root.join(MANIFEST_FILE), b"").unwrap();
        let first = RunDir::create(&root, false).unwrap();
        let err = RunDir::open(&root).unwrap_err().to_string();
        assert!(err.contains("is writing into this directory"), "{err}");
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(first);
        RunDir::open(&root).unwrap();
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn replacing_removes_listed_files_only() {
        let root = scratch("replace");
        let mut dir = RunDir::create(&root, false).unwrap();
        for rel in [
            "summary.json",
            "report.html",
            "frames/grains_000000.vtu",
            "plots/coordination.png",
        ] {
            let path = dir.claim(rel).unwrap();
            fs::write(path, b"x").unwrap();
        }
        fs::write(root.join("plots/fig1.png"), b"mine").unwrap();
        fs::write(root.join("notes.txt"), b"mine").unwrap();
        drop(dir);
        let err = RunDir::create(&root, false).unwrap_err().to_string();
        assert!(err.contains("already holds a run"), "{err}");
        let mut dir = RunDir::create(&root, true).unwrap();
        dir.remove_earlier_run().unwrap();
        assert!(!root.join("summary.json").exists());
        assert!(!root.join("report.html").exists());
        assert!(!root.join("frames").exists());
        assert_eq!(fs::read(root.join("plots/fig1.png")).unwrap(), b"mine");
        assert_eq!(fs::read(root.join("notes.txt")).unwrap(), b"mine");
        drop(dir);
        // The manifest is empty now: a new run may start without replacing anything.
        drop(RunDir::create(&root, false).unwrap());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn files_of_the_user_under_talus_names_are_refused_even_with_replace() {
        let root = scratch("foreign");
        fs::create_dir_all(root.join("frames")).unwrap();
        fs::write(root.join("scenario.ron"), b"// mine").unwrap();
        fs::write(root.join("frames/walls_000003.vtu"), b"mine").unwrap();
        for replace in [false, true] {
            let err = RunDir::create(&root, replace).unwrap_err().to_string();
            assert!(
                err.contains("frames/walls_000003.vtu, scenario.ron"),
                "{err}"
            );
            assert!(err.contains("never overwrites"), "{err}");
        }
        assert_eq!(fs::read(root.join("scenario.ron")).unwrap(), b"// mine");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_file_of_the_user_is_never_claimed() {
        // A run directory whose manifest does not list a report (as one of a talus that
        // wrote none) and the user's own report.html beside it.
        let root = scratch("claim");
        fs::create_dir_all(&root).unwrap();
        fs::write(root.join(MANIFEST_FILE), "summary.json\n").unwrap();
        fs::write(root.join("summary.json"), b"{}").unwrap();
        fs::write(root.join(REPORT_FILE), b"my report").unwrap();
        let mut dir = RunDir::open(&root).unwrap();
        assert!(dir.lists(SUMMARY_FILE));
        assert!(!dir.lists(REPORT_FILE));
        assert_eq!(dir.claim(SUMMARY_FILE).unwrap(), root.join(SUMMARY_FILE));
        let err = dir.claim(REPORT_FILE).unwrap_err().to_string();
        assert!(
            err.contains("report.html") && err.contains("never overwrites"),
            "{err}"
        );
        assert_eq!(fs::read(root.join(REPORT_FILE)).unwrap(), b"my report");
        assert!(!dir.lists(REPORT_FILE));
        drop(dir);
        // A new run in that directory is refused outright.
        fs::remove_file(root.join(MANIFEST_FILE)).unwrap();
        fs::remove_file(root.join(SUMMARY_FILE)).unwrap();
        for replace in [false, true] {
            let err = RunDir::create(&root, replace).unwrap_err().to_string();
            assert!(err.contains("(report.html)"), "{err}");
        }
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_tampered_manifest_cannot_remove_other_files() {
        let root = scratch("tampered");
        fs::create_dir_all(&root).unwrap();
        fs::write(root.join("precious.txt"), b"mine").unwrap();
        fs::write(
            root.join(MANIFEST_FILE),
            "precious.txt\n../precious.txt\n/etc/passwd\nsummary.json\nsummary.js",
        )
        .unwrap();
        fs::write(root.join("summary.json"), b"{}").unwrap();
        let mut dir = RunDir::create(&root, true).unwrap();
        dir.remove_earlier_run().unwrap();
        assert!(root.join("precious.txt").exists());
        assert!(!root.join("summary.json").exists());
        drop(dir);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn stale_temporary_files_are_removed_and_others_kept() {
        let root = scratch("temps");
        fs::create_dir_all(root.join("frames")).unwrap();
        let stale = [
            ".summary.json.tmp.99999.3",
            "frames/.grains_000001.vtu.tmp.1.0",
        ];
        for rel in stale {
            fs::write(root.join(rel), b"partial").unwrap();
        }
        fs::write(root.join(".notes.txt.tmp.1.0"), b"mine").unwrap();
        drop(RunDir::create(&root, false).unwrap());
        for rel in stale {
            assert!(!root.join(rel).exists(), "{rel}");
        }
        assert!(root.join(".notes.txt.tmp.1.0").exists());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_file_is_not_a_directory() {
        let root = scratch("file");
        fs::create_dir_all(root.parent().unwrap()).unwrap();
        fs::write(&root, b"x").unwrap();
        let err = RunDir::create(&root, false).unwrap_err().to_string();
        assert!(err.contains("is not a directory"), "{err}");
        fs::remove_file(&root).unwrap();
    }
}
