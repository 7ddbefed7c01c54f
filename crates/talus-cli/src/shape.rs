//! `talus shape`: build one grain and report its counts and mass properties.

use std::io::{self, Write};

use clap::{ArgGroup, Args};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use talus_geom::ConvexPolyhedron;
use talus_geom::generate::{self, MAX_GRAIN_VERTICES, PlatonicSolid};

use crate::output::ShapeReport;
use crate::parse::{self, SemiAxes, Shortest};

/// Arguments of `talus shape`.
#[derive(Debug, Args)]
#[command(group(
    ArgGroup::new("kind")
        .required(true)
        .multiple(false)
        .args(["ellipsoid", "solid"])
))]
#[command(after_help = "Examples:\n  \
    talus shape --ellipsoid 1,0.8,0.6 --vertices 18 --seed 7\n  \
    talus shape --solid dodecahedron --size 1 --density 2500 --json")]
pub struct ShapeArgs {
    /// A random grain with its vertices on the ellipsoid x²/A² + y²/B² + z²/C² = 1; A, B and
    /// C are the semi-axes, three comma-separated positive numbers (e.g. 1,0.8,0.6).
    /// Needs --vertices.
    #[arg(
        long,
        value_name = "A,B,C",
        value_parser = parse::semi_axes,
        allow_hyphen_values = true,
        requires = "vertices"
    )]
    pub ellipsoid: Option<SemiAxes>,

    /// Number of vertices of the ellipsoid grain, a whole number from 4 to 10000. Only with
    /// --ellipsoid.
    #[arg(
        long,
        value_name = "K",
        value_parser = parse::vertex_count,
        allow_hyphen_values = true,
        requires = "ellipsoid",
        conflicts_with = "solid"
    )]
    pub vertices: Option<usize>,

    /// Seed of the random generator (ChaCha8) of the ellipsoid grain; the same seed gives
    /// the same grain. [default: 0] Only with --ellipsoid.
    #[arg(
        long,
        value_name = "S",
        value_parser = parse::seed,
        allow_hyphen_values = true,
        requires = "ellipsoid",
        conflicts_with = "solid"
    )]
    pub seed: Option<u64>,

    /// A platonic solid: tetrahedron, cube, octahedron, dodecahedron or icosahedron.
    /// Needs --size.
    #[arg(
        long,
        value_name = "NAME",
        value_parser = parse::solid,
        requires = "size"
    )]
    pub solid: Option<PlatonicSolid>,

    /// Edge length of the platonic solid, a positive number. Only with --solid.
    #[arg(
        long,
        value_name = "L",
        value_parser = parse::positive_finite,
        allow_hyphen_values = true,
        requires = "solid",
        conflicts_with = "ellipsoid"
    )]
    pub size: Option<f64>,

    /// Density of the grain (mass per volume), a positive number.
    #[arg(
        long,
        value_name = "RHO",
        default_value_t = 1.0,
        value_parser = parse::positive_finite,
        allow_hyphen_values = true
    )]
    pub density: f64,

    /// Print one JSON object instead of the readable summary. Keys: shape, density,
    /// vertices, edges, faces, volume, mass, center_of_mass [x,y,z], inertia (3×3, rows,
    /// about the centre of mass), principal_moments (ascending), principal_axes (3×3,
    /// rows; its columns are the axes, in the order of principal_moments).
    #[arg(long)]
    pub json: bool,
}

/// Which grain the arguments describe, after clap has checked which flags go together.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ShapeSpec {
    /// A random grain with `vertices` vertices on the ellipsoid with `semi_axes`.
    Ellipsoid {
        /// The ellipsoid's semi-axes.
        semi_axes: SemiAxes,
        /// Number of vertices.
        vertices: usize,
        /// Seed of the random generator.
        seed: u64,
    },
    /// A platonic solid with edge length `edge`.
    Platonic {
        /// Which solid.
        solid: PlatonicSolid,
        /// Its edge length.
        edge: f64,
    },
}

impl ShapeSpec {
    /// The grain of the arguments; clap's groups and `requires` guarantee one of the two
    /// complete combinations, but a violation is still reported as an error, not a panic.
    fn from_args(args: &ShapeArgs) -> Result<Self, String> {
        match (args.ellipsoid, args.vertices, args.solid, args.size) {
            (Some(semi_axes), Some(vertices), None, None) => Ok(ShapeSpec::Ellipsoid {
                semi_axes,
                vertices,
                seed: args.seed.unwrap_or(0),
            }),
            (None, None, Some(solid), Some(edge)) if args.seed.is_none() => {
                Ok(ShapeSpec::Platonic { solid, edge })
            }
            _ => Err(format!(
                "give either --ellipsoid A,B,C --vertices K [--seed S] or --solid NAME --size L \
                 (K from 4 to {MAX_GRAIN_VERTICES})"
            )),
        }
    }

    /// A one-line description, e.g. `ellipsoid 1,0.8,0.6 K=18 seed=0` or `cube edge 1`.
    fn description(&self) -> String {
        match self {
            ShapeSpec::Ellipsoid {
                semi_axes,
                vertices,
                seed,
            } => format!("ellipsoid {semi_axes} K={vertices} seed={seed}"),
            ShapeSpec::Platonic { solid, edge } => format!("{solid} edge {}", Shortest(*edge)),
        }
    }

    /// Builds the grain.
    fn build(&self) -> Result<ConvexPolyhedron, talus_geom::GeomError> {
        match *self {
            ShapeSpec::Ellipsoid {
                semi_axes,
                vertices,
                seed,
            } => {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                generate::ellipsoid_grain(vertices, semi_axes.0, &mut rng)
            }
            ShapeSpec::Platonic { solid, edge } => generate::platonic(solid, edge),
        }
    }
}

/// Runs `talus shape`: builds the grain and writes the report to standard output.
///
/// # Errors
/// A message for standard error when the grain cannot be built (the library's
/// [`talus_geom::GeomError`]), its mass properties overflow, or the output cannot be written.
pub fn run(args: &ShapeArgs) -> Result<(), String> {
    let spec = ShapeSpec::from_args(args)?;
    let poly = spec.build().map_err(|e| e.to_string())?;
    let report = ShapeReport::new(spec.description(), args.density, &poly)?;
    let text = if args.json {
        report.to_json()
    } else {
        report.to_text()
    };
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("cannot write the output: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions() {
        let spec = ShapeSpec::Ellipsoid {
            semi_axes: SemiAxes(talus_geom::glam::DVec3::new(1.0, 0.8, 0.6)),
            vertices: 18,
            seed: 0,
        };
        assert_eq!(spec.description(), "ellipsoid 1,0.8,0.6 K=18 seed=0");
        let spec = ShapeSpec::Platonic {
            solid: PlatonicSolid::Cube,
            edge: 1.0,
        };
        assert_eq!(spec.description(), "cube edge 1");
    }
}
