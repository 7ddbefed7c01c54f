//! The world: grains as hecs entities with small components, the shape library and the
//! materials they refer to, the walls, the simulation parameters, and what the step keeps
//! from one step to the next. The step itself is in `step.rs`, the kinds of grain (what
//! the critical time step rests on) in `kind.rs`.
//!
//! Walls are bodies of infinite mass that take part in the broad and narrow phase; their
//! pose at the end of each step comes from their motion law.
//!
//! Grains are addressed by [`GrainId`], their identity in the run, given in the order they
//! are added and valid until the grain is removed. Per-slot arrays (boxes, loads) live
//! beside the ECS, so every stage writes to a fixed place whatever order hecs visits the
//! entities in: results do not depend on it. A grain's slot is its id on a single process
//! and its place among the grains a process holds in a decomposed run (`numbering.rs`).

use std::time::Duration;

use hecs::Entity;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{Aabb, ConvexPolyhedron, Pose};

use crate::broad::{BroadPhase, BroadPhaseKind, PairEvents, ProxyPair};
use crate::contact::{Contact, ContactForce, History};
use crate::distribute::Distribution;
use crate::distribute::decompose::Decomposition;
use crate::error::{SimError, finite, positive};
use crate::force::{ForceModel, MAX_HISTORY};
use crate::integrate::{
    GearState, Inertia, Integrator, IntegratorKind, Kinematics, Load, VerletState,
};
use crate::joined_pairs::{JoinedPairs, merged};
use crate::kind::{GrainKind, Limit, critical, grain_kind};
use crate::laws::{ContactLaws, NO_MATERIAL};
use crate::load_sums::LoadSums;
use crate::material::{Material, MaterialId};
use crate::motion::Reach;
use crate::numbering::GrainNumbering;
use crate::periodic::{ImageCount, Periodic};
use crate::renumber::RenumberScratch;
use crate::shape::{Shape, ShapeId, ShapeLibrary};
use crate::step::BodyState;
use crate::wall::{Wall, WallGeometry, WallId, WallState};
use crate::wall_sums::WallSums;
use crate::workers::Workers;

/// A grain, by its identity in the run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct GrainId(pub u32);

/// Component: the grain's slot (its place in the per-slot arrays; see `numbering.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot(pub(crate) u32);

/// Component: the initial velocities of a grain whose integrator state is not set up yet
/// (that needs the forces at its first step).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Fresh {
    pub(crate) velocity: DVec3,
    pub(crate) angular_velocity: DVec3,
}

/// How bounding boxes are computed (the thesis' BBOX switch, app. D).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum BoundingMethod {
    /// Extreme coordinates of the vertices: tightest, O(K).
    #[default]
    MinMax,
    /// The box of an enclosing ellipsoid: O(1), larger.
    Ellipsoid,
}

/// Steps between renumberings of the grains by default: in a flow, grains move about a
/// diameter past their neighbours in some thousand steps, and a renumbering (a sort and the
/// renaming of the broad phase's proxies) costs a few steps' broad phase.
pub const DEFAULT_RENUMBER_EVERY: u64 = 1000;

/// Parameters of a simulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimParams {
    /// Time step.
    pub dt: f64,
    /// Acceleration of gravity.
    pub gravity: DVec3,
    /// The integrator.
    pub integrator: IntegratorKind,
    /// How bounding boxes are computed.
    pub bounding: BoundingMethod,
    /// Every bounding box is grown by this much on each side, so that pairs are known
    /// before their grains touch.
    pub margin: f64,
    /// The broad-phase method.
    pub broad_phase: BroadPhaseKind,
    /// Worker threads for the contact stage; 0 lets the runtime choose. Results do not
    /// depend on it.
    pub threads: usize,
    /// Every this many steps the grains are renumbered along a space-filling curve, so that
    /// neighbours sit near each other in memory ([`World::renumber`]); 0 never.
    pub renumber_every: u64,
    /// The periodic axes (none by default).
    pub periodic: Periodic,
}

impl Default for SimParams {
    fn default() -> Self {
        SimParams {
            dt: 1e-4,
            gravity: DVec3::new(0.0, 0.0, -9.81),
            integrator: IntegratorKind::Verlet,
            bounding: BoundingMethod::MinMax,
            margin: 0.0,
            broad_phase: BroadPhaseKind::SweepAndPrune,
            threads: 0,
            renumber_every: DEFAULT_RENUMBER_EVERY,
            periodic: Periodic::NONE,
        }
    }
}

impl SimParams {
    fn validate(&self) -> Result<(), SimError> {
        positive("dt", self.dt)?;
        finite("gravity", self.gravity)?;
        self.periodic.validate()?;
        if !(self.margin.is_finite() && self.margin >= 0.0) {
            return Err(SimError::InvalidParameter {
                name: "margin",
                value: self.margin.to_string(),
                allowed: "zero or a positive finite length",
            });
        }
        Ok(())
    }
}

/// A grain to add: shape, material, and initial state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrainDesc {
    /// Shape.
    pub shape: ShapeId,
    /// Material.
    pub material: MaterialId,
    /// Position of the centre of mass.
    pub position: DVec3,
    /// Orientation of the shape as it was given to [`World::add_shape`] (a unit
    /// quaternion; identity places it as given).
    pub orientation: DQuat,
    /// Velocity of the centre of mass.
    pub velocity: DVec3,
    /// Angular velocity, world frame.
    pub angular_velocity: DVec3,
}

impl GrainDesc {
    /// A grain at rest at `position`, in the orientation the shape was given in.
    #[must_use]
    pub fn at_rest(shape: ShapeId, material: MaterialId, position: DVec3) -> Self {
        GrainDesc {
            shape,
            material,
            position,
            orientation: DQuat::IDENTITY,
            velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
        }
    }
}

/// The components a grain's state is read from.
type GrainComponents<'a> = (
    &'a Pose,
    &'a Inertia,
    &'a ShapeId,
    &'a MaterialId,
    Option<&'a GearState>,
    Option<&'a VerletState>,
    Option<&'a Fresh>,
);

/// The state of one grain, as read back.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GrainState {
    /// The grain.
    pub id: GrainId,
    /// Position of the centre of mass and rotation of the body (principal) frame.
    pub pose: Pose,
    /// Orientation of the shape as it was given to [`World::add_shape`].
    pub orientation: DQuat,
    /// Velocity of the centre of mass.
    pub velocity: DVec3,
    /// Angular velocity, world frame.
    pub angular_velocity: DVec3,
    /// Mass and principal moments of inertia.
    pub inertia: Inertia,
    /// Shape.
    pub shape: ShapeId,
    /// Material.
    pub material: MaterialId,
    /// Periods the grain has been moved by along each axis to keep it in the periodic box
    /// (zero along a non-periodic axis).
    pub image: ImageCount,
    /// Where the grain's centre of mass would be without the periodic wrapping: the position
    /// to measure displacements from (equal to `pose.position` without periodic axes).
    pub unwrapped_position: DVec3,
}

/// Wall-clock time spent in each stage of the last step, and pair counts.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct StepStats {
    /// Renumbering of the grains along a space-filling curve (zero in most steps).
    #[serde(default)]
    pub renumber: Duration,
    /// Predictor (and set-up of new grains).
    pub predict: Duration,
    /// Bounding boxes.
    pub bounds: Duration,
    /// Broad phase. With several worker threads it runs beside the narrow phase (on
    /// another thread), and its time is then also part of [`StepStats::narrow`]'s wall time.
    pub broad: Duration,
    /// Force evaluation.
    pub forces: Duration,
    /// Corrector.
    pub correct: Duration,
    /// Periodic wrap of the grains that left the box.
    #[serde(default)]
    pub wrap: Duration,
    /// Overlapping box pairs after the step.
    pub pairs: usize,
    /// Pairs that started overlapping in the step.
    pub pairs_started: usize,
    /// Pairs that stopped overlapping in the step.
    pub pairs_ended: usize,
    /// Narrow phase and contact forces: the stage's wall time (less the broad phase's when
    /// that ran first, on the same thread).
    pub narrow: Duration,
    /// Pairs of bodies in contact (penetrating).
    pub contacts: usize,
    /// Mean number of contacts per grain (a grain–wall contact counts once, for the grain).
    pub coordination: f64,
    /// Largest overlap depth (volume over area) relative to the smaller grain's diameter.
    pub max_overlap_ratio: f64,
    /// Grains stepped (in a decomposed run, by all processes).
    #[serde(default)]
    pub grains: usize,
}

/// What a force field is told about a grain at the point of a step where forces are
/// evaluated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldInput {
    /// The grain.
    pub id: GrainId,
    /// Pose and velocities.
    pub kinematics: Kinematics,
    /// Mass and principal moments.
    pub inertia: Inertia,
    /// Simulated time at the end of the step being taken.
    pub time: f64,
}

/// What a broad-phase proxy stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Body {
    /// A grain: its slot and its id.
    Grain(u32, u32),
    /// A wall: its id.
    Wall(u32),
}

/// A world of grains.
pub struct World {
    pub(crate) ecs: hecs::World,
    pub(crate) shapes: ShapeLibrary,
    pub(crate) materials: Vec<Material>,
    pub(crate) params: SimParams,
    /// The entity of each slot (`None`: a free slot, or a removed grain's).
    pub(crate) slots: Vec<Option<Entity>>,
    /// The grains' ids and slots.
    pub(crate) numbering: GrainNumbering,
    /// Time at the last change of dt, and steps taken since: the time is their
    /// combination, not a running sum, so it carries one rounding, not one per step.
    pub(crate) time_base: f64,
    pub(crate) steps_since_base: u64,
    pub(crate) steps: u64,
    pub(crate) broad: Box<dyn BroadPhase>,
    /// Broad-phase proxies: what each stands for, and its box.
    pub(crate) proxies: Vec<Body>,
    pub(crate) boxes: Vec<Option<Aabb>>,
    /// Proxy of each grain slot.
    pub(crate) grain_proxy: Vec<u32>,
    pub(crate) events: PairEvents,
    pub(crate) walls: Vec<Wall>,
    pub(crate) wall_proxy: Vec<u32>,
    /// Force on each wall and torque about its pose's origin in the last step.
    pub(crate) wall_loads: Vec<Load>,
    /// The contact laws, per pair of materials.
    pub(crate) laws: ContactLaws,
    pub(crate) contacts: Vec<Contact>,
    /// The contact list's second buffer, for merging the broad phase's events.
    pub(crate) spare_contacts: Vec<Contact>,
    pub(crate) contact_forces: Vec<Option<ContactForce>>,
    /// The pairs joined since the list was last merged; the list's ended pairs are marked
    /// in it until then ([`crate::joined_pairs`]).
    pub(crate) joined: JoinedPairs,
    /// The force list's second buffer.
    pub(crate) spare_forces: Vec<Option<ContactForce>>,
    /// Scratch: each proxy as the contact stage sees it, and each wall's state at the end
    /// of the step; kept to reuse their memory.
    pub(crate) bodies: Vec<BodyState>,
    /// The query that gathers the grains' shapes and materials into `bodies`, prepared once
    /// (a query per grain costs more than its lookup; a fresh view allocates).
    pub(crate) solid_query: hecs::PreparedQuery<(&'static ShapeId, &'static MaterialId)>,
    /// The query that bounds the grains (a ghost's box comes with it), prepared once.
    pub(crate) box_query: hecs::PreparedQuery<(
        &'static Pose,
        &'static ShapeId,
        Option<&'static crate::distribute::decompose::Ghost>,
    )>,
    pub(crate) wall_states: Vec<WallState>,
    /// The threads of the parallel stages.
    pub(crate) workers: Workers,
    /// Mass, bounding radius and equivalent radius of every distinct kind of grain (shape
    /// and material) added so far: the basis of the critical time step.
    pub(crate) extremes: Vec<GrainKind>,
    /// Loads applied for the next step, by slot.
    pub(crate) pending: Vec<Load>,
    /// Periods each grain has been moved by to keep it in the periodic box, by slot.
    pub(crate) images: Vec<ImageCount>,
    /// Scratch: kinematics and total loads of the current step, by slot.
    pub(crate) kinematics: Vec<Option<(Kinematics, Inertia)>>,
    /// Scratch: how far each grain moved since the last step's evaluation, by slot
    /// ([`crate::motion`]; unknown, infinite, until it is stepped or sent here).
    pub(crate) motion: Vec<Reach>,
    /// Scratch: how far any point of each wall moved since the last step's evaluation (a
    /// half-space: infinite), by wall.
    pub(crate) wall_motion: Vec<f64>,
    pub(crate) loads: Vec<Load>,
    pub(crate) stats: StepStats,
    /// Buffers of [`World::renumber`].
    pub(crate) renumbering: RenumberScratch,
    /// The terms of the sums of contact loads per grain, and their buffers: of the lower
    /// half of the slots, and of the upper half when the halves are summed at once.
    pub(crate) load_sums: LoadSums,
    pub(crate) upper_load_sums: LoadSums,
    /// The exact sums of the loads on each wall from the pairs evaluated here.
    pub(crate) wall_sums: WallSums,
    /// This world's part in a distributed run, if it is one ([`World::distribute`]).
    pub(crate) distribution: Option<Distribution>,
    /// Its part in a decomposed run ([`crate::distribute::decompose`]), if any.
    pub(crate) decomposition: Option<Decomposition>,
}

impl World {
    /// An empty world.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] for a non-positive time step, non-finite gravity or a
    /// negative margin.
    pub fn new(params: SimParams) -> Result<World, SimError> {
        params.validate()?;
        let workers = build_workers(params.threads)?;
        Ok(World {
            ecs: hecs::World::new(),
            shapes: ShapeLibrary::default(),
            materials: Vec::new(),
            broad: params.broad_phase.build(params.periodic),
            params,
            slots: Vec::new(),
            numbering: GrainNumbering::default(),
            time_base: 0.0,
            steps_since_base: 0,
            steps: 0,
            proxies: Vec::new(),
            boxes: Vec::new(),
            grain_proxy: Vec::new(),
            events: PairEvents::default(),
            walls: Vec::new(),
            wall_proxy: Vec::new(),
            wall_loads: Vec::new(),
            laws: ContactLaws::default(),
            contacts: Vec::new(),
            spare_contacts: Vec::new(),
            contact_forces: Vec::new(),
            joined: JoinedPairs::default(),
            spare_forces: Vec::new(),
            bodies: Vec::new(),
            solid_query: hecs::PreparedQuery::new(),
            box_query: hecs::PreparedQuery::new(),
            wall_states: Vec::new(),
            workers,
            extremes: Vec::new(),
            pending: Vec::new(),
            images: Vec::new(),
            kinematics: Vec::new(),
            motion: Vec::new(),
            wall_motion: Vec::new(),
            loads: Vec::new(),
            stats: StepStats::default(),
            renumbering: RenumberScratch::default(),
            load_sums: LoadSums::default(),
            upper_load_sums: LoadSums::default(),
            wall_sums: WallSums::default(),
            distribution: None,
            decomposition: None,
        })
    }

    /// The parameters.
    #[must_use]
    pub fn params(&self) -> &SimParams {
        &self.params
    }

    /// Changes the time step; the Gear state of every grain is rescaled to it (its scaled
    /// derivatives hold powers of dt).
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] unless `dt` is positive and finite.
    pub fn set_dt(&mut self, dt: f64) -> Result<(), SimError> {
        positive("dt", dt)?;
        self.check_time_step(dt, self.laws.all(), &self.extremes)?;
        let ratio = dt / self.params.dt;
        // A world holds the states of one scheme only; the other query finds nothing.
        rescale::<GearState>(&mut self.ecs, ratio);
        rescale::<VerletState>(&mut self.ecs, ratio);
        self.time_base = self.time();
        self.steps_since_base = 0;
        self.params.dt = dt;
        Ok(())
    }

    /// The number of worker threads the contact stage runs on (the machine's choice when
    /// the parameters ask for 0).
    #[must_use]
    pub fn thread_count(&self) -> usize {
        self.workers.threads()
    }

    /// Changes the number of worker threads of the contact stage (0: the runtime's choice).
    /// Results do not depend on it.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] if the threads cannot be started.
    pub fn set_threads(&mut self, threads: usize) -> Result<(), SimError> {
        self.workers = build_workers(threads)?;
        self.params.threads = threads;
        Ok(())
    }

    /// Changes gravity.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] for non-finite gravity.
    pub fn set_gravity(&mut self, gravity: DVec3) -> Result<(), SimError> {
        self.params.gravity = finite("gravity", gravity)?;
        Ok(())
    }

    /// Adds a shape given as a polyhedron in any frame; it is stored in its principal frame.
    /// `ellipsoid` (in the polyhedron's frame) encloses it for the ellipsoid bounding-box
    /// method; without one, one is fitted.
    ///
    /// # Errors
    /// [`SimError::Geometry`] if the shape cannot be moved to its principal frame.
    pub fn add_shape(
        &mut self,
        name: &str,
        poly: &ConvexPolyhedron,
        ellipsoid: Option<talus_geom::BoundingEllipsoid>,
    ) -> Result<ShapeId, SimError> {
        Ok(self.shapes.add(Shape::new(name, poly, ellipsoid)?))
    }

    /// The shape library.
    #[must_use]
    pub fn shapes(&self) -> &ShapeLibrary {
        &self.shapes
    }

    /// Adds a material.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] when the world already has 65,535 materials.
    pub fn add_material(&mut self, material: Material) -> Result<MaterialId, SimError> {
        // The last id marks a wall without a material.
        if self.materials.len() >= usize::from(NO_MATERIAL) {
            return Err(SimError::InvalidParameter {
                name: "material count",
                value: self.materials.len().to_string(),
                allowed: "at most 65535 materials",
            });
        }
        self.materials.push(material);
        self.laws.index(self.materials.len());
        Ok(MaterialId(self.materials.len() as u16 - 1))
    }

    /// The materials, by id.
    #[must_use]
    pub fn materials(&self) -> &[Material] {
        &self.materials
    }

    /// Adds a grain; its integrator state is set up from the forces at its first step.
    /// In a decomposed run whose regions are cut ([`World::cut_before_adding`], or a run
    /// already stepped) only the process whose region holds the grain keeps it; every
    /// process returns its id, the same on all.
    ///
    /// # Errors
    /// [`SimError::UnknownId`] for a shape or material the world does not have,
    /// [`SimError::InvalidParameter`] for non-finite values or an orientation that is not
    /// a unit quaternion.
    pub fn add_grain(&mut self, desc: GrainDesc) -> Result<GrainId, SimError> {
        let shape = self.shapes.get(desc.shape)?.clone();
        let material = self.material(desc.material)?;
        finite("position", desc.position)?;
        finite("velocity", desc.velocity)?;
        finite("angular velocity", desc.angular_velocity)?;
        if !(desc.orientation.is_finite() && (desc.orientation.length() - 1.0).abs() < 1e-6) {
            return Err(SimError::InvalidParameter {
                name: "orientation",
                value: format!("{:?}", desc.orientation),
                allowed: "a unit quaternion",
            });
        }
        if self.numbering.id_count() == u32::MAX {
            return Err(SimError::InvalidParameter {
                name: "grain count",
                value: self.numbering.id_count().to_string(),
                allowed: "fewer than 2^32 grains",
            });
        }
        let inertia = Inertia {
            mass: material.density * shape.volume,
            principal: shape.unit_inertia * material.density,
        };
        let kind = grain_kind(&shape, material.density);
        let known = self.extremes.iter().any(|k| k.same(&kind));
        if !known {
            self.check_time_step(self.params.dt, self.laws.all(), &[kind])?;
            self.extremes.push(kind);
        }
        self.params.periodic.check_fits(
            &grain_name(&shape),
            self.grain_width(&shape, self.box_margin()),
        )?;
        // A grain placed outside the periodic box is placed at its image inside; its
        // unwrapped position is where it was put.
        let (position, image) = self.params.periodic.wrap(desc.position);
        let pose = Pose::new(
            position,
            (desc.orientation.normalize() * shape.body_to_input).normalize(),
        );
        let id = self
            .numbering
            .new_id()
            .expect("fewer than 2^32 ids, checked above");
        if !self.keeps_added(position) {
            // Another process of a decomposed run keeps it; here it has its id alone.
            return Ok(GrainId(id));
        }
        let slot = self.place_slot(id, image);
        let entity = self.ecs.spawn((
            Slot(slot),
            pose,
            inertia,
            desc.shape,
            desc.material,
            Fresh {
                velocity: desc.velocity,
                angular_velocity: desc.angular_velocity,
            },
        ));
        self.slots[slot as usize] = Some(entity);
        if let Some(d) = self.decomposition.as_mut() {
            d.hold_added(slot);
        }
        Ok(GrainId(id))
    }

    /// A slot for grain `id`, which this world does not hold (a new one, or a free one
    /// taken again in a decomposed run), with its per-slot entries cleared, its image count
    /// `image` and its proxy standing for it; its entity is for the caller to set.
    pub(crate) fn place_slot(&mut self, id: u32, image: ImageCount) -> u32 {
        let placed = self.numbering.place(id);
        let slot = placed.slot;
        if placed.is_new {
            self.slots.push(None);
            self.grain_proxy.push(self.proxies.len() as u32);
            self.proxies.push(Body::Grain(slot, id));
            self.boxes.push(None);
            self.pending.push(Load::default());
            self.images.push(image);
            self.kinematics.push(None);
            self.motion.push(Reach::UNKNOWN);
            self.loads.push(Load::default());
        } else {
            let s = slot as usize;
            let proxy = self.grain_proxy[s] as usize;
            self.proxies[proxy] = Body::Grain(slot, id);
            self.boxes[proxy] = None;
            self.pending[s] = Load::default();
            self.images[s] = image;
            self.kinematics[s] = None;
            self.motion[s] = Reach::UNKNOWN;
            self.loads[s] = Load::default();
        }
        slot
    }

    /// The slot of grain `id`, when this world holds it.
    pub(crate) fn slot_of(&self, id: GrainId) -> Option<usize> {
        self.numbering.slot(id.0)
    }

    /// The id of the grain in `slot`.
    pub(crate) fn id_of(&self, slot: usize) -> GrainId {
        GrainId(self.numbering.id(slot))
    }

    /// Removes a grain; its id is not reused.
    ///
    /// # Errors
    /// [`SimError::UnknownId`] for a grain the world does not have.
    pub fn remove_grain(&mut self, id: GrainId) -> Result<(), SimError> {
        let entity = self.entity(id)?;
        // The entity exists: `entity` checked the slot.
        let _ = self.ecs.despawn(entity);
        let slot = self.slot_of(id).expect("entity() found its slot");
        self.slots[slot] = None;
        self.numbering.release(slot);
        // Its box stays until the next step's bounds stage drops it: `boxes` holds what the
        // broad phase last saw, which a checkpoint needs to rebuild the broad phase.
        self.kinematics[slot] = None;
        self.pending[slot] = Load::default();
        Ok(())
    }

    /// Adds a wall.
    ///
    /// # Errors
    /// With periodic axes: [`SimError::InvalidParameter`] for a half-space whose normal has
    /// a component along a periodic axis, [`SimError::TooLargeForPeriod`] for a body as
    /// wide as half a period.
    pub fn add_wall(&mut self, wall: Wall) -> Result<WallId, SimError> {
        self.check_wall_fits(&wall, self.box_margin())?;
        self.walls.push(wall);
        self.wall_proxy.push(self.proxies.len() as u32);
        self.proxies.push(Body::Wall(self.walls.len() as u32 - 1));
        self.boxes.push(None);
        self.wall_loads.push(Load::default());
        Ok(WallId(self.walls.len() as u32 - 1))
    }

    /// How far every bounding box is grown on each side: the margin, or half the range of
    /// a law that reaches across a gap.
    pub(crate) fn box_margin(&self) -> f64 {
        self.params.margin.max(0.5 * self.laws.range())
    }

    /// The widest a grain of `shape` can be across its bounding box grown by `margin`, in
    /// any orientation.
    fn grain_width(&self, shape: &Shape, margin: f64) -> f64 {
        let half = match self.params.bounding {
            // Every vertex lies within `radius` of the centre of mass.
            BoundingMethod::MinMax => shape.radius,
            BoundingMethod::Ellipsoid => shape.ellipsoid.semi_axes.max_element(),
        };
        2.0 * (half + margin)
    }

    /// Checks that `wall` fits the periodic axes with boxes grown by `margin`: a half-space
    /// parallel to them, a body narrower than half of each period in any pose.
    fn check_wall_fits(&self, wall: &Wall, margin: f64) -> Result<(), SimError> {
        let periodic = &self.params.periodic;
        match &wall.geometry {
            WallGeometry::HalfSpace { normal } => {
                periodic.check_plane(wall.start.rotation * *normal)
            }
            WallGeometry::Body(poly) => {
                // Every vertex lies within this distance of their mean, whatever the pose.
                let vertices = poly.vertices();
                let mean = vertices.iter().copied().sum::<DVec3>() / vertices.len().max(1) as f64;
                let reach = vertices
                    .iter()
                    .map(|v| (*v - mean).length())
                    .fold(0.0, f64::max);
                periodic.check_fits(&format!("wall '{}'", wall.name), 2.0 * (reach + margin))
            }
        }
    }

    /// Checks that every grain and wall fits the periodic axes with boxes grown by
    /// `margin` (a law reaching across a gap grows them).
    fn check_all_fit(&self, margin: f64) -> Result<(), SimError> {
        if self.params.periodic.is_none() {
            return Ok(());
        }
        let mut checked: Vec<ShapeId> = Vec::new();
        for shape_id in self.ecs.query::<&ShapeId>().iter() {
            if checked.contains(shape_id) {
                continue;
            }
            checked.push(*shape_id);
            let shape = self.shapes.get(*shape_id)?;
            self.params
                .periodic
                .check_fits(&grain_name(shape), self.grain_width(shape, margin))?;
        }
        self.walls
            .iter()
            .try_for_each(|w| self.check_wall_fits(w, margin))
    }

    /// The walls, by id.
    #[must_use]
    pub fn walls(&self) -> &[Wall] {
        &self.walls
    }

    /// Force on each wall (and torque about its pose's origin) in the last step.
    #[must_use]
    pub fn wall_loads(&self) -> &[Load] {
        &self.wall_loads
    }

    /// Sets the contact force model: the law of every pair of materials that has none of its
    /// own ([`World::set_pair_force_model`]).
    ///
    /// # Errors
    /// [`SimError::TimeStepTooLarge`] if the time step exceeds the model's critical time
    /// step for the grains already in the world; [`SimError::InvalidParameter`] if it keeps
    /// more history than [`MAX_HISTORY`] or another than the pairs' laws.
    pub fn set_force_model(&mut self, model: Box<dyn ForceModel>) -> Result<(), SimError> {
        self.check_time_step(self.params.dt, [model.as_ref()], &self.extremes)?;
        self.check_all_fit(self.box_margin().max(0.5 * model.range()))?;
        let len = model.history_len();
        if len > MAX_HISTORY {
            return Err(SimError::InvalidParameter {
                name: "force model history",
                value: format!("{len} values per contact for model '{}'", model.name()),
                allowed: "at most 8 values per contact (force::MAX_HISTORY)",
            });
        }
        if let Some((_, other)) = self.laws.pairs.first() {
            same_history(model.as_ref(), other.as_ref())?;
        }
        self.merge_contacts();
        for c in &mut self.contacts {
            c.history = History::zeros(len);
            c.touching = false;
        }
        self.laws.default = Some(model);
        Ok(())
    }

    /// Sets the law between grains (or walls) of materials `a` and `b`, in either order,
    /// in place of the default one; every contact starts afresh.
    ///
    /// # Errors
    /// [`SimError::UnknownId`] for a material the world does not have;
    /// [`SimError::InvalidParameter`] before a default law is set, or for a law that keeps
    /// another number of history values than it; [`SimError::TimeStepTooLarge`] if the time
    /// step exceeds the law's critical time step for the grains already in the world.
    pub fn set_pair_force_model(
        &mut self,
        a: MaterialId,
        b: MaterialId,
        model: Box<dyn ForceModel>,
    ) -> Result<(), SimError> {
        for m in [a, b] {
            self.material(m)?;
        }
        let Some(default) = self.laws.default.as_deref() else {
            return Err(SimError::InvalidParameter {
                name: "pair force model",
                value: format!("'{}' set before a default force model", model.name()),
                allowed: "a pair's law after World::set_force_model",
            });
        };
        same_history(model.as_ref(), default)?;
        self.check_time_step(self.params.dt, [model.as_ref()], &self.extremes)?;
        self.check_all_fit(self.box_margin().max(0.5 * model.range()))?;
        self.merge_contacts();
        for c in &mut self.contacts {
            c.touching = false;
        }
        self.laws.set_pair(a, b, model);
        Ok(())
    }

    /// The contact force model, if one is set: the law of the pairs of materials that have
    /// none of their own.
    #[must_use]
    pub fn force_model(&self) -> Option<&dyn ForceModel> {
        self.laws.default.as_deref()
    }

    /// The law between materials `a` and `b`: the pair's own, or the default.
    #[must_use]
    pub fn force_model_between(&self, a: MaterialId, b: MaterialId) -> Option<&dyn ForceModel> {
        self.laws.law(a.0, b.0)
    }

    /// The largest time step the force models allow for the grains in the world (infinite
    /// without a model or grains).
    #[must_use]
    pub fn critical_time_step(&self) -> f64 {
        critical(self.laws.all(), &self.extremes, self.params.integrator).0
    }

    /// The largest time step the force model allows for grains of `shape` and `material`:
    /// the one place the critical step of a kind of grain is computed (infinite without a
    /// model).
    ///
    /// # Errors
    /// [`SimError::UnknownId`] for a shape or material the world does not have.
    pub fn critical_time_step_of(
        &self,
        shape: ShapeId,
        material: MaterialId,
    ) -> Result<f64, SimError> {
        Ok(self.critical_limit_of(shape, material)?.0)
    }

    /// [`World::critical_time_step_of`] and what sets it (`None` without a model).
    ///
    /// # Errors
    /// [`SimError::UnknownId`] for a shape or material the world does not have.
    pub fn critical_limit_of(
        &self,
        shape: ShapeId,
        material: MaterialId,
    ) -> Result<(f64, Option<Limit>), SimError> {
        let shape = self.shapes.get(shape)?;
        let density = self.material(material)?.density;
        let (dt, law) = critical(
            self.laws.all(),
            &[grain_kind(shape, density)],
            self.params.integrator,
        );
        Ok((dt, law.map(|(_, limit)| limit)))
    }

    pub(crate) fn check_time_step<'a>(
        &self,
        dt: f64,
        laws: impl IntoIterator<Item = &'a dyn ForceModel>,
        extremes: &[GrainKind],
    ) -> Result<(), SimError> {
        let (limit, law) = critical(laws, extremes, self.params.integrator);
        if dt > limit {
            return Err(SimError::TimeStepTooLarge {
                dt,
                critical: limit,
                model: law.map_or(String::new(), |(m, _)| m.name().to_string()),
                set_by: law.map_or("", |(_, l)| l.describe()),
            });
        }
        Ok(())
    }

    /// The material `id`.
    fn material(&self, id: MaterialId) -> Result<&Material, SimError> {
        self.materials
            .get(usize::from(id.0))
            .ok_or(SimError::UnknownId {
                kind: "material",
                id: u32::from(id.0),
                count: self.materials.len(),
            })
    }

    /// Adds a force and a torque (about the centre of mass, world frame) acting on a grain
    /// during the next step only.
    ///
    /// # Errors
    /// [`SimError::UnknownId`] for a grain the world does not have,
    /// [`SimError::InvalidParameter`] for non-finite values.
    pub fn apply_load(&mut self, id: GrainId, force: DVec3, torque: DVec3) -> Result<(), SimError> {
        self.entity(id)?;
        finite("force", force)?;
        finite("torque", torque)?;
        let slot = self.slot_of(id).expect("entity() found its slot");
        self.pending[slot] += Load { force, torque };
        Ok(())
    }

    pub(crate) fn entity(&self, id: GrainId) -> Result<Entity, SimError> {
        self.slot_of(id)
            .and_then(|slot| self.slots[slot])
            .ok_or(SimError::UnknownId {
                kind: "grain",
                id: id.0,
                count: self.grain_count(),
            })
    }

    /// Number of grains (in a decomposed run, of the grains this process owns).
    #[must_use]
    pub fn grain_count(&self) -> usize {
        (0..self.slots.len()).filter(|&i| self.owns_slot(i)).count()
    }

    /// The length of this process's per-grain arrays (entities, proxies, boxes, loads): on
    /// a single process, the grains ever added; in a decomposed run, at most the grains the
    /// process held at once (owned and ghosts) with those that left it in that step, whose
    /// slots are taken again once the broad phase has seen them empty.
    #[must_use]
    pub fn grain_slots(&self) -> usize {
        self.slots.len()
    }

    /// The grains, in the order of their ids (in a decomposed run, those this process
    /// owns).
    pub fn grains(&self) -> impl Iterator<Item = GrainId> + '_ {
        self.owned_slots().into_iter().map(|s| self.id_of(s))
    }

    /// The slots of the grains [`World::grains`] lists, in the order of their ids.
    fn owned_slots(&self) -> Vec<usize> {
        let mut slots: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.owns_slot(i))
            .collect();
        // Slots follow ids but in a decomposed run, where arriving grains take free slots.
        if self.decomposition.is_some() {
            slots.sort_unstable_by_key(|&s| self.numbering.id(s));
        }
        slots
    }

    /// The state of a grain.
    ///
    /// # Errors
    /// [`SimError::UnknownId`] for a grain the world does not have.
    pub fn grain(&self, id: GrainId) -> Result<GrainState, SimError> {
        let entity = self.entity(id)?;
        let mut query = self.ecs.query_one::<GrainComponents>(entity);
        let components = query.get().map_err(|_| SimError::UnknownId {
            kind: "grain",
            id: id.0,
            count: self.grain_count(),
        })?;
        self.state_of(
            self.slot_of(id).expect("entity() found its slot"),
            components,
        )
    }

    /// The state of every grain, in the order of [`World::grains`]: what [`World::grain`]
    /// gives for each, with the components looked up through one prepared view instead of
    /// a query per grain.
    pub fn grain_states(&self) -> impl Iterator<Item = GrainState> + '_ {
        let view = self.ecs.view::<GrainComponents>();
        self.owned_slots().into_iter().filter_map(move |slot| {
            let components = view.get(self.slots[slot]?)?;
            self.state_of(slot, components).ok()
        })
    }

    /// Every grain's id, position (its centre of mass) and mass, in the order of
    /// [`World::grains`]: what a probe that looks at where the grains are needs at every
    /// step, without the velocities and orientations [`World::grain_states`] works out.
    pub fn grain_positions(&self) -> impl Iterator<Item = (GrainId, DVec3, f64)> + '_ {
        let view = self.ecs.view::<(&Pose, &Inertia)>();
        self.owned_slots().into_iter().filter_map(move |slot| {
            let (pose, inertia) = view.get(self.slots[slot]?)?;
            Some((self.id_of(slot), pose.position, inertia.mass))
        })
    }

    /// The state of the grain in `slot` from its components.
    fn state_of(
        &self,
        slot: usize,
        (pose, inertia, shape, material, gear, verlet, fresh): <GrainComponents as hecs::Query>::Item<'_>,
    ) -> Result<GrainState, SimError> {
        let dt = self.params.dt;
        let (velocity, angular_velocity) = match (gear, verlet, fresh) {
            (Some(g), _, _) => g.velocities(pose, inertia, dt),
            (_, Some(v), _) => v.velocities(pose, inertia, dt),
            (_, _, Some(f)) => (f.velocity, f.angular_velocity),
            _ => (DVec3::ZERO, DVec3::ZERO),
        };
        let body_to_input = self.shapes.get(*shape)?.body_to_input;
        let image = self.images[slot];
        Ok(GrainState {
            image,
            unwrapped_position: self.params.periodic.unwrap(pose.position, image),
            id: self.id_of(slot),
            pose: *pose,
            orientation: (pose.rotation * body_to_input.conjugate()).normalize(),
            velocity,
            angular_velocity,
            inertia: *inertia,
            shape: *shape,
            material: *material,
        })
    }

    /// The world-frame vertices of a grain.
    ///
    /// # Errors
    /// [`SimError::UnknownId`] for a grain the world does not have.
    pub fn grain_vertices(&self, id: GrainId) -> Result<Vec<DVec3>, SimError> {
        let state = self.grain(id)?;
        let shape = self.shapes.get(state.shape)?;
        Ok(shape
            .body
            .vertices()
            .iter()
            .map(|&v| state.pose.transform_point(v))
            .collect())
    }

    /// Simulated time.
    #[must_use]
    pub fn time(&self) -> f64 {
        self.time_base + self.steps_since_base as f64 * self.params.dt
    }

    /// Steps taken.
    #[must_use]
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The pairs of grains whose (margin-grown) bounding boxes overlap after the last step,
    /// sorted.
    #[must_use]
    pub fn box_pairs(&self) -> Vec<(GrainId, GrainId)> {
        let mut pairs: Vec<(GrainId, GrainId)> = self
            .broad
            .pairs()
            .into_iter()
            .filter_map(|ProxyPair { a, b }| {
                match (self.proxies[a as usize], self.proxies[b as usize]) {
                    (Body::Grain(_, x), Body::Grain(_, y)) => {
                        Some((GrainId(x.min(y)), GrainId(x.max(y))))
                    }
                    _ => None,
                }
            })
            .collect();
        pairs.sort_unstable();
        pairs
    }

    /// The bounding box of a grain after the last step (`None` before its first step).
    ///
    /// # Errors
    /// [`SimError::UnknownId`] for a grain the world does not have.
    pub fn grain_box(&self, id: GrainId) -> Result<Option<Aabb>, SimError> {
        self.entity(id)?;
        let slot = self.slot_of(id).expect("entity() found its slot");
        Ok(self.boxes[self.grain_proxy[slot] as usize])
    }

    /// The contacts of the last step: the two grains (or a grain and a wall), the force
    /// on the second and where it acts.
    pub fn contacts(&self) -> impl Iterator<Item = ContactReport> + '_ {
        self.listed_contacts().filter_map(|(c, f)| {
            // Each pair is reported in the order it was first met, whatever its proxies'
            // numbers are now.
            let f = if c.flipped { (*f)?.reversed() } else { (*f)? };
            let (a, b) = c.oriented();
            Some(ContactReport {
                a: self.body_ref(a),
                b: self.body_ref(b),
                force_on_b: f.force_on_b,
                torque_on_b: f.torque_on_b,
                point: self.params.periodic.wrap(f.point).0,
            })
        })
    }

    /// The listed pairs with their forces in pair order, as one merged list would hold
    /// them: the list's live pairs and the joined ones ([`crate::joined_pairs`]).
    pub(crate) fn listed_contacts(
        &self,
    ) -> impl Iterator<Item = (&Contact, &Option<ContactForce>)> + '_ {
        merged(
            (&self.contacts, &self.contact_forces),
            (&self.joined.contacts, &self.joined.forces),
        )
    }

    /// Merges the joined pairs into the contact list and drops its ended ones: the list is
    /// then every pair, sorted, for what reads or rewrites it whole.
    pub(crate) fn merge_contacts(&mut self) {
        self.contact_forces.resize(self.contacts.len(), None);
        self.joined.merge_into(
            (&mut self.contacts, &mut self.contact_forces),
            (&mut self.spare_contacts, &mut self.spare_forces),
        );
    }

    fn body_ref(&self, proxy: u32) -> BodyRef {
        match self.proxies[proxy as usize] {
            Body::Grain(_, id) => BodyRef::Grain(GrainId(id)),
            Body::Wall(w) => BodyRef::Wall(WallId(w)),
        }
    }

    /// Timings and counts of the last step.
    #[must_use]
    pub fn stats(&self) -> &StepStats {
        &self.stats
    }

    /// The underlying ECS, for reading components.
    #[must_use]
    pub fn ecs(&self) -> &hecs::World {
        &self.ecs
    }

    /// Memory per grain in bytes: its components and its entries in the per-slot arrays.
    /// Shapes are shared and not counted.
    #[must_use]
    pub fn bytes_per_grain(&self) -> usize {
        Self::grain_bytes(self.params.integrator)
    }

    /// [`World::bytes_per_grain`] of a world with `integrator`, known before the world is
    /// built (for estimates of a run's memory).
    #[must_use]
    pub fn grain_bytes(integrator: IntegratorKind) -> usize {
        let components = size_of::<Slot>()
            + size_of::<Pose>()
            + size_of::<Inertia>()
            + size_of::<ShapeId>()
            + size_of::<MaterialId>()
            + integrator.state_bytes();
        // The numbering: the id of each slot and an entry of the map from ids to slots.
        let per_slot = size_of::<Option<Entity>>()
            + size_of::<u32>()
            + 2 * size_of::<u32>()
            + size_of::<Option<Aabb>>()
            + size_of::<Body>()
            + size_of::<u32>()
            + size_of::<Load>() * 2
            + size_of::<Option<(Kinematics, Inertia)>>();
        components + per_slot
    }
}

/// A body taking part in a contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BodyRef {
    /// A grain.
    Grain(GrainId),
    /// A wall.
    Wall(WallId),
}

/// One contact of the last step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactReport {
    /// The first body.
    pub a: BodyRef,
    /// The second body.
    pub b: BodyRef,
    /// The force on `b` (`a` feels the opposite), world frame.
    pub force_on_b: DVec3,
    /// The couple on `b` besides the moment of the force (`a` feels the opposite).
    pub torque_on_b: DVec3,
    /// Where it acts: the overlap's centroid (in the periodic box, with periodic axes).
    pub point: DVec3,
}

/// A grain of `shape`, for messages.
fn grain_name(shape: &Shape) -> String {
    format!("a grain of shape '{}'", shape.name)
}

/// Rescales the integrator states `I` of every grain to a time step `ratio` times the old.
fn rescale<I: Integrator>(ecs: &mut hecs::World, ratio: f64) {
    for state in ecs.query_mut::<&mut I>() {
        state.rescale(ratio);
    }
}

/// The worker threads of the parallel stages.
fn build_workers(threads: usize) -> Result<Workers, SimError> {
    Workers::new(threads).map_err(|e| SimError::InvalidParameter {
        name: "threads",
        value: format!("{threads} ({e})"),
        allowed: "a thread count the system can start",
    })
}

/// Whether two laws keep the same history per contact, as the laws of one world must: a
/// contact's history is sized once, whatever pair of materials it joins.
fn same_history(law: &dyn ForceModel, other: &dyn ForceModel) -> Result<(), SimError> {
    if law.history_len() == other.history_len() {
        return Ok(());
    }
    Err(SimError::InvalidParameter {
        name: "force model history",
        value: format!(
            "'{}' keeps {} values per contact, '{}' {}",
            law.name(),
            law.history_len(),
            other.name(),
            other.history_len()
        ),
        allowed: "laws of one world that keep the same history (the same parts)",
    })
}
