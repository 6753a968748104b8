package quant

import (
	"fmt"
	"math"

	"github.com/caffe2go/caffe2go/operators"
)

// quantizeMultiplierSmallerThanOne writes m in [0, 1) as q·2^−shift, q a
// Q31 fixed-point number in [2^30, 2^31) (Caffe2's int8_utils.h, after
// gemmlowp): frexp, round q·2^31 to nearest (ties to even, nearbyint),
// and renormalize when that rounds up to 2^31.
func quantizeMultiplierSmallerThanOne(m float64) (q int32, shift int, err error) {
	if !(m >= 0 && m < 1) {
		return 0, 0, fmt.Errorf("requantization multiplier %g is not in [0, 1)", m)
	}
	if m == 0 {
		return 0, 0, nil
	}
	frac, exp := math.Frexp(m)
	shift = -exp
	fixed := int64(math.RoundToEven(frac * (1 << 31)))
	if fixed == 1<<31 {
		fixed /= 2
		shift--
	}
	if shift < 0 {
		return 0, 0, fmt.Errorf("requantization multiplier %.17g rounds to 1", m)
	}
	if shift > 62 {
		// The product shifts away entirely: every result is 0.
		return 0, 0, nil
	}
	return int32(fixed), shift, nil
}

// saturatingRoundingDoublingHighMul is gemmlowp's: the high 32 bits of
// 2·a·b, rounded to nearest with halves up, saturating the one overflow
// (a = b = −2^31).
func saturatingRoundingDoublingHighMul(a, b int32) int32 {
	if a == b && a == math.MinInt32 {
		return math.MaxInt32
	}
	ab := int64(a) * int64(b)
	nudge := int64(1 << 30)
	if ab < 0 {
		nudge = 1 - 1<<30
	}
	return int32((ab + nudge) / (1 << 31))
}

// roundingDivideByPOT is gemmlowp's x / 2^exponent rounded to nearest,
// halves away from zero.
func roundingDivideByPOT(x int32, exponent int) int32 {
	if exponent <= 0 {
		return x
	}
	if exponent > 31 {
		return 0
	}
	mask := int32(1)<<exponent - 1
	remainder := x & mask
	threshold := mask >> 1
	if x < 0 {
		threshold++
	}
	r := x >> exponent
	if remainder > threshold {
		r++
	}
	return r
}

// multiplyByQuantizedMultiplierSmallerThanOne is x·q·2^−shift with
// Caffe2's (gemmlowp's) rounding.
func multiplyByQuantizedMultiplierSmallerThanOne(x, q int32, shift int) int32 {
	return roundingDivideByPOT(saturatingRoundingDoublingHighMul(x, q), shift)
}

// quantizeUint8 is Caffe2's QuantizeUint8: z + nearbyint(v/scale) in float32
// arithmetic, saturated to [0, 255]. A NaN quotient gives 0, as the x86
// conversion's INT32_MIN does after the clamp.
func quantizeUint8(scale float32, zero int32, v float32) uint8 {
	r := float64(v / scale)
	if math.IsNaN(r) {
		return 0
	}
	r = math.RoundToEven(r) + float64(zero)
	return uint8(max(0, min(255, r)))
}

// activationLimits are the output code bounds of an operator with or
// without a fused Relu: a Relu's lower bound is the code of 0.
func activationLimits(scale float32, zero int32, relu bool) (lo, hi int32) {
	if relu {
		return int32(quantizeUint8(scale, zero, 0)), 255
	}
	return 0, 255
}

// requantizer maps int32 accumulators to output codes.
type requantizer struct {
	mult   int32
	shift  int
	zero   int32
	lo, hi int32
}

func (r *requantizer) apply(acc int32) uint8 {
	v := int64(multiplyByQuantizedMultiplierSmallerThanOne(acc, r.mult, r.shift)) + int64(r.zero)
	return uint8(max(int64(r.lo), min(int64(r.hi), v)))
}

// checkScale reports a scale that is not a positive normal float, which
// the int8 kernels cannot requantize with.
func checkScale(b *operators.Base, what string, s float32) error {
	if !(s > 0) || math.IsInf(float64(s), 0) || s < math.SmallestNonzeroFloat32*(1<<23) {
		return b.Errorf("%s scale %g must be a positive, finite, normal number", what, s)
	}
	return nil
}

// checkZero reports a zero point outside the uint8 codes.
func checkZero(b *operators.Base, what string, z int32) error {
	if z < 0 || z > 255 {
		return b.Errorf("%s zero point %d is not a uint8 code (0 to 255)", what, z)
	}
	return nil
}

// checkQuant checks a scale and a zero point.
func checkQuant(b *operators.Base, what string, s float32, z int32) error {
	if err := checkScale(b, what, s); err != nil {
		return err
	}
	return checkZero(b, what, z)
}
