//! Distributed runs under `mpirun` (built with the feature `mpi`; `.ci/run` installs Open
//! MPI and runs these): a hopper that pours and discharges grains and a vibrating box, each
//! process holding only its region's grains (the regions cut anew every 7 steps, in the
//! middle of contacts), and a chute periodic along and across its flow (its grains split
//! too, and wrapping through the periodic faces), and a slumping pile, a heap fed grain by
//! grain and a vibrating conveyor (each probe measuring each process's own grains, the parts
//! merged), run on 1, 2 and 3 processes, give the summary, time series,
//! frames (written in one piece per process where the grains are split: the pieces
//! together hold the single-process frame's cells to the bit) and final state of the
//! single-process run to the bit; a 2-process run killed
//! mid-way resumes on 3 processes and on a plain single process with the same bits;
//! commands that cannot run distributed are refused by every process without hanging.
#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use talus_scenario::checkpoint;

const TALUS: &str = env!("CARGO_BIN_EXE_talus");

/// A small hopper: grains on a gate that opens, a second population poured from above
/// while the first flows out through the orifice and is removed below it.
const HOPPER: &str = r#"
Scenario(
    name: "mpi_hopper",
    seed: 9,
    time: (dt: 4e-5, end: 0.16, output_interval: 0.004, checkpoint_interval: 0.03),
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
            placement: Pour(min: (-0.03, -0.02, 0.25), max: (0.03, 0.02, 0.27), rate: 400.0, start: 0.02),
        ),
    ],
    walls: [
        (name: "funnel", shape: Hopper(center: (0.0, 0.0, 0.05), orifice: 0.04, wall_angle_deg: 60.0,
            height: 0.05, depth: 0.04, thickness: 0.01, kind: Wedge)),
        (name: "x0", shape: Plane(point: (-0.0545, 0.0, 0.0), normal: (1.0, 0.0, 0.0))),
        (name: "x1", shape: Plane(point: (0.0545, 0.0, 0.0), normal: (-1.0, 0.0, 0.0))),
        (name: "y0", shape: Plane(point: (0.0, -0.02, 0.0), normal: (0.0, 1.0, 0.0))),
        (name: "y1", shape: Plane(point: (0.0, 0.02, 0.0), normal: (0.0, -1.0, 0.0))),
        (name: "gate", shape: Slab(center: (0.0, 0.0, 0.045), size: (0.08, 0.05, 0.01)), removed_at: 0.02),
    ],
    measurements: [
        Discharge(outlet_z: 0.03, gate: "gate", force_walls: ["funnel"]),
    ],
    outputs: (frame_interval: 0.04, plots: false),
)
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-mpi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `mpirun -n ranks talus args…` (Open MPI: as root too, more processes than cores).
fn mpirun(ranks: usize) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["-n", &ranks.to_string(), "--oversubscribe", TALUS])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    c
}

/// Runs `command`, which must run to the end (exit 0, or 3 for a run whose results are
/// suspect: this short hopper's discharge is not yet steady).
fn succeed(mut command: Command, what: &str) -> Output {
    let out = command.output().expect("the command starts");
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{what} failed ({:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
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
        "distribution",
    ] {
        m.remove(k);
    }
    v
}

/// One grain of a frame: its id, then its values in every array of the file (cell data,
/// its points and their data, its face stream with its own point numbers).
type GrainCell = (u32, Vec<Vec<u8>>);

/// The arrays of a `.vtu` file by section and name, each the little-endian values of its
/// `binary` form (after the byte-count header).
fn vtu_arrays(path: &Path) -> std::collections::BTreeMap<(String, String), Vec<u8>> {
    use base64::Engine;
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut arrays = std::collections::BTreeMap::new();
    let mut rest = text.as_str();
    let mut section = String::new();
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let tag: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if tag != "DataArray" {
            if ["PointData", "CellData", "Points", "Cells", "FieldData"].contains(&tag.as_str()) {
                section = tag;
            }
            continue;
        }
        let head_end = rest.find('>').unwrap();
        let head = &rest[..head_end];
        let name = head
            .split("Name=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let body_end = rest.find("</DataArray>").unwrap();
        let raw = base64::engine::general_purpose::STANDARD
            .decode(rest[head_end + 1..body_end].trim())
            .unwrap();
        let count = u64::from_le_bytes(raw[..8].try_into().unwrap()) as usize;
        assert_eq!(
            count,
            raw.len() - 8,
            "{}: byte count of {name}",
            path.display()
        );
        arrays.insert((section.clone(), name.to_string()), raw[8..].to_vec());
        rest = &rest[body_end..];
    }
    arrays
}

/// The grains of a `.vtu` file (a frame, or a piece of one), cell by cell.
fn grain_cells(path: &Path) -> Vec<GrainCell> {
    let arrays = vtu_arrays(path);
    let get = |section: &str, name: &str| -> &Vec<u8> {
        arrays
            .get(&(section.to_string(), name.to_string()))
            .unwrap_or_else(|| panic!("{}: no {section}/{name}", path.display()))
    };
    let i64s = |bytes: &Vec<u8>| -> Vec<i64> {
        bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let ids: Vec<u32> = get("CellData", "grain_id")
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let (offsets, faces, face_offsets) = (
        i64s(get("Cells", "offsets")),
        i64s(get("Cells", "faces")),
        i64s(get("Cells", "faceoffsets")),
    );
    let n = ids.len();
    let mut cells = Vec::with_capacity(n);
    for k in 0..n {
        let mut values = Vec::new();
        for ((section, _), bytes) in &arrays {
            if section == "CellData" {
                let width = bytes.len() / n;
                values.push(bytes[k * width..(k + 1) * width].to_vec());
            }
        }
        // A cell's points are consecutive, from the end of the last cell's.
        let first = if k == 0 { 0 } else { offsets[k - 1] };
        let (p0, p1) = (first as usize, offsets[k] as usize);
        values.push(get("Points", "Points")[24 * p0..24 * p1].to_vec());
        values.push(get("PointData", "velocity")[24 * p0..24 * p1].to_vec());
        let f0 = if k == 0 {
            0
        } else {
            face_offsets[k - 1] as usize
        };
        let mut stream = faces[f0..face_offsets[k] as usize].iter().copied();
        let mut local = vec![stream.next().unwrap()];
        while let Some(count) = stream.next() {
            local.push(count);
            local.extend(stream.by_ref().take(count as usize).map(|id| id - first));
        }
        values.push(local.iter().flat_map(|x| x.to_le_bytes()).collect());
        cells.push((ids[k], values));
    }
    cells
}

/// The frames of the run in `dir` as its `frames.pvd` lists them: each frame's time, its
/// grains by id (from its `.vtu`, or from the pieces its `.pvtu` names) and its walls'
/// file. Every file in `frames/` is one of them.
fn frames_of(dir: &Path) -> Vec<(String, Vec<GrainCell>, Vec<u8>)> {
    let Ok(pvd) = std::fs::read_to_string(dir.join("frames.pvd")) else {
        return Vec::new();
    };
    let attribute = |line: &str, name: &str| -> String {
        line.split(&format!("{name}=\""))
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .to_string()
    };
    let mut used = std::collections::BTreeSet::new();
    let mut frames = Vec::new();
    let entries: Vec<&str> = pvd.lines().filter(|l| l.contains("<DataSet")).collect();
    for pair in entries.chunks(2) {
        let (grains, walls) = (attribute(pair[0], "file"), attribute(pair[1], "file"));
        assert_eq!(
            (attribute(pair[0], "part"), attribute(pair[1], "part")),
            ("0".into(), "1".into())
        );
        let mut cells = if let Some(stem) = grains.strip_suffix(".pvtu") {
            let text = std::fs::read_to_string(dir.join(&grains)).unwrap();
            let pieces: Vec<String> = text
                .lines()
                .filter(|l| l.contains("<Piece "))
                .map(|l| format!("frames/{}", attribute(l, "Source")))
                .collect();
            assert!(
                !pieces.is_empty() && pieces.iter().all(|p| p.starts_with(&format!("{stem}_p")))
            );
            used.extend(pieces.iter().cloned());
            pieces
                .iter()
                .flat_map(|p| grain_cells(&dir.join(p)))
                .collect()
        } else {
            grain_cells(&dir.join(&grains))
        };
        cells.sort_by_key(|c| c.0);
        let wall_bytes = std::fs::read(dir.join(&walls)).unwrap();
        used.insert(grains);
        used.insert(walls);
        frames.push((attribute(pair[0], "timestep"), cells, wall_bytes));
    }
    let present: std::collections::BTreeSet<String> = std::fs::read_dir(dir.join("frames"))
        .unwrap()
        .map(|e| format!("frames/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    assert_eq!(
        present,
        used,
        "{}: files in frames/ the frames do not name",
        dir.display()
    );
    frames
}

/// Checks that the checkpoint in `dir` is in one piece per process of a run on `ranks`
/// processes (one file on one process), and that no other piece is left in `checkpoint/`.
fn assert_checkpoint_pieces(dir: &Path, ranks: usize, what: &str) {
    let cp = checkpoint::read(&dir.join("checkpoint.bin")).unwrap();
    let pieces = if ranks > 1 { ranks } else { 0 };
    assert_eq!(cp.pieces.records.len(), pieces, "{what}: pieces");
    let expected: std::collections::BTreeSet<String> = (0..pieces)
        .map(|k| checkpoint::piece_file(cp.pieces.set, k))
        .collect();
    let present: std::collections::BTreeSet<String> = std::fs::read_dir(dir.join("checkpoint"))
        .map(|entries| {
            entries
                .map(|e| format!("checkpoint/{}", e.unwrap().file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(present, expected, "{what}: the pieces in checkpoint/");
}

/// Every file of the two runs that must agree, to the bit.
fn assert_same_run(a: &Path, b: &Path, what: &str) {
    let read = |d: &Path, f: &str| std::fs::read(d.join(f)).unwrap_or_default();
    assert!(
        read(a, "timeseries.csv") == read(b, "timeseries.csv"),
        "{what}: time series differ"
    );
    assert_eq!(
        summary_without_timings(a),
        summary_without_timings(b),
        "{what}: summaries differ"
    );
    assert!(frames_of(a) == frames_of(b), "{what}: the frames differ");
    let x = checkpoint::read(&a.join("checkpoint.bin")).unwrap();
    let y = checkpoint::read(&b.join("checkpoint.bin")).unwrap();
    assert_eq!(x.world.steps, y.world.steps, "{what}: steps");
    assert_eq!(
        x.world.grains, y.world.grains,
        "{what}: grain states differ"
    );
    // Pairs by their bodies: each process numbers the broad phase's proxies its own way.
    assert_eq!(
        x.world.pairs_by_body(),
        y.world.pairs_by_body(),
        "{what}: contact caches differ"
    );
    assert_eq!(
        x.world.wall_loads, y.world.wall_loads,
        "{what}: wall loads differ"
    );
}

/// `talus run FILE --out OUT --quiet --set …` on a plain single process with one thread
/// (`ranks` none) or under `mpirun -n ranks`, the regions cut anew every 7 steps.
fn run_command(ranks: Option<usize>, file: &Path, out: &Path, sets: &[&str]) -> Command {
    let mut c = match ranks {
        None => Command::new(TALUS),
        Some(n) => mpirun(n),
    };
    c.args([
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    match ranks {
        None => c.args(["--threads", "1"]),
        Some(_) => c.args(["--rebalance-every", "7"]),
    };
    for s in sets {
        c.args(["--set", s]);
    }
    c
}

fn single_run(file: &Path, out: &Path, sets: &[&str]) {
    succeed(run_command(None, file, out, sets), "the single-process run");
}

fn distributed_run(ranks: usize, file: &Path, out: &Path, sets: &[&str]) {
    succeed(
        run_command(Some(ranks), file, out, sets),
        &format!("the run on {ranks} processes"),
    );
}

#[test]
fn one_two_and_three_processes_give_the_single_process_run() {
    let dir = scratch("same");
    let hopper = dir.join("mpi_hopper.ron");
    std::fs::write(&hopper, HOPPER).unwrap();
    let boxed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/vibrating_box.ron");
    let box_sets = [
        "time.end=0.06",
        "time.output_interval=0.002",
        "outputs.frame_interval=0.03",
        "grains[1].count=150",
    ];
    // A chute periodic along and across the flow: pairs met across the periodic faces and
    // grains wrapping through them, split between processes.
    let chute = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/chute_flow.ron");
    let chute_sets = [
        "grains[0].count=150",
        "periodic.x=(0.0, 0.05)",
        "periodic.y=(0.0, 0.04)",
        "walls[0].shape.max=(0.05, 0.04, 0.0)",
        "grains[0].placement.max=(0.047, 0.037, 0.4)",
        "incline_deg=36",
        "force_model.coefficients.stiffness=2e5",
        "time.dt=5e-5",
        "time.end=0.12",
        "time.checkpoint_interval=0.06",
        "measurements[0].window=(0.06, 0.12)",
        "outputs.frame_interval=0.06",
        "outputs.plots=false",
    ];
    // The probes' other measures, each process measuring its own grains: a slumping pile's
    // surface, a heap's surface before each dripped grain's release, a conveyor's transport.
    let config = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../configs/{name}.ron"))
    };
    let (pile, heap, conveyor) = (
        config("angle_of_repose"),
        config("max_stability_angle"),
        config("vibrating_conveyor"),
    );
    let pile_sets = [
        "seeds=1",
        "grains[0].count=96",
        "grains[0].placement.max=(0.05, 0.02, 0.3)",
        "walls[3].shape.point=(0.0, 0.02, 0.0)",
        "walls[4].shape.center=(0.055, 0.01, 0.15)",
        "walls[4].removed_at=0.05",
        "time.end=0.2",
        "outputs.plots=false",
    ];
    let heap_sets = [
        "seeds=1",
        "grains[0].count=10",
        "time.end=2.0",
        "measurements[0].min_grains=0",
        "outputs.plots=false",
    ];
    let conveyor_sets = [
        "seeds=1",
        "grains[0].count=16",
        "time.end=0.3",
        "measurements[0].window=(0.1, 0.3)",
        "outputs.plots=false",
    ];
    for (name, file, sets) in [
        ("hopper", hopper.as_path(), &[][..]),
        ("box", boxed.as_path(), &box_sets[..]),
        ("chute", chute.as_path(), &chute_sets[..]),
        ("pile", pile.as_path(), &pile_sets[..]),
        ("heap", heap.as_path(), &heap_sets[..]),
        ("conveyor", conveyor.as_path(), &conveyor_sets[..]),
    ] {
        let single = dir.join(format!("{name}-single"));
        single_run(file, &single, sets);
        let poured = checkpoint::read(&single.join("checkpoint.bin")).unwrap();
        if name == "chute" {
            let wrapped = poured
                .world
                .grains
                .iter()
                .flatten()
                .filter(|g| g.image != [0; 3])
                .count();
            assert!(
                wrapped > 10,
                "grains crossed the periodic faces ({wrapped})"
            );
        }
        if name == "hopper" {
            assert_eq!(poured.state.poured[1], 20, "every grain was poured");
            let removed = poured.world.grains.iter().filter(|g| g.is_none()).count();
            assert!(removed > 5, "grains were discharged ({removed})");
        }
        for ranks in [1, 2, 3] {
            let out = dir.join(format!("{name}-{ranks}"));
            distributed_run(ranks, file, &out, sets);
            assert_same_run(&single, &out, &format!("{name} on {ranks} processes"));
            assert_checkpoint_pieces(&out, ranks, &format!("{name} on {ranks} processes"));
            // Where each process holds its own region's grains, each writes them as a
            // piece of the frame.
            let pvd = std::fs::read_to_string(out.join("frames.pvd")).unwrap();
            assert_eq!(
                pvd.contains(".pvtu"),
                ranks > 1,
                "{name} on {ranks} processes: frames in pieces"
            );
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Kills every process `mpirun` started (a crashed node), then waits for it.
fn kill_ranks(mut launcher: std::process::Child) {
    let status = Command::new("pkill")
        .args(["-KILL", "-P", &launcher.id().to_string()])
        .status()
        .expect("pkill runs");
    assert!(status.success(), "no process of the run was found to kill");
    let start = Instant::now();
    while launcher.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "mpirun did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_killed_two_process_run_resumes_on_three_processes_and_on_one() {
    let dir = scratch("resume");
    let file = dir.join("mpi_hopper.ron");
    std::fs::write(&file, HOPPER).unwrap();
    let whole = dir.join("whole");
    single_run(&file, &whole, &[]);

    let killed = dir.join("killed");
    let mut c = mpirun(2);
    c.args([
        "run",
        file.to_str().unwrap(),
        "--out",
        killed.to_str().unwrap(),
    ])
    .args(["--quiet", "--rebalance-every", "5"])
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let launcher = c.spawn().expect("mpirun starts");
    let cp = killed.join("checkpoint.bin");
    let start = Instant::now();
    while !cp.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no checkpoint appeared"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    kill_ranks(launcher);
    let stopped = checkpoint::read(&cp).expect("the checkpoint is whole");
    assert!(
        stopped.world.steps < 4000,
        "the run was killed before its end (step {})",
        stopped.world.steps
    );
    assert!(!killed.join("summary.json").exists());
    assert_eq!(
        stopped.pieces.records.len(),
        2,
        "a checkpoint in two pieces"
    );

    // A copy with a piece damaged: the process that reads it refuses, and so do all.
    let broken = dir.join("broken");
    let status = Command::new("cp")
        .args(["-r", killed.to_str().unwrap(), broken.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    let piece = checkpoint::piece_file(stopped.pieces.set, 1);
    let mut bytes = std::fs::read(broken.join(&piece)).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(broken.join(&piece), bytes).unwrap();
    let mut c = mpirun(2);
    c.args(["resume", broken.to_str().unwrap(), "--quiet"]);
    let out = c.output().expect("mpirun starts");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "resumed from a damaged piece: {err}");
    assert!(
        err.contains("checksum") && err.contains(&piece),
        "the damaged piece named: {err}"
    );

    // A copy resumed by a single process, the original on three.
    let copy = dir.join("copy");
    let status = Command::new("cp")
        .args(["-r", killed.to_str().unwrap(), copy.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut c = mpirun(3);
    c.args(["resume", killed.to_str().unwrap(), "--quiet"]);
    succeed(c, "the resume on 3 processes");
    assert_same_run(&whole, &killed, "killed on 2, resumed on 3");
    assert_checkpoint_pieces(&killed, 3, "killed on 2, resumed on 3");
    let mut c = Command::new(TALUS);
    c.args([
        "resume",
        copy.to_str().unwrap(),
        "--quiet",
        "--threads",
        "2",
    ]);
    succeed(c, "the resume on one process");
    assert_same_run(&whole, &copy, "killed on 2, resumed on 1");
    assert_checkpoint_pieces(&copy, 1, "killed on 2, resumed on 1");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn refusals_reach_every_process_and_none_hangs() {
    let dir = scratch("refuse");
    let file = dir.join("mpi_hopper.ron");
    std::fs::write(&file, HOPPER).unwrap();
    let check = |mut c: Command, expect: &str| {
        let out = c.output().expect("mpirun starts");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "accepted: {err}");
        assert!(err.contains(expect), "{expect:?} not in: {err}");
        // Said once, by the first process.
        assert_eq!(err.matches(expect).count(), 1, "{err}");
    };
    let mut c = mpirun(2);
    c.args(["check", file.to_str().unwrap()]);
    check(
        c,
        "only `talus run` and `talus resume` run on several processes",
    );
    let mut c = mpirun(2);
    c.args(["run", file.to_str().unwrap(), "--rebalance-every", "0"]);
    check(c, "--rebalance-every 0");
    let mut c = mpirun(3);
    let out = dir.join("bad");
    c.args([
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .args(["--set", "grains[0].count=-4"]);
    check(c, "expected usize");
    // A directory holding a user's file of a name the run writes: the first process
    // refuses it, and the others do not go on without it.
    let taken = dir.join("taken");
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("timeseries.csv"), "mine").unwrap();
    let mut c = mpirun(2);
    c.args([
        "run",
        file.to_str().unwrap(),
        "--out",
        taken.to_str().unwrap(),
    ]);
    check(c, "talus never overwrites files that are not its own");
    assert_eq!(
        std::fs::read_to_string(taken.join("timeseries.csv")).unwrap(),
        "mine"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_blow_up_stops_every_process_at_the_step_of_one() {
    let dir = scratch("blow_up");
    let file = dir.join("mpi_hopper.ron");
    std::fs::write(&file, HOPPER).unwrap();
    // Soft contacts under strong gravity: the bed falls through itself.
    let sets = [
        "force_model.coefficients.stiffness=2e3",
        "gravity=(0.0, 0.0, -300.0)",
    ];
    let run = |ranks: Option<usize>, out: &Path| {
        let out = run_command(ranks, &file, out, &sets)
            .output()
            .expect("talus starts");
        assert!(!out.status.success(), "a blown-up run failed");
    };
    let single = dir.join("single");
    run(None, &single);
    let expected = summary_without_timings(&single);
    assert_eq!(expected["status"], "blew_up");
    assert!(
        expected["error"]
            .as_str()
            .is_some_and(|e| e.contains("acts on grain") && e.contains(" at (")),
        "the message names the grain and where it is: {expected}"
    );
    for ranks in [2, 3] {
        let out = dir.join(format!("on{ranks}"));
        run(Some(ranks), &out);
        assert_eq!(
            summary_without_timings(&out),
            expected,
            "the blow-up on {ranks} processes"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
