//! An exact sum of many `f64` terms at a constant cost per term: the terms as integers in
//! units of the smallest subnormal, 2⁻¹⁰⁷⁴, held in 32-bit digits (a "superaccumulator",
//! after Kulisch's long accumulator; R. M. Neal, *Fast exact summation using small and
//! large superaccumulators*, arXiv:1505.05571, 2015, §2).
//!
//! [`ExactSum`] keeps a sum as a short list of non-overlapping partials; each term it adds
//! passes over all of them. A wall's load, summed over hundreds of contacts at every step,
//! spent most of its time there. A [`FixedSum`] takes a term by splitting its significand
//! over three digits by its exponent: no loop, no branch on the data. Each digit is an
//! `i64` that a term changes by less than 2³², so 2³⁰ terms may be added before the digits
//! are carried. [`FixedSum::settle_into`] hands the exact sum to an [`ExactSum`] as one
//! term per digit (each exactly a `f64`), which rounds it once as before: the same bits as
//! the terms added to the [`ExactSum`] one by one.

use crate::exact_sum::{ExactSum, took_special};

/// Digits of 32 bits from 2⁻¹⁰⁷⁴ up, to 2¹¹⁰²: a term up to
/// [`HUGE`](crate::exact_sum::HUGE) (below 2⁹⁶¹) reaches digit 63 at most, and the carries
/// of 2³⁰ such terms two digits more.
const DIGITS: usize = 68;

/// Bits of a digit.
const DIGIT_BITS: usize = 32;

/// Terms added before the digits are carried: each changes a digit by less than 2³².
const ADDS_BEFORE_CARRY: u32 = 1 << 30;

/// The exact sum of the terms added since the last [`FixedSum::settle_into`] (see the
/// module documentation).
#[derive(Debug, Clone)]
pub(crate) struct FixedSum {
    /// The sum of the finite terms in units of 2⁻¹⁰⁷⁴: digit `i` weighs 2^(32 i).
    digits: [i64; DIGITS],
    /// The digits in use are `lo..hi` (none when `lo >= hi`).
    lo: usize,
    hi: usize,
    /// Terms added since the digits were last carried.
    adds: u32,
    /// The sum of the non-finite (and huge) terms, as [`ExactSum`] keeps it.
    special: f64,
}

impl Default for FixedSum {
    fn default() -> Self {
        FixedSum {
            digits: [0; DIGITS],
            lo: DIGITS,
            hi: 0,
            adds: 0,
            special: 0.0,
        }
    }
}

impl FixedSum {
    /// Adds the term `x`.
    #[inline]
    pub fn add(&mut self, x: f64) {
        // A zero adds nothing (and would mark the lowest digit as used).
        if x == 0.0 || took_special(&mut self.special, x) {
            return;
        }
        let bits = x.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as usize;
        let fraction = bits & ((1 << 52) - 1);
        // |x| = significand · 2^(position − 1074); a subnormal has no hidden bit.
        let (significand, position) = if exponent == 0 {
            (fraction, 0)
        } else {
            (fraction | (1 << 52), exponent - 1)
        };
        let (digit, shift) = (position / DIGIT_BITS, position % DIGIT_BITS);
        let wide = u128::from(significand) << shift;
        let parts = [
            (wide & 0xffff_ffff) as i64,
            ((wide >> 32) & 0xffff_ffff) as i64,
            (wide >> 64) as i64,
        ];
        let sign = if x < 0.0 { -1 } else { 1 };
        for (d, part) in self.digits[digit..digit + 3].iter_mut().zip(parts) {
            *d += sign * part;
        }
        self.lo = self.lo.min(digit);
        self.hi = self.hi.max(digit + 3);
        self.adds += 1;
        if self.adds == ADDS_BEFORE_CARRY {
            self.carry();
        }
    }

    /// Carries every digit's excess into the next one: all digits but the top one in
    /// `[0, 2³²)`, the top one taking the sign.
    fn carry(&mut self) {
        if self.lo < self.hi {
            for i in self.lo..DIGITS - 1 {
                let carried = self.digits[i] >> DIGIT_BITS;
                self.digits[i] -= carried << DIGIT_BITS;
                self.digits[i + 1] += carried;
            }
            self.hi = DIGITS;
        }
        self.adds = 0;
    }

    /// Adds the exact sum of the terms to `sum` and empties this one.
    pub fn settle_into(&mut self, sum: &mut ExactSum) {
        self.carry();
        // A negative sum borrows up to the top digit: its magnitude's digits instead.
        let sign = if self.digits[DIGITS - 1] < 0 {
            for d in &mut self.digits[self.lo.min(DIGITS)..] {
                *d = -*d;
            }
            self.carry();
            -1.0
        } else {
            1.0
        };
        for i in self.lo..self.hi.min(DIGITS) {
            let d = self.digits[i];
            if d != 0 {
                // Each digit below 2³² times a power of two: exactly a `f64`.
                sum.add(sign * d as f64 * power_of_two(i * DIGIT_BITS));
            }
        }
        if self.special != 0.0 {
            sum.add(self.special);
        }
        *self = FixedSum::default();
    }
}

/// 2^(`bits` − 1074) (infinite past the largest `f64`, which no settled digit reaches).
fn power_of_two(bits: usize) -> f64 {
    match bits {
        // Subnormal: a single bit of the significand.
        0..=51 => f64::from_bits(1 << bits),
        52..=2097 => f64::from_bits(((bits - 51) as u64) << 52),
        _ => f64::INFINITY,
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Terms of every magnitude and sign, subnormal ones and zeros too, and now and then
    /// the exact negation of an earlier one (so that sums cancel).
    fn terms(rng: &mut ChaCha8Rng, n: usize, top: f64) -> Vec<f64> {
        let mut out: Vec<f64> = Vec::with_capacity(n);
        for _ in 0..n {
            let x = match rng.random_range(0..10) {
                0 => 0.0,
                1 if !out.is_empty() => -out[rng.random_range(0..out.len())],
                2 => f64::from_bits(rng.random_range(1..1 << 52)),
                _ => 2f64.powf(rng.random_range(-1074.0..top)) * rng.random_range(1.0..2.0),
            };
            out.push(if rng.random_bool(0.5) { -x } else { x });
        }
        out
    }

    /// The same bits, or both NaN (as the exact sum's, a NaN's sign and payload depend on
    /// the order of the terms that made it).
    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn a_settled_sum_is_the_exact_sum_of_its_terms() {
        let mut rng = ChaCha8Rng::seed_from_u64(44);
        for case in 0..3000 {
            let top = [20.0, 300.0, 960.0][case % 3];
            let n = rng.random_range(0..120);
            let terms = terms(&mut rng, n, top);
            // The oracle: the partials' sum, term by term.
            let expected: ExactSum = terms.iter().copied().collect();
            let mut fixed = FixedSum::default();
            terms.iter().for_each(|&x| fixed.add(x));
            let mut got = ExactSum::new();
            fixed.settle_into(&mut got);
            assert!(got == expected, "case {case}: {terms:?}");
            assert!(same(got.value(), expected.value()), "case {case}");
            // Settled, it is empty again.
            let mut again = ExactSum::new();
            fixed.settle_into(&mut again);
            assert!(again.is_zero());
        }
    }

    #[test]
    fn settled_into_a_sum_that_holds_terms_already() {
        let mut rng = ChaCha8Rng::seed_from_u64(45);
        for _ in 0..500 {
            let (first, second) = (terms(&mut rng, 40, 100.0), terms(&mut rng, 40, 100.0));
            let expected: ExactSum = first.iter().chain(&second).copied().collect();
            let mut got: ExactSum = first.iter().copied().collect();
            let mut fixed = FixedSum::default();
            second.iter().for_each(|&x| fixed.add(x));
            fixed.settle_into(&mut got);
            assert!(got == expected);
            assert!(same(got.value(), expected.value()));
        }
    }

    #[test]
    fn the_digits_are_carried_before_they_can_overflow() {
        // 2^31 terms of the largest significand at one digit would overflow an i64 digit
        // without the carries; a million exercise the carry path through `carry` alone.
        let mut fixed = FixedSum::default();
        let x = f64::from_bits(0x3fef_ffff_ffff_ffff); // just below 1
        for _ in 0..1_000_000 {
            fixed.add(x);
        }
        fixed.carry();
        for _ in 0..1_000_000 {
            fixed.add(-x);
        }
        fixed.add(0.5);
        let mut got = ExactSum::new();
        fixed.settle_into(&mut got);
        assert_eq!(got.value(), 0.5);
        // A negative sum whose borrow runs to the top digit.
        let mut fixed = FixedSum::default();
        fixed.add(-f64::from_bits(1));
        fixed.add(-1e300);
        let mut got = ExactSum::new();
        fixed.settle_into(&mut got);
        assert!(got == ExactSum::from_iter([-f64::from_bits(1), -1e300]));
    }

    #[test]
    fn infinities_and_nans_as_the_exact_sum_takes_them() {
        for specials in [
            vec![f64::INFINITY, 1.0],
            vec![f64::NEG_INFINITY, f64::INFINITY],
            vec![f64::NAN, 2.0],
            vec![f64::MAX, f64::MAX],
            vec![-f64::MAX, 1.0],
        ] {
            let expected: ExactSum = specials.iter().copied().collect();
            let mut fixed = FixedSum::default();
            specials.iter().for_each(|&x| fixed.add(x));
            let mut got = ExactSum::new();
            fixed.settle_into(&mut got);
            assert!(same(got.value(), expected.value()), "{specials:?}");
        }
    }
}
