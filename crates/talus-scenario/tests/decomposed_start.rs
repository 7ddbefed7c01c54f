//! The start of a run split between processes (threads joined by a `ThreadExchange`): each
//! process checks only its own grains' start, against the walls and the grains near them,
//! and an overlap is still found, whichever process owns each of the two grains.

mod common;

use common::{scenario, scratch};
use talus_scenario::output::run_dir::RunDir;
use talus_scenario::schema::Placement;
use talus_scenario::{Runner, Scenario};
use talus_sim::distribute::ThreadExchange;
use talus_sim::force::ForceModelRegistry;

/// What `prepare_in` says on each of `ranks` processes.
fn prepared(
    scenario: &Scenario,
    file: &std::path::Path,
    ranks: usize,
    tag: &str,
) -> Vec<Result<usize, String>> {
    let registry = ForceModelRegistry::default();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = ThreadExchange::group(ranks)
            .into_iter()
            .enumerate()
            .map(|(rank, exchange)| {
                let registry = &registry;
                s.spawn(move || {
                    let dir =
                        RunDir::create(&scratch(&format!("{tag}-{ranks}-{rank}")), true).unwrap();
                    Runner::prepare_in(
                        scenario,
                        file,
                        registry,
                        1,
                        dir,
                        Some((Box::new(exchange), 50)),
                    )
                    .map(|runner| runner.exp.world.grain_count())
                    .map_err(|e| e.to_string())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    for rank in 0..ranks {
        let _ = std::fs::remove_dir_all(scratch(&format!("{tag}-{ranks}-{rank}")));
    }
    results
}

#[test]
fn each_process_checks_its_own_start_and_an_overlap_is_still_found() {
    // The intruder moved up into the beads' lattice: it overlaps some of them.
    let (file, mut bad) = scenario("vibrating_box", &["grains[1].count=300"], &[]);
    bad.grains[0].placement = Placement::Points(vec![(0.05, 0.025, 0.06)]);
    let out = scratch("start-single");
    let single = Runner::start(&bad, &file, &ForceModelRegistry::default(), 1, &out)
        .map(drop)
        .unwrap_err()
        .to_string();
    assert!(single.contains("overlaps grain"), "{single}");
    let _ = std::fs::remove_dir_all(out);
    for ranks in [2, 3, 5] {
        let results = prepared(&bad, &file, ranks, "start-bad");
        assert!(
            results
                .iter()
                .any(|r| r.as_ref().is_err_and(|e| e.contains("overlaps grain"))),
            "{ranks} processes: {results:?}"
        );
    }
    // The same scenario with its intruder in place starts on every process, each holding
    // its own grains alone.
    let (file, good) = scenario("vibrating_box", &["grains[1].count=300"], &[]);
    for ranks in [2, 3, 5] {
        let held: Vec<usize> = prepared(&good, &file, ranks, "start-good")
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(
            held.iter().sum::<usize>(),
            301,
            "{ranks} processes: {held:?}"
        );
        assert!(held.iter().all(|&h| h < 301), "{ranks} processes: {held:?}");
    }
}
