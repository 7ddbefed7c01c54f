//! A run killed with SIGKILL and resumed from its last checkpoint ends bit-identical to the
//! same run done in one go — with grains poured and removed along the way, and with other
//! thread counts.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use talus_scenario::checkpoint;

const TALUS: &str = env!("CARGO_BIN_EXE_talus");

/// A small hopper: grains on a gate that opens, a second population poured from above
/// while the first flows out.
const SCENARIO: &str = r#"
Scenario(
    name: "resume_test",
    seed: 9,
    time: (dt: 4e-5, end: 0.3, output_interval: 0.005, checkpoint_interval: 0.04),
    gravity: (0.0, 0.0, -9.81),
    materials: [(name: "m", density: 2500.0)],
    force_model: (name: "volumetric", coefficients: {"stiffness": 2e5, "restitution": 0.3, "friction": 0.5}),
    grains: [
        (
            name: "bed",
            count: 60,
            vertices: 12,
            semi_axes: (0.005, 0.004, 0.0035),
            size_spread: 0.1,
            material: "m",
            placement: Lattice(min: (-0.05, -0.02, 0.101), max: (0.05, 0.02, 0.3), orientation: Aligned),
        ),
        (
            name: "rain",
            count: 20,
            vertices: 10,
            semi_axes: (0.004, 0.004, 0.004),
            material: "m",
            placement: Pour(min: (-0.03, -0.02, 0.25), max: (0.03, 0.02, 0.27), rate: 200.0, start: 0.05),
        ),
    ],
    walls: [
        (name: "funnel", shape: Hopper(center: (0.0, 0.0, 0.05), orifice: 0.04, wall_angle_deg: 60.0,
            height: 0.05, depth: 0.04, thickness: 0.01, kind: Wedge)),
        (name: "x0", shape: Plane(point: (-0.0545, 0.0, 0.0), normal: (1.0, 0.0, 0.0))),
        (name: "x1", shape: Plane(point: (0.0545, 0.0, 0.0), normal: (-1.0, 0.0, 0.0))),
        (name: "y0", shape: Plane(point: (0.0, -0.02, 0.0), normal: (0.0, 1.0, 0.0))),
        (name: "y1", shape: Plane(point: (0.0, 0.02, 0.0), normal: (0.0, -1.0, 0.0))),
        (name: "gate", shape: Slab(center: (0.0, 0.0, 0.045), size: (0.08, 0.05, 0.01)), removed_at: 0.04),
    ],
    measurements: [
        Discharge(outlet_z: 0.0, gate: "gate", force_walls: ["funnel"]),
    ],
    outputs: (frame_interval: 0.05, plots: false),
)
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-resume-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) {
    let out = Command::new(TALUS)
        .args(args)
        .output()
        .expect("talus starts");
    assert!(
        out.status.success(),
        "talus {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn summary_without_timings(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let m = v.as_object_mut().unwrap();
    for k in [
        "wall_seconds",
        "grain_steps_per_second",
        "stage_seconds",
        "threads",
    ] {
        m.remove(k);
    }
    v
}

#[test]
fn killed_run_resumes_bit_identically() {
    let dir = scratch("cfg");
    let file = dir.join("resume_test.ron");
    std::fs::write(&file, SCENARIO).unwrap();
    let file = file.to_str().unwrap();

    // In one go, one thread.
    let whole = scratch("whole");
    run(&[
        "run",
        file,
        "--out",
        whole.to_str().unwrap(),
        "--threads",
        "1",
        "--quiet",
    ]);

    // Killed after its first checkpoint, two threads, then resumed with one.
    let killed = scratch("killed");
    let mut child = Command::new(TALUS)
        .args([
            "run",
            file,
            "--out",
            killed.to_str().unwrap(),
            "--threads",
            "2",
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("talus starts");
    let cp = killed.join("checkpoint.bin");
    let start = Instant::now();
    while !cp.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no checkpoint appeared"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL delivered");
    child.wait().unwrap();
    let stopped = checkpoint::read(&cp).expect("the checkpoint is whole");
    assert!(
        stopped.world.steps < 7500,
        "the run was killed before its end (step {})",
        stopped.world.steps
    );
    assert!(
        !killed.join("summary.json").exists(),
        "the run was killed before its end"
    );
    run(&[
        "resume",
        killed.to_str().unwrap(),
        "--threads",
        "1",
        "--quiet",
    ]);

    // The same rows, frames, summary and final state, to the bit.
    let csv = |d: &Path| std::fs::read(d.join("timeseries.csv")).unwrap();
    assert_eq!(csv(&whole), csv(&killed), "time series differ");
    for frame in ["frames/grains_000006.vtu", "frames/walls_000006.vtu"] {
        let a = std::fs::read(whole.join(frame)).unwrap();
        let b = std::fs::read(killed.join(frame)).unwrap();
        assert!(a == b, "{frame} differs");
    }
    assert_eq!(
        summary_without_timings(&whole),
        summary_without_timings(&killed)
    );
    let a = checkpoint::read(&whole.join("checkpoint.bin")).unwrap();
    let b = checkpoint::read(&killed.join("checkpoint.bin")).unwrap();
    assert_eq!(a.world.steps, 7500);
    assert_eq!(a.world.grains, b.world.grains, "grain states differ");
    assert_eq!(a.world.contacts, b.world.contacts, "contact caches differ");
    assert_eq!(a.world.wall_loads, b.world.wall_loads);
    assert_eq!(a.state.series, b.state.series);
    assert_eq!(a.state.poured, b.state.poured);
    assert_eq!(a.state.poured[1], 20, "every grain was poured");
    let removed = a.world.grains.iter().filter(|g| g.is_none()).count();
    assert!(removed > 10, "grains were discharged ({removed})");
    for d in [dir, whole, killed] {
        let _ = std::fs::remove_dir_all(d);
    }
}
