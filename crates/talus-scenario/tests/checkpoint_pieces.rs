//! A run whose grains are split between processes checkpoints in pieces: each process
//! writes its own grains and the pairs it evaluates, the first the file that names them.
//! The processes here are threads joined by a `ThreadExchange` (the `mpirun` suite of
//! talus-cli runs the same code on MPI processes).
//!
//! * The pieces read back as the single process's state at the same step (every grain, every
//!   pair's cache and history, every wall's load), and the split run's checkpoint resumes on
//!   one process to the bits of the run done in one go.
//! * Checkpoints alternate between two sets of pieces; the set the checkpoint file names is
//!   never written over, so a process killed while writing the next set leaves a checkpoint
//!   that reads whole; pieces no checkpoint names are removed.
//! * A piece that is missing, damaged or of another checkpoint is refused, by name.

mod common;

use std::path::{Path, PathBuf};

use common::{scenario, scratch};
use talus_scenario::checkpoint::{self, Checkpoint, piece_file};
use talus_scenario::output::run_dir::RunDir;
use talus_scenario::{Runner, Scenario, ScenarioError};
use talus_sim::distribute::ThreadExchange;
use talus_sim::force::ForceModelRegistry;

/// The vibrating box cut short: 150 beads and the intruder, checkpoints every 0.02 s.
fn quick_box() -> (PathBuf, Scenario) {
    scenario(
        "vibrating_box",
        &[
            "grains[1].count=150",
            "time.end=0.06",
            "time.output_interval=0.002",
            "time.checkpoint_interval=0.02",
            "outputs.frame_interval=None",
            "outputs.plots=false",
        ],
        &[],
    )
}

/// Runs `scenario` on `ranks` threads, each a process of a decomposed run writing into
/// `out` (the first) or a scratch directory of its own, for `stop_after` steps (to the end
/// when none), cutting the regions anew every 40 steps.
fn run_split(scenario: &Scenario, file: &Path, out: &Path, ranks: usize, stop_after: Option<u64>) {
    let registry = ForceModelRegistry::default();
    std::thread::scope(|s| {
        for (rank, exchange) in ThreadExchange::group(ranks).into_iter().enumerate() {
            let registry = &registry;
            s.spawn(move || {
                let own = if rank == 0 {
                    out.to_path_buf()
                } else {
                    out.with_extension(format!("rank{rank}"))
                };
                let dir = RunDir::create(&own, true).unwrap();
                let mut runner = Runner::prepare_in(
                    scenario,
                    file,
                    registry,
                    1,
                    dir,
                    Some((Box::new(exchange), 40)),
                )
                .unwrap();
                runner.write_pieces_into(out);
                if rank > 0 {
                    runner.without_outputs();
                }
                runner.place_start().unwrap();
                runner.begin().unwrap();
                runner.run(stop_after, &mut |_| {}).unwrap();
            });
        }
    });
    for rank in 1..ranks {
        let _ = std::fs::remove_dir_all(out.with_extension(format!("rank{rank}")));
    }
}

/// Runs `scenario` on one process into `out`, for `stop_after` steps (to the end when none).
fn run_single(scenario: &Scenario, file: &Path, out: &Path, stop_after: Option<u64>) {
    let mut runner = Runner::start(scenario, file, &ForceModelRegistry::default(), 1, out).unwrap();
    runner.run(stop_after, &mut |_| {}).unwrap();
}

/// The two checkpoints hold the same state, to the bit.
fn assert_same_state(a: &Checkpoint, b: &Checkpoint, what: &str) {
    assert_eq!(a.world.steps, b.world.steps, "{what}: steps");
    assert_eq!(a.world.grains, b.world.grains, "{what}: grains");
    assert_eq!(
        a.world.pairs_by_body(),
        b.world.pairs_by_body(),
        "{what}: pairs"
    );
    assert_eq!(a.world.wall_loads, b.world.wall_loads, "{what}: wall loads");
    assert_eq!(a.world.pending, b.world.pending, "{what}: pending loads");
}

/// The files in `out/checkpoint/`, as the run names them.
fn pieces_present(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("checkpoint"))
        .map(|entries| {
            entries
                .map(|e| format!("checkpoint/{}", e.unwrap().file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn pieces_read_back_as_the_single_process_state_and_resume_on_one_process() {
    let (file, quick) = quick_box();
    // Checkpoints at steps 2899 (0.02 s) and 5798; stopped before the third.
    let stop = 6000;
    let single = scratch("pieces-single");
    run_single(&quick, &file, &single, Some(stop));
    let whole = checkpoint::read(&single.join("checkpoint.bin")).unwrap();
    assert!(whole.pieces.records.is_empty(), "one process: one file");
    assert!(pieces_present(&single).is_empty());
    let outs: Vec<PathBuf> = [2, 3]
        .iter()
        .map(|ranks| scratch(&format!("pieces-{ranks}")))
        .collect();
    for (ranks, out) in [2, 3].into_iter().zip(&outs) {
        run_split(&quick, &file, out, ranks, Some(stop));
        let cp = checkpoint::read(&out.join("checkpoint.bin")).unwrap();
        assert_eq!(cp.pieces.records.len(), ranks, "{ranks} processes: pieces");
        // The second checkpoint in set `b`, and set `a` removed.
        assert_eq!(cp.world.steps, 5798);
        assert_eq!(cp.pieces.set, 1, "{ranks} processes: the set alternates");
        let expected: Vec<String> = (0..ranks).map(|k| piece_file(1, k)).collect();
        assert_eq!(pieces_present(out), expected, "{ranks} processes");
        assert_same_state(&whole, &cp, &format!("{ranks} processes"));
    }

    // The split run's checkpoint resumed by one process, to the end, against the run done
    // in one go on one process.
    let done = scratch("pieces-done");
    run_single(&quick, &file, &done, None);
    let out = &outs[0];
    let mut resumed = Runner::resume(out, &ForceModelRegistry::default(), 1).unwrap();
    resumed.run(None, &mut |_| {}).unwrap();
    let read = |d: &Path, f: &str| std::fs::read(d.join(f)).unwrap();
    assert!(
        read(&done, "timeseries.csv") == read(out, "timeseries.csv"),
        "the resumed run's time series"
    );
    let (a, b) = (
        checkpoint::read(&done.join("checkpoint.bin")).unwrap(),
        checkpoint::read(&out.join("checkpoint.bin")).unwrap(),
    );
    assert_same_state(&a, &b, "resumed on one process");
    // One process writes one file; the pieces no checkpoint names are gone.
    assert!(b.pieces.records.is_empty());
    assert!(pieces_present(out).is_empty(), "{:?}", pieces_present(out));
    for d in [&single, &done].into_iter().chain(&outs) {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_kill_while_the_next_pieces_are_written_leaves_a_whole_checkpoint() {
    let (file, quick) = quick_box();
    let out = scratch("pieces-killed");
    run_split(&quick, &file, &out, 2, Some(3000));
    // One checkpoint, at step 2899, in set `a`.
    let cp = checkpoint::read(&out.join("checkpoint.bin")).unwrap();
    assert_eq!((cp.world.steps, cp.pieces.set), (2899, 0));
    // As a kill leaves them: the next set's pieces listed, one cut short, one half written
    // over by garbage; the checkpoint file not yet replaced.
    {
        let mut dir = RunDir::open(&out).unwrap();
        let next: Vec<PathBuf> = (0..2)
            .map(|k| dir.claim(&piece_file(1, k)).unwrap())
            .collect();
        let kept = std::fs::read(out.join(piece_file(0, 0))).unwrap();
        std::fs::write(&next[0], &kept[..kept.len() / 2]).unwrap();
        std::fs::write(&next[1], vec![0xA5; 100]).unwrap();
    }
    let after = checkpoint::read(&out.join("checkpoint.bin")).unwrap();
    assert_same_state(&cp, &after, "beside broken pieces of the next set");
    // Resumed on two processes, the run writes the next set whole and ends as the run done
    // in one go.
    resume_split(&out, 2);
    let done = scratch("pieces-killed-done");
    run_single(&quick, &file, &done, None);
    let read = |d: &Path| std::fs::read(d.join("timeseries.csv")).unwrap();
    assert!(read(&done) == read(&out), "the resumed run's time series");
    let end = checkpoint::read(&out.join("checkpoint.bin")).unwrap();
    assert_eq!(end.pieces.records.len(), 2);
    let expected: Vec<String> = (0..2).map(|k| piece_file(end.pieces.set, k)).collect();
    assert_eq!(pieces_present(&out), expected);
    for d in [out, done] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Resumes the run in `out` on `ranks` threads as `talus resume` does under `mpirun`, and
/// runs it to its end: the first in `out`, the others from a copy of the checkpoint file and
/// its history in a directory of their own, the pieces read from the run's; each process
/// holds the grains of the pieces it read alone until the first step sends them to their
/// owners.
fn resume_split(out: &Path, ranks: usize) {
    let registry = ForceModelRegistry::default();
    let held = checkpoint::read(&out.join("checkpoint.bin"))
        .unwrap()
        .world
        .grains
        .iter()
        .flatten()
        .count();
    std::thread::scope(|s| {
        for (rank, exchange) in ThreadExchange::group(ranks).into_iter().enumerate() {
            let registry = &registry;
            s.spawn(move || {
                let dir = if rank == 0 {
                    RunDir::open(out).unwrap()
                } else {
                    let own = out.with_extension(format!("resumed{rank}"));
                    std::fs::create_dir_all(&own).unwrap();
                    for f in ["checkpoint.bin", "checkpoint-history.bin", ".talus-files"] {
                        std::fs::copy(out.join(f), own.join(f)).unwrap();
                    }
                    RunDir::open(&own).unwrap()
                };
                let mut runner =
                    Runner::resume_decomposed(dir, out, registry, 1, Box::new(exchange), 40)
                        .unwrap();
                assert!(
                    runner.exp.world.ecs().len() < held as u32,
                    "a share of {held}"
                );
                runner.write_pieces_into(out);
                if rank > 0 {
                    runner.without_outputs();
                }
                runner.take_stock();
                runner.run(None, &mut |_| {}).unwrap();
            });
        }
    });
    for rank in 1..ranks {
        let _ = std::fs::remove_dir_all(out.with_extension(format!("resumed{rank}")));
    }
}

/// The summary of the run in `out` without its timings.
fn summary_without_timings(out: &Path) -> serde_json::Value {
    let mut summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for key in [
        "wall_seconds",
        "grain_steps_per_second",
        "stage_seconds",
        "distribution",
    ] {
        if let Some(map) = summary.as_object_mut() {
            map.remove(key);
        }
    }
    summary
}

#[test]
fn a_finished_run_resumed_for_its_outputs_keeps_its_checkpoint() {
    let (file, quick) = quick_box();
    let out = scratch("pieces-outputs");
    run_split(&quick, &file, &out, 2, None);
    let summary = summary_without_timings(&out);
    // Killed between its last checkpoint and its summary.
    std::fs::remove_file(out.join("summary.json")).unwrap();
    let before = std::fs::read(out.join("checkpoint.bin")).unwrap();
    let pieces_before = pieces_present(&out);
    resume_split(&out, 2);
    assert_eq!(
        summary_without_timings(&out),
        summary,
        "the summary written again"
    );
    assert!(
        std::fs::read(out.join("checkpoint.bin")).unwrap() == before,
        "the checkpoint it resumed from is kept"
    );
    assert_eq!(pieces_present(&out), pieces_before);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn missing_damaged_or_foreign_pieces_are_refused_by_name() {
    let (file, quick) = quick_box();
    let out = scratch("pieces-broken");
    run_split(&quick, &file, &out, 2, Some(3000));
    let main = out.join("checkpoint.bin");
    let first = out.join(piece_file(0, 0));
    let second = out.join(piece_file(0, 1));
    let (a, b) = (
        std::fs::read(&first).unwrap(),
        std::fs::read(&second).unwrap(),
    );
    let refused = |expect: &str, piece: &Path| {
        match checkpoint::read(&main) {
            Err(ScenarioError::Checkpoint { path, problem }) => {
                assert_eq!(path, piece, "{problem}");
                assert!(problem.contains(expect), "{expect:?} not in {problem:?}");
            }
            other => panic!(
                "accepted or refused otherwise: {:?}",
                other.map(|c| c.world.steps)
            ),
        }
        assert!(
            Runner::resume(&out, &ForceModelRegistry::default(), 1).is_err(),
            "resumed from a broken piece"
        );
    };
    // A byte of a grain's state flipped.
    let mut flipped = b.clone();
    let at = flipped.len() / 2;
    flipped[at] ^= 0x10;
    std::fs::write(&second, &flipped).unwrap();
    refused("checksum", &second);
    // Cut short.
    std::fs::write(&second, &b[..b.len() - 7]).unwrap();
    refused("bytes after its header", &second);
    // Missing.
    std::fs::remove_file(&second).unwrap();
    refused("missing", &second);
    // Another process's piece in its place: whole, but not the one named.
    std::fs::write(&second, &a).unwrap();
    refused("not the one the checkpoint names", &second);
    // Not a piece at all.
    std::fs::write(&second, b"TALUSCK\0 and more").unwrap();
    refused("not a piece", &second);
    // Put back, it reads again.
    std::fs::write(&second, &b).unwrap();
    checkpoint::read(&main).unwrap();
    let _ = std::fs::remove_dir_all(out);
}
