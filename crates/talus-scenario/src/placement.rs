//! Where grains start: lattice sites filling a region from the bottom up, random
//! orientations, and the checks that no grain starts inside a wall or another grain.
//!
//! Every random choice for grain `j` of population `p` comes from its own ChaCha stream
//! position, derived from (seed, p, j) alone: a grain poured late in a run, or after a
//! resume from a checkpoint, gets the same orientation and jitter as in any other run.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{ConvexPolyhedron, FeatureCache, Pose, Proximity, closest_features};
use talus_sim::periodic::Periodic;
use talus_sim::wall::{Wall, WallGeometry};

/// The random source of grain `grain` of population `population`.
#[must_use]
pub fn grain_rng(seed: u64, population: usize, grain: usize) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(0x1000_0000 + population as u64);
    // Each grain draws at most a few dozen words; 256 words apart keeps streams disjoint.
    rng.set_word_pos(grain as u128 * 256);
    rng
}

/// A uniformly distributed random rotation (Shoemake's method).
pub fn random_rotation<R: Rng + ?Sized>(rng: &mut R) -> DQuat {
    let (u1, u2, u3): (f64, f64, f64) = (rng.random(), rng.random(), rng.random());
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    let tau = std::f64::consts::TAU;
    DQuat::from_xyzw(
        a * (tau * u2).sin(),
        a * (tau * u2).cos(),
        b * (tau * u3).sin(),
        b * (tau * u3).cos(),
    )
    .normalize()
}

/// Largest number of lattice sites a region may have (pouring regions keep all theirs).
pub const MAX_SITES: u64 = 1_000_000;

/// Number of lattice sites of the given spacing inside `min`–`max` (saturating).
#[must_use]
pub fn lattice_site_count(min: DVec3, max: DVec3, spacing: DVec3) -> u64 {
    let extent = max - min;
    let count = |l: f64, s: f64| (l / s).floor().clamp(0.0, 1e12) as u64;
    count(extent.x, spacing.x)
        .saturating_mul(count(extent.y, spacing.y))
        .saturating_mul(count(extent.z, spacing.z))
}

/// The sites of a lattice with a given spacing along x, y and z inside a region, numbered
/// bottom layer first (then y, then x), so that the first ones fill the region from the
/// floor up. Site `k` is found from `k` alone: a process of a decomposed run places the
/// grains it keeps without listing the others.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lattice {
    /// The centre of site 0.
    origin: DVec3,
    spacing: DVec3,
    /// Sites along x and y, and layers.
    nx: usize,
    ny: usize,
    nz: usize,
}

impl Lattice {
    /// The lattice of `spacing` inside `min`–`max`.
    #[must_use]
    pub fn new(min: DVec3, max: DVec3, spacing: DVec3) -> Lattice {
        let extent = max - min;
        let count = |l: f64, s: f64| (l / s).floor().clamp(0.0, 1e12) as usize;
        let (nx, ny, nz) = (
            count(extent.x, spacing.x),
            count(extent.y, spacing.y),
            count(extent.z, spacing.z),
        );
        // Centre the lattice horizontally so that the side margins are even; the bottom
        // layer sits on the region's floor, so that grains do not start with a fall.
        let used = DVec3::new(nx as f64, ny as f64, nz as f64) * spacing;
        let margin = 0.5 * (extent - used);
        let origin = min + DVec3::new(margin.x, margin.y, 0.0) + 0.5 * spacing;
        Lattice {
            origin,
            spacing,
            nx,
            ny,
            nz,
        }
    }

    /// Number of sites (saturating).
    #[must_use]
    pub fn len(&self) -> usize {
        self.nx.saturating_mul(self.ny).saturating_mul(self.nz)
    }

    /// Whether it has no site.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The centre of site `k` (below [`Lattice::len`]).
    #[must_use]
    pub fn site(&self, k: usize) -> DVec3 {
        let (i, j, layer) = self.indices(k);
        self.origin + DVec3::new(i as f64, j as f64, layer as f64) * self.spacing
    }

    /// The spacing of the sites along x, y and z.
    #[must_use]
    pub fn spacing(&self) -> DVec3 {
        self.spacing
    }

    /// Site `k`'s place along x and y, and its layer.
    fn indices(&self, k: usize) -> (usize, usize, usize) {
        // Divided in turn: the count of a layer may not fit in a `usize`.
        (k % self.nx, (k / self.nx) % self.ny, k / self.nx / self.ny)
    }

    /// The site whose cell (the box of one spacing around its centre) holds `point`, if
    /// any.
    #[must_use]
    pub fn site_at(&self, point: DVec3) -> Option<usize> {
        let cell = ((point - self.origin) / self.spacing + 0.5).floor();
        let inside = |c: f64, n: usize| c >= 0.0 && c < n as f64;
        (inside(cell.x, self.nx) && inside(cell.y, self.ny) && inside(cell.z, self.nz)).then(|| {
            (cell.x as usize) + self.nx * ((cell.y as usize) + self.ny * (cell.z as usize))
        })
    }

    /// The sites next to site `k` along x, y and z (up to six), in increasing order.
    pub fn neighbours(&self, k: usize) -> impl Iterator<Item = usize> + use<> {
        let (i, j, layer) = self.indices(k);
        let (nx, ny, nz) = (self.nx, self.ny, self.nz);
        let layer_len = nx * ny;
        [
            (layer > 0).then(|| k - layer_len),
            (j > 0).then(|| k - nx),
            (i > 0).then(|| k - 1),
            (i + 1 < nx).then(|| k + 1),
            (j + 1 < ny).then(|| k + nx),
            (layer + 1 < nz).then(|| k + layer_len),
        ]
        .into_iter()
        .flatten()
    }
}

/// The first `limit` centres of the [`Lattice`] of `spacing` inside `min`–`max`.
#[must_use]
pub fn lattice_sites(min: DVec3, max: DVec3, spacing: DVec3, limit: usize) -> Vec<DVec3> {
    let lattice = Lattice::new(min, max, spacing);
    (0..lattice.len().min(limit))
        .map(|k| lattice.site(k))
        .collect()
}

/// The site moved by up to `jitter` of the free space `slack` (per axis, each way).
pub fn jittered<R: Rng + ?Sized>(site: DVec3, slack: DVec3, jitter: f64, rng: &mut R) -> DVec3 {
    let mut offset = || (2.0 * rng.random::<f64>() - 1.0) * jitter;
    site + DVec3::new(offset(), offset(), offset()) * slack
}

/// A grain in the world frame, for overlap checks.
#[derive(Debug, Clone, Copy)]
pub struct PlacedGrain<'a> {
    /// Body-frame polyhedron.
    pub shape: &'a ConvexPolyhedron,
    /// Body-to-world pose.
    pub pose: Pose,
    /// Largest vertex distance from the centre.
    pub radius: f64,
}

/// Whether `grain` penetrates `wall` at the wall's starting pose (a wall removed at time 0
/// does not count).
#[must_use]
pub fn overlaps_wall(grain: &PlacedGrain, wall: &Wall) -> bool {
    overlaps_wall_at(grain, wall, 0.0)
}

/// Whether `grain` penetrates `wall` where the wall is at time `t` (a wall removed by then
/// does not count).
#[must_use]
pub fn overlaps_wall_at(grain: &PlacedGrain, wall: &Wall, t: f64) -> bool {
    if !wall.is_present(t) {
        return false;
    }
    let state = wall.state(t);
    match &wall.geometry {
        WallGeometry::HalfSpace { normal } => {
            let n = state.pose.rotation * *normal;
            let origin = state.pose.position;
            if n.dot(grain.pose.position - origin) > grain.radius {
                return false;
            }
            grain
                .shape
                .vertices()
                .iter()
                .any(|v| n.dot(grain.pose.transform_point(*v) - origin) < 0.0)
        }
        WallGeometry::Body(poly) => {
            let wall_box = wall.aabb(&state.pose);
            let c = grain.pose.position;
            let r = grain.radius;
            if (c + DVec3::splat(r)).cmplt(wall_box.min).any()
                || (c - DVec3::splat(r)).cmpgt(wall_box.max).any()
            {
                return false;
            }
            penetrates(grain.shape, &grain.pose, poly, &state.pose)
        }
    }
}

/// The first of `walls` that `grain` (or one of its images across the periodic faces it
/// reaches) penetrates at the start, if any.
#[must_use]
pub fn wall_cutting<'w>(
    grain: &PlacedGrain,
    walls: &'w [Wall],
    periodic: &Periodic,
) -> Option<&'w Wall> {
    let images = with_periodic_images(std::slice::from_ref(grain), periodic);
    walls
        .iter()
        .find(|wall| images.iter().any(|(_, image)| overlaps_wall(image, wall)))
}

/// The grains brought into the periodic box, each with its images across the periodic faces
/// it comes within its radius of, as (index of the grain, grain or image): what a grain
/// meets is found among these. Without periodic axes, the grains themselves.
#[must_use]
pub fn with_periodic_images<'a>(
    grains: &[PlacedGrain<'a>],
    periodic: &Periodic,
) -> Vec<(usize, PlacedGrain<'a>)> {
    let mut out = Vec::with_capacity(grains.len());
    for (i, g) in grains.iter().enumerate() {
        let mut g = *g;
        g.pose.position = periodic.wrap(g.pose.position).0;
        for shift in image_shifts(g.pose.position, g.radius, periodic) {
            let mut image = g;
            image.pose.position += shift;
            out.push((i, image));
        }
    }
    out
}

/// The shifts of the images of a grain of bounding radius `radius` at `position` (in the
/// periodic box) that its neighbours may meet: zero first, then, per periodic axis whose
/// face it reaches, one period towards the far face, combined with the shifts before.
pub fn image_shifts(
    position: DVec3,
    radius: f64,
    periodic: &Periodic,
) -> impl Iterator<Item = DVec3> + use<> {
    let mut shifts = [DVec3::ZERO; 8];
    let mut count = 1;
    for (axis, p) in periodic.periods() {
        let x = position[axis];
        let towards = if x - radius <= p.lower {
            p.length()
        } else if x + radius >= p.upper {
            -p.length()
        } else {
            continue;
        };
        for k in 0..count {
            let mut s = shifts[k];
            s[axis] = towards;
            shifts[count + k] = s;
        }
        count *= 2;
    }
    shifts.into_iter().take(count)
}

/// Whether two polyhedra penetrate.
#[must_use]
pub fn penetrates(
    a: &ConvexPolyhedron,
    pose_a: &Pose,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
) -> bool {
    let mut cache = FeatureCache::default();
    matches!(
        closest_features(a, pose_a, b, pose_b, &mut cache),
        Proximity::Penetrating { .. }
    )
}

/// The first pair of grains (indices into `grains`) that penetrate each other, found by
/// hashing bounding spheres into cells and testing the pairs whose spheres meet exactly.
#[must_use]
pub fn first_overlapping_pair(grains: &[PlacedGrain]) -> Option<(usize, usize)> {
    let cell = grains.iter().map(|g| 2.0 * g.radius).fold(0.0, f64::max);
    if grains.len() < 2 || cell <= 0.0 || !cell.is_finite() {
        return None;
    }
    let key = |p: DVec3| {
        let c = (p / cell).floor();
        (c.x as i64, c.y as i64, c.z as i64)
    };
    let mut cells: std::collections::HashMap<(i64, i64, i64), Vec<usize>> =
        std::collections::HashMap::new();
    for (i, g) in grains.iter().enumerate() {
        cells.entry(key(g.pose.position)).or_default().push(i);
    }
    let mut found: Option<(usize, usize)> = None;
    for (i, g) in grains.iter().enumerate() {
        let (x, y, z) = key(g.pose.position);
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let key = (
                        x.saturating_add(dx),
                        y.saturating_add(dy),
                        z.saturating_add(dz),
                    );
                    let Some(list) = cells.get(&key) else {
                        continue;
                    };
                    for &j in list.iter().filter(|&&j| j > i) {
                        let h = &grains[j];
                        let reach = g.radius + h.radius;
                        if g.pose.position.distance_squared(h.pose.position) <= reach * reach
                            && penetrates(g.shape, &g.pose, h.shape, &h.pose)
                            && found.is_none_or(|f| (i, j) < f)
                        {
                            found = Some((i, j));
                        }
                    }
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use talus_geom::generate::cube;

    #[test]
    fn lattice_fills_from_the_bottom_and_stays_inside() {
        let sites = lattice_sites(
            DVec3::ZERO,
            DVec3::new(1.0, 0.5, 0.35),
            DVec3::splat(0.1),
            1000,
        );
        assert_eq!(
            lattice_site_count(DVec3::ZERO, DVec3::new(1.0, 0.5, 0.35), DVec3::splat(0.1)),
            150
        );
        assert_eq!(
            lattice_sites(DVec3::ZERO, DVec3::ONE, DVec3::splat(0.1), 7).len(),
            7
        );
        assert_eq!(sites.len(), 10 * 5 * 3);
        assert!(sites[..50].iter().all(|s| (s.z - sites[0].z).abs() < 1e-12));
        for s in &sites {
            assert!(s.cmpge(DVec3::splat(0.05 - 1e-12)).all());
            assert!(s.cmple(DVec3::new(0.95, 0.45, 0.35) + 1e-12).all());
        }
    }

    #[test]
    fn a_site_found_by_its_number_is_the_site_the_layers_list_there() {
        // The oracle: every site of the region, layer by layer, row by row, x fastest.
        let (min, max, spacing) = (
            DVec3::new(-0.3, 0.1, 0.02),
            DVec3::new(0.41, 0.37, 0.3),
            DVec3::new(0.07, 0.05, 0.06),
        );
        let lattice = Lattice::new(min, max, spacing);
        let (nx, ny, nz) = (10, 5, 4);
        assert_eq!(lattice.len(), nx * ny * nz);
        let margin = 0.5 * ((max - min) - DVec3::new(nx as f64, ny as f64, nz as f64) * spacing);
        let origin = min + DVec3::new(margin.x, margin.y, 0.0) + 0.5 * spacing;
        let mut k = 0;
        for layer in 0..nz {
            for row in 0..ny {
                for column in 0..nx {
                    let site =
                        origin + DVec3::new(column as f64, row as f64, layer as f64) * spacing;
                    assert_eq!(lattice.site(k), site, "site {k}");
                    k += 1;
                }
            }
        }
        assert!(Lattice::new(min, min + 0.5 * spacing, spacing).is_empty());
        // Each site's cell holds the site and the points near its faces, and its neighbours
        // are the sites one spacing away along one axis.
        for k in 0..lattice.len() {
            let site = lattice.site(k);
            assert_eq!(lattice.site_at(site), Some(k));
            assert_eq!(lattice.site_at(site + 0.499 * spacing), Some(k));
            assert_eq!(lattice.site_at(site - 0.499 * spacing), Some(k));
            let near: Vec<usize> = (0..lattice.len())
                .filter(|&m| {
                    let d = (lattice.site(m) - site) / spacing;
                    (d.abs().element_sum() - 1.0).abs() < 1e-9
                })
                .collect();
            assert_eq!(lattice.neighbours(k).collect::<Vec<_>>(), near, "site {k}");
        }
        assert_eq!(lattice.site_at(lattice.site(0) - spacing), None);
        let last = lattice.site(lattice.len() - 1);
        assert_eq!(
            lattice.site_at(last + DVec3::new(0.0, 0.0, spacing.z)),
            None
        );
    }

    #[test]
    fn random_rotations_are_uniform() {
        // The mean of R·e_z over uniform rotations is 0 and the mean of its z² is 1/3.
        let mut rng = grain_rng(3, 0, 0);
        let n = 20_000;
        let (mut mean, mut zz) = (DVec3::ZERO, 0.0);
        for _ in 0..n {
            let v = random_rotation(&mut rng) * DVec3::Z;
            mean += v;
            zz += v.z * v.z;
        }
        mean /= n as f64;
        assert!(mean.length() < 0.02, "{mean}");
        assert!((zz / n as f64 - 1.0 / 3.0).abs() < 0.01);
    }

    #[test]
    fn grain_streams_depend_only_on_seed_population_and_index() {
        let a: f64 = grain_rng(5, 1, 7).random();
        let _: f64 = grain_rng(5, 1, 6).random();
        let b: f64 = grain_rng(5, 1, 7).random();
        let c: f64 = grain_rng(5, 2, 7).random();
        assert_eq!(a.to_bits(), b.to_bits());
        assert_ne!(a.to_bits(), c.to_bits());
    }

    #[test]
    fn overlapping_pairs_match_a_brute_force_check() {
        let shape = cube(1.0).unwrap();
        let radius = 3f64.sqrt() / 2.0;
        let mut rng = grain_rng(11, 0, 0);
        let grains: Vec<PlacedGrain> = (0..120)
            .map(|_| PlacedGrain {
                shape: &shape,
                pose: Pose::new(
                    DVec3::new(rng.random(), rng.random(), rng.random()) * 12.0,
                    random_rotation(&mut rng),
                ),
                radius,
            })
            .collect();
        let mut brute = None;
        'outer: for i in 0..grains.len() {
            for j in i + 1..grains.len() {
                if penetrates(&shape, &grains[i].pose, &shape, &grains[j].pose) {
                    brute = Some((i, j));
                    break 'outer;
                }
            }
        }
        assert!(brute.is_some(), "the test needs an overlap");
        assert_eq!(first_overlapping_pair(&grains), brute);
        assert_eq!(first_overlapping_pair(&grains[..1]), None);
    }
}
