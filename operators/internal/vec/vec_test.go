package vec

import "testing"

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
