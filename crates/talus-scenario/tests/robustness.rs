//! Damaged checkpoints: never a panic, never a resumed run.
//!
//! * Every byte of a small checkpoint and of its history is flipped in turn, and random
//!   mutations (bit flips, cuts, insertions, appended garbage, zeroed ranges) are thrown at
//!   both: each is refused, none resumes.

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_scenario::checkpoint;
use talus_scenario::load::read;
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
