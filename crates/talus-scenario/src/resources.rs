//! What a run will need — memory while it runs, disk for what it writes — estimated from the
//! scenario alone, before anything is built, and what the machine has to give.
//!
//! A run that cannot fit should be refused in a second with a message that says why, not
//! abort with an out-of-memory backtrace after building ten million grains, and not fill a
//! disk with frames an hour in. The estimates are upper bounds of the measured costs (the
//! constants below were measured on settled beds with `/usr/bin/time -v` and the sizes of the
//! files written), and a test checks them against a real run.

use std::path::Path;

use serde::Serialize;
use talus_sim::World;
use talus_sim::integrate::IntegratorKind;

use crate::schema::{Integrator, Scenario};
use crate::seeds::seed_count;

/// Bytes of memory per grain beyond its components ([`World::grain_bytes`]): contacts with
/// their feature caches and history, broad-phase entries, the run's per-grain records at
/// output times, and the copy a checkpoint encodes. Measured: 2.8 kB per grain with 18
/// vertices at a coordination of 2.8 (8 000 grains, no frames); the bound leaves room for a
/// dense bed's 6–7 contacts per grain.
const MEMORY_PER_GRAIN: u64 = 4_000;
/// Bytes of memory per vertex of each distinct shape (vertices, half-edges, faces, planes).
const MEMORY_PER_SHAPE_VERTEX: u64 = 700;
/// Memory of a run with no grain: the program, its thread pool, the plot fonts (6 MB
/// measured, with room for the allocator's arenas).
const MEMORY_BASE: u64 = 32 << 20;
/// Writing a frame holds its encoded document and the buffers it is made from: measured
/// 1.8 to 2.4 times the frame's size (1 000 grains of 40 and 100 vertices, 8 000 of 18).
const FRAME_MEMORY_FACTOR: u64 = 3;

/// Bytes of a frame per grain vertex (position, velocity, connectivity and face streams,
/// base64-encoded) and per grain (cell data). Measured: 160 bytes per vertex and nearly
/// nothing per grain (1 000 grains of 40 and of 100 vertices, 2 000 and 8 000 of 18).
const FRAME_BYTES_PER_VERTEX: u64 = 170;
/// See [`FRAME_BYTES_PER_VERTEX`].
const FRAME_BYTES_PER_GRAIN: u64 = 200;
/// Bytes of a checkpoint per grain (state, integrator history, contacts with their caches).
/// Measured: 450–480 bytes at a coordination of 2.8 (2 000 and 8 000 grains); the bound
/// leaves room for a dense bed's contacts.
const CHECKPOINT_BYTES_PER_GRAIN: u64 = 1_500;
/// Bytes of a time-series value: text in the CSV plus its copy in the history.
const SERIES_BYTES_PER_VALUE: u64 = 34;
/// Bytes of the plots of a run.
const PLOT_BYTES: u64 = 2 << 20;

/// Columns every time series has (time, grains, kinetic energy, contacts, coordination,
/// largest overlap) and at most what the measurements add besides their layers.
const SERIES_COLUMNS: u64 = 12;

/// Beyond this much output, a run must be asked for explicitly, even when the disk has room:
/// it is far more than the shipped experiments write, and usually a frame interval set too
/// short by mistake.
pub const DISK_LIMIT: u64 = 20 << 30;

/// What a scenario's run needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Estimate {
    /// Grains in all, once every pour is done.
    pub grains: u64,
    /// Memory at the peak of the run (bytes).
    pub memory_bytes: u64,
    /// Frames written.
    pub frames: u64,
    /// Disk for the frames (bytes).
    pub frame_bytes: u64,
    /// Disk for the checkpoint (bytes; the file is replaced, so at most two exist at once).
    pub checkpoint_bytes: u64,
    /// Disk for the time series and its history (bytes).
    pub series_bytes: u64,
    /// Disk for everything the run writes (bytes).
    pub disk_bytes: u64,
}

/// The estimate of `scenario`'s run; it needs no geometry, so it is cheap for any count.
#[must_use]
pub fn estimate(scenario: &Scenario) -> Estimate {
    let s = scenario;
    let grains: u64 = s
        .grains
        .iter()
        .map(|p| p.count as u64)
        .fold(0, u64::saturating_add);
    let integrator = match s.integrator {
        Integrator::Gear => IntegratorKind::Gear,
        Integrator::Verlet => IntegratorKind::Verlet,
    };
    let per_grain = World::grain_bytes(integrator) as u64 + MEMORY_PER_GRAIN;
    let shape_vertices: u64 = s
        .grains
        .iter()
        .map(|p| {
            let distinct = p.distinct_shapes.unwrap_or(p.count.min(32)) as u64;
            distinct.saturating_mul(vertices_of(p))
        })
        .fold(0, u64::saturating_add);

    let count = |interval: f64| -> u64 {
        let n = (s.time.end / interval).floor();
        if n.is_finite() && n >= 0.0 {
            (n as u64).saturating_add(1)
        } else {
            u64::MAX
        }
    };
    let frames = s.outputs.frame_interval.map_or(0, count);
    // Every grain in every frame, at its population's vertex count.
    let frame_grain_bytes: u64 = s
        .grains
        .iter()
        .map(|p| {
            (p.count as u64)
                .saturating_mul(FRAME_BYTES_PER_GRAIN + FRAME_BYTES_PER_VERTEX * vertices_of(p))
        })
        .fold(0, u64::saturating_add);
    let frame_bytes = frames.saturating_mul(frame_grain_bytes);
    let frame_memory = if frames > 0 {
        frame_grain_bytes.saturating_mul(FRAME_MEMORY_FACTOR)
    } else {
        0
    };
    let memory_bytes = MEMORY_BASE
        .saturating_add(grains.saturating_mul(per_grain))
        .saturating_add(shape_vertices.saturating_mul(MEMORY_PER_SHAPE_VERTEX))
        .saturating_add(frame_memory);
    let checkpoint_bytes = grains.saturating_mul(CHECKPOINT_BYTES_PER_GRAIN);
    let layers: u64 = s
        .measurements
        .iter()
        .map(|m| match m {
            crate::schema::MeasurementSpec::Vibration { layers, .. } => layers.unwrap_or(10) as u64,
            _ => 0,
        })
        .sum();
    let rows = count(s.time.output_interval);
    let series_bytes = rows
        .saturating_mul(SERIES_COLUMNS + layers)
        .saturating_mul(SERIES_BYTES_PER_VALUE);
    // Each run of the scenario's seeds writes its checkpoints, series and plots; only the
    // run itself writes frames.
    let run_bytes = checkpoint_bytes
        .saturating_mul(2)
        .saturating_add(series_bytes)
        .saturating_add(PLOT_BYTES);
    let disk_bytes = frame_bytes.saturating_add(run_bytes.saturating_mul(seed_count(s)));
    Estimate {
        grains,
        memory_bytes,
        frames,
        frame_bytes,
        checkpoint_bytes,
        series_bytes,
        disk_bytes,
    }
}

/// Memory this process can still use: the least of the system's available memory, the
/// control group's limit less its usage, and the address-space limit less the address
/// space in use. `None` where none of them can be read (not Linux).
#[must_use]
pub fn available_memory() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let mut bounds: Vec<u64> = Vec::new();
    if let Some(meminfo) = read("/proc/meminfo")
        && let Some(kib) = field_kib(&meminfo, "MemAvailable:")
    {
        bounds.push(kib.saturating_mul(1024));
    }
    // Control group v2, then v1.
    for (limit, usage) in [
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ] {
        if let Some(limit) = read(limit).and_then(|t| t.trim().parse::<u64>().ok()) {
            let used = read(usage)
                .and_then(|t| t.trim().parse::<u64>().ok())
                .unwrap_or(0);
            bounds.push(limit.saturating_sub(used));
            break;
        }
    }
    // `ulimit -v`: the soft limit of the address space, less what is mapped already.
    if let Some(limits) = read("/proc/self/limits")
        && let Some(line) = limits.lines().find(|l| l.starts_with("Max address space"))
        && let Some(soft) = line
            .split_whitespace()
            .nth(3)
            .and_then(|v| v.parse::<u64>().ok())
    {
        let mapped = read("/proc/self/status")
            .and_then(|status| field_kib(&status, "VmSize:"))
            .unwrap_or(0)
            .saturating_mul(1024);
        bounds.push(soft.saturating_sub(mapped));
    }
    bounds.into_iter().min()
}

/// Free disk space for an unprivileged writer on the file system of `path` (or of its
/// nearest existing ancestor).
#[must_use]
pub fn available_disk(path: &Path) -> Option<u64> {
    let mut at = Some(path);
    while let Some(p) = at {
        if p.exists() {
            return fs4::available_space(p).ok();
        }
        at = p.parent().filter(|q| !q.as_os_str().is_empty());
    }
    fs4::available_space(Path::new(".")).ok()
}

/// The value of a `Name:   1234 kB` line.
fn field_kib(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// Bytes in binary units with one decimal: `1.5 GiB`.
#[must_use]
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The message when the run needs more memory than the machine has available.
#[must_use]
pub fn memory_shortfall(needs: &Estimate) -> Option<String> {
    let available = available_memory()?;
    (needs.memory_bytes > available).then(|| {
        format!(
            "the run needs about {} of memory for {} grains and {} is available; use fewer \
             grains (or distinct shapes), or a machine with more memory",
            bytes(needs.memory_bytes),
            needs.grains,
            bytes(available)
        )
    })
}

/// The message when the run would write more than the disk at `out` holds free, or more
/// than [`DISK_LIMIT`].
#[must_use]
pub fn disk_shortfall(needs: &Estimate, out: &Path) -> Option<String> {
    let what = format!(
        "{} frames {}, checkpoints {}, time series {}",
        needs.frames,
        bytes(needs.frame_bytes),
        bytes(needs.checkpoint_bytes.saturating_mul(2)),
        bytes(needs.series_bytes)
    );
    match available_disk(out) {
        Some(free) if needs.disk_bytes > free => Some(format!(
            "the run would write about {} ({what}) and {} has {} free; use a longer \
             outputs.frame_interval, fewer grains, or another --out",
            bytes(needs.disk_bytes),
            out.display(),
            bytes(free)
        )),
        _ if needs.disk_bytes > DISK_LIMIT => Some(format!(
            "the run would write about {} ({what}), more than the {} a run writes unless \
             asked to; use a longer outputs.frame_interval",
            bytes(needs.disk_bytes),
            bytes(DISK_LIMIT)
        )),
        _ => None,
    }
}

/// Why the machine cannot take the run `needs` describes, writing into `out`: memory
/// beyond what is available, output beyond the free disk or beyond [`DISK_LIMIT`]. Empty
/// when it fits.
#[must_use]
pub fn shortfalls(needs: &Estimate, out: &Path) -> Vec<String> {
    memory_shortfall(needs)
        .into_iter()
        .chain(disk_shortfall(needs, out))
        .collect()
}

/// Vertices assumed per grain of a population whose shapes come from files: the count is
/// only known once the files are read; scanned grains' hulls usually have tens to a few
/// hundred vertices.
const ASSUMED_FILE_SHAPE_VERTICES: u64 = 128;

/// Vertices per grain of a population, for the estimate.
fn vertices_of(p: &crate::schema::PopulationSpec) -> u64 {
    p.vertices.map_or(ASSUMED_FILE_SHAPE_VERTICES, |v| v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kib_fields_and_byte_units() {
        let meminfo = "MemTotal:       24000000 kB\nMemAvailable:   1234 kB\n";
        assert_eq!(field_kib(meminfo, "MemAvailable:"), Some(1234));
        assert_eq!(field_kib(meminfo, "SwapTotal:"), None);
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(15_500_000_000), "14.4 GiB");
    }

    #[test]
    fn this_machine_reports_memory_and_disk() {
        let memory = available_memory().expect("Linux reports its memory");
        assert!(memory > 1 << 20);
        assert!(available_disk(&std::env::temp_dir().join("no/such/dir")).is_some());
    }
}
