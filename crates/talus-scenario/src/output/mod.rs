//! Output of a run: time series as CSV, grain and wall snapshots for ParaView (`.vtu` files
//! gathered by a `.pvd` collection), PNG plots and self-contained HTML reports.
//!
//! Every file is written atomically ([`write_atomic`]): a file watched while the run goes on,
//! or left by a run killed half-way, is always complete.
//!
//! `DejaVuSans.ttf`, embedded for the plot text, is DejaVu Sans 2.37 under the Bitstream Vera
//! Fonts licence (DejaVu changes in the public domain): free to use, embed and redistribute.

pub mod atomic;
pub mod csv;
pub mod plot;
pub mod pvd;
pub mod report;
pub mod run_dir;
pub mod vtk;

pub use atomic::{write_atomic, write_atomic_with};
pub use csv::{Column, RowLengthError, TimeSeries};
pub use plot::{Plot, PlotError, Series, SeriesStyle, render_png};
pub use pvd::{PvdEntry, append_pvd, write_pvd};
pub use report::{Cell, Figure, ReportPage};
pub use run_dir::RunDir;
pub use vtk::{GrainFrame, WallFrame, write_grains_pvtu, write_grains_vtu, write_walls_vtu};
