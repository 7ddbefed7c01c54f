//! Closest points between segments and points: the exact, unclamped-then-clamped solution
//! that avoids the trap of clamping both parameters independently (thesis fig. 4.10).

use glam::DVec3;

/// Parameters `(s, t)` in [0, 1] of the closest points `p0 + s (p1 − p0)` and
/// `q0 + t (q1 − q0)` of two segments (Ericson, Real-Time Collision Detection, §5.1.9).
/// Parallel and degenerate segments are handled; the result is always finite.
#[must_use]
pub fn closest_segment_segment(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> (f64, f64) {
    let d1 = p1 - p0;
    let d2 = q1 - q0;
    let r = p0 - q0;
    let a = d1.length_squared();
    let e = d2.length_squared();
    let f = d2.dot(r);
    if a == 0.0 && e == 0.0 {
        return (0.0, 0.0);
    }
    if a == 0.0 {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e == 0.0 {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    // Parallel (or nearly): any s works; take the one from the first endpoint and let the
    // clamping below find the matching t.
    let mut s = if denom > 1e-14 * a * e {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, t)
}

/// Parameter in [0, 1] of the point of segment `p0 p1` closest to `x`.
#[must_use]
pub fn closest_on_segment(p0: DVec3, p1: DVec3, x: DVec3) -> f64 {
    let d = p1 - p0;
    let len2 = d.length_squared();
    if len2 == 0.0 {
        0.0
    } else {
        ((x - p0).dot(d) / len2).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense sampling of both segments.
    fn sampled(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> f64 {
        let n = 400;
        let mut best = f64::INFINITY;
        for i in 0..=n {
            let p = p0.lerp(p1, i as f64 / n as f64);
            let t = closest_on_segment(q0, q1, p);
            best = best.min(p.distance(q0.lerp(q1, t)));
        }
        best
    }

    #[test]
    fn matches_sampling_including_the_clamping_trap() {
        let cases = [
            // Fig. 4.10: the unclamped closest points lie outside both segments.
            (
                DVec3::ZERO,
                DVec3::X,
                DVec3::new(2.0, 1.0, 0.0),
                DVec3::new(3.0, 3.0, 1.0),
            ),
            // Parallel, overlapping and disjoint.
            (
                DVec3::ZERO,
                DVec3::X,
                DVec3::new(0.5, 1.0, 0.0),
                DVec3::new(1.5, 1.0, 0.0),
            ),
            (
                DVec3::ZERO,
                DVec3::X,
                DVec3::new(2.5, 1.0, 0.0),
                DVec3::new(1.5, 1.0, 0.0),
            ),
            // Crossing.
            (
                DVec3::ZERO,
                DVec3::X,
                DVec3::new(0.5, -1.0, 0.0),
                DVec3::new(0.5, 1.0, 0.0),
            ),
            // Degenerate.
            (DVec3::ONE, DVec3::ONE, DVec3::ZERO, DVec3::Z),
        ];
        for (p0, p1, q0, q1) in cases {
            let (s, t) = closest_segment_segment(p0, p1, q0, q1);
            let d = p0.lerp(p1, s).distance(q0.lerp(q1, t));
            assert!(
                (d - sampled(p0, p1, q0, q1)).abs() < 1e-5,
                "{p0} {p1} {q0} {q1}: {d}"
            );
        }
    }
}
