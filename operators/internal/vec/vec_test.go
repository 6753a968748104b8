package vec

import (
	"math"
	"testing"
)

func TestFill(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 63, 64, 65, 128, 129, 1000} {
		d := make([]float32, n+1)
		d[n] = -1 // past the slice that is filled
		Fill(d[:n], 2.5)
		for i, v := range d[:n] {
			if v != 2.5 {
				t.Fatalf("n=%d: d[%d] = %v, want 2.5", n, i, v)
			}
		}
		if d[n] != -1 {
			t.Fatalf("n=%d: the element after the slice changed to %v", n, d[n])
		}
	}
	s := make([]string, 5)
	Fill(s, "x")
	for i, v := range s {
		if v != "x" {
			t.Fatalf("d[%d] = %q, want \"x\"", i, v)
		}
	}
}

func BenchmarkFill(b *testing.B) {
	d := make([]float32, 1<<18)
	b.SetBytes(int64(4 * len(d)))
	b.ReportAllocs()
	for range b.N {
		Fill(d, 1)
	}
}

func TestAdd(t *testing.T) {
	for _, n := range []int{0, 1, 3, 7, 8, 9, 31, 32, 33, 100, 1025} {
		dst, src := make([]float32, n+1), make([]float32, n+1)
		dst64, src64 := make([]float64, n+1), make([]float64, n+1)
		for i := range dst {
			dst[i], src[i] = float32(i), float32(2*i+1)
			dst64[i], src64[i] = float64(i), float64(2*i+1)
		}
		dst[n], dst64[n] = -1, -1 // past the slice that is added to
		Add(dst[:n], src)
		Add(dst64[:n], src64)
		for i := range n {
			if want := float32(3*i + 1); dst[i] != want || dst64[i] != float64(want) {
				t.Fatalf("n=%d: dst[%d] = %v (float64 %v), want %v", n, i, dst[i], dst64[i], want)
			}
		}
		if dst[n] != -1 || dst64[n] != -1 {
			t.Fatalf("n=%d: the element after dst changed", n)
		}
	}
}

// TestAddMatchesGoBits checks Add bit for bit against addGo where both
// operands are NaNs with different payloads (the sum is dst's NaN in the
// Go loop, so the kernels must take dst as the first operand) and on
// infinities and signed zeros.
func TestAddMatchesGoBits(t *testing.T) {
	special := []uint32{0x7fc00001, 0xffc00002, 0x7f800003, 0x7f800000, 0xff800000, 0x80000000, 0, 0x3f800000}
	special64 := []uint64{0x7ff8000000000001, 0xfff8000000000002, 0x7ff0000000000003, 0x7ff0000000000000, 0xfff0000000000000, 1 << 63, 0, 0x3ff0000000000000}
	for _, n := range []int{1, 7, 8, 9, 33, 70} {
		dst, src := make([]float32, n), make([]float32, n)
		dst64, src64 := make([]float64, n), make([]float64, n)
		for i := range dst {
			a, b := i%len(special), (i*3+1)%len(special)
			// The payload bit 0x10 tells src's NaNs from dst's.
			dst[i], src[i] = math.Float32frombits(special[a]), math.Float32frombits(special[b]|0x10)
			dst64[i], src64[i] = math.Float64frombits(special64[a]), math.Float64frombits(special64[b]|0x10)
		}
		want, want64 := append([]float32(nil), dst...), append([]float64(nil), dst64...)
		addGo(want, src)
		addGo(want64, src64)
		Add(dst, src)
		Add(dst64, src64)
		for i := range n {
			if math.Float32bits(dst[i]) != math.Float32bits(want[i]) || math.Float64bits(dst64[i]) != math.Float64bits(want64[i]) {
				t.Fatalf("n=%d: dst[%d] = %#x (float64 %#x), want %#x (%#x)", n, i, math.Float32bits(dst[i]), math.Float64bits(dst64[i]), math.Float32bits(want[i]), math.Float64bits(want64[i]))
			}
		}
	}
}
