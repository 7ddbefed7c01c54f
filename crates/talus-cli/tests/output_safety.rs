//! A run never loses a user's file and never reports garbage as finished, tried as a user
//! would hit it, through the `talus` binary: files of the user's in the output directory,
//! `--force`, two processes on one directory, stale temporary files, damaged checkpoints, a
//! disk that fills up, runs too large for the machine, absurd thread counts, pours that
//! cannot deliver, and resuming a finished run.

mod common;

use common::{TALUS, talus, text};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Eight grains dropped on a floor: frames, plots and checkpoints in a fraction of a second.
const SMALL: &str = r#"
Scenario(
    name: "small",
    seed: 3,
    time: (dt: 4e-5, end: 0.04, output_interval: 0.004, checkpoint_interval: 0.01),
    gravity: (0.0, 0.0, -9.81),
    integrator: Verlet,
    materials: [(name: "m", density: 2500.0)],
    force_model: (name: "volumetric", coefficients: {"stiffness": 2e5, "restitution": 0.3, "friction": 0.5}),
    grains: [(
        name: "g", count: 8, vertices: 10, semi_axes: (0.004, 0.004, 0.004), material: "m",
        placement: Lattice(min: (0.0, 0.0, 0.001), max: (0.04, 0.04, 0.04)),
    )],
    walls: [(name: "floor", shape: Plane(point: (0.0, 0.0, 0.0), normal: (0.0, 0.0, 1.0)))],
    outputs: (frame_interval: 0.01, plots: true),
)
"#;

/// A fresh directory holding `small.ron` (with `changes` applied as `from => to` text
/// replacements).
fn scratch(name: &str, changes: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-safety-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut scenario = SMALL.to_string();
    for (from, to) in changes {
        assert!(scenario.contains(from), "{from}");
        scenario = scenario.replace(from, to);
    }
    std::fs::write(dir.join("small.ron"), scenario).unwrap();
    dir
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

fn assert_no_panic(out: &Output) {
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{stderr}"
    );
}

#[test]
fn force_removes_only_what_the_earlier_run_wrote() {
    let dir = scratch("force", &[]);
    let out = dir.join("d");
    std::fs::create_dir_all(out.join("plots")).unwrap();
    std::fs::write(out.join("plots/fig1.png"), b"x").unwrap();
    std::fs::write(out.join("notes.md"), b"my notes").unwrap();
    let file = dir.join("small.ron");
    let first = talus(&["run", path(&file), "--out", path(&out), "--quiet"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(out.join("plots/kinetic_energy.png").exists());
    assert!(out.join("frames/grains_000004.vtu").exists());
    // A second run without --force is refused and changes nothing.
    let again = talus(&["run", path(&file), "--out", path(&out), "--quiet"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again.stderr).contains("already holds a run"));
    // A shorter run with --force: the earlier run's extra frames go, the user's files stay.
    let forced = talus(&[
        "run",
        path(&file),
        "--out",
        path(&out),
        "--force",
        "--quiet",
        "--set",
        "time.end=0.02",
    ]);
    assert!(forced.status.success(), "{}", text(&forced.stderr));
    assert_eq!(std::fs::read(out.join("plots/fig1.png")).unwrap(), b"x");
    assert_eq!(std::fs::read(out.join("notes.md")).unwrap(), b"my notes");
    assert!(out.join("frames/grains_000002.vtu").exists());
    assert!(
        !out.join("frames/grains_000004.vtu").exists(),
        "a frame of the earlier run is left"
    );
    assert_eq!(summary(&out)["sim_time"].as_f64().unwrap(), 0.02);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn files_of_the_user_under_talus_names_are_never_overwritten() {
    // The scenario file itself, called scenario.ron, in the output directory.
    let dir = scratch("own", &[]);
    let mine = "// my commented scenario\n".to_string() + SMALL;
    std::fs::write(dir.join("scenario.ron"), &mine).unwrap();
    let file = dir.join("scenario.ron");
    for extra in [&[][..], &["--force"][..]] {
        let mut args = vec!["run", path(&file), "--out", path(&dir), "--quiet"];
        args.extend_from_slice(extra);
        let out = talus(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("scenario.ron") && stderr.contains("never overwrites"),
            "{stderr}"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), mine);
    // A time series and a collection of the user's.
    for name in ["timeseries.csv", "frames.pvd", "frames/grains_000000.vtu"] {
        let out = dir.join(format!("out-{}", name.replace('/', "-")));
        std::fs::create_dir_all(out.join("frames")).unwrap();
        std::fs::write(out.join(name), b"mine").unwrap();
        let result = talus(&["run", path(&file), "--out", path(&out), "--quiet"]);
        assert_eq!(result.status.code(), Some(1), "{name}");
        assert!(
            text(&result.stderr).contains(name),
            "{}",
            text(&result.stderr)
        );
        assert_eq!(std::fs::read(out.join(name)).unwrap(), b"mine");
        assert!(!out.join("summary.json").exists());
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Starts `talus` with `args` in the background.
fn spawn(args: &[&str]) -> Child {
    Command::new(TALUS)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("talus starts")
}

/// Waits until `file` exists.
fn wait_for(file: &Path) {
    let start = Instant::now();
    while !file.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{} never appeared",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_second_process_on_a_running_directory_is_refused() {
    // Long enough to be alive while the others try: many steps of a small bed.
    let dir = scratch(
        "lock",
        &[
            ("end: 0.04", "end: 200.0"),
            ("output_interval: 0.004", "output_interval: 0.5"),
            ("checkpoint_interval: 0.01", "checkpoint_interval: 0.02"),
            ("frame_interval: 0.01", "frame_interval: 100.0"),
        ],
    );
    let out = dir.join("d");
    let file = dir.join("small.ron");
    let mut first = spawn(&["run", path(&file), "--out", path(&out), "--quiet"]);
    wait_for(&out.join("checkpoint.bin"));
    for args in [
        vec!["resume", path(&out), "--quiet"],
        vec![
            "run",
            path(&file),
            "--out",
            path(&out),
            "--force",
            "--quiet",
        ],
    ] {
        let second = talus(&args);
        assert_eq!(second.status.code(), Some(1), "{args:?}");
        let stderr = text(&second.stderr);
        assert!(
            stderr.contains(&format!("another talus process (pid {})", first.id())),
            "{stderr}"
        );
    }
    // Killed, the first process leaves no stale lock and its temporary files are cleaned.
    first.kill().unwrap();
    first.wait().unwrap();
    let stale = out.join(".timeseries.csv.tmp.4242.7");
    std::fs::write(&stale, b"half a file").unwrap();
    let resumed = spawn(&["resume", path(&out), "--quiet"]);
    let start = Instant::now();
    while stale.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "stale file kept");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut resumed = resumed;
    resumed.kill().unwrap();
    let status = resumed.wait_with_output().unwrap();
    assert!(!text(&status.stderr).contains("another talus"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_damaged_checkpoint_is_refused_and_a_finished_run_is_left_alone() {
    let dir = scratch("damaged", &[]);
    let out = dir.join("d");
    let file = dir.join("small.ron");
    let run = talus(&["run", path(&file), "--out", path(&out), "--quiet"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    // Resuming a finished run changes nothing.
    let before = std::fs::read(out.join("summary.json")).unwrap();
    let resume = talus(&["resume", path(&out), "--quiet"]);
    assert!(resume.status.success(), "{}", text(&resume.stderr));
    assert!(text(&resume.stderr).contains("already ended"));
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), before);

    let cp = out.join("checkpoint.bin");
    let good = std::fs::read(&cp).unwrap();
    let cases: Vec<(String, Vec<u8>)> = vec![
        ("a flipped bit".into(), {
            let mut b = good.clone();
            b[good.len() / 2] ^= 0x10;
            b
        }),
        ("garbage appended".into(), {
            let mut b = good.clone();
            b.extend_from_slice(b"garbage");
            b
        }),
        ("cut short".into(), good[..good.len() - 100].to_vec()),
    ];
    for (what, bytes) in cases {
        std::fs::write(&cp, bytes).unwrap();
        let out_resume = talus(&["resume", path(&out), "--quiet"]);
        assert_eq!(out_resume.status.code(), Some(1), "{what}");
        assert_no_panic(&out_resume);
        let stderr = text(&out_resume.stderr);
        assert!(
            stderr.contains("checkpoint") && stderr.contains("damaged"),
            "{what}: {stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_full_disk_is_never_reported_as_finished() {
    // The file size limit of `ulimit -f` (with SIGXFSZ ignored, so writes fail with EFBIG
    // instead of killing the process) stands for a disk that fills up: the plots at the end
    // do not fit, the summary does.
    let dir = scratch("full", &[("frame_interval: 0.01", "frame_interval: None")]);
    let out = dir.join("d");
    let file = dir.join("small.ron");
    let script = format!(
        "trap '' XFSZ; ulimit -f 24; exec {TALUS} run {} --out {} --quiet",
        path(&file),
        path(&out)
    );
    let result = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_eq!(result.status.code(), Some(1), "{}", text(&result.stderr));
    assert_no_panic(&result);
    assert!(
        text(&result.stderr).contains("plots"),
        "{}",
        text(&result.stderr)
    );
    let s = summary(&out);
    assert_eq!(s["status"], "failed", "{s}");
    assert!(s["error"].as_str().unwrap().contains("plots"), "{s}");
    if let Ok(report) = std::fs::read_to_string(out.join("report.html")) {
        assert!(report.contains("failed"), "a report that hides the failure");
    }

    // Room again: `talus resume` writes the outputs the full disk refused, and they are
    // those of a run that never met a full disk.
    let resumed = talus(&["resume", path(&out), "--quiet"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    let s = summary(&out);
    assert_eq!(s["status"], "finished", "{s}");
    assert!(out.join("report.html").exists() && out.join("plots").is_dir());
    let clean = dir.join("clean");
    let fresh = talus(&["run", path(&file), "--out", path(&clean), "--quiet"]);
    assert_eq!(fresh.status.code(), Some(0), "{}", text(&fresh.stderr));
    assert_eq!(
        std::fs::read(out.join("timeseries.csv")).unwrap(),
        std::fs::read(clean.join("timeseries.csv")).unwrap()
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_run_killed_before_its_summary_writes_it_when_resumed() {
    // The last checkpoint is written before the outputs: a run killed between the two has
    // ended, but without its summary. Resuming it writes what is missing.
    let dir = scratch("before-summary", &[]);
    let out = dir.join("d");
    let file = dir.join("small.ron");
    let first = talus(&["run", path(&file), "--out", path(&out), "--quiet"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let expected = std::fs::read(out.join("timeseries.csv")).unwrap();
    let finished = summary(&out);
    for file in ["summary.json", "report.html", "timeseries.csv"] {
        std::fs::remove_file(out.join(file)).unwrap();
    }
    let resumed = talus(&["resume", path(&out), "--quiet"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    assert_no_panic(&resumed);
    let s = summary(&out);
    assert_eq!(s["status"], "finished", "{s}");
    assert_eq!(s["steps"], finished["steps"]);
    assert_eq!(s["final_kinetic_energy"], finished["final_kinetic_energy"]);
    assert!(out.join("report.html").exists());
    assert_eq!(std::fs::read(out.join("timeseries.csv")).unwrap(), expected);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn runs_too_large_for_the_machine_are_refused_before_they_start() {
    // Ten million grains under a 4 GiB address-space limit: a clear message, no abort.
    let dir = scratch(
        "large",
        &[(
            "placement: Lattice(min: (0.0, 0.0, 0.001), max: (0.04, 0.04, 0.04))",
            "placement: Lattice(min: (0.0, 0.0, 0.001), max: (2.0, 2.0, 200.0))",
        )],
    );
    let file = dir.join("small.ron");
    for command in ["check", "run"] {
        let script = format!(
            "ulimit -v 4194304; exec {TALUS} {command} {} --set grains[0].count=1e7 --out {}",
            path(&file),
            path(&dir.join("d"))
        );
        let script = if command == "check" {
            script.replace(&format!(" --out {}", path(&dir.join("d"))), "")
        } else {
            script
        };
        let start = Instant::now();
        let result = Command::new("sh").args(["-c", &script]).output().unwrap();
        assert_eq!(result.status.code(), Some(1), "{}", text(&result.stderr));
        assert_no_panic(&result);
        let stderr = text(&result.stderr);
        assert!(
            stderr.contains("of memory for 10000000 grains"),
            "{command}: {stderr}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{command} took long"
        );
    }
    assert!(!dir.join("d").exists());

    // Frames at every step: far more output than a run writes unless asked.
    let out = talus(&[
        "run",
        path(&file),
        "--set",
        "grains[0].count=2000",
        "--set",
        "time.end=2.0",
        "--set",
        "outputs.frame_interval=4e-5",
        "--out",
        path(&dir.join("d")),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("would write about") && stderr.contains("--allow-large"),
        "{stderr}"
    );
    assert!(!dir.join("d").exists());
    let check = talus(&[
        "check",
        path(&file),
        "--set",
        "grains[0].placement.max=(1.0, 1.0, 1.0)",
        "--set",
        "grains[0].count=2000",
        "--set",
        "time.end=2.0",
        "--set",
        "outputs.frame_interval=4e-5",
    ]);
    assert!(
        text(&check.stdout).contains("would write about"),
        "{}",
        text(&check.stdout)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn thread_counts_are_bounded_by_the_machine_and_reported() {
    let dir = scratch("threads", &[]);
    let file = dir.join("small.ron");
    let cores = std::thread::available_parallelism().unwrap().get();
    let out = talus(&[
        "run",
        path(&file),
        "--threads",
        "5000",
        "--out",
        path(&dir.join("d")),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("error: --threads 5000") && !stderr.contains("small.ron"),
        "{stderr}"
    );
    assert!(!dir.join("d").exists());
    let over = (cores + 1).to_string();
    let out = talus(&[
        "run",
        path(&file),
        "--threads",
        &over,
        "--out",
        path(&dir.join("d")),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("more than the {cores} cores")));
    assert_eq!(summary(&dir.join("d"))["threads"], cores + 1);
    // 0 means one per core, and the summary says how many that was.
    let out = talus(&["run", path(&file), "--out", path(&dir.join("e")), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(summary(&dir.join("e"))["threads"], cores);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_pour_that_cannot_deliver_is_reported_as_suspect() {
    // 200 grains at 10^6 per second from a region with room for a handful at a time.
    let dir = scratch(
        "pour",
        &[(
            "placement: Lattice(min: (0.0, 0.0, 0.001), max: (0.04, 0.04, 0.04))",
            "placement: Pour(min: (0.0, 0.0, 0.03), max: (0.031, 0.031, 0.042), rate: 1e6)",
        )],
    );
    let file = dir.join("small.ron");
    let out = dir.join("d");
    let result = talus(&[
        "run",
        path(&file),
        "--set",
        "grains[0].count=200",
        "--out",
        path(&out),
        "--quiet",
    ]);
    assert_eq!(result.status.code(), Some(3), "{}", text(&result.stderr));
    assert!(text(&result.stderr).contains("suspect"));
    let s = summary(&out);
    assert_eq!(s["status"], "suspect");
    assert_eq!(s["stopped"], "end_time");
    let warning = s["warnings"][0].as_str().unwrap();
    assert!(warning.contains("of 200 grains were poured"), "{warning}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_file_name_that_names_no_folder_needs_out() {
    let dir = scratch("dots", &[]);
    std::fs::rename(dir.join("small.ron"), dir.join("...ron")).unwrap();
    let result = Command::new(TALUS)
        .args(["run", "...ron", "--quiet"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(1));
    assert!(
        text(&result.stderr).contains("--out"),
        "{}",
        text(&result.stderr)
    );
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 1, "only the scenario is there");
    let _ = std::fs::remove_dir_all(dir);
}
