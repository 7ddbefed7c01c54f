//! Sums of floating-point numbers that do not depend on their order: the exact sum, rounded
//! once.
//!
//! A decomposed run measures its grains where they are, each process over its own, and
//! puts the processes' results together. A plain `f64` sum would then depend on how the
//! grains were split (addition rounds, so it is not associative), and a run on three
//! processes would report other last bits than the same run on one. [`ExactSum`] keeps the
//! sum of everything added so far exactly, as a short list of non-overlapping `f64`
//! "partials" (Shewchuk, *Adaptive precision floating-point arithmetic and fast robust
//! geometric predicates*, Discrete Comput. Geom. 18, 1997, §2: the two-sum of two floats
//! is exact; the `msum` of Python's `math.fsum` keeps the partials), and [`ExactSum::value`]
//! rounds that exact sum to the nearest `f64` (ties to even). Two sums merged give the exact
//! sum of everything added to either: the value is the same, to the bit, for any order of
//! the terms and any grouping of them into merged sums.
//!
//! Not finite terms are kept apart: a NaN, or infinities of both signs, make the value NaN,
//! infinities of one sign make it that infinity. So that no partial can overflow whatever
//! the order, a term beyond [`HUGE`] in magnitude counts as an infinity of its sign: sums of
//! up to 2⁶³ terms below it stay below `f64::MAX`.

use serde::{Deserialize, Serialize};

/// Terms larger in magnitude than this (2⁹⁶⁰, about 10²⁸⁹) count as infinite.
pub const HUGE: f64 = f64::from_bits((960 + 1023) << 52);

/// Whether `x` is a NaN or counts as an infinity (beyond [`HUGE`]): then taken into
/// `special`, the sum of such terms (a NaN makes it NaN, infinities of both signs too).
#[inline]
pub(crate) fn took_special(special: &mut f64, x: f64) -> bool {
    if x.is_nan() {
        *special = f64::NAN;
        true
    } else if x.abs() > HUGE {
        *special += f64::INFINITY.copysign(x);
        true
    } else {
        false
    }
}

/// The exact sum of the `f64` terms added (see the module documentation).
/// Two sums are equal when their exact sums are (whatever the partials that hold them) and
/// their non-finite terms sum alike.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExactSum {
    /// Non-overlapping, non-zero partials in order of increasing magnitude, whose exact sum
    /// is that of the finite terms.
    partials: Vec<f64>,
    /// The sum of the non-finite (and huge) terms, 0 when there were none: `±∞` or NaN,
    /// whatever their order.
    special: f64,
}

impl ExactSum {
    /// The empty sum.
    #[must_use]
    pub fn new() -> ExactSum {
        ExactSum::default()
    }

    /// Empties the sum, keeping its memory.
    pub fn clear(&mut self) {
        self.partials.clear();
        self.special = 0.0;
    }

    /// Adds the term `x`.
    #[inline]
    pub fn add(&mut self, x: f64) {
        if took_special(&mut self.special, x) {
            return;
        }
        let mut x = x;
        let mut kept = 0;
        for k in 0..self.partials.len() {
            let y = self.partials[k];
            // Knuth's two-sum, hi + lo == x + y exactly, whichever is larger (no branch on
            // the magnitudes, which the terms' signs and sizes would make unpredictable).
            let hi = x + y;
            let y_part = hi - x;
            let lo = (x - (hi - y_part)) + (y - y_part);
            if lo != 0.0 {
                self.partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        self.partials.truncate(kept);
        if x != 0.0 {
            self.partials.push(x);
        }
    }

    /// Adds every term of `other` (its exact sum).
    pub fn merge(&mut self, other: &ExactSum) {
        for &p in &other.partials {
            self.add(p);
        }
        if other.special != 0.0 {
            self.special += other.special;
        }
    }

    /// The exact sum rounded to the nearest `f64`, ties to even; `+0.0` for an exact zero.
    #[must_use]
    pub fn value(&self) -> f64 {
        if self.special != 0.0 {
            return self.special;
        }
        let p = &self.partials;
        let Some(mut n) = p.len().checked_sub(1) else {
            return 0.0;
        };
        // From the largest partial down, until a sum rounds (the partials below cannot
        // change it, but for a tie: below).
        let mut hi = p[n];
        let mut lo = 0.0;
        while n > 0 {
            n -= 1;
            let (x, y) = (hi, p[n]);
            hi = x + y;
            lo = y - (hi - x);
            if lo != 0.0 {
                break;
            }
        }
        // `hi + lo` rounded to `hi` as a tie to even, while the partials still below push
        // the exact sum past the tie, in `lo`'s direction: then it rounds the other way.
        if n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0)) {
            let y = lo * 2.0;
            let x = hi + y;
            if y == x - hi {
                hi = x;
            }
        }
        hi
    }

    /// Whether nothing but zeros was added.
    #[must_use]
    pub fn is_zero(&self) -> bool {
        self.partials.is_empty() && self.special == 0.0
    }
}

impl PartialEq for ExactSum {
    fn eq(&self, other: &ExactSum) -> bool {
        let special = |s: f64| if s.is_nan() { None } else { Some(s) };
        if special(self.special) != special(other.special) {
            return false;
        }
        let mut difference = self.clone();
        for &p in &other.partials {
            difference.add(-p);
        }
        difference.partials.is_empty()
    }
}

impl FromIterator<f64> for ExactSum {
    fn from_iter<I: IntoIterator<Item = f64>>(terms: I) -> ExactSum {
        let mut sum = ExactSum::new();
        terms.into_iter().for_each(|x| sum.add(x));
        sum
    }
}

impl Extend<f64> for ExactSum {
    fn extend<I: IntoIterator<Item = f64>>(&mut self, terms: I) {
        terms.into_iter().for_each(|x| self.add(x));
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Fixed point of the oracle: every test term is a multiple of 2⁻⁶⁰.
    const ONE: f64 = (1u64 << 60) as f64;

    /// A random term, a multiple of 2⁻⁶⁰ below 2⁴⁰ in magnitude with up to 53 significant
    /// bits, of any magnitude in between (so that sums cancel and round in every way).
    fn term(rng: &mut ChaCha8Rng) -> f64 {
        let bits: u32 = rng.random_range(1..=53);
        let mantissa = rng.random::<u64>() >> (64 - bits);
        let shift = rng.random_range(0..=100 - bits);
        let k = (mantissa as i128) << shift; // below 2^100
        let x = k as f64 / ONE;
        if rng.random_bool(0.5) { -x } else { x }
    }

    /// The oracle: the exact sum in 128-bit fixed point, rounded once by the integer's
    /// conversion (round to nearest, ties to even), scaled by a power of two (exact).
    fn oracle(terms: &[f64]) -> f64 {
        let exact: i128 = terms.iter().map(|&x| (x * ONE) as i128).sum();
        exact as f64 / ONE
    }

    #[test]
    fn the_sum_is_the_exact_sum_rounded_once() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for case in 0..2000 {
            let n = rng.random_range(0..60);
            let terms: Vec<f64> = (0..n).map(|_| term(&mut rng)).collect();
            let sum: ExactSum = terms.iter().copied().collect();
            assert_eq!(
                sum.value().to_bits(),
                oracle(&terms).to_bits(),
                "case {case}: {terms:?}"
            );
        }
    }

    #[test]
    fn ties_round_to_even_however_far_below_the_rest_lies() {
        let ulp = f64::EPSILON; // of 1.0
        // 1 + ulp/2 is a tie: to even, 1.
        assert_eq!(ExactSum::from_iter([1.0, ulp / 2.0]).value(), 1.0);
        // Anything below past the tie rounds up, however small.
        let sum = ExactSum::from_iter([1.0, ulp / 2.0, 1e-300]);
        assert_eq!(sum.value(), 1.0 + ulp);
        let sum = ExactSum::from_iter([1.0, ulp / 2.0, -1e-300]);
        assert_eq!(sum.value(), 1.0);
        // (1 + ulp) + ulp/2 is a tie: to even, 1 + 2 ulp.
        assert_eq!(
            ExactSum::from_iter([1.0 + ulp, ulp / 2.0]).value(),
            1.0 + 2.0 * ulp
        );
    }

    #[test]
    fn cancellation_leaves_what_a_plain_sum_loses() {
        let terms = [1e100, 1.0, -1e100, 1e-100];
        assert_eq!(terms.iter().sum::<f64>(), 1e-100);
        assert_eq!(ExactSum::from_iter(terms).value(), 1.0);
        assert_eq!(ExactSum::from_iter([0.1; 10]).value(), 1.0);
    }

    #[test]
    fn any_order_and_any_grouping_give_the_same_bits() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for _ in 0..300 {
            let n = rng.random_range(1..200);
            // Terms of every magnitude, tiny and subnormal ones too.
            let terms: Vec<f64> = (0..n)
                .map(|_| {
                    let e = rng.random_range(-1074.0..300.0);
                    let x = 2f64.powf(e) * rng.random_range(1.0..2.0);
                    if rng.random_bool(0.5) { -x } else { x }
                })
                .collect();
            let whole = ExactSum::from_iter(terms.iter().copied()).value();
            let mut shuffled = terms.clone();
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, rng.random_range(0..=i));
            }
            // Dealt to up to seven groups, merged in a random order.
            let groups = rng.random_range(1..8);
            let mut parts = vec![ExactSum::new(); groups];
            for x in shuffled {
                parts[rng.random_range(0..groups)].add(x);
            }
            let mut merged = ExactSum::new();
            while !parts.is_empty() {
                let part = parts.swap_remove(rng.random_range(0..parts.len()));
                merged.merge(&part);
            }
            assert_eq!(merged.value().to_bits(), whole.to_bits());
        }
    }

    #[test]
    fn zeros_and_the_empty_sum_are_positive_zero() {
        assert_eq!(ExactSum::new().value().to_bits(), 0.0f64.to_bits());
        assert_eq!(
            ExactSum::from_iter([-0.0, -0.0]).value().to_bits(),
            0.0f64.to_bits()
        );
        assert_eq!(
            ExactSum::from_iter([1.5, -1.5]).value().to_bits(),
            0.0f64.to_bits()
        );
        assert!(ExactSum::from_iter([2.0, -2.0, -0.0]).is_zero());
    }

    #[test]
    fn infinities_and_nans_whatever_their_order() {
        let inf = f64::INFINITY;
        assert_eq!(ExactSum::from_iter([1.0, inf, 2.0]).value(), inf);
        assert_eq!(ExactSum::from_iter([-inf, 1.0, -inf]).value(), -inf);
        assert!(ExactSum::from_iter([inf, 1.0, -inf]).value().is_nan());
        assert!(ExactSum::from_iter([f64::NAN, 1.0]).value().is_nan());
        assert!(ExactSum::from_iter([1.0, f64::NAN, inf]).value().is_nan());
        // A huge term counts as infinite, whichever comes first.
        assert_eq!(ExactSum::from_iter([f64::MAX, 1.0]).value(), inf);
        assert!(ExactSum::from_iter([-f64::MAX, inf]).value().is_nan());
        assert!(ExactSum::from_iter([inf, -f64::MAX]).value().is_nan());
        // Merged: the same.
        let mut a = ExactSum::from_iter([inf]);
        a.merge(&ExactSum::from_iter([3.0, -inf]));
        assert!(a.value().is_nan());
        // At the limit: kept exactly.
        assert_eq!(ExactSum::from_iter([HUGE, HUGE, -HUGE]).value(), HUGE);
    }

    #[test]
    fn sums_are_equal_by_their_exact_value() {
        let a = ExactSum::from_iter([1e20, 3.0, -1e20]);
        let b = ExactSum::from_iter([2.0, 1.0]);
        assert_eq!(a, b);
        assert_ne!(a, ExactSum::from_iter([3.0, 1e-300]));
        assert_ne!(ExactSum::from_iter([f64::INFINITY]), b);
        assert_eq!(
            ExactSum::from_iter([f64::NAN]),
            ExactSum::from_iter([f64::INFINITY, -f64::INFINITY])
        );
    }

    #[test]
    fn a_sum_survives_a_message() {
        let sum = ExactSum::from_iter([1e20, 3.0, -1e20, 1e-30]);
        let bytes = postcard::to_allocvec(&sum).expect("encodes");
        let back: ExactSum = postcard::from_bytes(&bytes).expect("decodes");
        assert_eq!(back, sum);
        assert_eq!(back.value(), 3.0);
    }
}
