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
