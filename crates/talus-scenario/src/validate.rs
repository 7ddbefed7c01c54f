//! Checks of a parsed scenario that need no geometry: ranges of every number, names that
//! refer to something, consistency between sections. Each failure names the field's path
//! and what is allowed; all failures are collected, not only the first.

use std::path::{Path, PathBuf};

use crate::error::ScenarioError;
use crate::schema::{
    HopperKind, MeasurementSpec, MotionSpec, Placement, PopulationSpec, Scenario, Vec3, WallShape,
};

/// Largest magnitude of a coordinate or vector component (m, m/s, …).
const MAX_COORDINATE: f64 = 1e6;
/// Most rows a time series may get, and most frames a run may write.
const MAX_ROWS: f64 = 1e6;
/// See [`MAX_ROWS`].
const MAX_FRAMES: f64 = 1e5;
/// Most vertices of all distinct shapes of a scenario together.
const MAX_SHAPE_VERTICES: usize = 10_000_000;

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
        if w.name.is_empty() || w.name.contains('/') {
            c.fail(
                &format!("{f}.name"),
                format!("'{}'", w.name),
                "a non-empty name without '/'",
            );
        } else if names.contains(&w.name.as_str()) {
            c.fail(
                &format!("{f}.name"),
                format!("'{}' is used twice", w.name),
                "unique wall names",
            );
        }
        names.push(&w.name);
        c.wall_shape(&f, &w.shape, scenario);
        c.motion(&format!("{f}.motion"), &w.motion);
        if let Some(t) = w.removed_at {
            c.non_negative(&format!("{f}.removed_at"), t);
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
                format!("{} frames", (scenario.time.end / t).round()),
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
                .saturating_mul(p.vertices)
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
                "at most one AngleOfRepose, one Vibration and one Discharge",
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
            self.fail(field, format!("{x} is not allowed"), "a finite number > 0");
        }
        ok
    }

    fn non_negative(&mut self, field: &str, x: f64) -> bool {
        let ok = x.is_finite() && x >= 0.0;
        if !ok {
            self.fail(field, format!("{x} is not allowed"), "a finite number ≥ 0");
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
                format!("{v:?} is not allowed"),
                "finite coordinates within 10^6 of the origin",
            );
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

    fn positive_vec(&mut self, field: &str, v: Vec3) -> bool {
        let ok = [v.0, v.1, v.2].iter().all(|x| x.is_finite() && *x > 0.0);
        if !ok {
            self.fail(
                field,
                format!("{v:?} is not allowed"),
                "three finite lengths > 0",
            );
        }
        ok
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
                format!("min {min:?} is not below max {max:?}"),
                "min < max in x, y and z",
            );
        }
        ok
    }

    fn at_least_dt(&mut self, field: &str, t: f64, dt: f64) {
        if self.positive(field, t) && dt.is_finite() && dt > 0.0 && t < dt {
            self.fail(
                field,
                format!("{t} is shorter than the time step {dt}"),
                "an interval ≥ time.dt",
            );
        }
    }

    fn fraction_range(&mut self, field: &str, r: (f64, f64)) {
        if !(r.0.is_finite() && r.1.is_finite() && 0.0 <= r.0 && r.0 < r.1 && r.1 <= 1.0) {
            self.fail(
                field,
                format!("{r:?} is not allowed"),
                "(a, b) with 0 ≤ a < b ≤ 1",
            );
        }
    }

    fn top(&mut self, s: &Scenario) {
        if s.name.trim().is_empty() {
            self.fail("name", "the name is empty".into(), "a non-empty name");
        }
        let t = &s.time;
        let dt_ok = self.positive("time.dt", t.dt);
        if self.positive("time.end", t.end) && dt_ok && t.end < t.dt {
            self.fail(
                "time.end",
                format!("{} is shorter than one step", t.end),
                "end ≥ dt",
            );
        }
        if dt_ok && t.end.is_finite() && t.end / t.dt > 1e12 {
            self.fail(
                "time.end",
                format!("{} steps", t.end / t.dt),
                "at most 10^12 steps",
            );
        }
        self.at_least_dt("time.output_interval", t.output_interval, t.dt);
        if t.output_interval > 0.0 && t.end / t.output_interval > MAX_ROWS {
            self.fail(
                "time.output_interval",
                format!("{} rows", (t.end / t.output_interval).round()),
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
        self.finite("gravity", s.gravity);
        self.non_negative("margin", s.margin);
        if s.materials.is_empty() {
            self.fail("materials", "no material".into(), "at least one material");
        }
        for (i, m) in s.materials.iter().enumerate() {
            if m.name.is_empty() {
                self.fail(
                    &format!("materials[{i}].name"),
                    "empty".into(),
                    "a non-empty name",
                );
            }
            if s.materials[..i].iter().any(|o| o.name == m.name) {
                self.fail(
                    &format!("materials[{i}].name"),
                    format!("'{}' is used twice", m.name),
                    "unique material names",
                );
            }
            self.positive(&format!("materials[{i}].density"), m.density);
        }
        if s.materials.len() > usize::from(u16::MAX) {
            self.fail(
                "materials",
                format!("{} materials", s.materials.len()),
                "at most 65535",
            );
        }
        for (name, value) in &s.force_model.coefficients {
            if !value.is_finite() {
                self.fail(
                    &format!("force_model.coefficients.{name}"),
                    format!("{value} is not finite"),
                    "a finite number in the coefficient's range",
                );
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

    fn population(&mut self, s: &Scenario, i: usize, p: &PopulationSpec) {
        let f = format!("grains[{i}]");
        if p.name.is_empty() {
            self.fail(&format!("{f}.name"), "empty".into(), "a non-empty name");
        }
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
        if !(4..=MAX_VERTICES).contains(&p.vertices) {
            self.fail(
                &format!("{f}.vertices"),
                format!("{} vertices", p.vertices),
                "4 to 10000 vertices",
            );
        }
        self.positive_vec(&format!("{f}.semi_axes"), p.semi_axes);
        if !(p.size_spread.is_finite() && (0.0..=0.9).contains(&p.size_spread)) {
            self.fail(
                &format!("{f}.size_spread"),
                format!("{} is not allowed", p.size_spread),
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
        if let Some(v) = p.velocity {
            self.finite(&format!("{f}.velocity"), v);
        }
        let f = format!("{f}.placement");
        match &p.placement {
            Placement::Lattice {
                min,
                max,
                gap,
                jitter,
                orientation: _,
            } => {
                self.region(&f, *min, *max);
                if let Some(g) = gap
                    && !(g.is_finite() && (0.0..=10.0).contains(g))
                {
                    self.fail(
                        &format!("{f}.gap"),
                        format!("{g} is not allowed"),
                        "a gap in [0, 10]",
                    );
                }
                if let Some(j) = jitter
                    && !(j.is_finite() && (0.0..=1.0).contains(j))
                {
                    self.fail(
                        &format!("{f}.jitter"),
                        format!("{j} is not allowed"),
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
                        format!("{rate} grains/s"),
                        "at most 10^6 grains per second",
                    );
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
                self.positive_vec(&format!("{f}.size"), *size);
                if let Some(r) = rotation {
                    self.direction(&format!("{f}.rotation.axis"), r.axis);
                    if !r.angle_deg.is_finite() {
                        self.fail(
                            &format!("{f}.rotation.angle_deg"),
                            format!("{}", r.angle_deg),
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
                self.positive(&format!("{f}.thickness"), *thickness);
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
                if self.positive(&format!("{f}.orifice"), *orifice) {
                    let largest = largest_grain_diameter(s);
                    if largest.is_finite() && *orifice <= largest {
                        self.fail(
                            &format!("{f}.orifice"),
                            format!(
                                "{orifice} m is not wider than the largest grain ({largest:.4} m across)"
                            ),
                            "an orifice wider than the largest grain (several grain diameters for steady flow)",
                        );
                    }
                }
                if !(wall_angle_deg.is_finite() && *wall_angle_deg > 0.0 && *wall_angle_deg < 90.0)
                {
                    self.fail(
                        &format!("{f}.wall_angle_deg"),
                        format!("{wall_angle_deg}° is not allowed"),
                        "an angle to the horizontal in (0°, 90°)",
                    );
                }
                self.positive(&format!("{f}.height"), *height);
                if *kind == HopperKind::Wedge {
                    self.positive(&format!("{f}.depth"), *depth);
                }
                self.positive(&format!("{f}.thickness"), *thickness);
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
                self.positive(&format!("{f}.radius"), *radius);
                self.positive(&format!("{f}.length"), *length);
                self.positive(&format!("{f}.thickness"), *thickness);
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

    fn motion(&mut self, f: &str, m: &MotionSpec) {
        match m {
            MotionSpec::Fixed => {}
            MotionSpec::Oscillate {
                direction,
                amplitude,
                frequency,
                phase,
            } => {
                self.direction(&format!("{f}.direction"), *direction);
                self.non_negative(&format!("{f}.amplitude"), *amplitude);
                self.positive(&format!("{f}.frequency"), *frequency);
                if !phase.is_finite() {
                    self.fail(&format!("{f}.phase"), format!("{phase}"), "a finite phase");
                }
            }
            MotionSpec::Rotate {
                axis,
                center,
                angular_velocity,
            } => {
                self.direction(&format!("{f}.axis"), *axis);
                self.finite(&format!("{f}.center"), *center);
                if !angular_velocity.is_finite() {
                    self.fail(
                        &format!("{f}.angular_velocity"),
                        format!("{angular_velocity}"),
                        "a finite rate",
                    );
                }
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
            } => {
                if self.direction(&format!("{f}.direction"), *direction) {
                    let g = s.gravity;
                    let (d, gn) = (
                        (direction.0, direction.1, direction.2),
                        (g.0 * g.0 + g.1 * g.1 + g.2 * g.2).sqrt(),
                    );
                    let dn = (d.0 * d.0 + d.1 * d.1 + d.2 * d.2).sqrt();
                    let cos = (d.0 * g.0 + d.1 * g.1 + d.2 * g.2) / (dn * gn);
                    if gn > 0.0 && cos.abs() > 1e-6 {
                        self.fail(
                            &format!("{f}.direction"),
                            format!("{direction:?} is not horizontal"),
                            "a direction perpendicular to gravity",
                        );
                    }
                }
                if !floor.is_finite() {
                    self.fail(&format!("{f}.floor"), format!("{floor}"), "a finite height");
                }
                if !(range.0.is_finite() && range.1.is_finite() && range.0 < range.1) {
                    self.fail(
                        &format!("{f}.range"),
                        format!("{range:?}"),
                        "(from, to) with from < to",
                    );
                }
                if let Some(b) = bins
                    && !(3..=10_000).contains(b)
                {
                    self.fail(&format!("{f}.bins"), format!("{b}"), "3 to 10000 bins");
                }
                if let Some(r) = fit {
                    self.fraction_range(&format!("{f}.fit"), *r);
                }
            }
            MeasurementSpec::Vibration {
                driver,
                intruder,
                min,
                max,
                layers,
            } => {
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
                if let Some(name) = intruder
                    && !s.grains.iter().any(|p| &p.name == name)
                {
                    self.fail(
                        &format!("{f}.intruder"),
                        format!("no population named '{name}'"),
                        &names(s.grains.iter().map(|p| p.name.as_str())),
                    );
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
                        format!("{outlet_z}"),
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
                                "{outlet_z} m is not below the orifice of hopper '{}' at {} m",
                                w.name, center.2
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

/// The largest grain diameter the populations can produce: twice the longest semi-axis
/// at the largest size factor.
#[must_use]
pub fn largest_grain_diameter(s: &Scenario) -> f64 {
    s.grains
        .iter()
        .map(|p| {
            let a = p.semi_axes;
            2.0 * a.0.max(a.1).max(a.2) * (1.0 + p.size_spread.clamp(0.0, 0.9))
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
