//! The shape library: each grain shape is stored once, in its body frame, and shared by all
//! grains of that shape.

use std::sync::Arc;

use talus_geom::glam::{DMat3, DQuat, DVec3};
use talus_geom::{BoundingEllipsoid, ConvexPolyhedron};

use crate::error::SimError;

/// Index of a shape in the world's library.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct ShapeId(pub u32);

/// A grain shape in its body frame: origin at the centre of mass, axes along the principal
/// axes of inertia (thesis ch. 3: the body frame K̄ is put at the centre of mass).
#[derive(Debug, Clone)]
pub struct Shape {
    /// A name for output.
    pub name: String,
    /// The polyhedron in the body frame.
    pub body: ConvexPolyhedron,
    /// Rotation from the body frame to the frame the shape was given in.
    pub body_to_input: DQuat,
    /// Centre of mass in the frame the shape was given in.
    pub input_center_of_mass: DVec3,
    /// Volume.
    pub volume: f64,
    /// Principal moments of inertia per unit density (ascending), the diagonal of the body
    /// frame's inertia tensor.
    pub unit_inertia: DVec3,
    /// An ellipsoid enclosing the grain, in the body frame, for O(1) bounding boxes.
    pub ellipsoid: BoundingEllipsoid,
    /// Largest distance of a vertex from the centre of mass.
    pub radius: f64,
    /// Radius of the sphere of equal volume: the grain's size in contact laws.
    pub equivalent_radius: f64,
}

impl Shape {
    /// The shape of `poly`, moved into its principal frame. `ellipsoid`, in the frame `poly`
    /// is given in, encloses the grain for the ellipsoid bounding-box method (for generated
    /// grains, the generating ellipsoid); without one, one is fitted
    /// ([`BoundingEllipsoid::around`]).
    ///
    /// # Errors
    /// [`SimError::Geometry`] if the polyhedron cannot be moved into its principal frame.
    pub fn new(
        name: &str,
        poly: &ConvexPolyhedron,
        ellipsoid: Option<BoundingEllipsoid>,
    ) -> Result<Shape, SimError> {
        let props = poly.mass_properties(1.0);
        let axes = props.principal_axes;
        let body_to_input = DQuat::from_mat3(&axes).normalize();
        let to_body = body_to_input.conjugate();
        let com = props.center_of_mass;
        let body = poly.transformed(to_body, -(to_body * com))?;
        let body_props = body.mass_properties(1.0);
        let ellipsoid = match ellipsoid {
            Some(e) => BoundingEllipsoid::enclosing(
                &body,
                to_body * (e.center - com),
                DMat3::from_quat(to_body) * e.axes,
                e.semi_axes,
            )?,
            None => BoundingEllipsoid::around(&body),
        };
        let radius = body.radius_about_origin();
        Ok(Shape {
            name: name.to_string(),
            equivalent_radius: (0.75 * body_props.volume / std::f64::consts::PI).cbrt(),
            volume: body_props.volume,
            // The body frame is principal: the tensor is diagonal up to round-off.
            unit_inertia: DVec3::new(
                body_props.inertia.x_axis.x,
                body_props.inertia.y_axis.y,
                body_props.inertia.z_axis.z,
            ),
            body,
            body_to_input,
            input_center_of_mass: com,
            ellipsoid,
            radius,
        })
    }
}

/// The shapes of a world, each shared by reference among its grains.
#[derive(Debug, Clone, Default)]
pub struct ShapeLibrary {
    shapes: Vec<Arc<Shape>>,
}

impl ShapeLibrary {
    /// Adds a shape and returns its id.
    pub fn add(&mut self, shape: Shape) -> ShapeId {
        self.shapes.push(Arc::new(shape));
        ShapeId(self.shapes.len() as u32 - 1)
    }

    /// The shape with this id.
    ///
    /// # Errors
    /// [`SimError::UnknownId`] for an id the library does not have.
    pub fn get(&self, id: ShapeId) -> Result<&Arc<Shape>, SimError> {
        self.shapes.get(id.0 as usize).ok_or(SimError::UnknownId {
            kind: "shape",
            id: id.0,
            count: self.shapes.len(),
        })
    }

    /// All shapes, by id.
    #[must_use]
    pub fn shapes(&self) -> &[Arc<Shape>] {
        &self.shapes
    }
}
