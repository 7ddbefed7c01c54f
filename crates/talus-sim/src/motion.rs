//! How far a grain moved between two force evaluations, as a bound on the displacement of
//! any of its points: what lets the narrow phase pass over a pair of grains that cannot have
//! closed the gap its last query found (conservative advancement: the gap is kept in
//! [`talus_geom::FeatureCache::clearance`], and each step takes both grains' motion off it).

use talus_geom::Pose;

/// The reach of a rigid motion: how far the centre of mass moved, and the chord of the turn
/// per unit of distance from it (`2 |sin(θ/2)|` for a turn by θ), so that a point at
/// distance `r` from the centre of mass moved at most `shift + r · chord`.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Reach {
    /// Distance the centre of mass moved.
    pub shift: f64,
    /// Chord of the turn per unit radius.
    pub chord: f64,
}

impl Reach {
    /// A motion not known: it reaches everywhere.
    pub const UNKNOWN: Reach = Reach {
        shift: f64::INFINITY,
        chord: f64::INFINITY,
    };

    /// The motion from pose `from` to pose `to` (unit quaternions): a point `r` from the
    /// centre of mass moves by `Δx + (R' − R) r`, and `|(R' − R) r| = |(R' R⁻¹ − 1) R r|` is
    /// the chord of the turn `R' R⁻¹` at radius `|r|`, `2 |r| |sin(θ/2)|`, where
    /// `|sin(θ/2)|` is the length of the vector part of the quaternion `q' q*`.
    #[must_use]
    pub fn between(from: &Pose, to: &Pose) -> Reach {
        Reach {
            shift: from.position.distance(to.position),
            chord: 2.0 * (to.rotation * from.rotation.conjugate()).xyz().length(),
        }
    }

    /// One motion after the other: a bound on both together (each point's displacements
    /// add at most, and so do the chords of two turns about the same centre).
    #[must_use]
    pub fn then(self, next: Reach) -> Reach {
        Reach {
            shift: self.shift + next.shift,
            chord: self.chord + next.chord,
        }
    }

    /// The farthest any point within `radius` of the centre of mass moved.
    #[must_use]
    pub fn within(self, radius: f64) -> f64 {
        self.shift + radius * self.chord
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use talus_geom::glam::{DQuat, DVec3};

    use super::*;

    fn pose(r: &mut ChaCha8Rng) -> Pose {
        let axis = DVec3::new(r.random(), r.random(), r.random()) - 0.5;
        Pose::new(
            DVec3::new(r.random(), r.random(), r.random()) * 2.0 - 1.0,
            DQuat::from_axis_angle(axis.normalize(), r.random_range(-7.0..7.0)),
        )
    }

    /// The reach bounds the displacement of every point within `radius` of the centre of
    /// mass (points of the sphere and inside it, moved by the two poses directly), and is
    /// tight: the point at `radius` square to the turn's axis moves by the chord less at most
    /// the shift.
    #[test]
    fn the_reach_bounds_every_points_displacement_and_is_tight() {
        let mut r = ChaCha8Rng::seed_from_u64(5);
        for case in 0..2_000 {
            let from = pose(&mut r);
            let far = pose(&mut r);
            // Small motions too, as a step makes.
            let to = if case % 2 == 0 {
                far
            } else {
                Pose::new(
                    from.position + (far.position - from.position) * 1e-6,
                    from.rotation.slerp(far.rotation, 1e-6).normalize(),
                )
            };
            let radius = r.random_range(0.01..3.0);
            let reach = Reach::between(&from, &to);
            let bound = reach.within(radius);
            let moved = |point: DVec3| {
                (to.position + to.rotation * point).distance(from.position + from.rotation * point)
            };
            for _ in 0..200 {
                let dir = (DVec3::new(r.random(), r.random(), r.random()) - 0.5).normalize();
                let point = dir * radius * r.random_range(0.0..=1.0);
                assert!(
                    moved(point) <= bound * (1.0 + 1e-12),
                    "{} > {bound}",
                    moved(point)
                );
            }
            let axis = (to.rotation * from.rotation.conjugate()).xyz();
            if axis.length() > 1e-9 {
                let square = axis.normalize().any_orthonormal_vector() * radius;
                let point = from.rotation.conjugate() * square;
                assert!(moved(point) >= bound - 2.0 * reach.shift - 1e-9 * bound);
            }
        }
    }

    /// Two motions one after the other reach no farther than their reaches added.
    #[test]
    fn motions_in_turn_add_at_most() {
        let mut r = ChaCha8Rng::seed_from_u64(6);
        for _ in 0..2_000 {
            let (p, q, s) = (pose(&mut r), pose(&mut r), pose(&mut r));
            let radius = r.random_range(0.01..3.0);
            let whole = Reach::between(&p, &s).within(radius);
            let parts = Reach::between(&p, &q)
                .then(Reach::between(&q, &s))
                .within(radius);
            assert!(whole <= parts * (1.0 + 1e-12) + 1e-15);
        }
    }
}
