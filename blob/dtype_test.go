package blob

import (
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/caffe2go/caffe2go/netdef"
)

func TestDataType(t *testing.T) {
	cases := []struct {
		d     DataType
		name  string
		valid bool
		size  int
	}{
		{Undefined, "UNDEFINED", false, 0},
		{Float32, "FLOAT", true, 4},
		{Int32, "INT32", true, 4},
		{DataType(netdef.TensorProto_BYTE), "BYTE", false, 0},
		{String, "STRING", true, 0},
		{Bool, "BOOL", true, 1},
		{Uint8, "UINT8", true, 1},
		{Int8, "INT8", true, 1},
		{Uint16, "UINT16", true, 2},
		{Int16, "INT16", true, 2},
		{Int64, "INT64", true, 8},
		{DataType(11), "DataType(11)", false, 0},
		{Float16, "FLOAT16", true, 2},
		{Float64, "DOUBLE", true, 8},
		{DataType(netdef.TensorProto_ZERO_COLLISION_HASH), "ZERO_COLLISION_HASH", false, 0},
		{DataType(-1), "DataType(-1)", false, 0},
	}
	for _, c := range cases {
		if c.d.String() != c.name || c.d.Valid() != c.valid || c.d.ItemSize() != c.size {
			t.Errorf("%d: %q %v %d, want %q %v %d", int32(c.d), c.d.String(), c.d.Valid(), c.d.ItemSize(), c.name, c.valid, c.size)
		}
	}
	// The values are Caffe2's TensorProto.DataType numbers.
	for d, want := range map[DataType]int32{Float32: 1, Int32: 2, String: 4, Bool: 5, Uint8: 6, Int8: 7, Uint16: 8, Int16: 9, Int64: 10, Float16: 12, Float64: 13} {
		if int32(d) != want {
			t.Errorf("%v = %d, want %d", d, int32(d), want)
		}
	}
}

func TestTypeOf(t *testing.T) {
	check := func(got, want DataType) {
		t.Helper()
		if got != want {
			t.Errorf("TypeOf = %v, want %v", got, want)
		}
	}
	check(TypeOf[float32](), Float32)
	check(TypeOf[float64](), Float64)
	check(TypeOf[Half](), Float16)
	check(TypeOf[int8](), Int8)
	check(TypeOf[int16](), Int16)
	check(TypeOf[int32](), Int32)
	check(TypeOf[int64](), Int64)
	check(TypeOf[uint8](), Uint8)
	check(TypeOf[uint16](), Uint16)
	check(TypeOf[bool](), Bool)
	check(TypeOf[string](), String)
}

// halfValue computes the value of a finite half bit pattern from the IEEE
// 754 definition, independently of Half.Float32.
func halfValue(h uint16) float64 {
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	var v float64
	if exp == 0 {
		v = math.Ldexp(mant, -24) // subnormal: mant × 2^-14 × 2^-10
	} else {
		v = math.Ldexp(1024+mant, exp-25) // (1 + mant/1024) × 2^(exp-15)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

// positiveHalves lists the values of the finite non-negative halves
// 0x0000…0x7bff, which increase with the bit pattern.
var positiveHalves = func() []float64 {
	v := make([]float64, 0x7c00)
	for h := range v {
		v[h] = halfValue(uint16(h))
	}
	return v
}()

// nearestHalf rounds x to half precision by searching the table of all
// halves: nearest value, ties to the even bit pattern, and infinity from
// 65520 (= max half + half an ulp) on, as IEEE round-to-nearest-even does.
func nearestHalf(x float64) Half {
	sign := uint16(0)
	if math.Signbit(x) {
		sign, x = 0x8000, -x
	}
	if x >= 65520 {
		return Half(sign | 0x7c00)
	}
	k := sort.SearchFloat64s(positiveHalves, x) // first value ≥ x
	if k == len(positiveHalves) {
		return Half(sign | 0x7bff)
	}
	if k > 0 {
		lo, hi := positiveHalves[k-1], positiveHalves[k]
		if x-lo < hi-x || (x-lo == hi-x && (k-1)%2 == 0) {
			k--
		}
	}
	return Half(sign | uint16(k))
}

func isHalfNaN(h Half) bool { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }

func TestHalfToFloat32AllPatterns(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := Half(i)
		got := h.Float32()
		switch {
		case isHalfNaN(h):
			if !math.IsNaN(float64(got)) {
				t.Errorf("%#04x: %v, want NaN", i, got)
			}
		case h&0x7fff == 0x7c00:
			if !math.IsInf(float64(got), 1-2*int(h>>15)) {
				t.Errorf("%#04x: %v, want ±Inf", i, got)
			}
		default:
			want := halfValue(uint16(h))
			if float64(got) != want || math.Signbit(float64(got)) != (h&0x8000 != 0) {
				t.Errorf("%#04x: %v, want %v", i, got, want)
			}
		}
	}
}

func TestHalfFromFloat32(t *testing.T) {
	check := func(f float32) {
		t.Helper()
		got := HalfFromFloat32(f)
		if math.IsNaN(float64(f)) {
			if !isHalfNaN(got) || (got&0x8000 != 0) != math.Signbit(float64(f)) {
				t.Errorf("HalfFromFloat32(%v) = %#04x, want a NaN of the same sign", f, uint16(got))
			}
			return
		}
		if want := nearestHalf(float64(f)); got != want {
			t.Errorf("HalfFromFloat32(%v [%#08x]) = %#04x, want %#04x", f, math.Float32bits(f), uint16(got), uint16(want))
		}
	}

	// Named cases, with the expected pattern spelled out.
	named := []struct {
		f    float32
		want Half
	}{
		{0, 0x0000},
		{negZero, 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.1, 0x2e66},                  // 0.0999755859375 is nearest
		{65504, 0x7bff},                // largest finite
		{65519.996, 0x7bff},            // just below the overflow threshold
		{65520, 0x7c00},                // halfway to 2^16: ties to even = Inf
		{1e10, 0x7c00},                 // overflow
		{-1e10, 0xfc00},                // negative overflow
		{float32(math.Inf(1)), 0x7c00}, // infinities
		{float32(math.Inf(-1)), 0xfc00},
		{float32(math.Ldexp(1, -14)), 0x0400},     // smallest normal
		{float32(math.Ldexp(1023, -24)), 0x03ff},  // largest subnormal
		{float32(math.Ldexp(1, -24)), 0x0001},     // smallest subnormal
		{float32(math.Ldexp(1, -25)), 0x0000},     // half of it: tie to even (0)
		{float32(math.Ldexp(1.5, -25)), 0x0001},   // above the tie
		{float32(math.Ldexp(3, -25)), 0x0002},     // 1.5 × smallest: tie to even (2)
		{float32(math.Ldexp(5, -25)), 0x0002},     // 2.5 × smallest: tie to even (2)
		{float32(math.Ldexp(1, -26)), 0x0000},     // underflow
		{-float32(math.Ldexp(1, -26)), 0x8000},    // underflow keeps the sign
		{math.SmallestNonzeroFloat32, 0x0000},     // float32 subnormal
		{1 + float32(math.Ldexp(1, -11)), 0x3c00}, // tie between 1 and 1+2^-10: even
		{1 + float32(math.Ldexp(3, -11)), 0x3c02}, // tie between 1+2^-10 and 1+2^-9: even
		{float32(math.Ldexp(2047, -25)), 0x0400},  // subnormal rounding up into the normals
		{2048 + 1, 0x6800},                        // tie at ulp 2: even
		{2048 + 3, 0x6802},                        // tie: even is up
		{2047.5, 0x6800},                          // tie rounding up carries into the exponent
	}
	for _, c := range named {
		if got := HalfFromFloat32(c.f); got != c.want {
			t.Errorf("HalfFromFloat32(%v) = %#04x, want %#04x", c.f, uint16(got), uint16(c.want))
		}
		check(c.f)
	}
	check(float32(math.NaN()))
	check(-float32(math.NaN()))
	check(math.Float32frombits(0x7f800001)) // signalling NaN
	check(math.MaxFloat32)

	// Every half round-trips, and every midpoint between neighbours (and
	// the float32 values just around it) rounds as the table says.
	for h := 0; h < 1<<16; h++ {
		if isHalfNaN(Half(h)) {
			continue
		}
		if got := HalfFromFloat32(Half(h).Float32()); got != Half(h) {
			t.Errorf("round trip %#04x -> %#04x", h, uint16(got))
		}
	}
	for k := 0; k+1 < len(positiveHalves); k++ {
		mid := float32((positiveHalves[k] + positiveHalves[k+1]) / 2) // exact in float32
		for _, f := range []float32{mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1e6)} {
			check(f)
			check(-f)
		}
	}

	// Random float32 bit patterns, weighted towards the half range.
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 300000; i++ {
		bits := rng.Uint32()
		if i%2 == 0 {
			// exponents 2^-26 … 2^17
			bits = bits&0x807fffff | uint32(101+rng.Intn(44))<<23
		}
		check(math.Float32frombits(bits))
	}
}
