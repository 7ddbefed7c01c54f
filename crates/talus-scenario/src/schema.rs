//! The scenario file: one RON document describing a whole experiment, every coefficient
//! named — the thesis' parameter file (app. D) as a typed schema.
//!
//! Every struct rejects fields it does not know (`deny_unknown_fields`), so a misspelt
//! coefficient is an error rather than a silently ignored line. Optional fields have the
//! defaults documented on them. Units are SI throughout: metres, seconds, kilograms.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use talus_sim::force::Role;

/// A vector in RON: `(x, y, z)`.
pub type Vec3 = (f64, f64, f64);

/// A whole experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A name for output (summary, plots).
    pub name: String,
    /// Seed of every random choice (grain shapes, orientations, jitter, pouring).
    pub seed: u64,
    /// How many seeds the scenario is run with: the run itself with `seed`, then one run for
    /// each of the seeds after it, in `seeds/seed-<s>/` (ordinary runs, without frames);
    /// `summary.json` then gives every numeric answer over all of them (each seed's value,
    /// mean, sample standard deviation, range): one run of a chaotic granular experiment is
    /// not an answer. Default 1.
    #[serde(default)]
    pub seeds: Option<u64>,
    /// Time step, end and output cadence.
    pub time: TimeSpec,
    /// Acceleration of gravity (m/s²).
    pub gravity: Vec3,
    /// The scene seen in the frame of a plane inclined by this angle (degrees, 0 to 90):
    /// `gravity`, which must then be vertical, turned from −z towards +x by it, so that the
    /// floor z = const is the incline and +x its downhill direction; default none.
    #[serde(default)]
    pub incline_deg: Option<f64>,
    /// The incline steepened during the run: from time `from` (s) at `rate_deg_per_s` up
    /// to `to_deg`, so that a bed settled at rest is tilted until it flows (θ_start);
    /// default none (a fixed incline).
    #[serde(default)]
    pub incline_ramp: Option<InclineRamp>,
    /// The integrator; default velocity Verlet.
    #[serde(default)]
    pub integrator: Integrator,
    /// The broad-phase method.
    #[serde(default)]
    pub broad_phase: BroadPhase,
    /// How bounding boxes are computed.
    #[serde(default)]
    pub bounding: Bounding,
    /// Growth of every bounding box on each side (m); default 0.
    #[serde(default)]
    pub margin: f64,
    /// Steps between renumberings of the grains along a space-filling curve, which keeps
    /// neighbours near each other in memory (results do not change: forces are summed in
    /// the order of the grains' ids); default 1000, 0 never.
    #[serde(default)]
    pub renumber_every: Option<u64>,
    /// The materials, referred to by name.
    pub materials: Vec<MaterialSpec>,
    /// The contact force model.
    pub force_model: ForceModelSpec,
    /// Grain populations, added in this order.
    pub grains: Vec<PopulationSpec>,
    /// Walls, added in this order.
    #[serde(default)]
    pub walls: Vec<WallSpec>,
    /// Periodic axes: along each one given, a grain that leaves through one face enters
    /// through the other, and grains meet across the faces; default none.
    #[serde(default)]
    pub periodic: PeriodicSpec,
    /// What is measured.
    #[serde(default)]
    pub measurements: Vec<MeasurementSpec>,
    /// What is written.
    #[serde(default)]
    pub outputs: OutputSpec,
}

/// The periodic axes of a scenario: for each, the lower and upper face `(lower, upper)` (m);
/// the period is their distance.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeriodicSpec {
    /// Along x.
    #[serde(default)]
    pub x: Option<(f64, f64)>,
    /// Along y.
    #[serde(default)]
    pub y: Option<(f64, f64)>,
    /// Along z.
    #[serde(default)]
    pub z: Option<(f64, f64)>,
}

impl PeriodicSpec {
    /// Whether no axis is periodic.
    #[must_use]
    pub fn is_none(&self) -> bool {
        self.axes().iter().all(Option::is_none)
    }

    /// The faces along x, y and z.
    #[must_use]
    pub fn axes(&self) -> [Option<(f64, f64)>; 3] {
        [self.x, self.y, self.z]
    }

    /// The engine's periodic axes.
    #[must_use]
    pub fn periodic(&self) -> talus_sim::periodic::Periodic {
        talus_sim::periodic::Periodic {
            axes: self
                .axes()
                .map(|a| a.map(|(lower, upper)| talus_sim::periodic::Period { lower, upper })),
        }
    }
}

/// A steepening incline: from `from` (s), `rate_deg_per_s` degrees per second up to
/// `to_deg`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InclineRamp {
    /// When the incline starts to steepen (s).
    pub from: f64,
    /// How fast (degrees per second).
    pub rate_deg_per_s: f64,
    /// The steepest incline, kept from when it is reached (degrees).
    pub to_deg: f64,
}

impl InclineRamp {
    /// The incline at time `t` of a ramp that starts from `start` degrees.
    #[must_use]
    pub fn angle(&self, start: f64, t: f64) -> f64 {
        if t > self.from {
            (start + self.rate_deg_per_s * (t - self.from)).min(self.to_deg)
        } else {
            start
        }
    }
}

impl Scenario {
    /// The acceleration of gravity in the scene's frame at the start: `gravity`, turned by
    /// the incline if there is one.
    #[must_use]
    pub fn gravity_vector(&self) -> talus_geom::glam::DVec3 {
        self.gravity_at(0.0)
    }

    /// The incline at time `t` (degrees), if there is one: `incline_deg`, steepened by the
    /// ramp.
    #[must_use]
    pub fn incline_at(&self, t: f64) -> Option<f64> {
        let start = self.incline_deg?;
        Some(self.incline_ramp.map_or(start, |r| r.angle(start, t)))
    }

    /// The acceleration of gravity in the scene's frame at time `t`.
    #[must_use]
    pub fn gravity_at(&self, t: f64) -> talus_geom::glam::DVec3 {
        let g = talus_geom::glam::DVec3::new(self.gravity.0, self.gravity.1, self.gravity.2);
        match self.incline_at(t) {
            Some(angle) => {
                let a = angle.to_radians();
                g.length() * talus_geom::glam::DVec3::new(a.sin(), 0.0, -a.cos())
            }
            None => g,
        }
    }
}

/// Time stepping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeSpec {
    /// Time step (s).
    pub dt: f64,
    /// Simulated time at which the run ends (s).
    pub end: f64,
    /// Interval between output rows and measurements (s).
    pub output_interval: f64,
    /// Interval between checkpoints (s); default: none except at the end.
    #[serde(default)]
    pub checkpoint_interval: Option<f64>,
    /// End the run early once the grains are at rest.
    #[serde(default)]
    pub stop_at_rest: Option<RestSpec>,
}

/// When a run counts as settled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestSpec {
    /// Not before this time (s).
    pub after: f64,
    /// Mean kinetic energy per grain below which the grains are at rest (J).
    pub kinetic_energy_per_grain: f64,
}

/// The integrator; velocity Verlet by default: with the damping of inelastic contacts its
/// stable step is several times Gear's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Integrator {
    /// 6-value Gear predictor–corrector (§3.7).
    Gear,
    /// Velocity Verlet.
    #[default]
    Verlet,
}

/// The broad-phase method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum BroadPhase {
    /// Incremental sweep and prune (§4.1).
    #[default]
    SweepAndPrune,
    /// Uniform grid (linked cells).
    Grid,
    /// Every pair of boxes (for checks only: O(n²)).
    BruteForce,
}

/// How bounding boxes are computed (the thesis' BBOX switch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Bounding {
    /// Extreme vertex coordinates.
    #[default]
    MinMax,
    /// The box of an enclosing ellipsoid.
    Ellipsoid,
}

/// A material.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialSpec {
    /// Name, referred to by populations.
    pub name: String,
    /// Density (kg/m³).
    pub density: f64,
    /// The material's own contact coefficients, by name (any coefficient the force model or
    /// its parts take): a pair of materials mixes the two values by the coefficient's rule
    /// (`talus models` names it) unless `force_model.pairs` gives the pair's; a coefficient
    /// left out takes the force model's value.
    #[serde(default)]
    pub coefficients: BTreeMap<String, f64>,
}

/// The contact force model: a registered model (or preset of parts) by name, or a law
/// composed of the parts given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForceModelSpec {
    /// Registered name (`volumetric`, `volumetric_yade`, `energy_conserving`, or a model a
    /// program registered); with `parts`, the composed law's name.
    pub name: String,
    /// Coefficients by name; those left out take the model's defaults. Empty with `parts`
    /// (each part has its own).
    #[serde(default)]
    pub coefficients: BTreeMap<String, f64>,
    /// The parts of a composed law; `talus models` lists them by role.
    #[serde(default)]
    pub parts: Option<PartsSpec>,
    /// Coefficients of particular pairs of materials, in place of the mixed ones.
    #[serde(default)]
    pub pairs: Vec<PairSpec>,
}

/// The coefficients of one pair of materials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairSpec {
    /// The two materials (either order; a material twice for its grains among themselves).
    pub materials: (String, String),
    /// Coefficients by name; those left out are mixed from the two materials'.
    pub coefficients: BTreeMap<String, f64>,
}

/// The parts of a composed contact law, one per role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartsSpec {
    /// The normal force (`volumetric`, `yade`, `feng`).
    pub normal: PartSpec,
    /// The normal damping (`restitution`, `unloading`, `none`); default none.
    #[serde(default)]
    pub damping: Option<PartSpec>,
    /// The tangential force (`spring`, `yade_shear`, `none`); default none (frictionless).
    #[serde(default)]
    pub tangential: Option<PartSpec>,
    /// The twisting resistance (`spring`); default none.
    #[serde(default)]
    pub twisting: Option<PartSpec>,
    /// The rolling resistance (`epsd`); default none.
    #[serde(default)]
    pub rolling: Option<PartSpec>,
    /// The cohesion (`capillary`, `area`); default none.
    #[serde(default)]
    pub cohesion: Option<PartSpec>,
}

/// One part: its registered name in its role and its coefficients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartSpec {
    /// Registered name.
    pub name: String,
    /// Coefficients by name; those left out take the part's defaults.
    #[serde(default)]
    pub coefficients: BTreeMap<String, f64>,
}

impl PartSpec {
    /// The part `name` with `coefficients`.
    #[must_use]
    pub fn new(name: &str, coefficients: &[(&str, f64)]) -> Self {
        PartSpec {
            name: name.to_string(),
            coefficients: coefficients
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
        }
    }
}

impl PartsSpec {
    /// The parts given, with their roles.
    #[must_use]
    pub fn chosen(&self) -> Vec<(Role, &PartSpec)> {
        [
            (Role::Normal, Some(&self.normal)),
            (Role::Damping, self.damping.as_ref()),
            (Role::Tangential, self.tangential.as_ref()),
            (Role::Twisting, self.twisting.as_ref()),
            (Role::Rolling, self.rolling.as_ref()),
            (Role::Cohesion, self.cohesion.as_ref()),
        ]
        .into_iter()
        .filter_map(|(role, p)| p.map(|p| (role, p)))
        .collect()
    }

    /// The parts given, to change, in the order of [`PartsSpec::chosen`].
    pub fn chosen_mut(&mut self) -> impl Iterator<Item = &mut PartSpec> {
        [
            Some(&mut self.normal),
            self.damping.as_mut(),
            self.tangential.as_mut(),
            self.twisting.as_mut(),
            self.rolling.as_mut(),
            self.cohesion.as_mut(),
        ]
        .into_iter()
        .flatten()
    }
}

/// A population of grains of one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PopulationSpec {
    /// Name, referred to by measurements.
    pub name: String,
    /// Number of grains.
    pub count: usize,
    /// Vertices per grain (4 to 10000), on an ellipsoid (§3.1): the ellipsoid generator,
    /// with `semi_axes`. Left out when the grains come from files (`shape`).
    #[serde(default)]
    pub vertices: Option<usize>,
    /// Semi-axes of the ellipsoid (m), with `vertices`; left out with `shape`.
    #[serde(default)]
    pub semi_axes: Option<Vec3>,
    /// Grain shapes read from files instead of the ellipsoid generator, e.g.
    /// `shape: File(path: "shapes/rock.obj", scale: Diameter(0.01))`; default none (then
    /// `vertices` and `semi_axes` are required). Exactly one of the two ways is given.
    #[serde(default)]
    pub shape: Option<ShapeSpec>,
    /// Relative spread of the grain size: scale factors are uniform in
    /// [1 − spread, 1 + spread]; default 0, allowed [0, 0.9]. It applies on top of a file
    /// shape's `scale`.
    #[serde(default)]
    pub size_spread: f64,
    /// Number of distinct grain shapes the population cycles through; default
    /// min(count, 32). With file shapes, distinct shape `k` is the file shape
    /// `k mod (number of file shapes)` at its own size factor; the default is then the number
    /// of file shapes without a size spread, at least 32 with one, and at most `count`.
    #[serde(default)]
    pub distinct_shapes: Option<usize>,
    /// Material name.
    pub material: String,
    /// How the grains are placed.
    pub placement: Placement,
    /// Initial velocity of every grain (m/s); default at rest.
    #[serde(default)]
    pub velocity: Option<Vec3>,
}

impl PopulationSpec {
    /// The ellipsoid generator's vertex count and semi-axes, when the population uses it
    /// (both given and no file `shape`).
    #[must_use]
    pub fn ellipsoid(&self) -> Option<(usize, Vec3)> {
        match (&self.shape, self.vertices, self.semi_axes) {
            (None, Some(vertices), Some(semi_axes)) => Some((vertices, semi_axes)),
            _ => None,
        }
    }
}

/// Grain shapes read from files. Each file gives one grain shape or several (an OBJ file
/// with several objects or groups, a point cloud with blank lines between grains); a grain
/// is the convex hull of its shape's points, and a population cycles through the shapes of
/// its files in order. Paths are relative to the scenario file's directory.
///
/// Formats, by extension (any case): `.obj` (Wavefront), `.stl` (ASCII or binary), `.ply`
/// (ASCII or binary), `.xyz`, `.csv` and `.txt` (point clouds: three coordinates per line,
/// separated by spaces, tabs or commas; `#` starts a comment; a first line that is not
/// numbers is a header; a blank line ends a grain).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum ShapeSpec {
    /// The shapes of one file.
    File {
        /// The file, relative to the scenario file's directory.
        path: String,
        /// How the shapes are sized.
        scale: ShapeScale,
    },
    /// The shapes of several files, in order.
    Files {
        /// The files, relative to the scenario file's directory.
        paths: Vec<String>,
        /// How the shapes are sized (each shape on its own).
        scale: ShapeScale,
    },
}

impl ShapeSpec {
    /// The files, as written in the scenario.
    #[must_use]
    pub fn paths(&self) -> Vec<&str> {
        match self {
            ShapeSpec::File { path, .. } => vec![path.as_str()],
            ShapeSpec::Files { paths, .. } => paths.iter().map(String::as_str).collect(),
        }
    }

    /// How the shapes are sized.
    #[must_use]
    pub fn scale(&self) -> ShapeScale {
        match self {
            ShapeSpec::File { scale, .. } | ShapeSpec::Files { scale, .. } => *scale,
        }
    }
}

/// How a file shape is sized before the population's `size_spread` applies.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum ShapeScale {
    /// Scaled so that its convex hull has the volume of a sphere of this diameter (m): the
    /// equivalent-sphere diameter `(6 V / π)^(1/3)`.
    Diameter(f64),
    /// Coordinates multiplied by this factor (e.g. 0.001 for a file in millimetres).
    Factor(f64),
    /// Coordinates taken as metres.
    KeepSize,
}

/// Where grains start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Placement {
    /// Fill the box `min`–`max` from the bottom up on a lattice; centres are jittered by up
    /// to `jitter` times the free space around a grain. With `Random` orientations the
    /// lattice is cubic with the largest grain diameter times `1 + gap` as spacing; with
    /// `Aligned` grains (the generating ellipsoid's axes along x, y, z) the spacing along
    /// each axis is the ellipsoid's extent times `1 + gap`, a denser start.
    Lattice {
        /// Lower corner of the region (m).
        min: Vec3,
        /// Upper corner of the region (m).
        max: Vec3,
        /// Extra space between lattice sites, relative to the largest diameter; default 0.05.
        #[serde(default)]
        gap: Option<f64>,
        /// Random displacement within the free space, in [0, 1]; default 0.5.
        #[serde(default)]
        jitter: Option<f64>,
        /// Orientation of the grains; default `Random`.
        #[serde(default)]
        orientation: Orientation,
        /// Fill only the part of the region reachable from this point without crossing a
        /// wall present at the start (m): the inside of a funnel, a drum, the space around an
        /// obstacle, as paint poured there would spread. Sites a wall cuts are skipped, and so
        /// are those walls cut off from the point; grain `j` takes the `j`-th of the others
        /// from the bottom up. Default none: every site of the region, and a grain that starts
        /// inside a wall is an error (which catches a region put in the wrong place).
        #[serde(default)]
        fill_from: Option<Vec3>,
    },
    /// Pour: grains appear in the box `min`–`max` (on lattice sites that are free) at up
    /// to `rate` grains per second from time `start`, with `velocity`.
    Pour {
        /// Lower corner of the region (m).
        min: Vec3,
        /// Upper corner of the region (m).
        max: Vec3,
        /// Grains per second.
        rate: f64,
        /// Time of the first grain (s); default 0.
        #[serde(default)]
        start: f64,
    },
    /// Grains at the given centres (m), one per grain.
    Points(Vec<Vec3>),
    /// Drip (§1.2.1, the way the thesis finds Θ_m): one grain at a time is released at
    /// rest at `at` (moved horizontally by up to `jitter`, from the scenario's seed) each
    /// time the fastest grain of the whole scenario is slower than `threshold_speed`, so
    /// that a heap below is kept at the edge of avalanching. A grain is never released
    /// sooner than `min_interval` after the previous one, nor where it would overlap a
    /// grain (it then waits).
    Drip {
        /// Release point (m).
        at: Vec3,
        /// Speed of the fastest grain below which the next grain is released (m/s).
        threshold_speed: f64,
        /// Largest horizontal offset of a release from `at` (m); default 0.
        #[serde(default)]
        jitter: f64,
        /// Shortest time between two releases (s); default the time a grain takes to fall
        /// its own diameter from rest, so that a released grain is already falling — and
        /// counts as moving — when the next one is considered.
        #[serde(default)]
        min_interval: Option<f64>,
        /// Time of the first release (s); default 0.
        #[serde(default)]
        start: f64,
    },
}

/// How grains placed on a lattice are turned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Orientation {
    /// Uniformly random.
    #[default]
    Random,
    /// The generating ellipsoid's axes (a file shape's own axes) along x, y and z.
    Aligned,
}

/// A wall: its solid, its motion and when it goes away.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WallSpec {
    /// Name, referred to by measurements; a wall made of several bodies (box, hopper,
    /// drum) names them `name/part`.
    pub name: String,
    /// The solid.
    pub shape: WallShape,
    /// Its motion; default fixed.
    #[serde(default)]
    pub motion: MotionSpec,
    /// Time from which the wall no longer exists (s); default never.
    #[serde(default)]
    pub removed_at: Option<f64>,
    /// What the wall is made of (a material's name); default none: a grain meets it with
    /// the coefficients of the grain's own material.
    #[serde(default)]
    pub material: Option<String>,
}

/// Wall solids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum WallShape {
    /// The half-space behind the plane through `point`; `normal` points into the space
    /// where grains are.
    Plane {
        /// A point of the plane (m).
        point: Vec3,
        /// Normal towards the grains.
        normal: Vec3,
    },
    /// A rectangular slab (a plate or block) of edge lengths `size`, centred at `center`,
    /// turned by `rotation`.
    Slab {
        /// Centre (m).
        center: Vec3,
        /// Edge lengths along its own x, y, z (m).
        size: Vec3,
        /// Orientation; default none.
        #[serde(default)]
        rotation: Option<RotationSpec>,
    },
    /// An open-top box of plates of thickness `thickness` whose inside is `min`–`max`:
    /// a floor and four side plates named `floor`, `x_min`, `x_max`, `y_min`, `y_max`.
    Box {
        /// Lower corner of the inside (m).
        min: Vec3,
        /// Upper corner of the inside (m).
        max: Vec3,
        /// Plate thickness (m).
        thickness: f64,
        /// Side plates left out (of `x_min`, `x_max`, `y_min`, `y_max`); default none.
        #[serde(default)]
        open: Vec<String>,
    },
    /// A funnel: plates inclined at `wall_angle_deg` to the horizontal down to an orifice of
    /// width `orifice` centred at `center` (the orifice's mid-point), rising `height`.
    /// `Wedge` has two plates (a slot orifice of length `depth` along y, closed by two
    /// vertical plates); `Pyramid` has four (a square orifice).
    Hopper {
        /// Centre of the orifice (m).
        center: Vec3,
        /// Orifice width (m).
        orifice: f64,
        /// Angle of the plates to the horizontal, in (0°, 90°).
        wall_angle_deg: f64,
        /// Vertical extent of the funnel (m).
        height: f64,
        /// Extent along y of a wedge hopper (m); ignored for a pyramid.
        depth: f64,
        /// Plate thickness (m).
        thickness: f64,
        /// Wedge or pyramid.
        kind: HopperKind,
    },
    /// A rough base: grains glued to a floor. The plane z = `min.z` (normal +z, named
    /// `name/plane`) with fixed grains (`name/0`, `name/1`, …) centred on it on a square
    /// lattice over `min`–`max` in x and y, randomly turned (from the scenario's seed): the
    /// bumpy bottom of a chute flow. The pitch is the nearest to `spacing` that fits the
    /// region a whole number of times, so that the lattice repeats with a periodic axis
    /// spanning it.
    RoughBase {
        /// Lower corner: x and y of the region, z of the plane (m).
        min: Vec3,
        /// Upper corner: x and y of the region (z is ignored) (m).
        max: Vec3,
        /// Semi-axes of the ellipsoid the glued grains are cut from (m).
        semi_axes: Vec3,
        /// Vertices of each glued grain (4 to 1000).
        vertices: usize,
        /// Distance between neighbouring glued grains' centres (m); default the largest
        /// diameter, so that they touch.
        #[serde(default)]
        spacing: Option<f64>,
    },
    /// A drum: `segments` plates forming a polygonal cylinder of inner radius `radius` and
    /// length `length` about `axis` through `center`, closed by two end plates.
    Drum {
        /// Centre (m).
        center: Vec3,
        /// Axis direction.
        axis: Vec3,
        /// Inner radius (m).
        radius: f64,
        /// Inner length along the axis (m).
        length: f64,
        /// Plates around the circumference (≥ 6).
        segments: usize,
        /// Plate thickness (m).
        thickness: f64,
    },
}

/// Funnel form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HopperKind {
    /// Two inclined plates and two vertical ones: a slot orifice.
    Wedge,
    /// Four inclined plates: a square orifice.
    Pyramid,
}

/// A rotation by an angle about an axis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotationSpec {
    /// Axis.
    pub axis: Vec3,
    /// Angle (degrees, counter-clockwise about the axis).
    pub angle_deg: f64,
}

/// How a wall moves.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum MotionSpec {
    /// At rest.
    #[default]
    Fixed,
    /// `x(t) = x₀ + direction · amplitude · sin(2π frequency t + phase)` (§1.2.2).
    Oscillate {
        /// Direction.
        direction: Vec3,
        /// Amplitude (m).
        amplitude: f64,
        /// Frequency (Hz).
        frequency: f64,
        /// Phase (rad); default 0.
        #[serde(default)]
        phase: f64,
        /// A second component of the same frequency, for an elliptical motion (the drive of
        /// a real vibrating conveyor, §1.2.2, fig. 1.4): `+ second.direction ·
        /// second.amplitude · sin(2π frequency t + phase + second.phase)`; default none.
        #[serde(default)]
        second: Option<SecondAxis>,
    },
    /// Constant rotation about the axis through `center`.
    Rotate {
        /// Axis.
        axis: Vec3,
        /// A point of the axis (m).
        center: Vec3,
        /// Rate (rad/s, counter-clockwise about the axis).
        angular_velocity: f64,
    },
}

/// The second component of an elliptical oscillation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecondAxis {
    /// Direction.
    pub direction: Vec3,
    /// Amplitude (m).
    pub amplitude: f64,
    /// Phase lead over the first component (rad); π/2 with perpendicular directions gives
    /// an ellipse with these two axes.
    pub phase: f64,
}

/// A measurement: what is computed from the grains during and after the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum MeasurementSpec {
    /// The angle of repose of a pile's free surface (§1.2.1): grains' highest points binned
    /// along `direction` (horizontal, from the pile's back towards its toe), a line fitted
    /// over the middle of the slope.
    AngleOfRepose {
        /// Horizontal direction along which the surface falls.
        direction: Vec3,
        /// Height of the floor the pile stands on (m).
        floor: f64,
        /// Range of the coordinate along `direction` that is binned (m).
        range: (f64, f64),
        /// Number of bins; default 24.
        #[serde(default)]
        bins: Option<usize>,
        /// Fraction of the pile height between which the slope is fitted; default
        /// (0.2, 0.8).
        #[serde(default)]
        fit: Option<(f64, f64)>,
        /// The pile's faces in the range: `One` (default) falls along `direction`; `Both`
        /// is a heap with its apex inside the range, each face fitted on its own side of
        /// the highest bin and the angle their mean.
        #[serde(default)]
        flanks: Flanks,
        /// A window of time `(from, to)` (s) over which the angle is averaged, for a surface
        /// that keeps moving (a rotating drum): the answer is then the mean of the angles
        /// fitted at the output times in it, with the error of the mean from the means of
        /// its fifths and the angles' spread, least and largest; default none: the angle at
        /// the end.
        #[serde(default)]
        window: Option<(f64, f64)>,
    },
    /// A vibrated bed (§1.2.2): solid fraction per horizontal layer of the region (which
    /// moves with the driving wall), granular temperature, and the height of an intruder
    /// grain above the moving container (Brazil nut).
    Vibration {
        /// The wall whose oscillation drives the bed (for Γ = A(2πf)²/g).
        driver: String,
        /// The population of the intruder (its first grain is tracked).
        intruder: Option<String>,
        /// Region whose layers are measured (m).
        min: Vec3,
        /// Upper corner of that region (m).
        max: Vec3,
        /// Number of layers; default 10.
        #[serde(default)]
        layers: Option<usize>,
        /// Phase of the drive (degrees, 0 to 360) at which the bed is also sampled once per
        /// cycle, stroboscopically; default 0 (the container at its mean height, rising).
        #[serde(default)]
        strobe_phase_deg: Option<f64>,
    },
    /// Discharge from a hopper (§1.2.3): grains whose centre falls below `outlet_z` are
    /// counted and removed; flow rate over the steady part, clogging, and the force on the
    /// listed walls with its power spectrum.
    Discharge {
        /// Height below which grains count as discharged (m).
        outlet_z: f64,
        /// The gate wall; its removal time is when the flow starts.
        gate: String,
        /// No outflow for this long (s) at the end counts as clogged; default 0.2.
        #[serde(default)]
        clog_window: Option<f64>,
        /// Walls whose total force is recorded, by their names in the scenario (all
        /// plates of a hopper or box count).
        force_walls: Vec<String>,
        /// Interval between force samples for the spectrum (s); default 1e-3.
        #[serde(default)]
        force_sample_interval: Option<f64>,
        /// Fraction of the final discharged mass between which the rate is fitted; default
        /// (0.2, 0.8).
        #[serde(default)]
        fit: Option<(f64, f64)>,
    },
    /// Maximum angle of stability Θ_m beside the angle of repose Θ_r (§1.2.1, fig. 1.1) of
    /// a heap fed by a `Drip` population: the slope of its free surface (binned and fitted
    /// as for `AngleOfRepose`) is measured each time the heap is quiet, just before a grain
    /// is released. A drop of the slope between two such quiet states by more than
    /// `avalanche_drop_deg` is an avalanche: Θ_m is the mean slope of the quiet states just
    /// before avalanches, Θ_r the mean of those just after.
    MaxStability {
        /// Horizontal direction along which the measured flank falls (from the heap's top);
        /// with both flanks, from the near flank's foot over the apex to the far flank's.
        direction: Vec3,
        /// Height of the plate the heap stands on (m).
        floor: f64,
        /// Range of the coordinate along `direction` that is binned (m).
        range: (f64, f64),
        /// Number of bins; default 24.
        #[serde(default)]
        bins: Option<usize>,
        /// Fraction of the heap height between which the slope is fitted; default
        /// (0.2, 0.8).
        #[serde(default)]
        fit: Option<(f64, f64)>,
        /// Smallest drop of the quiet slope that counts as an avalanche (degrees); default 2.
        #[serde(default)]
        avalanche_drop_deg: Option<f64>,
        /// Quiet states before the heap has this many grains are not used (a heap too small
        /// to have a slope); default 0.
        #[serde(default)]
        min_grains: Option<usize>,
        /// The heap's flanks in the range: `One` (default) falls along `direction`; `Both`
        /// is a heap with its apex inside the range, each flank fitted on its own side of
        /// the highest bin. An avalanche runs down one flank at a time, so each flank's
        /// avalanches are found in its own sequence of quiet slopes: Θ_m and Θ_r are
        /// reported for each flank and as their mean.
        #[serde(default)]
        flanks: Flanks,
    },
    /// Transport on a vibrating conveyor (§1.2.2, fig. 1.4): the grains' mean velocity along
    /// `direction`, from their mean displacement over `window` and over `sub_windows` equal
    /// parts of it (whose spread is the uncertainty), with Γ = A(2πf)²/g of the driver.
    Transport {
        /// The oscillating wall that carries the grains.
        driver: String,
        /// Horizontal direction of transport; default the horizontal part of the driver's
        /// oscillation direction.
        #[serde(default)]
        direction: Option<Vec3>,
        /// Start and end of the steady window (s).
        window: (f64, f64),
        /// Number of equal sub-windows; default 4.
        #[serde(default)]
        sub_windows: Option<usize>,
    },
    /// Steady flow down an incline (GDR MiDi 2004; Silbert et al. 2001), periodic along
    /// and across the flow: the bed seen in the incline's frame (`incline_deg`), z normal
    /// to it, x downhill. Over the window: the profiles of velocity and solid fraction
    /// across the depth, the flow depth, the mean velocity and Froude number, the Bagnold
    /// profile fitted to the velocity, and whether the flow is steady, stopped or
    /// accelerating.
    ChuteFlow {
        /// Start and end of the window the profiles are averaged over (s).
        window: (f64, f64),
        /// Height of the base z is measured from (m); default the plane of a `RoughBase`
        /// wall, or else of the highest floor plane.
        #[serde(default)]
        base: Option<f64>,
        /// Thickness of the layers the profiles are binned in (m); default a quarter of the
        /// mean grain diameter.
        #[serde(default)]
        bin: Option<f64>,
    },
}

/// The faces of a pile an angle of repose is fitted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Flanks {
    /// One face, falling along the measurement's direction (a slumped column against a
    /// back wall).
    #[default]
    One,
    /// Two faces either side of an apex inside the range (a poured heap).
    Both,
}

/// What is written besides `summary.json` and `timeseries.csv` (always written).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Interval between ParaView frames (s); default none (no frames).
    #[serde(default)]
    pub frame_interval: Option<f64>,
    /// Whether PNG plots are drawn at the end; default true.
    #[serde(default = "yes")]
    pub plots: bool,
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            frame_interval: None,
            plots: true,
        }
    }
}

fn yes() -> bool {
    true
}
