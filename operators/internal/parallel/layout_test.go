package parallel

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"
)

// TestLayout checks that what different goroutines write at the same time
// lies on cache lines of its own: a job (every part writes its claims and
// pending) fills whole lines, so that jobs of calls running at once never
// share one; the pool's counters that every call or worker writes lie a
// line apart from each other and from the fields around them; a free list
// fills whole lines, so that lists side by side in a struct (the GEMM's)
// do not share their locks' lines.
func TestLayout(t *testing.T) {
	if s := unsafe.Sizeof(job{}); s%CacheLine != 0 {
		t.Errorf("a job is %d bytes, not a multiple of CacheLine (%d)", s, CacheLine)
	}
	t.Logf("job: %d bytes, claims at %d, pending at %d", unsafe.Sizeof(job{}), unsafe.Offsetof(job{}.claims), unsafe.Offsetof(job{}.pending))
	fields := []struct {
		name string
		off  uintptr
	}{
		{"start", 0},
		{"mu", unsafe.Offsetof(pool.mu)},
		{"procs", unsafe.Offsetof(pool.procs)},
		{"wanted", unsafe.Offsetof(pool.wanted)},
		{"spinning", unsafe.Offsetof(pool.spinning)},
		{"end", unsafe.Sizeof(pool)},
	}
	for i, f := range fields {
		t.Logf("pool.%s at %d", f.name, f.off)
		for _, g := range fields[:i] {
			hot := f.name == "wanted" || f.name == "spinning" || g.name == "wanted" || g.name == "spinning"
			if hot && f.off-g.off < CacheLine {
				t.Errorf("pool.%s (at %d) lies within a cache line of pool.%s (at %d)", f.name, f.off, g.name, g.off)
			}
		}
	}
	if s := unsafe.Sizeof(FreeList[job]{}); s%CacheLine != 0 {
		t.Errorf("a FreeList is %d bytes, not a multiple of CacheLine", s)
	}
}

func TestPadded(t *testing.T) {
	for _, tc := range []struct{ n, size, want int }{
		{0, 8, 16}, {1, 8, 32}, {3, 8, 32}, {16, 8, 32}, {17, 8, 48}, {3, 4, 64}, {32, 4, 64}, {33, 4, 96},
	} {
		got := Padded(tc.n, tc.size)
		if got != tc.want {
			t.Errorf("Padded(%d, %d) = %d, want %d", tc.n, tc.size, got, tc.want)
		}
		// Slots of n elements got apart leave a whole CacheLine between
		// the end of one and the start of the next.
		if gap := (got - tc.n) * tc.size; gap < CacheLine {
			t.Errorf("Padded(%d, %d) = %d leaves %d bytes between slots", tc.n, tc.size, got, gap)
		}
	}
}

// slots adds into per-part sums of n float64s, stride apart in one
// slice, for every unit: the inner loop of a kernel's per-part partial
// sums (BN statistics, a reduction).
type slots struct {
	sums      []float64
	n, stride int
	rows      int
}

func (s *slots) RunRange(part, lo, hi int) {
	sum := s.sums[part*s.stride : part*s.stride+s.n]
	for u := lo; u < hi; u++ {
		for range s.rows {
			for c := range sum {
				sum[c] += float64(u + c)
			}
		}
	}
}

// BenchmarkPartSlots measures per-part partial sums of 3 channels laid
// out side by side (packed) against Padded apart: where the parts run on
// cores that do not share a cache, packed slots bounce one line between
// them on every write.
func BenchmarkPartSlots(b *testing.B) {
	parts := runtime.GOMAXPROCS(0)
	for _, layout := range []string{"packed", "padded"} {
		b.Run(fmt.Sprintf("%s/parts=%d", layout, parts), func(b *testing.B) {
			const n = 3
			stride := n
			if layout == "padded" {
				stride = Padded(n, 8)
			}
			s := &slots{sums: make([]float64, parts*stride), n: n, stride: stride, rows: 1000}
			for b.Loop() {
				Run(s, 1000, parts)
			}
		})
	}
}
