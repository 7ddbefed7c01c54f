//! A scenario run with several seeds (`seeds: N`) end to end: the companion runs are the
//! plain runs of their seeds bit for bit, the summary's spread is the mean and sample
//! standard deviation of their answers, a run killed while its companions run resumes to
//! the same bits, a run replaced with `--force` does not keep companions of the scenario it
//! replaced, a sweep runs each seed once, and the seed count is checked.

mod common;

use std::path::{Path, PathBuf};

use common::{talus, text};

/// Thirty grains dropped into a box, run with three seeds.
const SCENARIO: &str = r#"
Scenario(
    name: "seeds_test",
    seed: 11,
    seeds: 3,
    time: (dt: 4e-5, end: 0.1, output_interval: 0.01, checkpoint_interval: 0.02),
    gravity: (0.0, 0.0, -9.81),
    materials: [(name: "m", density: 2500.0)],
    force_model: (name: "volumetric", coefficients: {"stiffness": 2e5, "restitution": 0.3, "friction": 0.5}),
    grains: [
        (
            name: "g",
            count: 30,
            vertices: 12,
            semi_axes: (0.005, 0.004, 0.0035),
            size_spread: 0.1,
            material: "m",
            placement: Lattice(min: (0.0, 0.0, 0.0), max: (0.04, 0.04, 0.1)),
        ),
    ],
    walls: [
        (name: "box", shape: Box(min: (0.0, 0.0, 0.0), max: (0.04, 0.04, 0.1), thickness: 0.005)),
    ],
    outputs: (plots: false, frame_interval: 0.05),
)
"#;

/// The answers compared across runs.
const ANSWERS: [&str; 3] = [
    "final_kinetic_energy",
    "max_overlap_ratio",
    "mean_coordination",
];

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-seeds-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// `talus run FILE --out OUT` with `extra` arguments; asserts that it succeeded.
fn run(file: &Path, out: &Path, extra: &[&str]) {
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let result = talus(&args);
    assert!(result.status.success(), "{}", text(&result.stderr));
}

#[test]
fn companions_are_the_plain_runs_of_their_seeds_and_the_spread_is_theirs() {
    let dir = scratch("spread");
    let file = dir.join("s.ron");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("run");
    run(&file, &out, &[]);
    let s = summary(&out);
    assert_eq!(s["status"], "finished", "{s}");
    let block = &s["seeds"];
    assert_eq!(block["seeds"], serde_json::json!([11, 12, 13]));
    assert_eq!(
        block["runs"],
        serde_json::json!([".", "seeds/seed-12", "seeds/seed-13"])
    );
    assert_eq!(
        block["statuses"],
        serde_json::json!(["finished", "finished", "finished"])
    );
    // Each companion is the plain run of its seed, bit for bit, and writes no frames.
    let mut values: Vec<Vec<f64>> = vec![ANSWERS.iter().map(|k| s[k].as_f64().unwrap()).collect()];
    for seed in [12, 13] {
        let companion = out.join(format!("seeds/seed-{seed}"));
        assert!(!companion.join("frames.pvd").exists());
        let plain = dir.join(format!("plain-{seed}"));
        let seed_arg = format!("seed={seed}");
        run(&file, &plain, &["--set", &seed_arg, "--set", "seeds=1"]);
        let (c, p) = (summary(&companion), summary(&plain));
        assert!(p.get("seeds").is_none(), "a run of one seed has no spread");
        for key in ANSWERS {
            assert_eq!(c[key], p[key], "{key} of seed {seed}");
        }
        values.push(ANSWERS.iter().map(|k| c[k].as_f64().unwrap()).collect());
    }
    assert!(
        out.join("frames.pvd").exists(),
        "the run itself writes frames"
    );
    // The spread: every seed's value, their mean and sample standard deviation, the range.
    for (k, key) in ANSWERS.iter().enumerate() {
        let entry = &block["answers"][key];
        let v: Vec<f64> = values.iter().map(|row| row[k]).collect();
        let listed: Vec<f64> = entry["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(listed, v, "{key}");
        let mean = (v[0] + v[1] + v[2]) / 3.0;
        let sd =
            (((v[0] - mean).powi(2) + (v[1] - mean).powi(2) + (v[2] - mean).powi(2)) / 2.0).sqrt();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1e-300);
        assert!(close(entry["mean"].as_f64().unwrap(), mean), "{key}");
        assert!(close(entry["sd"].as_f64().unwrap(), sd), "{key}");
        assert_eq!(entry["n"], 3);
        assert_eq!(
            entry["min"].as_f64().unwrap(),
            v.iter().copied().fold(f64::MAX, f64::min)
        );
        assert_eq!(
            entry["max"].as_f64().unwrap(),
            v.iter().copied().fold(f64::MIN, f64::max)
        );
    }
    // Bookkeeping is no answer.
    assert!(block["answers"].get("wall_seconds").is_none());
    assert!(block["answers"].get("grains").is_none());
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        report.contains("Over 3 seeds"),
        "the report shows the spread"
    );

    // `talus check` counts the runs.
    let check = talus(&["check", file.to_str().unwrap()]);
    let said = text(&check.stdout);
    assert!(said.contains("3 runs, seeds 11 to 13"), "{said}");
    assert!(said.contains("2.25e5 grain-steps in all"), "{said}");
}

#[test]
fn a_run_stopped_while_its_companions_run_resumes_to_the_same_bits() {
    let dir = scratch("resume");
    let file = dir.join("s.ron");
    std::fs::write(&file, SCENARIO).unwrap();
    let whole = dir.join("whole");
    run(&file, &whole, &[]);
    let expected = summary(&whole)["seeds"].clone();

    // Stopped after the last checkpoint of seed 12, before its summary, with seed 13 not
    // started: what a kill at that moment leaves (the run's own summary is written last).
    let cut = dir.join("cut");
    run(&file, &cut, &[]);
    for rel in [
        "summary.json",
        "report.html",
        "seeds/seed-12/summary.json",
        "seeds/seed-12/report.html",
    ] {
        std::fs::remove_file(cut.join(rel)).unwrap();
    }
    std::fs::remove_dir_all(cut.join("seeds/seed-13")).unwrap();
    let result = talus(&["resume", cut.to_str().unwrap(), "--quiet"]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let resumed = summary(&cut);
    assert_eq!(resumed["status"], "finished");
    assert_eq!(resumed["seeds"], expected);

    // A companion left by a run of another scenario is not kept.
    run(
        &file,
        &cut,
        &["--force", "--set", "force_model.coefficients.friction=0.2"],
    );
    let companion = std::fs::read_to_string(cut.join("seeds/seed-13/scenario.ron")).unwrap();
    assert!(companion.contains("\"friction\": 0.2"), "{companion}");
    assert_ne!(summary(&cut)["seeds"], expected);
}

#[test]
fn a_sweep_runs_each_seed_once_and_the_seed_count_is_checked() {
    let dir = scratch("sweep");
    let file = dir.join("s.ron");
    std::fs::write(&file, SCENARIO).unwrap();
    // The scenario's seed count is the sweep's default, each of its runs one seed.
    let out = dir.join("sweep");
    let result = talus(&[
        "sweep",
        file.to_str().unwrap(),
        "--set",
        "time.end=0.02",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let table = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(
        table.lines().count(),
        4,
        "three seeds, one row each: {table}"
    );
    for entry in std::fs::read_dir(out.join("runs")).unwrap() {
        let run = entry.unwrap().path();
        assert!(summary(&run).get("seeds").is_none());
        assert!(!run.join("seeds").exists());
    }
    let refused = talus(&[
        "sweep",
        file.to_str().unwrap(),
        "--set",
        "seeds=2",
        "--seeds",
        "2",
        "--out",
        dir.join("refused").to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    assert!(text(&refused.stderr).contains("--seeds N"));

    for bad in ["seeds=0", "seeds=1001"] {
        let result = talus(&["check", file.to_str().unwrap(), "--set", bad]);
        assert!(!result.status.success(), "{bad}");
        let said = text(&result.stderr);
        assert!(
            said.contains("seeds") && said.contains("from 1 to 1000"),
            "{said}"
        );
    }
}
