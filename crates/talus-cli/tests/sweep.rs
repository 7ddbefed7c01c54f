//! `talus sweep` end to end: the grid of runs, `sweep.csv` against each run's own summary
//! and against a plain `talus run` of the same values, the means, the plots, resuming a
//! sweep killed with SIGKILL (finished runs kept, the interrupted one resumed, the answers
//! bit-identical to a sweep done in one go), sweep files, and refusals.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{TALUS, talus, text};

/// Thirty grains dropped into a box; answers: the final kinetic energy, the coordination
/// and the largest overlap.
const SCENARIO: &str = r#"
Scenario(
    name: "sweep_test",
    seed: 3,
    time: (dt: 4e-5, end: 0.12, output_interval: 0.01, checkpoint_interval: 0.02),
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
            placement: Lattice(min: (0.0, 0.0, 0.0), max: (0.04, 0.04, 0.1), orientation: Aligned),
        ),
    ],
    walls: [
        (name: "box", shape: Box(min: (0.0, 0.0, 0.0), max: (0.04, 0.04, 0.1), thickness: 0.005)),
    ],
    outputs: (plots: false),
)
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The rows of a CSV file without quoted fields, as maps from header to field.
fn rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let content = std::fs::read_to_string(path).unwrap();
    let mut lines = content.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            let fields: Vec<&str> = l.split(',').collect();
            assert_eq!(fields.len(), header.len(), "{l}");
            header
                .iter()
                .zip(fields)
                .map(|(h, f)| (h.to_string(), f.to_string()))
                .collect()
        })
        .collect()
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// The answers of a run (no timings), as numbers.
const ANSWERS: [&str; 3] = [
    "final_kinetic_energy",
    "max_overlap_ratio",
    "mean_coordination",
];

#[test]
fn a_sweep_runs_the_grid_and_tables_every_answer() {
    let dir = scratch("grid");
    let file = dir.join("s.ron");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("sweep");
    let file_s = file.to_str().unwrap();
    // Three frictions, two seeds; `jobs` at a time.
    let grid = |jobs: &str| {
        talus(&[
            "sweep",
            file_s,
            "--vary",
            "force_model.coefficients.friction=0.1,0.5,0.9",
            "--set",
            "time.end=0.08",
            "--seeds",
            "2",
            "--jobs",
            jobs,
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let result = grid("2");
    assert!(result.status.success(), "{}", text(&result.stderr));
    let table = rows(&out.join("sweep.csv"));
    assert_eq!(table.len(), 6);
    let mut seen = Vec::new();
    for row in &table {
        let run = out.join("runs").join(&row["run"]);
        let s = summary(&run);
        assert_eq!(row["status"], s["status"].as_str().unwrap());
        assert_eq!(row["sim_time"].parse::<f64>().unwrap(), 0.08);
        for key in ANSWERS {
            // The table holds the summary's numbers bit for bit.
            assert_eq!(
                row[key].parse::<f64>().unwrap(),
                s[key].as_f64().unwrap(),
                "{key} of {}",
                row["run"]
            );
        }
        // The run was made with its own friction and seed.
        let scenario = std::fs::read_to_string(run.join("scenario.ron")).unwrap();
        let friction = &row["force_model.coefficients.friction"];
        assert!(
            scenario.contains(&format!("\"friction\": {friction}")),
            "{scenario}"
        );
        assert!(scenario.contains(&format!("seed: {}", row["seed"])));
        seen.push((friction.clone(), row["seed"].clone()));
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 6, "every friction with seeds 3 and 4: {seen:?}");
    assert!(seen.iter().all(|(_, s)| s == "3" || s == "4"));

    // A plain run with the same values gives the same answers.
    let single = dir.join("single");
    let result = talus(&[
        "run",
        file_s,
        "--set",
        "time.end=0.08",
        "--set",
        "force_model.coefficients.friction=0.9",
        "--set",
        "seed=4",
        "--quiet",
        "--out",
        single.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let s = summary(&single);
    let row = table
        .iter()
        .find(|r| r["force_model.coefficients.friction"] == "0.9" && r["seed"] == "4")
        .unwrap();
    for key in ANSWERS {
        assert_eq!(row[key].parse::<f64>().unwrap(), s[key].as_f64().unwrap());
    }

    // Means and sample spreads over the two seeds, from the table.
    let means = rows(&out.join("sweep_means.csv"));
    assert_eq!(means.len(), 3);
    for m in &means {
        let mu = &m["force_model.coefficients.friction"];
        let values: Vec<f64> = table
            .iter()
            .filter(|r| &r["force_model.coefficients.friction"] == mu)
            .map(|r| r["mean_coordination"].parse().unwrap())
            .collect();
        let mean = (values[0] + values[1]) / 2.0;
        let sd = (values[0] - values[1]).abs() / 2f64.sqrt();
        let got_mean: f64 = m["mean_coordination_mean"].parse().unwrap();
        let got_sd: f64 = m["mean_coordination_sd"].parse().unwrap();
        assert!(
            (got_mean - mean).abs() <= 1e-12 * mean.abs(),
            "{got_mean} vs {mean}"
        );
        assert!(
            (got_sd - sd).abs() <= 1e-12 * mean.abs(),
            "{got_sd} vs {sd}"
        );
        assert_eq!(m["runs"], "2");
    }
    for key in ANSWERS {
        let plot = out.join("plots").join(format!("{key}_vs_friction.png"));
        let bytes = std::fs::read(&plot).unwrap_or_else(|e| panic!("{}: {e}", plot.display()));
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    }
    assert!(!out.join("plots/wall_seconds_vs_friction.png").exists());
    // The sweep on one page: every plot embedded, a link to every run's own page (which
    // exists), and each grid point's answers with their spread.
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    let plot_files = std::fs::read_dir(out.join("plots")).unwrap().count();
    assert_eq!(
        page.matches("src=\"data:image/png;base64,").count(),
        plot_files
    );
    for r in &table {
        let link = format!("runs/{}/report.html", r["run"]);
        assert!(page.contains(&format!("href=\"{link}\"")), "{link}");
        assert!(out.join(&link).is_file(), "{link}");
    }
    assert!(page.contains("(n = 2)"), "means over the two seeds");

    // Run again: every run is kept, none repeated.
    let before = std::fs::metadata(out.join("runs").join(&table[0]["run"]).join("summary.json"))
        .unwrap()
        .modified()
        .unwrap();
    let again = grid("1");
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(
        text(&again.stderr).matches("kept").count(),
        6,
        "{}",
        text(&again.stderr)
    );
    let after = std::fs::metadata(out.join("runs").join(&table[0]["run"]).join("summary.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);

    // Another sweep in the same directory is refused, and leaves it as it was.
    let other = talus(&[
        "sweep",
        file_s,
        "--vary",
        "force_model.coefficients.friction=0.2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(other.status.code(), Some(1));
    assert!(
        text(&other.stderr).contains("holds another sweep"),
        "{}",
        text(&other.stderr)
    );
    assert_eq!(rows(&out.join("sweep.csv")).len(), 6);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The answers of every run in `sweep.csv`, by run name.
fn answers(out: &Path) -> BTreeMap<String, Vec<String>> {
    rows(&out.join("sweep.csv"))
        .into_iter()
        .map(|r| {
            let values = ANSWERS.iter().map(|k| r[*k].clone()).collect();
            (r["run"].clone(), values)
        })
        .collect()
}

#[test]
fn a_killed_sweep_resumes_where_it_stopped() {
    let dir = scratch("kill");
    let file = dir.join("s.ron");
    std::fs::write(&file, SCENARIO).unwrap();
    let sweep = |out: &Path| -> Vec<String> {
        [
            "sweep",
            file.to_str().unwrap(),
            "--vary",
            "force_model.coefficients.restitution=0.2,0.5,0.8",
            "--set",
            "time.end=0.3",
            "--threads",
            "1",
            "--out",
            out.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let whole = dir.join("whole");
    let result = talus(&sweep(&whole).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(result.status.success(), "{}", text(&result.stderr));

    let killed = dir.join("killed");
    let mut child = Command::new(TALUS)
        .args(sweep(&killed))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the first run has ended and the second has written a checkpoint.
    let second = killed.join("runs/001_restitution=0.5_seed=3");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !(killed
        .join("runs/000_restitution=0.2_seed=3/summary.json")
        .exists()
        && second.join("checkpoint.bin").exists())
    {
        assert!(Instant::now() < deadline, "the sweep did not get that far");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before the kill"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !second.join("summary.json").exists(),
        "killed while the second run ran"
    );

    let resumed = talus(
        &sweep(&killed)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    let log = text(&resumed.stderr);
    assert!(
        log.contains("000_restitution=0.2_seed=3: finished earlier, kept"),
        "{log}"
    );
    assert!(log.contains("resuming 001_restitution=0.5_seed=3"), "{log}");
    assert!(log.contains("starting 002_restitution=0.8_seed=3"), "{log}");
    assert_eq!(answers(&killed), answers(&whole));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_sweep_file_holds_the_command_line() {
    let dir = scratch("file");
    std::fs::write(dir.join("s.ron"), SCENARIO).unwrap();
    let study = dir.join("study.ron");
    std::fs::write(
        &study,
        r#"// The stiffness study.
Sweep(
    scenario: "s.ron",
    set: ["time.end=0.02"],
    vary: ["force_model.coefficients.stiffness=log(5e4, 2e5, 2)"],
    seeds: 1,
)"#,
    )
    .unwrap();
    let out = dir.join("out");
    let result = talus(&[
        "sweep",
        study.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let table = rows(&out.join("sweep.csv"));
    let stiffness: Vec<f64> = table
        .iter()
        .map(|r| r["force_model.coefficients.stiffness"].parse().unwrap())
        .collect();
    assert_eq!(stiffness, vec![5e4, 2e5]);
    assert!(table.iter().all(|r| r["sim_time"] == "0.02"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_sweeps_are_refused_before_anything_runs() {
    let dir = scratch("bad");
    let file = dir.join("s.ron");
    std::fs::write(&file, SCENARIO).unwrap();
    let file_s = file.to_str().unwrap();
    let out = dir.join("out");
    let out_s = out.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--vary", "force_model.coefficients.friction=0.5,-1"],
            "(grid point) force_model.coefficients.friction=-1",
        ),
        (
            vec!["--vary", "force_model.coefficients.fricton=0.5,1"],
            "fricton",
        ),
        (vec!["--vary", "time.end=lin(0.1,0.2,1)"], "count '1'"),
        (
            vec!["--vary", "time.end=0.1,0.2", "--set", "time.end=0.3"],
            "also given by --set",
        ),
        (vec!["--vary", "seed=1,2"], "--seeds N"),
        (vec!["--vary", "a=1", "--vary", "a=2"], "varied twice"),
        (vec!["--seeds", "0", "--vary", "time.end=0.1"], "from 1 to"),
        (vec!["--jobs", "0", "--vary", "time.end=0.1"], "--jobs 0"),
        (vec![], "nothing to sweep"),
        (
            // 10^9 runs: refused from the counts, before a single grid point is built.
            vec![
                "--vary",
                "time.end=lin(0.01,0.02,1000)",
                "--vary",
                "force_model.coefficients.friction=lin(0.1,0.9,1000)",
                "--seeds",
                "1000",
            ],
            "at most 100000",
        ),
    ] {
        let mut full = vec!["sweep", file_s, "--out", out_s];
        full.extend(args.iter().copied());
        let result = talus(&full);
        assert_eq!(result.status.code(), Some(1), "{args:?}");
        assert!(
            text(&result.stderr).contains(says),
            "{args:?}: {}",
            text(&result.stderr)
        );
        assert!(!out.exists(), "{args:?} left {}", out.display());
    }
    // A folder with a table of the user's is not a sweep's.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("sweep.csv"), "mine").unwrap();
    let result = talus(&[
        "sweep",
        file_s,
        "--out",
        out_s,
        "--vary",
        "time.end=0.01,0.02",
    ]);
    assert_eq!(result.status.code(), Some(1));
    assert!(
        text(&result.stderr).contains("not a sweep of talus"),
        "{}",
        text(&result.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(out.join("sweep.csv")).unwrap(),
        "mine"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The arguments of a sweep of `file` over three frictions into `out`, each run `end`
/// seconds long.
fn friction_sweep(file: &Path, out: &Path, end: &str) -> Vec<String> {
    [
        "sweep",
        file.to_str().unwrap(),
        "--vary",
        "force_model.coefficients.friction=0.2,0.5,0.8",
        "--set",
        &format!("time.end={end}"),
        "--threads",
        "1",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn files_of_the_user_in_a_sweep_directory_survive_reruns() {
    let dir = scratch("user-files");
    let file = dir.join("s.ron");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("sweep");
    let args = friction_sweep(&file, &out, "0.02");
    let first = talus(&strs(&args));
    assert!(first.status.success(), "{}", text(&first.stderr));
    // A figure and notes of the user's beside the sweep's own, and the temporary file of a
    // write that a killed sweep left behind.
    std::fs::write(out.join("plots/mine.png"), b"my figure").unwrap();
    std::fs::write(out.join("notes.txt"), b"my notes").unwrap();
    let stale = out.join(".sweep.csv.tmp.4242.0");
    std::fs::write(&stale, b"half a table").unwrap();
    let again = talus(&strs(&args));
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(!stale.exists(), "the stale temporary file was kept");
    let mut forced = args.clone();
    forced.push("--force".into());
    let rerun = talus(&strs(&forced));
    assert!(rerun.status.success(), "{}", text(&rerun.stderr));
    assert_eq!(
        std::fs::read(out.join("plots/mine.png")).unwrap(),
        b"my figure"
    );
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"my notes");
    // The sweep's list of its files names what it wrote, and nothing of the user's.
    let manifest = std::fs::read_to_string(out.join(".talus-sweep-files")).unwrap();
    let listed: Vec<&str> = manifest.lines().collect();
    for own in [
        "sweep.json",
        "sweep.csv",
        "sweep_means.csv",
        "report.html",
        "plots/mean_coordination_vs_friction.png",
    ] {
        assert!(listed.contains(&own), "{own} in {listed:?}");
    }
    assert!(!manifest.contains("mine.png") && !manifest.contains("notes.txt"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_running_sweep_locks_its_directory_and_a_table_of_the_users_is_refused() {
    let dir = scratch("running");
    let file = dir.join("s.ron");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("sweep");
    // Long runs, so that the sweep is still running while the others try.
    let args = friction_sweep(&file, &out, "20.0");
    let mut first = Command::new(TALUS)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The plan is written once the directory is locked.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !out.join("sweep.json").exists() {
        assert!(Instant::now() < deadline, "the sweep wrote no plan");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The same sweep again, and a run into the sweep's directory: the same lock refuses
    // both.
    for second in [
        strs(&args),
        vec![
            "run",
            file.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
    ] {
        let result = talus(&second);
        assert_eq!(result.status.code(), Some(1), "{second:?}");
        let stderr = text(&result.stderr);
        assert!(
            stderr.contains(&format!("another talus process (pid {})", first.id())),
            "{second:?}: {stderr}"
        );
    }
    assert!(
        first.try_wait().unwrap().is_none(),
        "the sweep ended before the others tried"
    );
    first.kill().unwrap();
    first.wait().unwrap();
    // Killed before it wrote its table: a table of the user's put there since is not the
    // sweep's, and the sweep resumed there refuses to overwrite it.
    assert!(!out.join("sweep.csv").exists());
    std::fs::write(out.join("sweep.csv"), "my table").unwrap();
    let resumed = talus(&strs(&args));
    assert_eq!(resumed.status.code(), Some(1));
    let stderr = text(&resumed.stderr);
    assert!(
        stderr.contains("(sweep.csv)") && stderr.contains("never overwrites"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("sweep.csv")).unwrap(),
        "my table"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
