//! Measurements taken from talus runs: pure functions over plain slices that turn
//! recorded grain states and time series into the numbers the thesis' experiments
//! (§1.2) ask for.
//!
//! | file | measures |
//! |---|---|
//! | [`fit`] | ordinary least-squares line fit ([`LineFit`]), shared by the slope-type measurements |
//! | [`repose`] | §1.2.1: free-surface profile of a slumped pile and its angle of repose Θ_r |
//! | [`vibration`] | §1.2.2: shaking strength Γ, solid fraction per layer, granular temperature, rise of a large grain (Brazil nut) |
//! | [`flow`] | §1.2.3: steady hopper discharge rate, the Beverloo prediction, clog detection |
//! | [`beverloo_fit`] | §1.2.3: Beverloo's law fitted to rates over orifice widths (prefactor, k, n) |
//! | [`spectrum`] | §1.2.3, fig. 1.5: power spectrum of the wall force and its 1/f^α exponent |
//! | [`stability`] | §1.2.1, fig. 1.1: avalanches of a fed heap, maximum angle of stability Θ_m and angle of repose Θ_r |
//! | [`chute`] | steady flow down a rough incline: profiles, flow depth, Bagnold profile, Pouliquen's flow rule |
//! | [`transport`] | §1.2.2, fig. 1.4: transport velocity on a vibrating conveyor, Γ of an elliptical drive |
//!
//! None of these functions panics: degenerate input (empty slices, a single point,
//! NaN, an empty range) gives `None`, an empty result or a documented value.

pub mod beverloo_fit;
pub mod chute;
pub mod fit;
pub mod flow;
pub mod repose;
pub mod spectrum;
pub mod stability;
pub mod transport;
pub mod vibration;

pub use beverloo_fit::{BeverlooFit, fit_beverloo};
pub use fit::{LineFit, fit_line};
pub use flow::{Orifice, beverloo_rate, clogged, steady_rate};
pub use repose::{ReposeFit, angle_of_repose, surface_profile};
pub use spectrum::{PowerLaw, power_law_band, power_spectrum, spectral_exponent, welch_spectrum};
pub use vibration::{gamma, granular_temperature, layer_packing, rise_in_diameters};

/// Whether `x` is a finite number greater than zero; false for NaN. Used for the
/// lengths, intervals and ranges every measurement must reject before dividing.
pub(crate) fn finite_positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}
