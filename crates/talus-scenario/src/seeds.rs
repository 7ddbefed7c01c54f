//! A scenario run with several seeds (`seeds: N`): the run itself with the scenario's seed,
//! and N − 1 companion runs with the seeds after it, each an ordinary run (without frames)
//! in `seeds/seed-<s>/` under the run's directory. One run of a chaotic granular experiment
//! is not an answer: a heap's angle moves by degrees from one seed to the next. So the run's
//! `summary.json` gives every numeric answer over all N seeds: each seed's value, the mean,
//! the sample standard deviation and the range.
//!
//! The companions run once the run itself has reached its end (and written its last
//! checkpoint), before its summary: the summary is the last file a run writes, and it is
//! never written without the spread it promises. A run killed while its companions run is
//! continued by `talus resume`: companions that ended are kept, interrupted ones resume from
//! their checkpoints, and one that belongs to another scenario (an earlier run replaced with
//! `--force`) is started afresh.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};

use serde_json::{Map, Value};
use talus_sim::force::ForceModelRegistry;

use crate::error::ScenarioError;
use crate::load::to_ron;
use crate::output::RunDir;
use crate::output::run_dir::{CHECKPOINT_FILE, SCENARIO_FILE, SUMMARY_FILE};
use crate::probe::repose::json_number;
use crate::run::{Progress, Runner};
use crate::schema::Scenario;
use crate::sweep::execute::{continue_run, ended_status};
use crate::sweep::table::{ANSWERED, Spread, numeric_answers};

/// The folder of the companion runs, in the run's directory.
pub const SEEDS_DIR: &str = "seeds";

/// How many seeds `scenario` is run with.
#[must_use]
pub fn seed_count(scenario: &Scenario) -> u64 {
    scenario.seeds.unwrap_or(1).max(1)
}

/// The seeds of the runs: the scenario's own, then the ones after it.
#[must_use]
pub fn seeds_of(scenario: &Scenario) -> Vec<u64> {
    seeds_from(scenario.seed, seed_count(scenario))
}

/// `count` seeds from `first` on (wrapping past the largest).
#[must_use]
pub fn seeds_from(first: u64, count: u64) -> Vec<u64> {
    (0..count).map(|k| first.wrapping_add(k)).collect()
}

/// The directory of the companion run with `seed`, relative to the run's directory.
#[must_use]
pub fn companion_rel(seed: u64) -> String {
    format!("{SEEDS_DIR}/seed-{seed}")
}

/// The scenario of the companion run with `seed`: the run's scenario with that seed, run
/// once, without frames (the run itself writes them; the companions are there for their
/// answers).
#[must_use]
pub fn companion(scenario: &Scenario, seed: u64) -> Scenario {
    let mut c = scenario.clone();
    c.seed = seed;
    c.seeds = None;
    c.outputs.frame_interval = None;
    c
}

/// Brings every companion run of the run of `scenario` (read from `source`) in `out` to
/// its end, calling `progress` as they go (for the companion that is furthest behind, with
/// its seed's index among the run's seeds). With `threads` threads to spend, up to that many
/// companions run at once, the threads shared among them: a run of one thread uses its
/// core better than a run of two uses two, and each run gives the same bits with any number
/// of threads. A companion that ended is kept; one interrupted after a checkpoint resumes
/// from it; one not started, or started for another scenario, starts afresh.
///
/// # Errors
/// An error of a companion's directory, build or outputs (that of the lowest seed, if
/// several fail). A companion that blows up is no error: its summary says so, and the run's
/// summary warns of it.
pub fn run_companions(
    scenario: &Scenario,
    source: &Path,
    out: &Path,
    registry: &ForceModelRegistry,
    threads: usize,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(), ScenarioError> {
    let seeds = seeds_of(scenario);
    let count = seeds.len();
    let pending: Vec<(usize, Companion)> = seeds
        .iter()
        .enumerate()
        .skip(1)
        .map(|(index, &seed)| (index, Companion::new(scenario, seed, out)))
        .filter(|(_, c)| !c.ended())
        .collect();
    if pending.is_empty() {
        return Ok(());
    }
    let jobs = threads.clamp(1, pending.len());
    let threads_each = (threads / jobs).max(1);
    let next = AtomicUsize::new(0);
    let failures: Mutex<Vec<(usize, ScenarioError)>> = Mutex::new(Vec::new());
    let (sender, receiver) = mpsc::channel::<Progress>();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let sender = sender.clone();
            let (next, pending, failures) = (&next, &pending, &failures);
            scope.spawn(move || {
                while let Some((index, companion)) =
                    pending.get(next.fetch_add(1, Ordering::Relaxed))
                {
                    let mut report = |p: &Progress| {
                        // The receiver lives as long as the workers.
                        let _ = sender.send(Progress {
                            seed_index: *index,
                            seed_count: count,
                            ..*p
                        });
                    };
                    if let Err(error) = companion.run(source, registry, threads_each, &mut report)
                        && let Ok(mut failures) = failures.lock()
                    {
                        failures.push((*index, error));
                    }
                }
            });
        }
        drop(sender);
        let mut latest: BTreeMap<usize, Progress> = BTreeMap::new();
        for p in receiver {
            latest.insert(p.seed_index, p);
            if let Some(behind) = latest.values().min_by_key(|p| p.steps) {
                progress(behind);
            }
        }
    });
    let mut failures = failures
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    failures.sort_by_key(|(index, _)| *index);
    match failures.into_iter().next() {
        Some((_, error)) => Err(error),
        None => Ok(()),
    }
}

/// One companion run: its scenario and directory, and whether the directory holds a run
/// of that scenario.
struct Companion {
    scenario: Scenario,
    path: PathBuf,
    ours: bool,
}

impl Companion {
    fn new(scenario: &Scenario, seed: u64, out: &Path) -> Companion {
        let scenario = companion(scenario, seed);
        let path = out.join(companion_rel(seed));
        let ours = std::fs::read_to_string(path.join(SCENARIO_FILE))
            .is_ok_and(|text| to_ron(&scenario).is_ok_and(|own| own == text));
        Companion {
            scenario,
            path,
            ours,
        }
    }

    /// Whether it has ended for good (its summary says how).
    fn ended(&self) -> bool {
        self.ours && ended_status(&self.path).is_some()
    }

    /// Runs it to its end: resumed from its checkpoint, or started afresh (replacing what
    /// a run of another scenario left in its directory). A blow-up is its answer, no error.
    fn run(
        &self,
        source: &Path,
        registry: &ForceModelRegistry,
        threads: usize,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<(), ScenarioError> {
        let result = if self.ours && self.path.join(CHECKPOINT_FILE).is_file() {
            continue_run(&self.path, registry, threads, progress)
        } else {
            let dir = RunDir::create(&self.path, true)?;
            Runner::start_in(&self.scenario, source, registry, threads, dir)
                .and_then(|mut runner| runner.run(None, progress))
        };
        match result {
            Err(ScenarioError::BlowUp(_)) => Ok(()),
            other => other,
        }
    }
}

/// One companion's result, read from its summary.
struct SeedResult {
    status: String,
    answers: BTreeMap<String, f64>,
    summary: Value,
}

/// The result of the companion in `dir`, `None` if it has no readable summary.
fn read_result(dir: &Path) -> Option<SeedResult> {
    let text = std::fs::read_to_string(dir.join(SUMMARY_FILE)).ok()?;
    let summary: Value = serde_json::from_str(&text).ok()?;
    Some(SeedResult {
        status: summary["status"].as_str()?.to_string(),
        answers: numeric_answers(&summary),
        summary,
    })
}

/// The answers of a run that count in the spread: those of a run that gave any.
fn counted(result: &Option<SeedResult>) -> Option<&BTreeMap<String, f64>> {
    result
        .as_ref()
        .filter(|r| ANSWERED.contains(&r.status.as_str()))
        .map(|r| &r.answers)
}

/// The `seeds` entry of the summary of the run of `scenario` in `out`, whose own summary
/// (without it) is `own`, and the warnings about its companions: one that has no result,
/// blew up or failed (its answers are left out of the spread), or is suspect (its answers
/// count, as a suspect run's own would).
///
/// The entry holds `seeds`, `runs` (the directories, `.` for the run itself), `statuses`,
/// and under `answers` each numeric answer of the run's summary with `values` (one per
/// seed, `null` where a run has none), `n` (runs that gave one), `mean`, `sd` (the sample
/// standard deviation), `min` and `max`.
#[must_use]
pub fn over_seeds(scenario: &Scenario, out: &Path, own: &Value) -> (Value, Vec<String>) {
    let seeds = seeds_of(scenario);
    let own_status = own["status"].as_str().unwrap_or("finished").to_string();
    let mut runs = vec![".".to_string()];
    let mut results = vec![Some(SeedResult {
        status: own_status,
        answers: numeric_answers(own),
        summary: own.clone(),
    })];
    let mut warnings = Vec::new();
    for &seed in &seeds[1..] {
        let rel = companion_rel(seed);
        let result = read_result(&out.join(&rel));
        match &result {
            None => warnings.push(format!(
                "the run with seed {seed} ({rel}) has no summary; its answers are left out of \
                 the spread over the seeds"
            )),
            Some(r) if !ANSWERED.contains(&r.status.as_str()) => warnings.push(format!(
                "the run with seed {seed} ended '{}'{}; its answers are left out of the spread \
                 over the seeds (see {rel}/{SUMMARY_FILE})",
                r.status,
                r.summary["error"]
                    .as_str()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            )),
            Some(r) if r.status == "suspect" => warnings.push(format!(
                "the run with seed {seed} is suspect ({}); its answers are in the spread over \
                 the seeds (see {rel}/{SUMMARY_FILE})",
                r.summary["warnings"]
                    .as_array()
                    .map(|w| w
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join("; "))
                    .unwrap_or_default()
            )),
            Some(_) => {}
        }
        runs.push(rel);
        results.push(result);
    }
    let mut answers = Map::new();
    for key in numeric_answers(own).keys() {
        let values: Vec<f64> = results
            .iter()
            .map(|r| {
                counted(r)
                    .and_then(|a| a.get(key).copied())
                    .unwrap_or(f64::NAN)
            })
            .collect();
        let spread = Spread::of(values.iter().copied());
        let finite = values.iter().copied().filter(|v| v.is_finite());
        let min = finite.clone().fold(f64::INFINITY, f64::min);
        let max = finite.fold(f64::NEG_INFINITY, f64::max);
        let number = |x: f64| json_number(x.is_finite().then_some(x));
        let mut entry = Map::new();
        entry.insert(
            "values".into(),
            Value::Array(values.iter().map(|&v| number(v)).collect()),
        );
        entry.insert("n".into(), Value::from(spread.n));
        entry.insert("mean".into(), number(spread.mean));
        entry.insert("sd".into(), number(spread.sd));
        entry.insert("min".into(), number(min));
        entry.insert("max".into(), number(max));
        answers.insert(key.clone(), Value::Object(entry));
    }
    let statuses = results
        .iter()
        .map(|r| Value::from(r.as_ref().map_or("missing", |r| r.status.as_str())))
        .collect();
    let block = serde_json::json!({
        "seeds": seeds,
        "runs": runs,
        "statuses": Value::Array(statuses),
        "answers": Value::Object(answers),
    });
    (block, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(seeds: u64) -> Scenario {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../configs/angle_of_repose.ron"
        ));
        let mut s = crate::load::read(path).unwrap();
        s.seed = 40;
        s.seeds = Some(seeds);
        s
    }

    /// Writes `summary` as the summary of the companion with `seed` in `out`.
    fn companion_summary(out: &Path, seed: u64, summary: &Value) {
        let dir = out.join(companion_rel(seed));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(SUMMARY_FILE), summary.to_string()).unwrap();
    }

    #[test]
    fn companions_without_a_clean_answer_are_named_and_left_out_or_counted() {
        let out = std::env::temp_dir().join(format!("talus-seeds-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let own = serde_json::json!({
            "status": "finished", "angle_deg": 30.0, "fit": {"slope": 2.0},
            "wall_seconds": 9.0, "warnings": []
        });
        companion_summary(
            &out,
            41,
            &serde_json::json!({"status": "suspect", "angle_deg": 34.0, "fit": {"slope": 4.0},
                "warnings": ["overlaps reached 12 %"]}),
        );
        companion_summary(
            &out,
            42,
            &serde_json::json!({"status": "blew_up", "angle_deg": 99.0, "error": "NaN at step 7"}),
        );
        companion_summary(
            &out,
            43,
            &serde_json::json!({"status": "at_rest", "angle_deg": 29.0, "fit": {"slope": null}}),
        );
        // Seed 44 has no summary.
        let (block, warnings) = over_seeds(&scenario(5), &out, &own);
        assert_eq!(block["seeds"], serde_json::json!([40, 41, 42, 43, 44]));
        assert_eq!(
            block["statuses"],
            serde_json::json!(["finished", "suspect", "blew_up", "at_rest", "missing"])
        );
        let angle = &block["answers"]["angle_deg"];
        // Counted: 30, 34 (suspect) and 29; the blown-up run's 99 and the missing run left out.
        assert_eq!(
            angle["values"],
            serde_json::json!([30.0, 34.0, null, 29.0, null])
        );
        assert_eq!(angle["n"], 3);
        assert_eq!(angle["mean"], 31.0);
        // Σ(x − 31)² = 1 + 9 + 4 = 14, over n − 1 = 2.
        assert_eq!(angle["sd"].as_f64().unwrap(), 7.0f64.sqrt());
        assert_eq!(
            (angle["min"].clone(), angle["max"].clone()),
            (29.0.into(), 34.0.into())
        );
        let slope = &block["answers"]["fit.slope"];
        assert_eq!(
            slope["values"],
            serde_json::json!([2.0, 4.0, null, null, null])
        );
        assert_eq!(slope["n"], 2);
        assert!(block["answers"].get("wall_seconds").is_none());
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].contains("seed 41 is suspect (overlaps reached 12 %)"));
        assert!(warnings[1].contains("seed 42 ended 'blew_up': NaN at step 7"));
        assert!(warnings[2].contains("seed 44 (seeds/seed-44) has no summary"));
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn a_companion_is_its_seed_run_once_without_frames() {
        let s = scenario(3);
        assert_eq!(seeds_of(&s), vec![40, 41, 42]);
        let c = companion(&s, 41);
        assert_eq!(
            (c.seed, c.seeds, c.outputs.frame_interval),
            (41, None, None)
        );
        assert_eq!(seed_count(&c), 1);
        let mut expected = s.clone();
        expected.seed = 41;
        expected.seeds = None;
        expected.outputs.frame_interval = None;
        assert_eq!(c, expected, "nothing else changes");
    }
}
