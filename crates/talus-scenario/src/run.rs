//! The run: step the world to the scenario's end, pour grains, let the probes measure,
//! write the time series, frames, checkpoints, plots and the summary, and stop with a clear
//! message if the simulation blows up.
//!
//! Everything that decides what happens next is either in the world (its snapshot) or in
//! [`RunState`]; both go into each checkpoint, so [`Runner::resume`] continues exactly.
//! Events are scheduled by step count, never by comparing accumulated times.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use talus_geom::Aabb;
use talus_geom::glam::DVec3;
use talus_sim::distribute::{Exchange, SnapshotFrame, SnapshotPart, SnapshotShare};
use talus_sim::force::ForceModelRegistry;
use talus_sim::{GrainId, GrainState, StepStats, WorldSnapshot};

use crate::blowup::{BlowUpCheck, Limits};
use crate::build::{Experiment, build_deferred, build_with_shapes, grain_desc};
use crate::checkpoint::{self, CheckpointRef, Pieces, piece_file};
use crate::error::ScenarioError;
use crate::frames::{
    frame_files, frame_piece, grain_region, remove_other_layout, write_frame, write_grain_pieces,
    write_grains, write_walls,
};
use crate::journal::{AppendLog, Journal, Journaled};
use crate::load::{parse, to_ron};
use crate::output::csv::{Column, TimeSeries};
use crate::output::pvd::{PvdEntry, append_pvd, write_pvd};
use crate::output::run_dir::{HISTORY_FILE, REPORT_FILE, RunDir, SCENARIO_FILE, SUMMARY_FILE};
use crate::placement::{PlacedGrain, grain_rng, jittered, overlaps_wall_at, random_rotation};
use crate::population_ids::PopulationsById;
use crate::probe::{Census, GrainRecord, Probe, Sample, up_direction};
use crate::schema::Scenario;
use crate::seeds::{run_companions, seed_count};
use crate::summary::{Status, write_outputs, write_summary_and_report};

pub use crate::output::run_dir::{CHECKPOINT_FILE, PVD_FILE, TIMESERIES_FILE};

/// How a run is going, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Simulated time.
    pub time: f64,
    /// Simulated time at the end.
    pub end: f64,
    /// Steps taken.
    pub steps: u64,
    /// Steps of the whole run.
    pub total_steps: u64,
    /// Steps per wall-clock second in this session.
    pub steps_per_second: f64,
    /// Grains now.
    pub grains: usize,
    /// Contacts in the last step.
    pub contacts: usize,
    /// Which of the scenario's seeds this run is (0: its own seed; see [`crate::seeds`]).
    pub seed_index: usize,
    /// How many seeds the scenario is run with.
    pub seed_count: usize,
}

/// The run's own state (besides the world): saved in every checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunState {
    /// Rows written so far.
    pub series: TimeSeries,
    /// The measurements.
    pub probes: Vec<Probe>,
    /// Grains poured so far, per population.
    pub poured: Vec<usize>,
    /// Next pouring site to try, per population.
    pub site_cursor: Vec<usize>,
    /// Step of the last grain dripped, per population (none before the first).
    pub last_drip_step: Vec<Option<u64>>,
    /// Quiet moments at which a dripped grain had to wait because a grain lay at its
    /// release point, per population.
    pub drip_blocked: Vec<u64>,
    /// Population of each grain id.
    pub grain_population: PopulationsById,
    /// Frames written so far.
    pub frames: AppendLog<PvdEntry>,
    /// Largest relative overlap seen.
    pub max_overlap_ratio: f64,
    /// Time at the end of the step that first reached [`RunState::max_overlap_ratio`] (0
    /// before any overlap): where in the run to look, since the deepest overlap of a step
    /// mostly falls between the rows of the time series.
    pub max_overlap_time: f64,
    /// Sum over steps of the number of grains.
    pub grain_steps: u64,
    /// Wall-clock seconds of the run so far, in all sessions.
    pub wall_seconds: f64,
    /// Wall-clock seconds per stage: predict, bounds, broad, narrow, forces, correct.
    pub stage_seconds: [f64; 6],
    /// Contacts and coordination of the last step.
    pub last_contacts: usize,
    /// Mean contacts per grain in the last step.
    pub last_coordination: f64,
    /// Whether the run ended early, at rest.
    pub at_rest: bool,
    /// Limits beyond which the run has blown up.
    pub limits: Limits,
    /// Time of the last checkpoint written.
    pub last_checkpoint: Option<f64>,
}

impl RunState {
    /// The lists that only grow, in a fixed order: time-series rows, frames, then each
    /// probe's (see [`crate::journal`]).
    #[must_use]
    pub fn logs(&self) -> Vec<&dyn Journaled> {
        let mut logs: Vec<&dyn Journaled> = vec![&self.series.rows, &self.frames];
        for probe in &self.probes {
            logs.extend(probe.logs());
        }
        logs
    }

    /// See [`RunState::logs`].
    pub fn logs_mut(&mut self) -> Vec<&mut dyn Journaled> {
        let mut logs: Vec<&mut dyn Journaled> = vec![&mut self.series.rows, &mut self.frames];
        for probe in &mut self.probes {
            logs.extend(probe.logs_mut());
        }
        logs
    }
}

/// A run in progress.
pub struct Runner {
    /// The experiment.
    pub exp: Experiment,
    /// The run's state.
    pub state: RunState,
    out: PathBuf,
    /// Where this process writes its pieces of the frames of a run whose grains are split
    /// between processes: the run's output directory (see [`Runner::write_pieces_into`]).
    pieces_out: PathBuf,
    dir: RunDir,
    journal: Journal,
    total_steps: u64,
    output_every: u64,
    frame_every: Option<u64>,
    checkpoint_every: Option<u64>,
    /// The force models the run was built with, for its companion runs (other seeds).
    registry: ForceModelRegistry,
    /// Whether this process writes the run's files (the first of a distributed run does;
    /// the others send it their measures and write their own pieces of the frames and
    /// checkpoints).
    writes_files: bool,
    /// The whole run's grains, as last counted.
    stock: Stock,
    /// The set of piece files the last checkpoint in pieces was written in (the next one
    /// goes into the other, see [`crate::checkpoint`]); none before the first.
    pieces_set: Option<u8>,
    /// Whether a new run's first files (its history and scenario, in place of an earlier
    /// run's) are still to be written, by [`Runner::begin`].
    start_files_pending: bool,
    /// Whether the grains placed at the start of a decomposed run are still to be added, by
    /// [`Runner::place_start`].
    start_grains_pending: bool,
}

/// The whole run's grain count and kinetic energy, counted at each row of the time series
/// (in a decomposed run from every process), for the summary: a summary written by one
/// process alone (after an error on it) must not wait for the others.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stock {
    grains: usize,
    kinetic_energy: f64,
}

/// Steps in an interval (at least one).
fn steps_in(interval: f64, dt: f64) -> u64 {
    ((interval / dt).round() as u64).max(1)
}

impl Runner {
    /// A new run of `scenario` (read from `path`), writing into `out`, which must not hold
    /// an earlier run or files of the user's under names a run writes (see [`RunDir`]).
    ///
    /// # Errors
    /// Any build error, or an output directory that cannot be used.
    pub fn start(
        scenario: &Scenario,
        path: &Path,
        registry: &ForceModelRegistry,
        threads: usize,
        out: &Path,
    ) -> Result<Runner, ScenarioError> {
        let dir = RunDir::create(out, false)?;
        Runner::start_in(scenario, path, registry, threads, dir)
    }

    /// A new run of `scenario` (read from `path`) in the opened, locked directory `dir`.
    /// When `dir` was opened to replace an earlier run, that run's files are removed once
    /// the scenario has been built (a scenario that fails to build leaves them).
    ///
    /// # Errors
    /// Any build error, or an output file that cannot be written.
    pub fn start_in(
        scenario: &Scenario,
        path: &Path,
        registry: &ForceModelRegistry,
        threads: usize,
        dir: RunDir,
    ) -> Result<Runner, ScenarioError> {
        let mut runner = Runner::prepare_in(scenario, path, registry, threads, dir, None)?;
        runner.begin()?;
        Ok(runner)
    }

    /// A new run as [`Runner::start_in`] but for the outputs of its start, which
    /// [`Runner::begin`] writes. With `decomposition` (the exchange and the rebalancing
    /// interval in steps), this process's part of a run decomposed over the exchange
    /// ([`talus_sim::World::decompose`]), its grains not added yet: every process calls
    /// [`Runner::place_start`] once all have set up, which cuts the world from where the
    /// grains are placed before they are added, so that each process holds the grains of
    /// its region alone from the start and none ever holds the whole run, then
    /// [`Runner::begin`] once all have placed theirs. Makes no collective operation.
    ///
    /// # Errors
    /// As [`Runner::start_in`].
    pub fn prepare_in(
        scenario: &Scenario,
        path: &Path,
        registry: &ForceModelRegistry,
        threads: usize,
        dir: RunDir,
        decomposition: Option<(Box<dyn Exchange>, u64)>,
    ) -> Result<Runner, ScenarioError> {
        let mut exp = build_deferred(scenario, path, registry, threads)?;
        // Before any grain is added: the scene's extent counts every grain of the run.
        let limits = Limits::of(&exp);
        let decomposed = decomposition.is_some();
        if let Some((exchange, rebalance_every)) = decomposition {
            exp.world
                .decompose(exchange, rebalance_every)
                .map_err(|e| ScenarioError::Engine {
                    path: path.to_path_buf(),
                    context: "processes".into(),
                    message: e.to_string(),
                })?;
        }
        let mut grain_population = PopulationsById::default();
        if !decomposed {
            exp.check_unplaced(None)?;
            exp.add_unplaced(&mut grain_population)?;
        }
        let probes: Vec<Probe> = scenario
            .measurements
            .iter()
            .enumerate()
            .map(|(i, m)| {
                Probe::new(m, &exp).ok_or_else(|| ScenarioError::Engine {
                    path: path.to_path_buf(),
                    context: format!("measurements[{i}]"),
                    message: "no probe for this measurement".into(),
                })
            })
            .collect::<Result<_, _>>()?;
        let mut columns = vec![
            Column::new("time", "s"),
            Column::new("grains", "1"),
            Column::new("kinetic_energy", "J"),
            Column::new("contacts", "1"),
            Column::new("coordination", "1"),
            Column::new("max_overlap_ratio", "1"),
        ];
        columns.extend(probes.iter().flat_map(Probe::columns));
        let n = exp.populations.len();
        let state = RunState {
            series: TimeSeries::new(columns),
            probes,
            poured: vec![0; n],
            site_cursor: vec![0; n],
            last_drip_step: vec![None; n],
            drip_blocked: vec![0; n],
            grain_population,
            frames: AppendLog::new(),
            max_overlap_ratio: 0.0,
            max_overlap_time: 0.0,
            grain_steps: 0,
            wall_seconds: 0.0,
            stage_seconds: [0.0; 6],
            last_contacts: 0,
            last_coordination: 0.0,
            at_rest: false,
            limits,
            last_checkpoint: None,
        };
        // A decomposed start is checked by each process for its own grains: an earlier run
        // in the directory is replaced once every process has set up (`begin`), not before.
        let journal = Journal::unwritten(&dir.join(HISTORY_FILE));
        let mut runner = Runner::new(exp, state, dir, journal, registry);
        runner.start_files_pending = true;
        runner.start_grains_pending = decomposed;
        if !decomposed {
            runner.write_start_files()?;
        }
        Ok(runner)
    }

    /// Adds the grains placed at the start of a run decomposed over processes
    /// ([`Runner::prepare_in`]), each process its own: the regions are cut from the
    /// positions of a share of the grains on each process
    /// ([`talus_sim::World::cut_before_adding`], a collective operation: every process calls
    /// this once all have set up), then each process checks its own grains' start, against
    /// the walls and the grains near them, and adds them; last, the processes learn of each
    /// other's failures (a second collective operation), so that an error on one is an
    /// error on all. Does nothing on a single process, whose grains [`Runner::prepare_in`]
    /// added.
    ///
    /// # Errors
    /// [`ScenarioError::Invalid`] for a grain of this process's region that starts inside
    /// a wall or another grain; [`ScenarioError::Engine`] for a grain the world refuses, or
    /// naming another process that failed.
    pub fn place_start(&mut self) -> Result<(), ScenarioError> {
        if !std::mem::take(&mut self.start_grains_pending) {
            return Ok(());
        }
        let exp = &mut self.exp;
        let count = exp.start_count();
        let start = &exp.start;
        let mut positions = |range: std::ops::Range<usize>| {
            Experiment::grains_of(start, range)
                .map(|u| u.position)
                .collect()
        };
        exp.world
            .cut_before_adding(count, &mut positions)
            .map_err(|e| ScenarioError::Engine {
                path: exp.path.clone(),
                context: "processes".into(),
                message: e.to_string(),
            })?;
        // Each process checks its own grains' start and their neighbours' alone.
        let periodic = exp.world.params().periodic;
        let world = &exp.world;
        let own = |p: DVec3| world.keeps_added(periodic.wrap(p).0);
        let placed = exp
            .check_unplaced(Some(&own))
            .and_then(|()| exp.add_unplaced(&mut self.state.grain_population));
        // Every process learns of a failure on any (none goes on alone into the collective
        // steps of `begin`).
        let failures = exp
            .world
            .gather_owned(vec![placed.as_ref().err().map(ToString::to_string)]);
        let first = failures
            .into_iter()
            .enumerate()
            .find_map(|(rank, e)| e.map(|e| (rank, e)));
        match (placed, first) {
            (Err(e), _) => Err(e),
            (Ok(()), Some((rank, message))) => Err(ScenarioError::Engine {
                path: exp.path.clone(),
                context: "processes".into(),
                message: format!("process {rank} could not place its grains: {message}"),
            }),
            (Ok(()), None) => Ok(()),
        }
    }

    /// Replaces an earlier run in the directory (with `--force`) by this one's first files:
    /// its history and its scenario.
    fn write_start_files(&mut self) -> Result<(), ScenarioError> {
        if !self.start_files_pending {
            return Ok(());
        }
        self.dir.remove_earlier_run()?;
        self.journal = Journal::create(&self.dir.claim(HISTORY_FILE)?)?;
        let text = to_ron(&self.exp.scenario)?;
        let file = self.dir.claim(SCENARIO_FILE)?;
        crate::output::atomic::write_atomic(&file, text.as_bytes())
            .map_err(|source| io_error(&file, source))?;
        self.start_files_pending = false;
        Ok(())
    }

    /// Writes the outputs of the run's start: the row of time 0, the time series file and
    /// the first frame (placing the start's grains first when [`Runner::place_start`] was
    /// not called). A collective operation in a decomposed run (the first process has
    /// every process's grains).
    ///
    /// # Errors
    /// An output file that cannot be written.
    pub fn begin(&mut self) -> Result<(), ScenarioError> {
        // A caller that did not place the start's grains apart has them placed here.
        self.place_start()?;
        self.write_start_files()?;
        self.output_row()?;
        if self.writes_files {
            self.write_series(TimeSeries::write)?;
        }
        if self.frame_every.is_some() {
            self.frame()?;
        }
        Ok(())
    }

    /// Continues the run whose checkpoint is in `out`.
    ///
    /// # Errors
    /// A directory another process writes into, a missing or damaged checkpoint or history,
    /// or one that does not fit its scenario.
    pub fn resume(
        out: &Path,
        registry: &ForceModelRegistry,
        threads: usize,
    ) -> Result<Runner, ScenarioError> {
        Runner::resume_in(RunDir::open(out)?, None, registry, threads)
    }

    /// Continues the run whose checkpoint is in the opened, locked directory `dir`; the
    /// pieces of a checkpoint written in pieces are read from the run directory `pieces`
    /// (by default `dir`: a process that resumes from a copy of the checkpoint elsewhere
    /// names the run's own directory).
    ///
    /// # Errors
    /// As [`Runner::resume`].
    pub fn resume_in(
        dir: RunDir,
        pieces: Option<&Path>,
        registry: &ForceModelRegistry,
        threads: usize,
    ) -> Result<Runner, ScenarioError> {
        let file = dir.join(CHECKPOINT_FILE);
        let pieces = pieces.map_or_else(|| dir.path().to_path_buf(), Path::to_path_buf);
        let (cp, journal) = checkpoint::read_with_journal_in(&file, &pieces)?;
        let mut runner =
            Runner::resumed(dir, cp, journal, registry, threads, |world, snapshot| {
                world.restore(snapshot)
            })?;
        // Before a decomposition every process holds every grain: no collective here.
        runner.census(&[]);
        runner.continue_outputs()
    }

    /// Continues the run whose checkpoint is in `dir` (a copy of the checkpoint file, as
    /// [`Runner::resume_in`]) as one process of a decomposed run over `exchange`, its regions
    /// cut anew every `rebalance_every` steps. A checkpoint in pieces is read in shares: this
    /// process reads the pieces dealt to it alone (piece `k` to process `k mod P`, from the
    /// run directory `pieces`), and the first step sends each grain to the process whose
    /// region holds it ([`World::restore_share`]), so that no process holds the whole run; a
    /// checkpoint in one file is read whole by every process and cut at the first step.
    /// Makes no collective operation: once every process has resumed, each calls
    /// [`Runner::take_stock`] before the run goes on.
    ///
    /// # Errors
    /// As [`Runner::resume`], and a process group refused by [`World::decompose`].
    pub fn resume_decomposed(
        dir: RunDir,
        pieces: &Path,
        registry: &ForceModelRegistry,
        threads: usize,
        exchange: Box<dyn Exchange>,
        rebalance_every: u64,
    ) -> Result<Runner, ScenarioError> {
        let file = dir.join(CHECKPOINT_FILE);
        let (rank, ranks) = (exchange.rank(), exchange.size());
        let (cp, parts, journal) = checkpoint::read_share_with_journal(&file, pieces, rank, ranks)?;
        let ids = (!cp.pieces.records.is_empty()).then_some(cp.pieces.ids);
        let runner =
            Runner::resumed(
                dir,
                cp,
                journal,
                registry,
                threads,
                |world, snapshot| match ids {
                    Some(ids) => world.restore_share(
                        SnapshotFrame {
                            world: snapshot,
                            ids,
                        },
                        parts,
                        exchange,
                        rebalance_every,
                    ),
                    None => world
                        .restore(snapshot)
                        .and_then(|()| world.decompose(exchange, rebalance_every)),
                },
            )?;
        runner.continue_outputs()
    }

    /// Counts the whole run's grains and kinetic energy, for a summary written before the
    /// next row of the time series (a collective operation in a decomposed run: every
    /// process calls it at the same point).
    pub fn take_stock(&mut self) {
        self.census(&[]);
    }

    /// The runner of the run in `cp` (read from `dir`'s checkpoint, with its `journal`), its
    /// world built from the scenario and the shapes the run started with and given the
    /// checkpoint's state by `restore`.
    fn resumed(
        dir: RunDir,
        cp: checkpoint::Checkpoint,
        journal: Journal,
        registry: &ForceModelRegistry,
        threads: usize,
        restore: impl FnOnce(&mut talus_sim::World, WorldSnapshot) -> Result<(), talus_sim::SimError>,
    ) -> Result<Runner, ScenarioError> {
        let file = dir.join(CHECKPOINT_FILE);
        let pieces_set = (!cp.pieces.records.is_empty()).then_some(cp.pieces.set);
        let source = PathBuf::from(&cp.source);
        let scenario = parse(&cp.scenario, &source)?;
        // The shapes the run started with, not the files, which may have changed since.
        let mut exp = build_with_shapes(&scenario, &source, cp.shapes, registry, threads, false)?;
        restore(&mut exp.world, cp.world).map_err(|e| ScenarioError::Checkpoint {
            path: file.clone(),
            problem: e.to_string(),
        })?;
        let state = cp.state;
        // Population membership of the grains this process holds, from the state.
        for pop in &mut exp.populations {
            pop.grains.clear();
        }
        for id in exp.world.grains() {
            if let Some(p) = state.grain_population.get(id)
                && let Some(pop) = exp.populations.get_mut(p as usize)
            {
                pop.grains.push(id);
            }
        }
        let mut runner = Runner::new(exp, state, dir, journal, registry);
        runner.pieces_set = pieces_set;
        Ok(runner)
    }

    /// A resumed run's outputs made ready to go on: nothing when the run had ended and
    /// written them; otherwise the summary and report of an earlier session removed and
    /// the time series and frame list written as the checkpoint has them.
    fn continue_outputs(mut self) -> Result<Runner, ScenarioError> {
        let runner = &mut self;
        if runner.finished() && runner.outputs_written() {
            // Nothing to continue: the outputs of the finished run stay as they are.
            return Ok(self);
        }
        // The run goes on, or its outputs are written again (they failed, or the run was
        // killed between its last checkpoint and its summary): a summary of an earlier
        // session (a blow-up, a failed output), and its report, no longer hold.
        // (A file the run did not write, a report of the user's beside a run of a talus
        // that wrote none, is left alone.)
        for file in [SUMMARY_FILE, REPORT_FILE] {
            runner.dir.remove_own(file)?;
        }
        // Rows and frames after the checkpoint are written again as the run repeats them.
        runner.write_series(TimeSeries::write)?;
        if !runner.state.frames.is_empty() {
            let pvd = runner.dir.claim(PVD_FILE)?;
            write_pvd(&pvd, &runner.state.frames).map_err(|source| io_error(&pvd, source))?;
        }
        Ok(self)
    }

    /// The runner of `exp` in `state`; its stock is taken by the caller (a collective
    /// operation in a world already cut among processes).
    fn new(
        exp: Experiment,
        state: RunState,
        dir: RunDir,
        journal: Journal,
        registry: &ForceModelRegistry,
    ) -> Runner {
        let t = &exp.scenario.time;
        let dt = t.dt;
        Runner {
            total_steps: steps_in(t.end, dt),
            output_every: steps_in(t.output_interval, dt),
            frame_every: exp.scenario.outputs.frame_interval.map(|f| steps_in(f, dt)),
            checkpoint_every: t.checkpoint_interval.map(|c| steps_in(c, dt)),
            exp,
            state,
            out: dir.path().to_path_buf(),
            pieces_out: dir.path().to_path_buf(),
            dir,
            journal,
            registry: registry.clone(),
            writes_files: true,
            stock: Stock {
                grains: 0,
                kinetic_energy: 0.0,
            },
            pieces_set: None,
            start_files_pending: false,
            start_grains_pending: false,
        }
    }

    /// Makes this process write its pieces of the frames into `out`, the run's output
    /// directory, when its files go elsewhere: in a run whose grains are split between
    /// processes each writes its own grains there, so every process must see that directory
    /// (a filesystem the nodes share, as a resumed run already needs to read its
    /// checkpoint). By default the pieces go where the process writes its files.
    pub fn write_pieces_into(&mut self, out: &Path) {
        self.pieces_out = out.to_path_buf();
    }

    /// Steps of the whole run.
    #[must_use]
    pub fn total_steps(&self) -> u64 {
        self.total_steps
    }

    /// Whether the run has reached its end.
    #[must_use]
    pub fn finished(&self) -> bool {
        self.exp.world.steps() >= self.total_steps || self.state.at_rest
    }

    /// Whether the outputs of the run are all written: its `summary.json` exists and does
    /// not say that writing them failed. A run that reached its end without them (a full
    /// disk, a kill between the last checkpoint and the summary) writes them again when it
    /// is resumed.
    #[must_use]
    pub fn outputs_written(&self) -> bool {
        std::fs::read_to_string(self.out.join(SUMMARY_FILE))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .is_some_and(|json| json["status"].as_str().is_some_and(|s| s != "failed"))
    }

    /// Runs to the end (or until `stop_after` more steps, for tests), calling `progress`
    /// now and then; writes the summary and plots at the end.
    ///
    /// # Errors
    /// [`ScenarioError::BlowUp`] if the simulation becomes unphysical (the summary is
    /// written with status `blew_up` first), or an output error (the summary then says
    /// `failed`, if it can still be written).
    pub fn run(
        &mut self,
        stop_after: Option<u64>,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<(), ScenarioError> {
        let result = self.run_steps(stop_after, progress);
        if let Err(error) = &result
            && !matches!(error, ScenarioError::BlowUp(_))
            && self.writes_files
        {
            // Best effort: on a full disk this may fail too, and the first error matters.
            let _ = write_summary_and_report(self, &Status::Failed(error.to_string()), &[]);
        }
        result
    }

    fn run_steps(
        &mut self,
        stop_after: Option<u64>,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<(), ScenarioError> {
        let session = Instant::now();
        let session_start_steps = self.exp.world.steps();
        let wall_before = self.state.wall_seconds;
        let mut last_report = Instant::now();
        let check = BlowUpCheck::new(&self.state.limits);
        while !self.finished() {
            if stop_after.is_some_and(|n| self.exp.world.steps() - session_start_steps >= n) {
                self.state.wall_seconds = wall_before + session.elapsed().as_secs_f64();
                return Ok(());
            }
            self.pour()?;
            self.drip()?;
            self.tilt()?;
            let stats = *self.exp.world.step();
            self.account(&stats);
            // Probes, checks and outputs see the whole run: in a decomposed run the
            // processes put together what each found on its grains, at the same points.
            for probe in &mut self.state.probes {
                let removed = probe.after_step(&mut self.exp);
                if !removed.is_empty() {
                    for pop in &mut self.exp.populations {
                        pop.grains.retain(|id| !removed.contains(id));
                    }
                }
            }
            let now = self.exp.world.time();
            let before = now - self.exp.world.params().dt;
            let due: Vec<usize> = (0..self.state.probes.len())
                .filter(|&k| self.state.probes[k].strobe_due(before, now))
                .collect();
            if !due.is_empty() {
                let census = self.census(&due);
                for (&k, total) in due.iter().zip(&census.partials) {
                    self.state.probes[k].strobe(now, total);
                }
            }
            let step = self.exp.world.steps();
            let failure = check.after_step(&mut self.exp, &stats, step);
            if let Some(failure) = failure {
                self.state.wall_seconds = wall_before + session.elapsed().as_secs_f64();
                self.census(&[]);
                // Where the grain it names is, from the process that owns it.
                let here: Vec<_> = failure
                    .grain()
                    .and_then(|id| self.exp.world.grain_states().find(|g| g.id == id))
                    .map(|g| g.pose.position)
                    .into_iter()
                    .collect();
                let at = self.exp.world.gather_owned(here).first().copied();
                let message = failure.message(&self.exp, &self.state, &self.out, at);
                if !self.writes_files {
                    return Err(ScenarioError::BlowUp(message));
                }
                return Err(match write_outputs(self, Status::BlewUp(message.clone())) {
                    Ok(()) => ScenarioError::BlowUp(message),
                    Err(e) => ScenarioError::BlowUp(format!(
                        "{message} (writing the outputs failed too: {e})"
                    )),
                });
            }
            if step % self.output_every == 0 || step == self.total_steps {
                self.output_row()?;
                if self.writes_files {
                    self.write_series(TimeSeries::append_last_row)?;
                }
                self.check_rest();
            }
            if self.frame_every.is_some_and(|f| step % f == 0) {
                self.frame()?;
            }
            if self.checkpoint_every.is_some_and(|c| step % c == 0) && !self.finished() {
                self.state.wall_seconds = wall_before + session.elapsed().as_secs_f64();
                self.checkpoint()?;
            }
            if last_report.elapsed().as_secs_f64() > 0.2 {
                last_report = Instant::now();
                let done = step - session_start_steps;
                progress(&Progress {
                    time: self.exp.world.time(),
                    end: self.exp.scenario.time.end,
                    steps: step,
                    total_steps: self.total_steps,
                    steps_per_second: done as f64 / session.elapsed().as_secs_f64().max(1e-9),
                    grains: stats.grains,
                    contacts: stats.contacts,
                    seed_index: 0,
                    seed_count: seed_count(&self.exp.scenario) as usize,
                });
            }
        }
        self.state.wall_seconds = wall_before + session.elapsed().as_secs_f64();
        // A session that took no step (a finished run resumed to write its outputs) leaves
        // the checkpoint it resumed from: it holds this state already (the same decision on
        // every process).
        if self.exp.world.steps() > session_start_steps {
            self.checkpoint()?;
        }
        if seed_count(&self.exp.scenario) > 1 {
            run_companions(
                &self.exp.scenario,
                &self.exp.path,
                &self.out,
                &self.registry,
                self.exp.world.thread_count(),
                progress,
            )?;
        }
        if !self.writes_files {
            return Ok(());
        }
        let status = if self.state.at_rest {
            Status::AtRest
        } else {
            Status::Finished
        };
        write_outputs(self, status)
    }

    /// Writes no files of the run's from now on: a process of a distributed run other than
    /// the first steps its part of the run, sends its measures to every process for each
    /// row, and writes only its own pieces of the frames and checkpoints.
    pub fn without_outputs(&mut self) {
        self.writes_files = false;
    }

    /// The output directory.
    #[must_use]
    pub fn out_dir(&self) -> &Path {
        &self.out
    }

    fn account(&mut self, stats: &StepStats) {
        let time = self.exp.world.time();
        let s = &mut self.state;
        // Strictly deeper: the time is that of the first step to reach the depth, and a NaN
        // ratio (a blown-up step) is not taken for a deeper one.
        if stats.max_overlap_ratio > s.max_overlap_ratio {
            s.max_overlap_ratio = stats.max_overlap_ratio;
            s.max_overlap_time = time;
        }
        s.grain_steps += stats.grains as u64;
        for (acc, d) in s.stage_seconds.iter_mut().zip([
            stats.predict,
            stats.bounds,
            stats.broad,
            stats.narrow,
            stats.forces,
            stats.correct,
        ]) {
            *acc += d.as_secs_f64();
        }
        s.last_contacts = stats.contacts;
        s.last_coordination = stats.coordination;
    }

    /// The grains now that this process owns (all of the run's on a single process, and
    /// before the first step of a decomposed run), by id: what the probes measure here
    /// ([`Census::taken`] puts the processes' measures together).
    #[must_use]
    pub fn sample(&self) -> Sample {
        let mut states: Vec<_> = self.exp.world.grain_states().collect();
        states.sort_unstable_by_key(|g| g.id);
        let world = &self.exp.world;
        let up = up_direction(self.exp.scenario.gravity_vector());
        let shapes = world.shapes();
        let grains = states
            .into_iter()
            .filter_map(|state| {
                let shape = shapes.get(state.shape).ok()?;
                let local_up = state.pose.rotation.conjugate() * up;
                let reach = shape
                    .body
                    .vertices()
                    .iter()
                    .map(|v| local_up.dot(*v))
                    .fold(f64::NEG_INFINITY, f64::max);
                Some(GrainRecord {
                    population: self.state.grain_population.get(state.id).unwrap_or(0) as usize,
                    volume: shape.volume,
                    top: up.dot(state.pose.position) + reach,
                    state,
                })
            })
            .collect();
        Sample {
            time: world.time(),
            up,
            grains,
        }
    }

    /// Total kinetic energy of the run's grains at the last row of the time series (or
    /// when the run stopped).
    #[must_use]
    pub fn kinetic_energy(&self) -> f64 {
        self.stock.kinetic_energy
    }

    /// Number of the run's grains at the last row of the time series (or when the run
    /// stopped).
    #[must_use]
    pub fn grain_total(&self) -> usize {
        self.stock.grains
    }

    /// The census of all grains now, with what they give each probe of `probes` (indices
    /// into the run's probes; in a decomposed run a collective operation), and the stock
    /// taken from it.
    fn census(&mut self, probes: &[usize]) -> Census {
        let sample = self.sample();
        let chosen: Vec<&Probe> = probes.iter().map(|&k| &self.state.probes[k]).collect();
        let census = Census::taken(&mut self.exp.world, &sample, &chosen);
        self.stock = Stock {
            grains: census.grains as usize,
            kinetic_energy: census.kinetic_energy.value(),
        };
        census
    }

    /// Writes the time series to its file in the run directory with `write` (the whole
    /// series, or its last row appended).
    fn write_series(
        &mut self,
        write: impl FnOnce(&TimeSeries, &Path) -> std::io::Result<()>,
    ) -> Result<(), ScenarioError> {
        let file = self.dir.claim(TIMESERIES_FILE)?;
        write(&self.state.series, &file).map_err(|source| io_error(&file, source))
    }

    /// Appends the row of the current state to the time series.
    fn output_row(&mut self) -> Result<(), ScenarioError> {
        let every: Vec<usize> = (0..self.state.probes.len()).collect();
        let census = self.census(&every);
        // Every process takes the totals, so that all hold the same probes.
        let time = self.exp.world.time();
        let values: Vec<Vec<f64>> = self
            .state
            .probes
            .iter_mut()
            .zip(&census.partials)
            .map(|(probe, total)| probe.take(time, total))
            .collect();
        if !self.writes_files {
            return Ok(());
        }
        let mut row = vec![
            time,
            self.stock.grains as f64,
            self.stock.kinetic_energy,
            self.state.last_contacts as f64,
            self.state.last_coordination,
            self.exp.world.stats().max_overlap_ratio,
        ];
        row.extend(values.into_iter().flatten());
        self.state
            .series
            .push(row)
            .map_err(|e| ScenarioError::Engine {
                path: self.exp.path.clone(),
                context: "time series".into(),
                message: e.to_string(),
            })?;
        Ok(())
    }

    /// Whether the grains, as last counted, have come to rest.
    fn check_rest(&mut self) {
        let Some(rest) = &self.exp.scenario.time.stop_at_rest else {
            return;
        };
        let pouring_done = self
            .exp
            .populations
            .iter()
            .zip(&self.state.poured)
            .all(|(p, &n)| (p.pour.is_none() && p.drip.is_none()) || n >= p.count);
        let Stock {
            grains,
            kinetic_energy,
        } = self.stock;
        if !pouring_done || grains == 0 || self.exp.world.time() < rest.after {
            return;
        }
        if kinetic_energy / (grains as f64) < rest.kinetic_energy_per_grain {
            self.state.at_rest = true;
        }
    }

    fn frame(&mut self) -> Result<(), ScenarioError> {
        let index = self.state.frames.len() / 2;
        let time = self.exp.world.time();
        let in_pieces = self.exp.world.grains_split();
        let files = frame_files(index, in_pieces);
        if in_pieces {
            self.frame_in_pieces(index, &files)?;
        } else {
            let states = self.exp.world.grain_states_on_first();
            if self.writes_files {
                for file in &files {
                    self.dir.claim(file)?;
                }
                remove_other_layout(&self.dir, index, &files, 0)?;
                write_frame(
                    &self.exp,
                    &states,
                    &self.out,
                    &files,
                    &self.state.grain_population,
                )?;
            }
        }
        // Every process counts the frames (the next one's pieces are named by it).
        let before = self.state.frames.len();
        for (part, file) in files.into_iter().enumerate() {
            self.state.frames.push(PvdEntry {
                time,
                part: part as u32,
                file,
            });
        }
        if !self.writes_files {
            return Ok(());
        }
        let pvd = self.dir.claim(PVD_FILE)?;
        let (old, new) = self.state.frames.split_at(before);
        append_pvd(&pvd, old, new).map_err(|source| io_error(&pvd, source))
    }

    /// Frame `index` of a run whose grains are split between processes (a collective
    /// operation): each process writes its own grains as a piece, the first the parallel
    /// file over the pieces and the walls (`files`). No process gathers the others' grains;
    /// they only tell each other the box around their grains, for the size of the plates
    /// that stand for half-spaces.
    fn frame_in_pieces(&mut self, index: usize, files: &[String]) -> Result<(), ScenarioError> {
        let (rank, ranks) = (self.exp.world.rank(), self.exp.world.ranks());
        let pieces: Vec<String> = (0..ranks).map(|k| frame_piece(index, k)).collect();
        // The first process lists every file in the run's manifest before any is written
        // (the exchange below waits for it, and tells every process whether it could: a
        // piece is never written under a name the run did not claim). An error is
        // reported after the exchange, so that no process is left waiting.
        let claimed = if self.writes_files {
            files
                .iter()
                .chain(&pieces)
                .try_for_each(|file| self.dir.claim(file).map(drop))
                .and_then(|()| remove_other_layout(&self.dir, index, files, ranks))
        } else {
            Ok(())
        };
        let mut mine: Vec<GrainState> = self.exp.world.grain_states().collect();
        mine.sort_unstable_by_key(|g| g.id);
        let told = self
            .exp
            .world
            .gather_owned(vec![(grain_region(&mine), claimed.is_ok())]);
        claimed?;
        if told.iter().any(|&(_, listed)| !listed) {
            return Err(ScenarioError::OutputDir {
                path: self.pieces_out.clone(),
                problem: format!(
                    "the first process could not list the files of frame {index} (it says \
                     why); this process's piece of it is not written"
                ),
            });
        }
        write_grains(
            &self.exp,
            &mine,
            &self.pieces_out.join(&pieces[rank]),
            &self.state.grain_population,
        )?;
        if self.writes_files {
            write_grain_pieces(&self.out.join(&files[0]), &pieces)?;
            let corners = told
                .into_iter()
                .filter_map(|(region, _)| region)
                .flat_map(|b| [b.min, b.max]);
            write_walls(
                &self.exp,
                Aabb::from_points(corners),
                &self.out.join(&files[1]),
            )?;
        }
        Ok(())
    }

    /// Writes a checkpoint now: one file, or, in a run whose grains are split between
    /// processes, a piece from each process and the file that names them (a collective
    /// operation there).
    ///
    /// # Errors
    /// A file cannot be written (on any process, in a run in pieces).
    pub fn checkpoint(&mut self) -> Result<(), ScenarioError> {
        match self.exp.world.snapshot_share() {
            SnapshotShare::Whole(world) => {
                if !self.writes_files {
                    return Ok(());
                }
                self.write_checkpoint(&world, &Pieces::default())?;
                checkpoint::remove_stale_pieces(&self.dir, None)
            }
            SnapshotShare::Part { frame, part } => self.checkpoint_in_pieces(frame, &part),
        }
    }

    /// A checkpoint of a run whose grains are split between processes (a collective
    /// operation): every process writes its `part` as a piece of the set the last
    /// checkpoint did not use; once all are on disk, the first writes the checkpoint file
    /// over its `frame` with their records, then removes the pieces no checkpoint names.
    fn checkpoint_in_pieces(
        &mut self,
        frame: Option<SnapshotFrame>,
        part: &SnapshotPart,
    ) -> Result<(), ScenarioError> {
        let (rank, ranks) = (self.exp.world.rank(), self.exp.world.ranks());
        let set = self.pieces_set.map_or(0, |s| 1 - s);
        let files: Vec<String> = (0..ranks).map(|k| piece_file(set, k)).collect();
        // The first process lists every piece in the run's manifest before any is written
        // (as for a frame in pieces); errors are reported after each exchange, so that no
        // process is left waiting.
        let claimed = if self.writes_files {
            files
                .iter()
                .try_for_each(|file| self.dir.claim(file).map(drop))
        } else {
            Ok(())
        };
        let told = self.exp.world.gather_owned(vec![claimed.is_ok()]);
        claimed?;
        if told.contains(&false) {
            return Err(ScenarioError::OutputDir {
                path: self.pieces_out.clone(),
                problem: "the first process could not list the pieces of the checkpoint (it \
                          says why); this process's piece is not written"
                    .into(),
            });
        }
        let written = checkpoint::write_piece(&self.pieces_out.join(&files[rank]), part);
        let records = self
            .exp
            .world
            .gather_owned(vec![written.as_ref().ok().copied()]);
        written?;
        let Some(records) = records.into_iter().collect::<Option<Vec<_>>>() else {
            return Err(ScenarioError::OutputDir {
                path: self.pieces_out.clone(),
                problem: "another process could not write its piece of the checkpoint (it \
                          says why); the last checkpoint stays as it was"
                    .into(),
            });
        };
        self.pieces_set = Some(set);
        let Some(frame) = frame.filter(|_| self.writes_files) else {
            return Ok(());
        };
        let pieces = Pieces {
            set,
            ids: frame.ids,
            records,
        };
        self.write_checkpoint(&frame.world, &pieces)?;
        checkpoint::remove_stale_pieces(&self.dir, Some((set, ranks)))
    }

    /// Writes the checkpoint file over `world` (the whole state, or a frame for `pieces`),
    /// with the run's state and history.
    fn write_checkpoint(
        &mut self,
        world: &WorldSnapshot,
        pieces: &Pieces,
    ) -> Result<(), ScenarioError> {
        self.state.last_checkpoint = Some(self.exp.world.time());
        self.dir.claim(HISTORY_FILE)?;
        let history = self.journal.append(&self.state.logs())?;
        let scenario = to_ron(&self.exp.scenario)?;
        let source = self.exp.path.display().to_string();
        let file = self.dir.claim(CHECKPOINT_FILE)?;
        checkpoint::write(
            &file,
            &CheckpointRef {
                scenario: &scenario,
                source: &source,
                shapes: &self.exp.file_shapes,
                state: &self.state,
                world,
                history,
                pieces,
            },
        )?;
        self.journal.commit();
        Ok(())
    }

    /// Records `rel` as a file of this run (before it is first written) and returns its
    /// path.
    ///
    /// # Errors
    /// [`ScenarioError::Io`] if the run's list of files cannot be extended.
    pub fn claim(&mut self, rel: &str) -> Result<PathBuf, ScenarioError> {
        self.dir.claim(rel)
    }

    /// Steepens a ramped incline: gravity for the step about to be taken, turned by the
    /// incline at its start (a function of the time alone, so a resumed run turns it the
    /// same way).
    fn tilt(&mut self) -> Result<(), ScenarioError> {
        if self.exp.scenario.incline_ramp.is_none() {
            return Ok(());
        }
        let g = self.exp.scenario.gravity_at(self.exp.world.time());
        if g == self.exp.world.params().gravity {
            return Ok(());
        }
        self.exp
            .world
            .set_gravity(g)
            .map_err(|e| ScenarioError::Engine {
                path: self.exp.path.clone(),
                context: "incline_ramp".into(),
                message: e.to_string(),
            })
    }

    /// Adds the grains of pouring populations that are due: grain number `n` of a
    /// population appears at the first step at or after `start + n / rate`, on the next
    /// free site of its region.
    fn pour(&mut self) -> Result<(), ScenarioError> {
        let time = self.exp.world.time();
        let seed = self.exp.scenario.seed;
        for p in 0..self.exp.populations.len() {
            let pop = &self.exp.populations[p];
            let Some(pour) = &pop.pour else {
                continue;
            };
            if self.state.poured[p] >= pop.count || time < pour.start {
                continue;
            }
            // Clamped in floating point: a huge rate must not overflow the count.
            let due = ((time - pour.start) * pour.rate)
                .floor()
                .clamp(0.0, pop.count as f64 - 1.0) as usize
                + 1;
            if self.state.poured[p] >= due {
                continue;
            }
            let (rate_slack, sites, lo, hi) = (pour.slack, pour.sites.len(), pour.lo, pour.hi);
            // Grains near the region block sites; they are hashed into cells of the
            // blocking distance so that each site looks at its neighbourhood only.
            let reach = pop.radius + self.max_radius();
            let mut occupied = Neighbourhood::new(reach);
            let near: Vec<DVec3> = self
                .exp
                .world
                .grain_positions()
                .map(|(_, x, _)| x)
                .filter(|x| x.cmpge(lo - reach).all() && x.cmple(hi + reach).all())
                .collect();
            for x in self.exp.world.gather_owned(near) {
                occupied.insert(x);
            }
            let mut tried = 0;
            while self.state.poured[p] < due && tried < sites {
                let cursor = self.state.site_cursor[p] % sites;
                let site = self.exp.populations[p]
                    .pour
                    .as_ref()
                    .map_or(DVec3::ZERO, |pour| pour.sites[cursor]);
                self.state.site_cursor[p] = (cursor + 1) % sites;
                tried += 1;
                if occupied.any_within(site, reach) {
                    continue;
                }
                let j = self.state.poured[p];
                let mut rng = grain_rng(seed, p, j);
                let orientation = random_rotation(&mut rng);
                let position = jittered(site, rate_slack, 0.5, &mut rng);
                let desc = grain_desc(&self.exp.populations[p], j, position, orientation);
                // A moving wall may have entered the pouring region since the build
                // checked it: such a site waits.
                if self.meets_wall(&desc, time) {
                    continue;
                }
                self.release(p, j, desc, "pouring")?;
                occupied.insert(site);
            }
        }
        Ok(())
    }

    /// Releases the next grain of each dripping population if it is due: the scenario is
    /// quiet (its fastest grain slower than the threshold; §1.2.1, "wenn die
    /// Maximalgeschwindigkeit der Sandkörner unter eine gewisse Grenze fällt"), the shortest
    /// interval since the last release has passed, and no grain or wall is at the release
    /// point. Just before the release the probes see the quiet heap.
    fn drip(&mut self) -> Result<(), ScenarioError> {
        let step = self.exp.world.steps();
        let time = self.exp.world.time();
        let seed = self.exp.scenario.seed;
        for p in 0..self.exp.populations.len() {
            let pop = &self.exp.populations[p];
            let Some(drip) = &pop.drip else {
                continue;
            };
            if self.state.poured[p] >= pop.count || time < drip.start {
                continue;
            }
            if self.state.last_drip_step[p]
                .is_some_and(|last| step.saturating_sub(last) < drip.interval_steps)
            {
                continue;
            }
            let (at, jitter, threshold) = (drip.at, drip.jitter, drip.threshold_speed);
            // No grain within the sum of the bounding radii: the released grain touches
            // nothing when it appears.
            let reach = pop.radius + self.max_radius();
            let world = &mut self.exp.world;
            let fastest = world
                .grain_states()
                .map(|g| g.velocity.length())
                .fold(0.0, f64::max);
            let fastest = world
                .gather_owned(vec![fastest])
                .into_iter()
                .fold(0.0, f64::max);
            // A NaN speed (a run about to be stopped as blown up) releases nothing.
            if fastest.is_nan() || fastest >= threshold {
                continue;
            }
            let j = self.state.poured[p];
            let mut rng = grain_rng(seed, p, j);
            let orientation = random_rotation(&mut rng);
            let up = up_direction(self.exp.scenario.gravity_vector());
            let position = at + horizontal_offset(up, jitter, &mut rng);
            let periodic = world.params().periodic;
            let blocked = world.grain_positions().any(|(_, centre, _)| {
                let x = centre + periodic.nearest_image(position, centre);
                x.distance_squared(position) < reach * reach
            });
            let blocked = world.gather_owned(vec![blocked]).contains(&true);
            let desc = grain_desc(&self.exp.populations[p], j, position, orientation);
            if blocked || self.meets_wall(&desc, time) {
                self.state.drip_blocked[p] += 1;
                continue;
            }
            let every: Vec<usize> = (0..self.state.probes.len()).collect();
            let census = self.census(&every);
            for (probe, total) in self.state.probes.iter_mut().zip(&census.partials) {
                probe.before_release(time, total);
            }
            self.release(p, j, desc, "dripping")?;
            self.state.last_drip_step[p] = Some(step);
        }
        Ok(())
    }

    /// Adds grain `j` of population `p` (poured or dripped, as `how` says for messages)
    /// and counts it as released.
    fn release(
        &mut self,
        p: usize,
        j: usize,
        desc: talus_sim::GrainDesc,
        how: &str,
    ) -> Result<(), ScenarioError> {
        let id = self
            .exp
            .world
            .add_grain(desc)
            .map_err(|e| ScenarioError::Engine {
                path: self.exp.path.clone(),
                context: format!("{how} grains[{p}] grain {j}"),
                message: e.to_string(),
            })?;
        self.register(id, p);
        self.state.poured[p] += 1;
        Ok(())
    }

    /// Whether the grain `desc` would start inside a wall present at time `t`.
    fn meets_wall(&self, desc: &talus_sim::GrainDesc, t: f64) -> bool {
        let world = &self.exp.world;
        let Ok(shape) = world.shapes().get(desc.shape) else {
            return false;
        };
        let grain = PlacedGrain {
            shape: &shape.body,
            pose: talus_geom::Pose::new(
                desc.position,
                (desc.orientation * shape.body_to_input).normalize(),
            ),
            radius: shape.radius,
        };
        world.walls().iter().any(|w| overlaps_wall_at(&grain, w, t))
    }

    fn register(&mut self, id: GrainId, population: usize) {
        self.state.grain_population.set(id, population as u32);
        // A process of a decomposed run lists the grains it holds.
        if self.exp.world.grain(id).is_ok() {
            self.exp.populations[population].grains.push(id);
        }
    }

    fn max_radius(&self) -> f64 {
        self.exp
            .populations
            .iter()
            .map(|p| p.radius)
            .fold(0.0, f64::max)
    }
}

/// A random offset perpendicular to `up` of length at most `radius`, uniform over the disc.
fn horizontal_offset(up: DVec3, radius: f64, rng: &mut impl rand::Rng) -> DVec3 {
    let (e1, e2) = up.any_orthonormal_pair();
    let angle = std::f64::consts::TAU * rng.random::<f64>();
    let r = radius * rng.random::<f64>().sqrt();
    r * (angle.cos() * e1 + angle.sin() * e2)
}

/// Points hashed into cubic cells, for "is any point within `reach` of x" queries.
struct Neighbourhood {
    cell: f64,
    cells: std::collections::HashMap<(i64, i64, i64), Vec<DVec3>>,
}

impl Neighbourhood {
    fn new(cell: f64) -> Neighbourhood {
        Neighbourhood {
            cell: cell.max(f64::MIN_POSITIVE),
            cells: std::collections::HashMap::new(),
        }
    }

    fn key(&self, x: DVec3) -> (i64, i64, i64) {
        // Coordinates are validated to lie within 10^6 m, so the cells fit in i64.
        let c = (x / self.cell).floor();
        (c.x as i64, c.y as i64, c.z as i64)
    }

    fn insert(&mut self, x: DVec3) {
        let k = self.key(x);
        self.cells.entry(k).or_default().push(x);
    }

    fn any_within(&self, x: DVec3, reach: f64) -> bool {
        let (i, j, k) = self.key(x);
        (-1..=1).any(|di| {
            (-1..=1).any(|dj| {
                (-1..=1).any(|dk| {
                    self.cells
                        .get(&(
                            i.saturating_add(di),
                            j.saturating_add(dj),
                            k.saturating_add(dk),
                        ))
                        .is_some_and(|list| {
                            list.iter().any(|q| q.distance_squared(x) < reach * reach)
                        })
                })
            })
        })
    }
}

/// An I/O error on `path`.
#[must_use]
pub fn io_error(path: &Path, source: std::io::Error) -> ScenarioError {
    ScenarioError::Io {
        path: path.to_path_buf(),
        source,
    }
}
