//! Eigen-decomposition of symmetric 3×3 matrices (cyclic Jacobi), for principal axes.

use glam::{DMat3, DVec3};

/// Eigenvalues (ascending) and unit eigenvectors (the matching columns of a proper rotation,
/// determinant +1) of a symmetric matrix.
///
/// Cyclic Jacobi rotations: each zeroes one off-diagonal element; the off-diagonal mass falls
/// quadratically, to round-off within a handful of sweeps. Accurate to a few ulps of the
/// largest eigenvalue, with orthonormal eigenvectors even for repeated eigenvalues.
#[must_use]
pub fn symmetric_eigen(m: DMat3) -> (DVec3, DMat3) {
    let mut a = m.transpose().to_cols_array_2d(); // a[row][col]
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for _sweep in 0..64 {
        let off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        let diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
        if off == 0.0 || off <= 1e-36 * diag {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = if theta.abs() > 1e150 {
                0.5 / theta
            } else {
                theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt())
            };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            let tau = s / (1.0 + c);
            let h = t * a[p][q];
            a[p][p] -= h;
            a[q][q] += h;
            a[p][q] = 0.0;
            a[q][p] = 0.0;
            let r = 3 - p - q;
            let (g, hh) = (a[r][p], a[r][q]);
            a[r][p] = g - s * (hh + g * tau);
            a[p][r] = a[r][p];
            a[r][q] = hh + s * (g - hh * tau);
            a[q][r] = a[r][q];
            for row in &mut v {
                let (g, hh) = (row[p], row[q]);
                row[p] = g - s * (hh + g * tau);
                row[q] = hh + s * (g - hh * tau);
            }
        }
    }
    let mut order = [0usize, 1, 2];
    order.sort_by(|&i, &j| a[i][i].total_cmp(&a[j][j]));
    let values = DVec3::from_array(order.map(|i| a[i][i]));
    let column = |i: usize| DVec3::new(v[0][i], v[1][i], v[2][i]);
    let (x, y) = (column(order[0]), column(order[1]));
    // The third axis follows from the first two, so the frame is a proper rotation.
    let z = x.cross(y);
    (values, DMat3::from_cols(x, y, z))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconstructs_a_rotated_diagonal_matrix() {
        let rotation =
            DMat3::from_quat(glam::DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0));
        let d = DMat3::from_diagonal(DVec3::new(3.0, 1.0, 2.0));
        let m = rotation * d * rotation.transpose();
        let (values, axes) = symmetric_eigen(m);
        assert!((values - DVec3::new(1.0, 2.0, 3.0)).abs().max_element() < 1e-14);
        let back = axes * DMat3::from_diagonal(values) * axes.transpose();
        for (a, b) in back.to_cols_array().iter().zip(m.to_cols_array()) {
            assert!((a - b).abs() < 1e-14);
        }
        assert!((axes.determinant() - 1.0).abs() < 1e-14);
    }

    #[test]
    fn repeated_eigenvalues_keep_an_orthonormal_frame() {
        let (values, axes) = symmetric_eigen(DMat3::from_diagonal(DVec3::splat(2.5)));
        assert_eq!(values, DVec3::splat(2.5));
        let gram = axes.transpose() * axes;
        assert!(
            (gram - DMat3::IDENTITY)
                .to_cols_array()
                .iter()
                .all(|e| e.abs() < 1e-15)
        );
    }
}
