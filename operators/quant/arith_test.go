package quant

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// The references below restate Caffe2's integer rounding in exact
// arithmetic (math/big) or in QNNPACK's formulation, independently of the
// gemmlowp-style code under test.

// refHighMul is round-half-up(a·b / 2^31), exactly.
func refHighMul(a, b int32) int64 {
	p := new(big.Int).Mul(big.NewInt(int64(a)), big.NewInt(int64(b)))
	p.Mul(p, big.NewInt(2)).Add(p, big.NewInt(1<<31))
	q := new(big.Int).Div(p, big.NewInt(1<<32)) // Euclidean: floor for a positive divisor
	return q.Int64()
}

// refDivPOT is x / 2^e rounded to nearest, halves away from zero.
func refDivPOT(x int64, e int) int64 {
	if e == 0 {
		return x
	}
	r := new(big.Rat).SetFrac(big.NewInt(x), new(big.Int).Lsh(big.NewInt(1), uint(e)))
	abs := new(big.Rat).Abs(r)
	abs.Add(abs, big.NewRat(1, 2))
	f := new(big.Int).Quo(abs.Num(), abs.Denom()) // floor of a non-negative
	if x < 0 {
		f.Neg(f)
	}
	return f.Int64()
}

func TestFixedPointRounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 14))
	edge := []int32{0, 1, -1, 2, -2, 1 << 30, -1 << 30, math.MaxInt32, math.MinInt32, math.MinInt32 + 1}
	for i := range 20000 {
		var a, b int32
		if i < len(edge)*len(edge) {
			a, b = edge[i/len(edge)], edge[i%len(edge)]
		} else {
			a, b = int32(rng.Uint32()), int32(rng.Uint32())
			if i%3 == 0 {
				a >>= rng.IntN(31)
			}
		}
		want := refHighMul(a, b)
		if a == math.MinInt32 && b == math.MinInt32 {
			want = math.MaxInt32 // saturated
		}
		if got := saturatingRoundingDoublingHighMul(a, b); int64(got) != want {
			t.Fatalf("SaturatingRoundingDoublingHighMul(%d, %d) = %d, want %d", a, b, got, want)
		}
		e := rng.IntN(32)
		if got := roundingDivideByPOT(a, e); int64(got) != refDivPOT(int64(a), e) {
			t.Fatalf("RoundingDivideByPOT(%d, %d) = %d, want %d", a, e, got, refDivPOT(int64(a), e))
		}
	}
	// Ties: 3/2 → 2, −3/2 → −2, 5/4 → 1, −5/4 → −1, 6/4 → 2, −6/4 → −2.
	for _, c := range [][3]int32{{3, 1, 2}, {-3, 1, -2}, {5, 2, 1}, {-5, 2, -1}, {6, 2, 2}, {-6, 2, -2}, {-1, 1, -1}, {1, 1, 1}} {
		if got := roundingDivideByPOT(c[0], int(c[1])); got != c[2] {
			t.Errorf("RoundingDivideByPOT(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

// qnnpParams is QNNPACK's q31 requantization parameters of a float32
// scale in (0, 1), from its bits (requantization.h).
func qnnpParams(scale float32) (mult int32, shift uint32) {
	bits := math.Float32bits(scale)
	mult = int32((bits&0x007fffff | 0x00800000) << 7)
	shift = 127 + 31 - 32 - bits>>23
	return mult, shift
}

// qnnpRequantize is QNNPACK's qnnp_q31_requantize, before the clamp and
// the zero point.
func qnnpRequantize(n int32, mult int32, shift uint32) int32 {
	product := int64(n) * int64(mult)
	q31 := int32(uint32(uint64(product+0x40000000) >> 31))
	mask := int32(uint32(1)<<shift - 1)
	threshold := mask >> 1
	neg := int32(0)
	if n < 0 {
		neg = 1
	}
	rem := (q31 & mask) - neg
	r := q31 >> shift
	if rem > threshold {
		r++
	}
	return r
}

// TestRequantizationMatchesQNNPACK checks that for float32 multipliers the
// gemmlowp-style requantization (Caffe2's int8_utils.h) equals QNNPACK's
// q31 requantization, whose parameters come from the float's bits.
func TestRequantizationMatchesQNNPACK(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		scale := float32(math.Ldexp(0.5+rng.Float64()/2, -rng.IntN(20)))
		if scale >= 1 || scale < 1.0/(1<<20) {
			continue
		}
		q, shift, err := quantizeMultiplierSmallerThanOne(float64(scale))
		if err != nil {
			t.Fatal(err)
		}
		qm, qs := qnnpParams(scale)
		if q != qm || uint32(shift+31) != qs+31 || shift != int(qs) {
			t.Fatalf("scale %g: multiplier %d shift %d, QNNPACK %d %d", scale, q, shift, qm, qs)
		}
		for range 50 {
			acc := int32(rng.Uint32()) >> rng.IntN(31)
			if got, want := multiplyByQuantizedMultiplierSmallerThanOne(acc, q, shift), qnnpRequantize(acc, qm, qs); got != want {
				t.Fatalf("acc %d, scale %g: %d, QNNPACK %d", acc, scale, got, want)
			}
		}
	}
}

func TestQuantizeMultiplierEdges(t *testing.T) {
	for _, m := range []float64{-0.1, 1, 1.5, math.NaN(), math.Inf(1)} {
		if _, _, err := quantizeMultiplierSmallerThanOne(m); err == nil {
			t.Errorf("multiplier %g: no error", m)
		}
	}
	if q, s, err := quantizeMultiplierSmallerThanOne(0); q != 0 || s != 0 || err != nil {
		t.Errorf("0: %d %d %v", q, s, err)
	}
	// Just below 1 rounds up to 1, a negative shift Caffe2 refuses.
	if _, _, err := quantizeMultiplierSmallerThanOne(1 - 1e-12); err == nil {
		t.Errorf("1−1e−12: no error")
	}
	// Just below ½ rounds up to ½: q_fixed /= 2, --right_shift.
	if q, s, _ := quantizeMultiplierSmallerThanOne(0.5 - 1e-12); q != 1<<30 || s != 0 {
		t.Errorf("½−1e−12: %d %d", q, s)
	}
	if q, s, _ := quantizeMultiplierSmallerThanOne(0.5); q != 1<<30 || s != 0 {
		t.Errorf("0.5: %d %d", q, s)
	}
	if q, s, _ := quantizeMultiplierSmallerThanOne(0.25); q != 1<<30 || s != 1 {
		t.Errorf("0.25: %d %d", q, s)
	}
}

func TestQuantizeUint8(t *testing.T) {
	for _, c := range []struct {
		scale float32
		zero  int32
		v     float32
		want  uint8
	}{
		{0.5, 127, 1, 129}, {0.5, 127, 0.25, 127}, {0.5, 127, 0.75, 129}, // ½ → 0 (even), 1.5 → 2
		{1, 0, 2.5, 2}, {1, 0, 3.5, 4}, {1, 10, -2.5, 8}, {1, 0, -3, 0}, {1, 0, 300, 255},
		{1, 0, float32(math.NaN()), 0}, {1, 0, float32(math.Inf(1)), 255}, {0, 5, 1, 255},
	} {
		if got := quantizeUint8(c.scale, c.zero, c.v); got != c.want {
			t.Errorf("QuantizeUint8(%g, %d, %g) = %d, want %d", c.scale, c.zero, c.v, got, c.want)
		}
	}
}
