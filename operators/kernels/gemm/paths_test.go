package gemm

import "testing"

// TestPathCounts checks which path Gemm takes for one product of each
// kind, through the counters, and that nothing is counted while counting
// is off.
func TestPathCounts(t *testing.T) {
	buf := make([]float32, 512*512)
	run := func(threads int, transB bool, m, n, k int, alpha float32) [NumPaths]uint64 {
		ldb := n
		if transB {
			ldb = k
		}
		before := PathCounts()
		Gemm(threads, false, transB, m, n, k, alpha, buf, k, buf, ldb, 0, buf[256*256:], n)
		after := PathCounts()
		for p := range after {
			after[p] -= before[p]
		}
		return after
	}
	CountPaths(true)
	defer CountPaths(false)
	kern := state32.kern
	for _, tc := range []struct {
		name      string
		threads   int
		transB    bool
		m, n, k   int
		alpha     float32
		want      Path
		needsSIMD bool
	}{
		{"alpha 0", 1, false, 8, 8, 8, 0, PathScale, false},
		{"tiny", 1, false, 2, 3, 4, 1, PathDirect, false},
		{"just past tiny", 1, false, 4, 4, kern.smallWork/16 + 1, 1, PathBlocked, false},
		{"16³", 1, false, 16, 16, 16, 1, PathBlocked, false},
		{"classifier", 1, true, 256, 9, 512, 1, PathDot, true},
		{"split", 2, false, 256, 256, 256, 1, PathBlockedParallel, false},
	} {
		if tc.needsSIMD && kern.dot == nil {
			continue
		}
		got := run(tc.threads, tc.transB, tc.m, tc.n, tc.k, tc.alpha)
		for p, n := range got {
			want := uint64(0)
			if Path(p) == tc.want {
				want = 1
			}
			if n != want {
				t.Errorf("%s: %d products on path %v, want %d", tc.name, n, Path(p), want)
			}
		}
	}
	CountPaths(false)
	if got := run(1, false, 2, 3, 4, 1); got != ([NumPaths]uint64{}) {
		t.Errorf("counted %v with counting off", got)
	}
	for p := Path(0); p < NumPaths; p++ {
		if p.String() == "unknown" || p.String() == "" {
			t.Errorf("Path(%d) has no name", p)
		}
	}
	if Path(-1).String() != "unknown" || NumPaths.String() != "unknown" {
		t.Error("a path out of range has a name")
	}
}
