//! Damaged checkpoints and hostile scenarios: never a panic, never a hang, never garbage
//! reported as a clean result.
//!
//! * Every byte of a small checkpoint and of its history is flipped in turn, and random
//!   mutations (bit flips, cuts, insertions, appended garbage, zeroed ranges) are thrown at
//!   both: each is refused, none resumes.
//! * Hostile values (0, negative, tiny, huge, subnormal, non-finite, scaled by 10^±6) are
//!   thrown at every numeric field of every shipped scenario: each gives a clear error or a
//!   run whose summary is honest about its status.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use talus_scenario::check::check;
use talus_scenario::checkpoint;
use talus_scenario::load::{apply_overrides, read};
use talus_scenario::{Runner, Scenario, ScenarioError};
use talus_sim::force::ForceModelRegistry;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-robust-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn config(name: &str) -> (PathBuf, Scenario) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../configs/{name}.ron"));
    let scenario = read(&file).unwrap();
    (file, scenario)
}

/// A run of the hopper scenario cut down to a few grains and steps, with checkpoints that
/// carry every kind of history (rows, frames, discharge events and force samples).
fn small_run(out: &Path) {
    let (file, scenario) = config("hopper");
    let scenario = shrink(&scenario, 12, 0.02);
    let registry = ForceModelRegistry::default();
    let mut runner = Runner::start(&scenario, &file, &registry, 1, out).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
}

/// `scenario` with at most `count` grains per population and at most `end` seconds, its
/// intervals shortened to fit.
fn shrink(scenario: &Scenario, count: usize, end: f64) -> Scenario {
    let mut s = scenario.clone();
    for p in &mut s.grains {
        p.count = p.count.min(count);
    }
    s.time.end = s.time.end.min(end);
    s.time.output_interval = s.time.output_interval.min(s.time.end / 4.0);
    s.time.checkpoint_interval = Some(s.time.end / 2.0);
    s.time.stop_at_rest = None;
    s.outputs.frame_interval = Some(s.time.end / 2.0);
    s
}

fn assert_refused(what: &str, result: Result<checkpoint::Checkpoint, ScenarioError>) {
    match result {
        Err(ScenarioError::Checkpoint { problem, .. }) => {
            assert!(!problem.is_empty(), "{what}");
        }
        Err(other) => panic!("{what}: not a checkpoint error: {other}"),
        Ok(_) => panic!("{what}: a damaged checkpoint was accepted"),
    }
}

#[test]
fn every_damaged_byte_of_a_checkpoint_and_its_history_is_refused() {
    let out = scratch("bytes");
    small_run(&out);
    let cp = out.join("checkpoint.bin");
    let history = out.join("checkpoint-history.bin");
    checkpoint::read(&cp).expect("the checkpoint as written reads back");
    for file in [&cp, &history] {
        let good = std::fs::read(file).unwrap();
        for i in 0..good.len() {
            let mut bytes = good.clone();
            bytes[i] ^= 0xFF;
            std::fs::write(file, &bytes).unwrap();
            assert_refused(
                &format!("{} byte {i}", file.display()),
                checkpoint::read(&cp),
            );
        }
        std::fs::write(file, &good).unwrap();
    }
    checkpoint::read(&cp).unwrap();
    let _ = std::fs::remove_dir_all(out);
}

/// A random mutation of `good`: never the same bytes.
fn mutate(good: &[u8], rng: &mut ChaCha8Rng) -> Vec<u8> {
    loop {
        let mut b = good.to_vec();
        match rng.random_range(0..5) {
            0 => {
                for _ in 0..rng.random_range(1..=8) {
                    let i = rng.random_range(0..b.len());
                    b[i] ^= 1 << rng.random_range(0..8);
                }
            }
            1 => b.truncate(rng.random_range(0..b.len())),
            2 => {
                let at = rng.random_range(0..=b.len());
                let extra: Vec<u8> = (0..rng.random_range(1..64)).map(|_| rng.random()).collect();
                b.splice(at..at, extra);
            }
            3 => b.extend((0..rng.random_range(1..64)).map(|_| rng.random::<u8>())),
            _ => {
                let start = rng.random_range(0..b.len());
                let end = (start + rng.random_range(1..256)).min(b.len());
                let fill: u8 = if rng.random() { 0 } else { rng.random() };
                b[start..end].fill(fill);
            }
        }
        if b != good {
            return b;
        }
    }
}

#[test]
fn random_mutations_of_a_checkpoint_and_its_history_are_refused() {
    let out = scratch("random");
    small_run(&out);
    let cp = out.join("checkpoint.bin");
    let history = out.join("checkpoint-history.bin");
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let whole = checkpoint::read(&cp).unwrap();
    for file in [&cp, &history] {
        let good = std::fs::read(file).unwrap();
        for k in 0..400 {
            let bytes = mutate(&good, &mut rng);
            std::fs::write(file, &bytes).unwrap();
            let what = format!("{} mutation {k}", file.display());
            if file == &history && bytes.starts_with(&good) {
                // Bytes after the checkpoint's history are what a kill during the next
                // checkpoint leaves: ignored, and the history read is the whole one.
                let read = checkpoint::read(&cp).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(read.state.series, whole.state.series, "{what}");
                continue;
            }
            assert_refused(&what, checkpoint::read(&cp));
        }
        std::fs::write(file, &good).unwrap();
    }
    // Resuming from a damaged checkpoint is refused the same way.
    let good = std::fs::read(&cp).unwrap();
    std::fs::write(&cp, mutate(&good, &mut rng)).unwrap();
    let registry = ForceModelRegistry::default();
    assert!(matches!(
        Runner::resume(&out, &registry, 1),
        Err(ScenarioError::Checkpoint { .. })
    ));
    let _ = std::fs::remove_dir_all(out);
}

/// Every numeric leaf of `tree` as an override path (`grains[0].placement.Lattice.min[2]`)
/// with its value.
fn numeric_fields(tree: &Value, path: &str, out: &mut Vec<(String, f64)>) {
    match tree {
        Value::Number(n) => out.push((path.to_string(), n.as_f64().unwrap_or(0.0))),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                numeric_fields(item, &format!("{path}[{i}]"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let inner = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                numeric_fields(item, &inner, out);
            }
        }
        _ => {}
    }
}

/// A value a hostile user (or a typo) might give a field that holds `original`.
fn hostile(original: f64, rng: &mut ChaCha8Rng) -> String {
    let x = match rng.random_range(0..14) {
        0 => 0.0,
        1 => -1.0,
        2 => 1e-300,
        3 => 5e-324,
        4 => 1e300,
        5 => -1e300,
        6 => 1e15,
        7 => 4_294_967_297.0,
        8 => original * 1e6,
        9 => original / 1e6,
        10 => -original,
        11 => original * rng.random_range(0.0..3.0),
        12 => return "NaN".to_string(),
        _ => return "inf".to_string(),
    };
    format!("{x:e}")
}

/// What a scenario given a hostile value did.
enum Outcome {
    /// Refused before running; the messages.
    Refused(Vec<String>),
    /// Accepted by the check, and not run (too large, or past the run budget).
    Accepted,
    /// Accepted; the run ended (with its summary) or stopped after its step budget.
    Ran(Option<Value>),
}

/// Steps a hostile run may take: enough for the shrunken scenarios to end.
const STEP_BUDGET: u64 = 1500;

/// Accepted hostile scenarios that are run (the others are only checked).
const RUN_BUDGET: usize = 150;

/// Checks `scenario` and, if accepted, small and `run`, runs it for at most [`STEP_BUDGET`]
/// steps.
fn attempt(scenario: &Scenario, file: &Path, out: &Path, run: bool) -> Outcome {
    let registry = ForceModelRegistry::default();
    let report = match check(scenario, file, &registry) {
        Err(errors) => return Outcome::Refused(errors.iter().map(ToString::to_string).collect()),
        Ok(report) => report,
    };
    if report.grains > 200 || !run {
        // Large enough to take long; the check is what is being tested.
        return Outcome::Accepted;
    }
    let _ = std::fs::remove_dir_all(out);
    let mut runner = match Runner::start(scenario, file, &registry, 1, out) {
        Err(e) => return Outcome::Refused(vec![e.to_string()]),
        Ok(runner) => runner,
    };
    let result = runner.run(Some(STEP_BUDGET), &mut |_| {});
    let summary = std::fs::read_to_string(out.join("summary.json"))
        .ok()
        .map(|t| serde_json::from_str(&t).expect("summary.json is JSON"));
    if let Err(e) = result {
        let status = summary.as_ref().map(|s: &Value| s["status"].clone());
        assert!(
            matches!(e, ScenarioError::BlowUp(_)) || status == Some(Value::from("failed")),
            "an error that is neither a blow-up nor reported as failed: {e}"
        );
    }
    Outcome::Ran(summary)
}

/// Every number of a summary, found anywhere in it.
fn all_numbers(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) => out.extend(n.as_f64()),
        Value::Array(items) => items.iter().for_each(|i| all_numbers(i, out)),
        Value::Object(map) => map.values().for_each(|i| all_numbers(i, out)),
        _ => {}
    }
}

/// A shrunken shipped scenario, its file and its numeric fields.
type Base = (PathBuf, Scenario, Vec<(String, f64)>);

#[test]
fn hostile_values_in_every_numeric_field_give_a_clear_error_or_an_honest_run() {
    // Every shipped scenario, each numeric field of each given a hostile value at least once.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    let mut configs: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".ron").map(str::to_string)
        })
        .collect();
    configs.sort();
    assert!(configs.len() >= 11, "{configs:?}");
    let bases: Vec<Base> = configs
        .iter()
        .map(|name| {
            let (file, scenario) = config(name);
            let scenario = shrink(&scenario, 12, 0.02);
            let mut fields = Vec::new();
            numeric_fields(&serde_json::to_value(&scenario).unwrap(), "", &mut fields);
            (file, scenario, fields)
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    // Each field once, then random ones.
    let mut cases: Vec<(usize, usize)> = bases
        .iter()
        .enumerate()
        .flat_map(|(b, (_, _, fields))| (0..fields.len()).map(move |f| (b, f)))
        .collect();
    for _ in 0..100 {
        let b = rng.random_range(0..bases.len());
        cases.push((b, rng.random_range(0..bases[b].2.len())));
    }
    // In random order, so that the runs (the first accepted cases) come from every scenario.
    cases.shuffle(&mut rng);
    let (mut refused, mut ran, mut finished, mut accepted) = (0, 0, 0, 0);
    for (case, &(b, f)) in cases.iter().enumerate() {
        let (file, scenario, fields) = &bases[b];
        let (field, original) = &fields[f];
        let assignment = format!("{field}={}", hostile(*original, &mut rng));
        let what = format!("case {case}: {} --set {assignment}", file.display());
        let scenario = match apply_overrides(scenario, std::slice::from_ref(&assignment)) {
            Err(e) => {
                let message = e.to_string();
                assert!(message.starts_with("--set "), "{what}: {message}");
                refused += 1;
                continue;
            }
            Ok(s) => s,
        };
        // In a thread, so that a hang fails the test instead of stalling it. Every case is
        // checked; the first RUN_BUDGET accepted ones are also run.
        let (tx, rx) = mpsc::channel();
        let (file, out) = (file.clone(), scratch(&format!("hostile-{case}")));
        let worker_out = out.clone();
        let run = accepted < RUN_BUDGET;
        std::thread::spawn(move || {
            let _ = tx.send(attempt(&scenario, &file, &worker_out, run));
        });
        let outcome = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{what}: no answer within a minute (a hang or a panic)"));
        let _ = std::fs::remove_dir_all(&out);
        match outcome {
            Outcome::Refused(messages) => {
                refused += 1;
                for m in &messages {
                    assert!(
                        m.contains("allowed") || m.contains(": "),
                        "{what}: an unclear message: {m}"
                    );
                    let longest = m
                        .split(|c: char| !c.is_ascii_digit())
                        .map(str::len)
                        .max()
                        .unwrap_or(0);
                    assert!(longest <= 20, "{what}: a number printed in full: {m}");
                }
            }
            Outcome::Accepted => accepted += 1,
            Outcome::Ran(None) => {
                accepted += 1;
                ran += 1;
            }
            Outcome::Ran(Some(summary)) => {
                accepted += 1;
                ran += 1;
                let status = summary["status"].as_str().unwrap_or_default().to_string();
                assert!(
                    ["finished", "at_rest", "suspect", "blew_up", "failed"]
                        .contains(&status.as_str()),
                    "{what}: status {status}"
                );
                if status == "finished" || status == "at_rest" {
                    finished += 1;
                    // A clean status promises sane contacts, finite numbers and no warning.
                    let overlap = summary["max_overlap_ratio"].as_f64().unwrap_or(f64::NAN);
                    assert!(overlap <= 0.1, "{what}: clean with overlap {overlap}");
                    assert_eq!(summary["warnings"], Value::Array(vec![]), "{what}");
                    let mut numbers = Vec::new();
                    all_numbers(&summary, &mut numbers);
                    assert!(numbers.iter().all(|x| x.is_finite()), "{what}");
                }
            }
        }
    }
    // The cases exercise both sides: refusals and runs that reach their end.
    assert!(
        refused > 50 && ran > 20 && finished > 5,
        "{refused} refused, {ran} ran, {finished} finished"
    );
}
