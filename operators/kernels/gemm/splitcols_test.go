package gemm

import (
	"testing"

	"github.com/caffe2go/caffe2go/operators/kernels/gemm/gemmtest"
)

func TestColumnsPay(t *testing.T) {
	for _, tc := range []struct {
		transA         bool
		m, n, k, tasks int
		chunk, ntasks  int
		ok             bool
	}{
		{m: 256, n: 512, k: 512, tasks: 2, chunk: 256, ntasks: 2, ok: true}, // mlp hidden layer
		{m: 256, n: 512, k: 512, tasks: 8, chunk: 64, ntasks: 8, ok: true},  // ... on 8 cores
		{m: 64, n: 500, k: 800, tasks: 2, chunk: 256, ntasks: 2, ok: true},  // lenet fc1
		{m: 256, n: 93, k: 512, tasks: 8, ok: false},                        // a strip or less each
		{transA: true, m: 512, n: 512, k: 256, tasks: 2, ok: false},         // A packed by every task
		{m: 1024, n: 1024, k: 1024, tasks: 16, ok: false},                   // A too large
		{m: 256, n: 4096, k: 64, tasks: 2, ok: false},                       // too many strips to read A in place
		{m: 256, n: 512, k: 512, tasks: 1, ok: false},                       // one task
	} {
		chunk, ntasks, ok := columnsPay(tc.transA, tc.m, tc.n, tc.k, tc.tasks, 16)
		if ok != tc.ok || ok && (chunk != tc.chunk || ntasks != tc.ntasks) {
			t.Errorf("columnsPay(%v, %d, %d, %d, %d) = %d, %d, %v; want %d, %d, %v", tc.transA, tc.m, tc.n, tc.k, tc.tasks, chunk, ntasks, ok, tc.chunk, tc.ntasks, tc.ok)
		}
	}
}

// TestColumnSplit runs products that Gemm now cuts by columns where it cut
// by rows (A untransposed and small, several strips per task) through
// every kernel path, against gemmtest's reference.
func TestColumnSplit(t *testing.T) {
	runPaths(t, func(t *testing.T, p path) {
		for _, s := range [][3]int{{256, 512, 93}, {64, 500, 200}, {100, 130, 300}} {
			for q := 0; q < 4; q++ {
				for _, threads := range []int{2, 3, 8} {
					c := gemmtest.Case{M: s[0], N: s[1], K: s[2], TransA: q&1 != 0, TransB: q&2 != 0, Alpha: 1.5, Beta: 0.5, PadA: 1, PadB: 2, PadC: 3, Threads: threads}
					gemmtest.CheckSgemm(t, p, c)
					gemmtest.CheckDgemm(t, p, c)
				}
			}
		}
	})
}
