//! The sites of a lattice that a fill poured at a point reaches without crossing a wall: a
//! paint-bucket fill of the region, so that grains can start inside a funnel, a drum or
//! around an obstacle, and never outside them.
//!
//! Each site owns a cell, the box of one lattice spacing around it; the cells tile the
//! region. A cell that a wall present at the start cuts is closed; the fill spreads from
//! the cell that holds the starting point to the open cells next to it (along x, y and z),
//! and on. Two open cells next to each other share a face, so no wall lies between them:
//! the fill never passes through a wall, however thin, and never reaches a pocket that
//! walls close off, such as the space under a funnel or outside a drum.

use talus_geom::Pose;
use talus_geom::generate::rectangular_box;
use talus_geom::glam::DVec3;
use talus_sim::periodic::Periodic;
use talus_sim::wall::Wall;

use crate::placement::{Lattice, MAX_SITES, PlacedGrain, wall_cutting};

/// Why a region could not be filled from a point.
#[derive(Debug, Clone, PartialEq)]
pub enum FillError {
    /// The region has more sites than a fill may visit.
    TooManySites(usize),
    /// The starting point lies outside the region's lattice.
    Outside,
    /// A wall cuts the cell that holds the starting point.
    InWall,
}

impl std::fmt::Display for FillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FillError::TooManySites(n) => write!(f, "the region has {n} lattice sites to fill"),
            FillError::Outside => write!(f, "the point lies outside the region's lattice"),
            FillError::InWall => write!(f, "a wall cuts the lattice cell that holds the point"),
        }
    }
}

/// The sites of `lattice` whose cells the fill from `from` reaches (see the module
/// documentation), in increasing order: from the bottom layer up. Walls are taken where
/// they are at the start; a removed wall (a gate removed at time 0) does not count; with
/// periodic axes a cell is closed when any of its images is cut.
///
/// # Errors
/// [`FillError`] when the region has more than [`MAX_SITES`] sites, or `from` is outside it
/// or inside a wall.
pub fn reachable_sites(
    lattice: &Lattice,
    from: DVec3,
    walls: &[Wall],
    periodic: &Periodic,
) -> Result<Vec<usize>, FillError> {
    let sites = lattice.len();
    if sites as u64 > MAX_SITES {
        return Err(FillError::TooManySites(sites));
    }
    let start = lattice.site_at(from).ok_or(FillError::Outside)?;
    let cell = rectangular_box(lattice.spacing())
        .expect("a lattice's spacing is positive in x, y and z, so its cell is a box");
    let open = |k: usize| {
        let box_at = PlacedGrain {
            shape: &cell,
            pose: Pose::from_translation(lattice.site(k)),
            radius: 0.5 * lattice.spacing().length(),
        };
        wall_cutting(&box_at, walls, periodic).is_none()
    };
    if !open(start) {
        return Err(FillError::InWall);
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Cell {
        Unseen,
        Reached,
        Closed,
    }
    let mut cells = vec![Cell::Unseen; sites];
    cells[start] = Cell::Reached;
    let mut front = vec![start];
    while let Some(k) = front.pop() {
        for m in lattice.neighbours(k) {
            if cells[m] != Cell::Unseen {
                continue;
            }
            if open(m) {
                cells[m] = Cell::Reached;
                front.push(m);
            } else {
                cells[m] = Cell::Closed;
            }
        }
    }
    Ok((0..sites).filter(|&k| cells[k] == Cell::Reached).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{HopperKind, MotionSpec, WallShape, WallSpec};
    use crate::walls::build_walls;

    fn walls(shapes: Vec<WallShape>) -> Vec<Wall> {
        shapes
            .into_iter()
            .enumerate()
            .flat_map(|(i, shape)| {
                let spec = WallSpec {
                    name: format!("w{i}"),
                    shape,
                    motion: MotionSpec::Fixed,
                    removed_at: None,
                    material: None,
                };
                build_walls(&spec, 0).unwrap()
            })
            .collect()
    }

    /// A pyramid funnel (orifice 0.2 at z = 0, plates at 60° rising 0.5, 0.05 thick) closed
    /// by a gate below the orifice, inside a bin 0.7 across: the funnel's top (0.78 across)
    /// is wider than the bin, so the space under the plates is closed off. Half-width of
    /// the inside at height `z`.
    fn funnel() -> (Vec<Wall>, impl Fn(f64) -> f64) {
        let bin = 0.35;
        let plane = |point: Vec3, normal: Vec3| WallShape::Plane { point, normal };
        let walls = walls(vec![
            WallShape::Hopper {
                center: (0.0, 0.0, 0.0),
                orifice: 0.2,
                wall_angle_deg: 60.0,
                height: 0.5,
                depth: 0.0,
                thickness: 0.05,
                kind: HopperKind::Pyramid,
            },
            WallShape::Slab {
                center: (0.0, 0.0, -0.025),
                size: (0.4, 0.4, 0.05),
                rotation: None,
            },
            plane((-bin, 0.0, 0.0), (1.0, 0.0, 0.0)),
            plane((bin, 0.0, 0.0), (-1.0, 0.0, 0.0)),
            plane((0.0, -bin, 0.0), (0.0, 1.0, 0.0)),
            plane((0.0, bin, 0.0), (0.0, -1.0, 0.0)),
        ]);
        let half_width = move |z: f64| (0.1 + z / 60f64.to_radians().tan()).min(bin);
        (walls, half_width)
    }

    type Vec3 = crate::schema::Vec3;

    #[test]
    fn a_fill_from_inside_a_funnel_reaches_every_cell_inside_and_none_outside() {
        let (walls, half_width) = funnel();
        // The region reaches far below the funnel and past the bin on every side.
        let lattice = Lattice::new(
            DVec3::new(-0.4, -0.4, -0.4),
            DVec3::new(0.4, 0.4, 0.9),
            DVec3::new(0.03, 0.025, 0.035),
        );
        let periodic = Periodic::default();
        let reached =
            reachable_sites(&lattice, DVec3::new(0.0, 0.0, 0.3), &walls, &periodic).unwrap();
        assert!(
            reached.windows(2).all(|w| w[0] < w[1]),
            "in increasing order"
        );
        // The inside is convex: {z ≥ 0, |x| and |y| ≤ half_width(z)}.
        let inside =
            |p: DVec3| p.z >= 0.0 && p.x.abs() <= half_width(p.z) && p.y.abs() <= half_width(p.z);
        let half = 0.5 * lattice.spacing();
        // The corners of site `k`'s cell grown by a micrometre: a cell that only touches a
        // wall may count as cut by the rounding of its corners.
        let corners = |k: usize| {
            let half = half + 1e-6;
            let c = lattice.site(k);
            (0..8).map(move |i| {
                let s = |bit: usize| if i & bit == 0 { -1.0 } else { 1.0 };
                c + DVec3::new(s(1) * half.x, s(2) * half.y, s(4) * half.z)
            })
        };
        for &k in &reached {
            assert!(
                inside(lattice.site(k)),
                "site {k} at {} is outside",
                lattice.site(k)
            );
        }
        // Every cell wholly inside, clear of the plates by the inside's definition, is
        // reached.
        let wholly_inside: Vec<usize> = (0..lattice.len())
            .filter(|&k| corners(k).all(inside))
            .collect();
        assert!(wholly_inside.len() > 500, "{}", wholly_inside.len());
        for k in &wholly_inside {
            assert!(
                reached.binary_search(k).is_ok(),
                "site {k} inside, not reached"
            );
        }
        // Cells no wall cuts lie outside as well (under the plates, below the gate): the
        // fill did not reach them because walls close them off.
        let cell = rectangular_box(lattice.spacing()).unwrap();
        let open_outside = (0..lattice.len())
            .filter(|&k| !inside(lattice.site(k)))
            .filter(|&k| {
                let b = PlacedGrain {
                    shape: &cell,
                    pose: Pose::from_translation(lattice.site(k)),
                    radius: half.length(),
                };
                wall_cutting(&b, &walls, &periodic).is_none()
            })
            .count();
        assert!(open_outside > 100, "{open_outside}");
    }

    #[test]
    fn a_fill_from_a_point_outside_the_region_or_in_a_wall_is_refused() {
        let (walls, _) = funnel();
        let periodic = Periodic::default();
        let spacing = DVec3::splat(0.03);
        let lattice = Lattice::new(DVec3::splat(-0.4), DVec3::new(0.4, 0.4, 0.9), spacing);
        let from = |p: DVec3| reachable_sites(&lattice, p, &walls, &periodic);
        assert_eq!(from(DVec3::new(0.0, 0.0, 1.0)), Err(FillError::Outside));
        assert_eq!(from(DVec3::new(0.0, 0.0, -0.025)), Err(FillError::InWall));
        // From under the funnel, the fill reaches the pocket there and nothing of the
        // inside.
        let under = from(DVec3::new(0.3, 0.0, -0.3)).unwrap();
        let inside = from(DVec3::new(0.0, 0.0, 0.3)).unwrap();
        assert!(!under.is_empty() && !inside.is_empty());
        assert!(under.iter().all(|k| inside.binary_search(k).is_err()));
        let fine = Lattice::new(DVec3::splat(-0.4), DVec3::splat(0.4), DVec3::splat(0.005));
        assert!(fine.len() as u64 > MAX_SITES);
        assert_eq!(
            reachable_sites(&fine, DVec3::ZERO, &walls, &periodic),
            Err(FillError::TooManySites(fine.len()))
        );
    }
}
