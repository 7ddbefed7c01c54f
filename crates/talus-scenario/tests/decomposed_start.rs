//! The start of a run split between processes (threads joined by a `ThreadExchange`): each
//! process checks only its own grains' start, against the walls and the grains near them
//! (across periodic faces too), and an overlap is still found, whichever process owns each
//! of the two grains.

mod common;

use common::{scenario, scratch};
use talus_scenario::output::run_dir::RunDir;
use talus_scenario::schema::Placement;
use talus_scenario::{Runner, Scenario};
use talus_sim::distribute::ThreadExchange;
use talus_sim::force::ForceModelRegistry;

/// What `prepare_in` and `place_start` say on each of `ranks` processes.
fn prepared(
    scenario: &Scenario,
    file: &std::path::Path,
    ranks: usize,
    tag: &str,
) -> Vec<Result<usize, String>> {
    prepared_in(scenario, file, ranks, tag, None)
}

/// [`prepared`], the first process writing into `first` (replacing an earlier run there)
/// when given.
fn prepared_in(
    scenario: &Scenario,
    file: &std::path::Path,
    ranks: usize,
    tag: &str,
    first: Option<&std::path::Path>,
) -> Vec<Result<usize, String>> {
    let registry = ForceModelRegistry::default();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = ThreadExchange::group(ranks)
            .into_iter()
            .enumerate()
            .map(|(rank, exchange)| {
                let registry = &registry;
                s.spawn(move || {
                    let own = match first {
                        Some(first) if rank == 0 => first.to_path_buf(),
                        _ => scratch(&format!("{tag}-{ranks}-{rank}")),
                    };
                    let dir = RunDir::create(&own, true).unwrap();
                    Runner::prepare_in(
                        scenario,
                        file,
                        registry,
                        1,
                        dir,
                        Some((Box::new(exchange), 50)),
                    )
                    .and_then(|mut runner| {
                        runner.place_start()?;
                        Ok(runner.exp.world.grain_count())
                    })
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

/// `bad` refused for two grains that overlap on one process and on each of `ranks`
/// processes (by one of them at least); `good` started on each, its `grains` held once in
/// all and not all by one process.
fn refused_then_started(
    (bad, good): (&Scenario, &Scenario),
    file: &std::path::Path,
    ranks: &[usize],
    tag: &str,
    grains: usize,
) {
    let out = scratch(&format!("{tag}-single"));
    let single = Runner::start(bad, file, &ForceModelRegistry::default(), 1, &out)
        .map(drop)
        .unwrap_err()
        .to_string();
    assert!(single.contains("overlaps grain"), "{single}");
    let _ = std::fs::remove_dir_all(out);
    for &ranks in ranks {
        let results = prepared(bad, file, ranks, &format!("{tag}-bad"));
        assert!(
            results
                .iter()
                .any(|r| r.as_ref().is_err_and(|e| e.contains("overlaps grain"))),
            "{ranks} processes: {results:?}"
        );
        let held: Vec<usize> = prepared(good, file, ranks, &format!("{tag}-good"))
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(
            held.iter().sum::<usize>(),
            grains,
            "{ranks} processes: {held:?}"
        );
        assert!(
            held.iter().all(|&h| h < grains),
            "{ranks} processes: {held:?}"
        );
    }
}

#[test]
fn each_process_checks_its_own_start_and_an_overlap_is_still_found() {
    // The intruder moved up into the beads' lattice: it overlaps some of them.
    let (file, mut bad) = scenario("vibrating_box", &["grains[1].count=300"], &[]);
    bad.grains[0].placement = Placement::Points(vec![(0.05, 0.025, 0.06)]);
    // The same scenario with its intruder in place starts on every process, each holding
    // its own grains alone.
    let (_, good) = scenario("vibrating_box", &["grains[1].count=300"], &[]);
    refused_then_started((&bad, &good), &file, &[2, 3, 5], "start", 301);
}

#[test]
fn an_overlap_across_a_periodic_face_is_found_by_the_processes_too() {
    // The chute's bed in the half x > 0.05 of its box (periodic along x from 0 to 0.1; not
    // along y, whose period is too short for the large grain, so without the flow probe),
    // and a large grain at x = 0.001: clear of every grain inside the box, its image across
    // the face at x = 0.1 reaches into the bed's last columns.
    let (file, mut good) = scenario("chute_flow", &["grains[0].count=120"], &[]);
    good.periodic.y = None;
    good.measurements.clear();
    let Placement::Lattice { min, .. } = &mut good.grains[0].placement else {
        panic!("the chute's bed is a lattice");
    };
    min.0 = 0.05;
    let mut bad = good.clone();
    let mut intruder = bad.grains[0].clone();
    intruder.name = "intruder".into();
    intruder.count = 1;
    intruder.vertices = Some(30);
    intruder.size_spread = 0.0;
    intruder.semi_axes = Some((0.02, 0.02, 0.02));
    intruder.placement = Placement::Points(vec![(0.001, 0.025, 0.03)]);
    bad.grains.push(intruder);
    refused_then_started((&bad, &good), &file, &[2, 3], "start-periodic", 120);
}

#[test]
fn a_start_refused_on_another_process_leaves_the_earlier_run() {
    let out = scratch("start-earlier");
    let (file, good) = scenario(
        "vibrating_box",
        &[
            "grains[1].count=60",
            "time.end=0.002",
            "outputs.plots=false",
        ],
        &[],
    );
    Runner::start(&good, &file, &ForceModelRegistry::default(), 1, &out)
        .unwrap()
        .run(None, &mut |_| {})
        .unwrap();
    let summary = std::fs::read(out.join("summary.json")).unwrap();
    // Replaced by a start one process refuses: nothing of the earlier run is removed before
    // every process has set up.
    // The intruder inside the top of the beads' column: the first process, which holds the
    // bottom, finds nothing itself, and learns of the other's refusal.
    let (file, mut bad) = scenario("vibrating_box", &["grains[1].count=600"], &[]);
    bad.grains[0].placement = Placement::Points(vec![(0.05, 0.025, 0.2)]);
    for ranks in [2, 3] {
        let results = prepared_in(&bad, &file, ranks, "start-earlier", Some(&out));
        assert!(
            results[0].as_ref().is_err_and(
                |e| e.contains("could not place its grains") && e.contains("overlaps grain")
            ),
            "{ranks} processes: {results:?}"
        );
        assert!(
            results[1..].iter().any(|r| r
                .as_ref()
                .is_err_and(|e| e.starts_with(&format!("{}", file.display()))
                    && e.contains("overlaps grain")
                    && !e.contains("could not place"))),
            "{results:?}"
        );
        assert!(results.iter().all(Result::is_err), "{results:?}");
        assert!(
            std::fs::read(out.join("summary.json")).is_ok_and(|s| s == summary),
            "{ranks} processes: the earlier run's summary"
        );
        assert!(out.join("timeseries.csv").exists());
    }
    let _ = std::fs::remove_dir_all(out);
}
