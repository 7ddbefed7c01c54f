//! Checks of a parsed scenario that need no geometry: ranges of every number, names that
//! refer to something, consistency between sections. Each failure names the field's path
//! and what is allowed; all failures are collected, not only the first.

use std::collections::BTreeMap;

use std::path::{Path, PathBuf};

use crate::error::ScenarioError;
use crate::number::{point, short};
use crate::schema::{
    HopperKind, MeasurementSpec, MotionSpec, Placement, PopulationSpec, Scenario, ShapeScale,
    ShapeSpec, Vec3, WallShape,
};
use crate::sweep::grid::MAX_SEEDS;

/// Largest magnitude of a coordinate or vector component (m, m/s, …).
const MAX_COORDINATE: f64 = 1e6;
/// Most rows a time series may get, and most frames a run may write.
const MAX_ROWS: f64 = 1e6;
/// See [`MAX_ROWS`].
const MAX_FRAMES: f64 = 1e5;
/// Most grains glued to a rough base.
const MAX_ROUGH_BASE_GRAINS: f64 = 1e5;
/// Most vertices of all distinct shapes of a scenario together.
const MAX_SHAPE_VERTICES: usize = 10_000_000;

/// Largest magnitude of gravity (m/s²): about a thousand times the Earth's, as in a
/// geotechnical centrifuge.
const MAX_GRAVITY: f64 = 1e4;
/// Range of a material's density (kg/m³): from aerogels to the scaled densities DEM users
/// choose to lengthen the time step.
const DENSITY_RANGE: (f64, f64) = (0.1, 1e8);
/// Range of a grain's semi-axes (m): from fine powders to boulders.
const SEMI_AXIS_RANGE: (f64, f64) = (1e-6, 100.0);
/// Range of a file shape's equivalent-sphere diameter (m), as for the semi-axes.
const DIAMETER_RANGE: (f64, f64) = (2e-6, 200.0);
/// Range of the factor applied to a file shape's coordinates.
const FACTOR_RANGE: (f64, f64) = (1e-12, 1e12);
/// Largest ratio of a grain's longest to its shortest semi-axis.
const MAX_ASPECT_RATIO: f64 = 50.0;
/// Longest name (characters) of a scenario, material, population or wall.
const MAX_NAME_CHARS: usize = 128;
/// Fewest time steps per period of an oscillating wall or per turn of a rotating one:
/// fewer cannot follow the motion.
const MIN_STEPS_PER_PERIOD: f64 = 20.0;
/// Largest distance a wall or a grain may travel in one step at its imposed speed, as a
/// fraction of the smallest grain's diameter: farther, a contact is crossed in a step or
/// two and the contact force cannot resolve it.
const MAX_TRAVEL_PER_STEP: f64 = 0.1;
/// Largest threshold speed of a dripped population (m/s): faster, the heap is no longer
/// "quiet" in any sense of §1.2.1.
const MAX_THRESHOLD_SPEED: f64 = 100.0;
/// Fastest steepening of an incline (degrees per second).
const MAX_INCLINE_RATE: f64 = 100.0;
/// Hopper plate angles to the horizontal, degrees.
const HOPPER_ANGLE_RANGE: (f64, f64) = (1.0, 89.0);

/// Largest vertex count of a grain (as the geometry's generator allows).
const MAX_VERTICES: usize = talus_geom::generate::MAX_GRAIN_VERTICES;

/// Checks `scenario`; `path` is used in messages. Returns every problem found.
#[must_use]
pub fn validate(scenario: &Scenario, path: &Path) -> Vec<ScenarioError> {
    let mut c = Checker {
        path: path.to_path_buf(),
        errors: Vec::new(),
    };
    c.top(scenario);
    for (i, p) in scenario.grains.iter().enumerate() {
        c.population(scenario, i, p);
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, w) in scenario.walls.iter().enumerate() {
        let f = format!("walls[{i}]");
        if c.name(&format!("{f}.name"), &w.name) {
            if w.name.contains('/') {
                c.fail(
                    &format!("{f}.name"),
                    format!("'{}' holds a '/'", w.name),
                    "a name without '/' (it names the wall's parts)",
                );
            } else if names.contains(&w.name.as_str()) {
                c.fail(
                    &format!("{f}.name"),
                    format!("'{}' is used twice", w.name),
                    "unique wall names",
                );
            }
        }
        names.push(&w.name);
        c.wall_shape(&f, &w.shape, scenario);
        c.motion(&format!("{f}.motion"), &w.motion, &w.shape, scenario);
        if let Some(t) = w.removed_at {
            c.non_negative(&format!("{f}.removed_at"), t);
        }
        if let Some(name) = &w.material
            && !scenario.materials.iter().any(|m| &m.name == name)
        {
            c.fail(
                &format!("{f}.material"),
                format!("no material named '{name}'"),
                &self::names(scenario.materials.iter().map(|m| m.name.as_str())),
            );
        }
    }
    for (i, m) in scenario.measurements.iter().enumerate() {
        c.measurement(&format!("measurements[{i}]"), m, scenario);
    }
    if let Some(t) = scenario.outputs.frame_interval {
        c.at_least_dt("outputs.frame_interval", t, scenario.time.dt);
        if t > 0.0 && scenario.time.end / t > MAX_FRAMES {
            c.fail(
                "outputs.frame_interval",
                format!("{} frames", short((scenario.time.end / t).round())),
                "at most 10^5 frames (end / frame_interval)",
            );
        }
    }
    let shape_vertices: usize = scenario
        .grains
        .iter()
        .map(|p| {
            p.distinct_shapes
                .unwrap_or(p.count.min(32))
                .saturating_mul(p.vertices.unwrap_or(0))
        })
        .fold(0, usize::saturating_add);
    if shape_vertices > MAX_SHAPE_VERTICES {
        c.fail(
            "grains",
            format!("{shape_vertices} vertices in the distinct shapes together"),
            "at most 10^7 (fewer distinct_shapes or vertices)",
        );
    }
    for (i, m) in scenario.measurements.iter().enumerate() {
        if scenario.measurements[..i]
            .iter()
            .any(|o| std::mem::discriminant(o) == std::mem::discriminant(m))
        {
            c.fail(
                &format!("measurements[{i}]"),
                "a second measurement of the same kind".into(),
                "at most one measurement of each kind",
            );
        }
    }
    c.errors
}

struct Checker {
    path: PathBuf,
    errors: Vec<ScenarioError>,
}

impl Checker {
    fn fail(&mut self, field: &str, problem: String, allowed: &str) {
        self.errors.push(ScenarioError::Invalid {
            path: self.path.clone(),
            field: field.to_string(),
            problem,
            allowed: allowed.to_string(),
        });
    }

    fn positive(&mut self, field: &str, x: f64) -> bool {
        let ok = x.is_finite() && x > 0.0;
        if !ok {
            self.fail(
                field,
                format!("{} is not allowed", short(x)),
                "a finite number > 0",
            );
        }
        ok
    }

    /// A length of the scene: finite, > 0 and at most the size of the scene.
    fn length(&mut self, field: &str, x: f64) -> bool {
        let ok = x.is_finite() && x > 0.0 && x <= MAX_COORDINATE;
        if !ok {
            self.fail(
                field,
                format!("{} m is not allowed", short(x)),
                "a length > 0 and ≤ 10^6 m",
            );
        }
        ok
    }

    /// A name: not blank, at most [`MAX_NAME_CHARS`] characters, no control characters
    /// (they would be written raw to the terminal and into file names).
    fn name(&mut self, field: &str, name: &str) -> bool {
        let problem = if name.trim().is_empty() {
            "the name is empty".to_string()
        } else if name.chars().count() > MAX_NAME_CHARS {
            format!("a name of {} characters", name.chars().count())
        } else if name.chars().any(char::is_control) {
            "the name holds control characters".to_string()
        } else {
            return true;
        };
        self.fail(
            field,
            problem,
            "a name of 1 to 128 characters without control characters",
        );
        false
    }

    fn non_negative(&mut self, field: &str, x: f64) -> bool {
        let ok = x.is_finite() && x >= 0.0;
        if !ok {
            self.fail(
                field,
                format!("{} is not allowed", short(x)),
                "a finite number ≥ 0",
            );
        }
        ok
    }

    fn finite(&mut self, field: &str, v: Vec3) -> bool {
        let ok = [v.0, v.1, v.2]
            .iter()
            .all(|c| c.is_finite() && c.abs() <= MAX_COORDINATE);
        if !ok {
            self.fail(
                field,
                format!("{} is not allowed", point(v)),
                "finite coordinates within 10^6 of the origin",
            );
        }
        ok
    }

    /// An oscillation amplitude: ≥ 0 and at most the size of the scene.
    fn amplitude(&mut self, field: &str, a: f64) -> bool {
        let ok = self.non_negative(field, a);
        if ok && a > MAX_COORDINATE {
            self.fail(
                field,
                format!("{} m is not allowed", short(a)),
                "an amplitude ≤ 10^6 m",
            );
            return false;
        }
        ok
    }

    fn direction(&mut self, field: &str, v: Vec3) -> bool {
        if !self.finite(field, v) {
            return false;
        }
        let ok = v.0 * v.0 + v.1 * v.1 + v.2 * v.2 > 0.0;
        if !ok {
            self.fail(
                field,
                "the zero vector has no direction".into(),
                "a non-zero vector",
            );
        }
        ok
    }

    /// Exactly one way of making the grains: the ellipsoid generator (`vertices` and
    /// `semi_axes`) or files (`shape`).
    fn grain_shape(&mut self, f: &str, p: &PopulationSpec) {
        let both = "either vertices and semi_axes (the ellipsoid generator) or shape (files)";
        match (&p.shape, p.vertices, p.semi_axes) {
            (None, Some(vertices), Some(semi_axes)) => {
                if !(4..=MAX_VERTICES).contains(&vertices) {
                    self.fail(
                        &format!("{f}.vertices"),
                        format!("{vertices} vertices"),
                        "4 to 10000 vertices",
                    );
                }
                self.semi_axes(&format!("{f}.semi_axes"), semi_axes);
            }
            (None, None, None) => {
                self.fail(f, "no grain shape is given".into(), both);
            }
            (None, Some(_), None) => self.fail(
                &format!("{f}.semi_axes"),
                "missing: the ellipsoid generator needs vertices and semi_axes".into(),
                both,
            ),
            (None, None, Some(_)) => self.fail(
                &format!("{f}.vertices"),
                "missing: the ellipsoid generator needs vertices and semi_axes".into(),
                both,
            ),
            (Some(_), vertices, semi_axes) if vertices.is_some() || semi_axes.is_some() => {
                self.fail(
                    &format!("{f}.shape"),
                    "given together with vertices or semi_axes".into(),
                    both,
                );
            }
            (Some(shape), _, _) => self.shape_spec(&format!("{f}.shape"), shape),
        }
    }

    fn shape_spec(&mut self, f: &str, shape: &ShapeSpec) {
        if shape.paths().is_empty() {
            self.fail(&format!("{f}.paths"), "no file".into(), "at least one file");
        }
        for (k, path) in shape.paths().iter().enumerate() {
            if path.trim().is_empty() {
                let field = match shape {
                    ShapeSpec::File { .. } => format!("{f}.path"),
                    ShapeSpec::Files { .. } => format!("{f}.paths[{k}]"),
                };
                self.fail(&field, "an empty path".into(), "a file's path");
            }
        }
        match shape.scale() {
            ShapeScale::Diameter(d)
                if !(d.is_finite() && (DIAMETER_RANGE.0..=DIAMETER_RANGE.1).contains(&d)) =>
            {
                self.fail(
                    &format!("{f}.scale"),
                    format!("a diameter of {} m", short(d)),
                    "an equivalent-sphere diameter from 2·10^-6 m to 200 m",
                );
            }
            ShapeScale::Factor(x)
                if !(x.is_finite() && (FACTOR_RANGE.0..=FACTOR_RANGE.1).contains(&x)) =>
            {
                self.fail(
                    &format!("{f}.scale"),
                    format!("a factor of {}", short(x)),
                    "a factor from 10^-12 to 10^12",
                );
            }
            _ => {}
        }
    }

    fn semi_axes(&mut self, field: &str, a: Vec3) {
        let axes = [a.0, a.1, a.2];
        if !axes
            .iter()
            .all(|x| x.is_finite() && (SEMI_AXIS_RANGE.0..=SEMI_AXIS_RANGE.1).contains(x))
        {
            self.fail(
                field,
                format!("{} m is not allowed", point(a)),
                "three semi-axes from 10^-6 m to 100 m",
            );
            return;
        }
        let (longest, shortest) = (a.0.max(a.1).max(a.2), a.0.min(a.1).min(a.2));
        if longest > MAX_ASPECT_RATIO * shortest {
            self.fail(
                field,
                format!(
                    "{} m: the longest is {} times the shortest",
                    point(a),
                    short(longest / shortest)
                ),
                "a longest semi-axis at most 50 times the shortest",
            );
        }
    }

    /// A speed imposed on `what` (a wall's motion, the grains' initial velocity): in one
    /// step it may carry them at most [`MAX_TRAVEL_PER_STEP`] of the smallest grain.
    fn travel(&mut self, field: &str, what: &str, speed: f64, s: &Scenario) {
        let (dt, smallest) = (s.time.dt, smallest_grain_diameter(s));
        if !(dt.is_finite() && dt > 0.0 && sizes_valid(s)) {
            return;
        }
        let per_step = speed * dt;
        if !per_step.is_finite() || per_step > MAX_TRAVEL_PER_STEP * smallest {
            self.fail(
                field,
                format!(
                    "{what} move at up to {} m/s, {} m per step of {} s: {} of the smallest grain's diameter ({} m)",
                    short(speed),
                    short(per_step),
                    short(dt),
                    short(per_step / smallest),
                    short(smallest)
                ),
                "at most 0.1 grain diameter per step (a slower motion or a smaller time.dt)",
            );
        }
    }

    fn region(&mut self, field: &str, min: Vec3, max: Vec3) -> bool {
        if !(self.finite(&format!("{field}.min"), min) && self.finite(&format!("{field}.max"), max))
        {
            return false;
        }
        let ok = min.0 < max.0 && min.1 < max.1 && min.2 < max.2;
        if !ok {
            self.fail(
                field,
                format!("min {} is not below max {}", point(min), point(max)),
                "min < max in x, y and z",
            );
        }
        ok
    }

    /// A window of time `(from, to)` with 0 ≤ from < to.
    fn window(&mut self, field: &str, window: (f64, f64)) {
        if !(window.0.is_finite() && window.1.is_finite() && window.0 >= 0.0 && window.0 < window.1)
        {
            self.fail(
                field,
                format!("({}, {}) s", short(window.0), short(window.1)),
                "(from, to) with 0 ≤ from < to (s)",
            );
        }
    }

    fn at_least_dt(&mut self, field: &str, t: f64, dt: f64) {
        if self.positive(field, t) && dt.is_finite() && dt > 0.0 && t < dt {
            self.fail(
                field,
                format!("{} is shorter than the time step {}", short(t), short(dt)),
                "an interval ≥ time.dt",
            );
        }
    }

    fn fraction_range(&mut self, field: &str, r: (f64, f64)) {
        if !(r.0.is_finite() && r.1.is_finite() && 0.0 <= r.0 && r.0 < r.1 && r.1 <= 1.0) {
            self.fail(
                field,
                format!("({}, {}) is not allowed", short(r.0), short(r.1)),
                "(a, b) with 0 ≤ a < b ≤ 1",
            );
        }
    }

    /// Whether `d` (a valid direction) is perpendicular to gravity; fails if not.
    fn horizontal(&mut self, field: &str, d: Vec3, s: &Scenario) {
        let g = s.gravity_vector();
        let g = (g.x, g.y, g.z);
        let gn = (g.0 * g.0 + g.1 * g.1 + g.2 * g.2).sqrt();
        let dn = (d.0 * d.0 + d.1 * d.1 + d.2 * d.2).sqrt();
        let cos = (d.0 * g.0 + d.1 * g.1 + d.2 * g.2) / (dn * gn);
        if gn > 0.0 && cos.abs() > 1e-6 {
            self.fail(
                field,
                format!("{} is not horizontal", point(d)),
                "a direction perpendicular to gravity",
            );
        }
    }

    /// The fields of a fitted free surface (`AngleOfRepose`, `MaxStability`).
    #[allow(clippy::too_many_arguments)]
    fn surface_fit(
        &mut self,
        f: &str,
        direction: Vec3,
        floor: f64,
        range: (f64, f64),
        bins: Option<usize>,
        fit: Option<(f64, f64)>,
        s: &Scenario,
    ) {
        if self.direction(&format!("{f}.direction"), direction) {
            self.horizontal(&format!("{f}.direction"), direction, s);
        }
        if !floor.is_finite() {
            self.fail(&format!("{f}.floor"), short(floor), "a finite height");
        }
        if !(range.0.is_finite() && range.1.is_finite() && range.0 < range.1) {
            self.fail(
                &format!("{f}.range"),
                format!("({}, {})", short(range.0), short(range.1)),
                "(from, to) with from < to",
            );
        }
        if let Some(b) = bins
            && !(3..=10_000).contains(&b)
        {
            self.fail(&format!("{f}.bins"), format!("{b}"), "3 to 10000 bins");
        }
        if let Some(r) = fit {
            self.fraction_range(&format!("{f}.fit"), r);
        }
    }

    fn top(&mut self, s: &Scenario) {
        self.name("name", &s.name);
        let t = &s.time;
        let dt_ok = self.positive("time.dt", t.dt);
        if self.positive("time.end", t.end) && dt_ok && t.end < t.dt {
            self.fail(
                "time.end",
                format!("{} is shorter than one step", short(t.end)),
                "end ≥ dt",
            );
        }
        if dt_ok && t.end.is_finite() && t.end / t.dt > 1e12 {
            self.fail(
                "time.end",
                format!("{} steps", short(t.end / t.dt)),
                "at most 10^12 steps",
            );
        }
        self.at_least_dt("time.output_interval", t.output_interval, t.dt);
        if t.output_interval > 0.0 && t.end / t.output_interval > MAX_ROWS {
            self.fail(
                "time.output_interval",
                format!("{} rows", short((t.end / t.output_interval).round())),
                "at most 10^6 output rows (end / output_interval)",
            );
        }
        if let Some(c) = t.checkpoint_interval {
            self.at_least_dt("time.checkpoint_interval", c, t.dt);
        }
        if let Some(r) = &t.stop_at_rest {
            self.non_negative("time.stop_at_rest.after", r.after);
            self.non_negative(
                "time.stop_at_rest.kinetic_energy_per_grain",
                r.kinetic_energy_per_grain,
            );
        }
        let g = s.gravity;
        let magnitude = (g.0 * g.0 + g.1 * g.1 + g.2 * g.2).sqrt();
        if !magnitude.is_finite() || magnitude > MAX_GRAVITY {
            self.fail(
                "gravity",
                format!("{} m/s² ({} g)", short(magnitude), short(magnitude / 9.81)),
                "a magnitude ≤ 10^4 m/s² (about 1000 g)",
            );
        }
        if let Some(angle) = s.incline_deg {
            if !(angle.is_finite() && (0.0..90.0).contains(&angle)) {
                self.fail(
                    "incline_deg",
                    format!("{}°", short(angle)),
                    "an angle from 0° to below 90°",
                );
            }
            if g.0 != 0.0 || g.1 != 0.0 {
                self.fail(
                    "gravity",
                    format!("{} with incline_deg", point(g)),
                    "a vertical gravity (0, 0, -g) when incline_deg turns it",
                );
            }
        }
        if let Some(r) = &s.incline_ramp {
            self.non_negative("incline_ramp.from", r.from);
            if self.positive("incline_ramp.rate_deg_per_s", r.rate_deg_per_s)
                && r.rate_deg_per_s > MAX_INCLINE_RATE
            {
                self.fail(
                    "incline_ramp.rate_deg_per_s",
                    format!("{} °/s", short(r.rate_deg_per_s)),
                    "at most 100 °/s: the bed must follow the turning gravity for its flow \
                     onset to mean anything (a few degrees per second is usual)",
                );
            }
            let start = s.incline_deg.unwrap_or(f64::NAN);
            if s.incline_deg.is_none() {
                self.fail(
                    "incline_ramp",
                    "a ramp without incline_deg".into(),
                    "incline_deg: the incline the ramp starts from",
                );
            } else if !(r.to_deg.is_finite() && r.to_deg > start && r.to_deg < 90.0) {
                self.fail(
                    "incline_ramp.to_deg",
                    format!("{}° from {}°", short(r.to_deg), short(start)),
                    "an incline steeper than incline_deg and below 90°",
                );
            }
        }
        self.periodic(s);
        if let Some(n) = s.seeds
            && !(1..=MAX_SEEDS).contains(&n)
        {
            self.fail(
                "seeds",
                format!("{n} runs"),
                &format!(
                    "from 1 to {MAX_SEEDS} runs (the scenario's seed and the ones after it; 3 \
                     to 5 give a spread worth reporting)"
                ),
            );
        }
        if self.non_negative("margin", s.margin) {
            let smallest = smallest_grain_diameter(s);
            if sizes_valid(s) && s.margin > smallest {
                self.fail(
                    "margin",
                    format!(
                        "{} m is more than the smallest grain's diameter ({} m)",
                        short(s.margin),
                        short(smallest)
                    ),
                    "a margin ≥ 0 and at most the smallest grain's diameter (a fraction of it is usual)",
                );
            }
        }
        if s.materials.is_empty() {
            self.fail("materials", "no material".into(), "at least one material");
        }
        for (i, m) in s.materials.iter().enumerate() {
            self.name(&format!("materials[{i}].name"), &m.name);
            if s.materials[..i].iter().any(|o| o.name == m.name) {
                self.fail(
                    &format!("materials[{i}].name"),
                    format!("'{}' is used twice", m.name),
                    "unique material names",
                );
            }
            if !(m.density.is_finite() && (DENSITY_RANGE.0..=DENSITY_RANGE.1).contains(&m.density))
            {
                self.fail(
                    &format!("materials[{i}].density"),
                    format!("{} kg/m³ is not allowed", short(m.density)),
                    "0.1 to 10^8 kg/m³",
                );
            }
        }
        if s.materials.len() > usize::from(u16::MAX) {
            self.fail(
                "materials",
                format!("{} materials", s.materials.len()),
                "at most 65535",
            );
        }
        let mut coefficients: Vec<(String, &BTreeMap<String, f64>)> =
            vec![("force_model".to_string(), &s.force_model.coefficients)];
        if let Some(parts) = &s.force_model.parts {
            if !s.force_model.coefficients.is_empty() {
                self.fail(
                    "force_model.coefficients",
                    format!(
                        "{} coefficients beside parts",
                        s.force_model.coefficients.len()
                    ),
                    "none with parts: each part takes its own coefficients",
                );
            }
            coefficients.extend(parts.chosen().into_iter().map(|(role, p)| {
                (
                    format!("force_model.parts.{}", role.name()),
                    &p.coefficients,
                )
            }));
        }
        for (path, map) in coefficients {
            for (name, value) in map {
                if !value.is_finite() {
                    self.fail(
                        &format!("{path}.coefficients.{name}"),
                        format!("{} is not finite", short(*value)),
                        "a finite number in the coefficient's range",
                    );
                }
            }
        }
        if s.grains.is_empty() {
            self.fail(
                "grains",
                "no grain population".into(),
                "at least one population",
            );
        }
    }

    /// The periodic axes: finite faces, the upper above the lower, a period more than
    /// twice the largest grain; planes parallel to them.
    fn periodic(&mut self, s: &Scenario) {
        let largest = largest_grain_diameter(s);
        for (axis, faces) in ["x", "y", "z"].iter().zip(s.periodic.axes()) {
            let Some((lower, upper)) = faces else {
                continue;
            };
            let f = format!("periodic.{axis}");
            let fine = [lower, upper]
                .iter()
                .all(|x| x.is_finite() && x.abs() <= MAX_COORDINATE);
            if !fine || upper <= lower {
                self.fail(
                    &f,
                    format!("({}, {})", short(lower), short(upper)),
                    "(lower, upper) faces, finite, the upper above the lower",
                );
            } else if sizes_valid(s) && upper - lower <= 2.0 * (largest + 2.0 * s.margin) {
                self.fail(
                    &f,
                    format!(
                        "a period of {} m for grains up to {} m across",
                        short(upper - lower),
                        short(largest)
                    ),
                    "a period more than twice the largest grain's diameter with the margin \
                    (a grain must not meet two images of another)",
                );
            }
        }
        if s.periodic.z.is_some() && s.gravity_vector().z != 0.0 {
            self.fail(
                "periodic.z",
                "a periodic axis along which gravity pulls".into(),
                "periodic axes across gravity (a grain would fall through the box forever)",
            );
        }
        for (i, w) in s.walls.iter().enumerate() {
            if let WallShape::Plane { normal, .. } = &w.shape {
                for (axis, faces) in ["x", "y", "z"].iter().zip(s.periodic.axes()) {
                    let n =
                        [normal.0, normal.1, normal.2][axis.as_bytes()[0] as usize - b'x' as usize];
                    if faces.is_some() && n != 0.0 {
                        self.fail(
                            &format!("walls[{i}].shape.normal"),
                            format!("{} has a component along periodic axis {axis}", point(*normal)),
                            "a plane parallel to the periodic axes (a floor or side wall along them)",
                        );
                    }
                }
            }
        }
    }

    fn population(&mut self, s: &Scenario, i: usize, p: &PopulationSpec) {
        let f = format!("grains[{i}]");
        self.name(&format!("{f}.name"), &p.name);
        if s.grains[..i].iter().any(|o| o.name == p.name) {
            self.fail(
                &format!("{f}.name"),
                format!("'{}' is used twice", p.name),
                "unique population names",
            );
        }
        if p.count == 0 || p.count > 10_000_000 {
            self.fail(
                &format!("{f}.count"),
                format!("{} grains", p.count),
                "1 to 10^7 grains",
            );
        }
        self.grain_shape(&f, p);
        if !(p.size_spread.is_finite() && (0.0..=0.9).contains(&p.size_spread)) {
            self.fail(
                &format!("{f}.size_spread"),
                format!("{} is not allowed", short(p.size_spread)),
                "a relative spread in [0, 0.9]",
            );
        }
        if let Some(n) = p.distinct_shapes
            && !(1..=p.count.max(1)).contains(&n)
        {
            self.fail(
                &format!("{f}.distinct_shapes"),
                format!("{n} shapes for {} grains", p.count),
                "1 to count shapes",
            );
        }
        if !s.materials.iter().any(|m| m.name == p.material) {
            self.fail(
                &format!("{f}.material"),
                format!("no material named '{}'", p.material),
                &names(s.materials.iter().map(|m| m.name.as_str())),
            );
        }
        if let Some(v) = p.velocity
            && self.finite(&format!("{f}.velocity"), v)
        {
            let speed = (v.0 * v.0 + v.1 * v.1 + v.2 * v.2).sqrt();
            self.travel(&format!("{f}.velocity"), "the grains", speed, s);
        }
        let f = format!("{f}.placement");
        match &p.placement {
            Placement::Lattice {
                min,
                max,
                gap,
                jitter,
                orientation: _,
                fill_from,
            } => {
                self.region(&f, *min, *max);
                if let Some(from) = fill_from {
                    self.finite(&format!("{f}.fill_from"), *from);
                }
                if let Some(g) = gap
                    && !(g.is_finite() && (0.0..=10.0).contains(g))
                {
                    self.fail(
                        &format!("{f}.gap"),
                        format!("{} is not allowed", short(*g)),
                        "a gap in [0, 10]",
                    );
                }
                if let Some(j) = jitter
                    && !(j.is_finite() && (0.0..=1.0).contains(j))
                {
                    self.fail(
                        &format!("{f}.jitter"),
                        format!("{} is not allowed", short(*j)),
                        "a jitter in [0, 1]",
                    );
                }
            }
            Placement::Pour {
                min,
                max,
                rate,
                start,
            } => {
                self.region(&f, *min, *max);
                if self.positive(&format!("{f}.rate"), *rate) && *rate > 1e6 {
                    self.fail(
                        &format!("{f}.rate"),
                        format!("{} grains/s", short(*rate)),
                        "at most 10^6 grains per second",
                    );
                }
                self.non_negative(&format!("{f}.start"), *start);
            }
            Placement::Drip {
                at,
                threshold_speed,
                jitter,
                min_interval,
                start,
            } => {
                self.finite(&format!("{f}.at"), *at);
                if !(threshold_speed.is_finite()
                    && *threshold_speed > 0.0
                    && *threshold_speed <= MAX_THRESHOLD_SPEED)
                {
                    self.fail(
                        &format!("{f}.threshold_speed"),
                        format!("{} m/s is not allowed", short(*threshold_speed)),
                        "a speed > 0 and ≤ 100 m/s",
                    );
                }
                if !(jitter.is_finite() && (0.0..=MAX_COORDINATE).contains(jitter)) {
                    self.fail(
                        &format!("{f}.jitter"),
                        format!("{} m is not allowed", short(*jitter)),
                        "a horizontal offset ≥ 0 m and ≤ 10^6 m",
                    );
                }
                if let Some(t) = min_interval {
                    self.non_negative(&format!("{f}.min_interval"), *t);
                }
                self.non_negative(&format!("{f}.start"), *start);
            }
            Placement::Points(points) => {
                if points.len() != p.count {
                    self.fail(
                        &f,
                        format!("{} points for {} grains", points.len(), p.count),
                        "one point per grain",
                    );
                }
                for (k, q) in points.iter().enumerate() {
                    self.finite(&format!("{f}[{k}]"), *q);
                }
            }
        }
    }

    fn wall_shape(&mut self, f: &str, shape: &WallShape, s: &Scenario) {
        let f = format!("{f}.shape");
        match shape {
            WallShape::Plane { point, normal } => {
                self.finite(&format!("{f}.point"), *point);
                self.direction(&format!("{f}.normal"), *normal);
            }
            WallShape::Slab {
                center,
                size,
                rotation,
            } => {
                self.finite(&format!("{f}.center"), *center);
                for (axis, x) in ["x", "y", "z"].iter().zip([size.0, size.1, size.2]) {
                    self.length(&format!("{f}.size.{axis}"), x);
                }
                if let Some(r) = rotation {
                    self.direction(&format!("{f}.rotation.axis"), r.axis);
                    if !r.angle_deg.is_finite() {
                        self.fail(
                            &format!("{f}.rotation.angle_deg"),
                            short(r.angle_deg),
                            "a finite angle",
                        );
                    }
                }
            }
            WallShape::Box {
                min,
                max,
                thickness,
                open,
            } => {
                self.region(&f, *min, *max);
                self.length(&format!("{f}.thickness"), *thickness);
                for (k, side) in open.iter().enumerate() {
                    if !["x_min", "x_max", "y_min", "y_max"].contains(&side.as_str()) {
                        self.fail(
                            &format!("{f}.open[{k}]"),
                            format!("no side '{side}'"),
                            "x_min, x_max, y_min, y_max",
                        );
                    }
                }
            }
            WallShape::Hopper {
                center,
                orifice,
                wall_angle_deg,
                height,
                depth,
                thickness,
                kind,
            } => {
                self.finite(&format!("{f}.center"), *center);
                if self.length(&format!("{f}.orifice"), *orifice) {
                    let largest = largest_grain_diameter(s);
                    if sizes_valid(s) && *orifice <= largest {
                        self.fail(
                            &format!("{f}.orifice"),
                            format!(
                                "{} m is not wider than the largest grain ({} m across)",
                                short(*orifice),
                                short(largest)
                            ),
                            "an orifice wider than the largest grain (several grain diameters for steady flow)",
                        );
                    }
                }
                if !(wall_angle_deg.is_finite()
                    && (HOPPER_ANGLE_RANGE.0..=HOPPER_ANGLE_RANGE.1).contains(wall_angle_deg))
                {
                    self.fail(
                        &format!("{f}.wall_angle_deg"),
                        format!("{}° is not allowed", short(*wall_angle_deg)),
                        "an angle to the horizontal from 1° to 89°",
                    );
                }
                self.length(&format!("{f}.height"), *height);
                if *kind == HopperKind::Wedge {
                    self.length(&format!("{f}.depth"), *depth);
                }
                self.length(&format!("{f}.thickness"), *thickness);
                self.hopper_holds_grains(&f, *center, *orifice, *kind, s);
            }
            WallShape::RoughBase {
                min,
                max,
                semi_axes,
                vertices,
                spacing,
            } => {
                let region = (min.0, min.1, min.2);
                let top = (max.0, max.1, min.2 + 1.0);
                if self.finite(&format!("{f}.min"), *min) && self.finite(&format!("{f}.max"), *max)
                {
                    self.region(&f, region, top);
                }
                self.semi_axes(&format!("{f}.semi_axes"), *semi_axes);
                if !(4..=1000).contains(vertices) {
                    self.fail(
                        &format!("{f}.vertices"),
                        format!("{vertices}"),
                        "4 to 1000 vertices",
                    );
                }
                if let Some(d) = spacing
                    && self.length(&format!("{f}.spacing"), *d)
                {
                    let sites = ((max.0 - min.0) / d).round() * ((max.1 - min.1) / d).round();
                    if sites > MAX_ROUGH_BASE_GRAINS {
                        self.fail(
                            &format!("{f}.spacing"),
                            format!("{} glued grains", short(sites)),
                            "at most 10^5 glued grains (a larger spacing)",
                        );
                    }
                }
            }
            WallShape::Drum {
                center,
                axis,
                radius,
                length,
                segments,
                thickness,
            } => {
                self.finite(&format!("{f}.center"), *center);
                self.direction(&format!("{f}.axis"), *axis);
                self.length(&format!("{f}.radius"), *radius);
                self.length(&format!("{f}.length"), *length);
                self.length(&format!("{f}.thickness"), *thickness);
                if !(6..=720).contains(segments) {
                    self.fail(
                        &format!("{f}.segments"),
                        format!("{segments}"),
                        "6 to 720 plates",
                    );
                }
            }
        }
    }

    fn motion(&mut self, f: &str, m: &MotionSpec, shape: &WallShape, s: &Scenario) {
        let dt = s.time.dt;
        match m {
            MotionSpec::Fixed => {}
            MotionSpec::Oscillate {
                direction,
                amplitude,
                frequency,
                phase,
                second,
            } => {
                self.direction(&format!("{f}.direction"), *direction);
                let mut amplitude_ok = self.amplitude(&format!("{f}.amplitude"), *amplitude);
                // The plates' speed bound adds the two components' amplitudes.
                let mut amplitude = *amplitude;
                if let Some(second) = second {
                    let g = format!("{f}.second");
                    self.direction(&format!("{g}.direction"), second.direction);
                    amplitude_ok &= self.amplitude(&format!("{g}.amplitude"), second.amplitude);
                    amplitude += second.amplitude;
                    if !second.phase.is_finite() {
                        self.fail(
                            &format!("{g}.phase"),
                            short(second.phase),
                            "a finite phase (rad)",
                        );
                    }
                }
                let frequency_ok = self.positive(&format!("{f}.frequency"), *frequency);
                if frequency_ok && dt > 0.0 && frequency * dt > 1.0 / MIN_STEPS_PER_PERIOD {
                    self.fail(
                        &format!("{f}.frequency"),
                        format!(
                            "{} Hz is {} steps of {} s per period",
                            short(*frequency),
                            short(1.0 / (frequency * dt)),
                            short(dt)
                        ),
                        "at least 20 time steps per period (frequency ≤ 1 / (20 time.dt))",
                    );
                } else if amplitude_ok && frequency_ok {
                    let speed = amplitude * std::f64::consts::TAU * frequency;
                    self.travel(&format!("{f}.amplitude"), "the wall's plates", speed, s);
                }
                if !phase.is_finite() {
                    self.fail(&format!("{f}.phase"), short(*phase), "a finite phase");
                }
            }
            MotionSpec::Rotate {
                axis,
                center,
                angular_velocity,
            } => {
                self.direction(&format!("{f}.axis"), *axis);
                self.finite(&format!("{f}.center"), *center);
                let field = format!("{f}.angular_velocity");
                if !angular_velocity.is_finite() {
                    self.fail(&field, short(*angular_velocity), "a finite rate");
                } else if dt > 0.0
                    && angular_velocity.abs() * dt > std::f64::consts::TAU / MIN_STEPS_PER_PERIOD
                {
                    self.fail(
                        &field,
                        format!(
                            "{} rad/s turns {} rad per step of {} s",
                            short(*angular_velocity),
                            short(angular_velocity.abs() * dt),
                            short(dt)
                        ),
                        "at least 20 time steps per turn",
                    );
                } else {
                    let speed = angular_velocity.abs() * reach(shape, *center);
                    self.travel(&field, "the wall's plates", speed, s);
                }
            }
        }
    }

    /// A hopper must hold the grains poured or placed above it: a population whose region
    /// lies above the orifice and fits through it falls out without touching the hopper.
    fn hopper_holds_grains(
        &mut self,
        f: &str,
        center: Vec3,
        orifice: f64,
        kind: HopperKind,
        s: &Scenario,
    ) {
        if !(orifice.is_finite() && orifice > 0.0) {
            return;
        }
        let half = orifice / 2.0;
        let within = |lo: f64, hi: f64, c: f64| c - half <= lo && hi <= c + half;
        for p in &s.grains {
            let (Placement::Lattice { min, max, .. } | Placement::Pour { min, max, .. }) =
                &p.placement
            else {
                continue;
            };
            let through = min.2 >= center.2
                && within(min.0, max.0, center.0)
                && (kind == HopperKind::Wedge || within(min.1, max.1, center.1));
            if through {
                self.fail(
                    &format!("{f}.orifice"),
                    format!(
                        "{} m is wider than the region of population '{}' above it ({} m across): its grains fall through without touching the hopper",
                        short(orifice),
                        p.name,
                        short(max.0 - min.0)
                    ),
                    "an orifice narrower than the region the grains start in above it",
                );
            }
        }
    }

    fn measurement(&mut self, f: &str, m: &MeasurementSpec, s: &Scenario) {
        let wall_names = || names(s.walls.iter().map(|w| w.name.as_str()));
        match m {
            MeasurementSpec::AngleOfRepose {
                direction,
                floor,
                range,
                bins,
                fit,
                flanks: _,
                window,
            } => {
                self.surface_fit(f, *direction, *floor, *range, *bins, *fit, s);
                if let Some(window) = window {
                    self.window(&format!("{f}.window"), *window);
                }
            }
            MeasurementSpec::MaxStability {
                direction,
                floor,
                range,
                bins,
                fit,
                avalanche_drop_deg,
                min_grains,
                flanks: _,
            } => {
                self.surface_fit(f, *direction, *floor, *range, *bins, *fit, s);
                if let Some(d) = avalanche_drop_deg
                    && !(d.is_finite() && *d > 0.0 && *d < 90.0)
                {
                    self.fail(
                        &format!("{f}.avalanche_drop_deg"),
                        format!("{}° is not allowed", short(*d)),
                        "an angle > 0° and < 90°",
                    );
                }
                if let Some(n) = min_grains
                    && *n > 10_000_000
                {
                    self.fail(
                        &format!("{f}.min_grains"),
                        format!("{n} grains"),
                        "0 to 10^7 grains",
                    );
                }
                if !s
                    .grains
                    .iter()
                    .any(|p| matches!(p.placement, Placement::Drip { .. }))
                {
                    self.fail(
                        f,
                        "no population is dripped: the heap is never quiet before a release".into(),
                        "a MaxStability measurement with a population placed by Drip(…)",
                    );
                }
            }
            MeasurementSpec::ChuteFlow { window, base, bin } => {
                self.window(&format!("{f}.window"), *window);
                if let Some(b) = base
                    && !(b.is_finite() && b.abs() <= MAX_COORDINATE)
                {
                    self.fail(&format!("{f}.base"), short(*b), "a finite height (m)");
                }
                if let Some(b) = bin
                    && self.length(&format!("{f}.bin"), *b)
                {
                    // Finer layers than a hundredth of a grain resolve nothing more (each
                    // grain is spread over the layers it spans) and only cost memory.
                    let finest = 0.01 * smallest_grain_diameter(s);
                    if finest.is_finite() && *b < finest {
                        self.fail(
                            &format!("{f}.bin"),
                            format!("{} m is not allowed", short(*b)),
                            &format!(
                                "a layer thickness of at least a hundredth of the smallest grain \
                                 diameter ({} m)",
                                short(finest)
                            ),
                        );
                    }
                }
                if s.periodic.x.is_none() || s.periodic.y.is_none() {
                    self.fail(
                        "periodic",
                        "a chute flow without periodic x and y".into(),
                        "periodic axes x (along the flow) and y (across it)",
                    );
                }
                if s.incline_deg.is_none() {
                    self.fail(
                        "incline_deg",
                        "none with a chute flow".into(),
                        "the incline's angle (degrees): the flow goes down +x",
                    );
                }
            }
            MeasurementSpec::Transport {
                driver,
                direction,
                window,
                sub_windows,
            } => {
                let driver_motion = match s.walls.iter().find(|w| &w.name == driver) {
                    None => {
                        self.fail(
                            &format!("{f}.driver"),
                            format!("no wall named '{driver}'"),
                            &wall_names(),
                        );
                        None
                    }
                    Some(w) if !matches!(w.motion, MotionSpec::Oscillate { .. }) => {
                        self.fail(
                            &format!("{f}.driver"),
                            format!("wall '{driver}' does not oscillate"),
                            "a wall with motion Oscillate(…)",
                        );
                        None
                    }
                    Some(w) => Some(&w.motion),
                };
                match direction {
                    Some(d) => {
                        if self.direction(&format!("{f}.direction"), *d) {
                            self.horizontal(&format!("{f}.direction"), *d, s);
                        }
                    }
                    None => {
                        let up = crate::probe::up_direction(s.gravity_vector());
                        if let Some(m) = driver_motion
                            && up.is_finite()
                            && crate::probe::transport::default_direction(m, up).is_none()
                        {
                            self.fail(
                                &format!("{f}.direction"),
                                format!(
                                    "none given, and wall '{driver}' oscillates along the vertical only"
                                ),
                                "a horizontal direction (required when the driver has no horizontal motion)",
                            );
                        }
                    }
                }
                self.window(&format!("{f}.window"), *window);
                if let Some(n) = sub_windows
                    && !(2..=1000).contains(n)
                {
                    self.fail(
                        &format!("{f}.sub_windows"),
                        format!("{n}"),
                        "2 to 1000 sub-windows",
                    );
                }
            }
            MeasurementSpec::Vibration {
                driver,
                intruder,
                min,
                max,
                layers,
                strobe_phase_deg,
            } => {
                if let Some(p) = strobe_phase_deg
                    && !(p.is_finite() && (0.0..360.0).contains(p))
                {
                    self.fail(
                        &format!("{f}.strobe_phase_deg"),
                        format!("{p}"),
                        "a phase of the drive from 0 to 360 degrees (360 excluded)",
                    );
                }
                match s.walls.iter().find(|w| &w.name == driver) {
                    None => self.fail(
                        &format!("{f}.driver"),
                        format!("no wall named '{driver}'"),
                        &wall_names(),
                    ),
                    Some(w) if !matches!(w.motion, MotionSpec::Oscillate { .. }) => self.fail(
                        &format!("{f}.driver"),
                        format!("wall '{driver}' does not oscillate"),
                        "a wall with motion Oscillate(…)",
                    ),
                    Some(_) => {}
                }
                if let Some(name) = intruder {
                    match s.grains.iter().find(|p| &p.name == name) {
                        None => self.fail(
                            &format!("{f}.intruder"),
                            format!("no population named '{name}'"),
                            &names(s.grains.iter().map(|p| p.name.as_str())),
                        ),
                        Some(p) if p.count != 1 => self.fail(
                            &format!("{f}.intruder"),
                            format!("population '{name}' has {} grains", p.count),
                            "a population of exactly one grain (count: 1)",
                        ),
                        Some(_) => {}
                    }
                }
                self.region(f, *min, *max);
                if let Some(n) = layers
                    && !(1..=1000).contains(n)
                {
                    self.fail(&format!("{f}.layers"), format!("{n}"), "1 to 1000 layers");
                }
            }
            MeasurementSpec::Discharge {
                outlet_z,
                gate,
                clog_window,
                force_walls,
                force_sample_interval,
                fit,
            } => {
                if !outlet_z.is_finite() {
                    self.fail(
                        &format!("{f}.outlet_z"),
                        short(*outlet_z),
                        "a finite height",
                    );
                }
                for w in &s.walls {
                    if let WallShape::Hopper { center, .. } = &w.shape
                        && *outlet_z >= center.2
                    {
                        self.fail(
                            &format!("{f}.outlet_z"),
                            format!(
                                "{} m is not below the orifice of hopper '{}' at {} m",
                                short(*outlet_z),
                                w.name,
                                short(center.2)
                            ),
                            "a height below the hopper's orifice",
                        );
                    }
                }
                match s.walls.iter().find(|w| &w.name == gate) {
                    None => self.fail(
                        &format!("{f}.gate"),
                        format!("no wall named '{gate}'"),
                        &wall_names(),
                    ),
                    Some(w) if w.removed_at.is_none() => self.fail(
                        &format!("{f}.gate"),
                        format!("wall '{gate}' is never removed"),
                        "a wall with removed_at set (the gate opens then)",
                    ),
                    Some(_) => {}
                }
                if let Some(w) = clog_window {
                    self.positive(&format!("{f}.clog_window"), *w);
                }
                for (k, name) in force_walls.iter().enumerate() {
                    if !s.walls.iter().any(|w| &w.name == name) {
                        self.fail(
                            &format!("{f}.force_walls[{k}]"),
                            format!("no wall named '{name}'"),
                            &wall_names(),
                        );
                    }
                }
                if let Some(t) = force_sample_interval {
                    self.at_least_dt(&format!("{f}.force_sample_interval"), *t, s.time.dt);
                }
                if let Some(r) = fit {
                    self.fraction_range(&format!("{f}.fit"), *r);
                }
            }
        }
    }
}

/// Whether every population's size and size spread are in range and at least one
/// population has a size known before its files are read, so that grain sizes derived from
/// them can be compared with other lengths without repeating their error.
fn sizes_valid(s: &Scenario) -> bool {
    let in_range = |p: &PopulationSpec| match (&p.shape, p.semi_axes) {
        (None, Some(a)) => [a.0, a.1, a.2]
            .iter()
            .all(|x| x.is_finite() && (SEMI_AXIS_RANGE.0..=SEMI_AXIS_RANGE.1).contains(x)),
        (Some(shape), None) => match shape.scale() {
            ShapeScale::Diameter(d) => {
                d.is_finite() && (DIAMETER_RANGE.0..=DIAMETER_RANGE.1).contains(&d)
            }
            _ => true,
        },
        _ => false,
    };
    !s.grains.is_empty()
        && s.grains.iter().any(|p| nominal_diameters(p).is_some())
        && s.grains.iter().all(|p| {
            in_range(p) && p.size_spread.is_finite() && (0.0..=0.9).contains(&p.size_spread)
        })
}

/// The smallest and largest diameters of a population's grains before the size spread, as
/// far as the scenario tells without reading files: twice the shortest and the longest
/// semi-axis of the generating ellipsoid; a file shape's equivalent-sphere diameter for both
/// when it is scaled to one; unknown for file shapes kept at their size or scaled by a
/// factor.
#[must_use]
pub fn nominal_diameters(p: &PopulationSpec) -> Option<(f64, f64)> {
    match (&p.shape, p.semi_axes) {
        (None, Some(a)) => Some((2.0 * a.0.min(a.1).min(a.2), 2.0 * a.0.max(a.1).max(a.2))),
        (Some(shape), _) => match shape.scale() {
            ShapeScale::Diameter(d) => Some((d, d)),
            _ => None,
        },
        _ => None,
    }
}

/// The smallest grain diameter the populations can produce: the smallest of their
/// [`nominal_diameters`] at the smallest size factor (infinite without populations of known
/// size).
#[must_use]
pub fn smallest_grain_diameter(s: &Scenario) -> f64 {
    s.grains
        .iter()
        .filter_map(|p| {
            let (smallest, _) = nominal_diameters(p)?;
            Some(smallest * (1.0 - p.size_spread.clamp(0.0, 0.9)))
        })
        .fold(f64::INFINITY, f64::min)
}

/// An upper bound of the distance from `center` to the points of a wall's shape: the
/// radius its fastest point sweeps when it turns about `center`. A plane's is taken at its
/// given point.
fn reach(shape: &WallShape, center: Vec3) -> f64 {
    let from = |p: Vec3| {
        let d = (p.0 - center.0, p.1 - center.1, p.2 - center.2);
        (d.0 * d.0 + d.1 * d.1 + d.2 * d.2).sqrt()
    };
    let norm = |v: Vec3| (v.0 * v.0 + v.1 * v.1 + v.2 * v.2).sqrt();
    match shape {
        WallShape::Plane { point, .. } => from(*point),
        WallShape::Slab {
            center: c, size, ..
        } => from(*c) + norm(*size),
        WallShape::Box {
            min,
            max,
            thickness,
            ..
        } => {
            let mid = (
                (min.0 + max.0) / 2.0,
                (min.1 + max.1) / 2.0,
                (min.2 + max.2) / 2.0,
            );
            let diagonal = (max.0 - min.0, max.1 - min.1, max.2 - min.2);
            from(mid) + norm(diagonal) + 2.0 * thickness
        }
        WallShape::Hopper {
            center: c,
            orifice,
            wall_angle_deg,
            height,
            depth,
            thickness,
            ..
        } => {
            let spread = height / wall_angle_deg.to_radians().tan();
            from(*c) + orifice + 2.0 * spread + height + depth + 2.0 * thickness
        }
        WallShape::RoughBase {
            min,
            max,
            semi_axes,
            ..
        } => {
            let mid = ((min.0 + max.0) / 2.0, (min.1 + max.1) / 2.0, min.2);
            from(mid) + norm((max.0 - min.0, max.1 - min.1, 0.0)) + 2.0 * norm(*semi_axes)
        }
        WallShape::Drum {
            center: c,
            radius,
            length,
            thickness,
            ..
        } => from(*c) + radius.hypot(length / 2.0) + 2.0 * thickness,
    }
}

/// The largest grain diameter the populations can produce: the largest of their
/// [`nominal_diameters`] at the largest size factor (−∞ without populations of known
/// size).
#[must_use]
pub fn largest_grain_diameter(s: &Scenario) -> f64 {
    s.grains
        .iter()
        .filter_map(|p| {
            let (_, largest) = nominal_diameters(p)?;
            Some(largest * (1.0 + p.size_spread.clamp(0.0, 0.9)))
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

fn names<'a>(list: impl Iterator<Item = &'a str>) -> String {
    let all: Vec<String> = list.map(|n| format!("'{n}'")).collect();
    if all.is_empty() {
        "none is defined".to_string()
    } else {
        format!("one of {}", all.join(", "))
    }
}
