package gemm

import (
	"fmt"
	"testing"

	"github.com/caffe2go/caffe2go/operators/kernels/gemm/gemmtest"
)

// modelOf returns a kernel in plain Go with the shape and blocking of kn
// (mr, nr, mc, kc, nc) and every variant it has (strided, stridedB, the
// edge kernels, the packers), computing what each assembly kernel is
// specified to compute. It runs the blocked code with kn's geometry on
// any machine: the AVX-512 kernels' 12-row strips and 32-wide panels are
// then tested here even where the CPU cannot run the kernels themselves.
func modelOf[T float32 | float64](kn *kernel[T]) kernel[T] {
	mr, nr := kn.mr, kn.nr
	// tile computes rows×nr of C from element (i, p) of A at a[i·ars+p·acs]
	// and (p, j) of B at b[p·ldb+j].
	tile := func(rows, k int, a []T, ars, acs int, b []T, ldb int, c []T, ldc int, alpha, beta T) {
		var buf [64]T
		acc := buf[:nr]
		for i := 0; i < rows; i++ {
			clear(acc)
			for p := 0; p < k; p++ {
				ai, bp := a[i*ars+p*acs], b[p*ldb:p*ldb+nr]
				for j, v := range bp {
					acc[j] += ai * v
				}
			}
			row := c[i*ldc : i*ldc+nr]
			for j, s := range acc {
				if beta == 0 {
					row[j] = alpha * s
				} else {
					row[j] = alpha*s + beta*row[j]
				}
			}
		}
	}
	m := *kn
	m.name = kn.name + "-model"
	mk := func(rows int) func(int, []T, []T, []T, int, T, T) {
		return func(k int, a, b, c []T, ldc int, alpha, beta T) {
			tile(rows, k, a[:k*mr], 1, mr, b[:k*nr], nr, c[:(rows-1)*ldc+nr], ldc, alpha, beta)
		}
	}
	mkStrided := func(rows int) func(int, []T, int, int, []T, []T, int, T, T) {
		return func(k int, a []T, rs, cs int, b, c []T, ldc int, alpha, beta T) {
			tile(rows, k, a[:(rows-1)*rs+(k-1)*cs+1], rs, cs, b[:k*nr], nr, c[:(rows-1)*ldc+nr], ldc, alpha, beta)
		}
	}
	mkStridedB := func(rows int) func(int, []T, []T, int, []T, int, T, T) {
		return func(k int, a, b []T, ldb int, c []T, ldc int, alpha, beta T) {
			tile(rows, k, a[:k*mr], 1, mr, b[:(k-1)*ldb+nr], ldb, c[:(rows-1)*ldc+nr], ldc, alpha, beta)
		}
	}
	m.tile = mk(mr)
	if kn.strided != nil {
		m.strided = mkStrided(mr)
	}
	if kn.stridedB != nil {
		m.stridedB = mkStridedB(mr)
	}
	m.edge, m.stridedEdge, m.stridedBEdge = nil, nil, nil
	for r := range kn.edge {
		m.edge = append(m.edge, mk(r))
	}
	for r := range kn.stridedEdge {
		m.stridedEdge = append(m.stridedEdge, mkStrided(r))
	}
	for r := range kn.stridedBEdge {
		m.stridedBEdge = append(m.stridedBEdge, mkStridedB(r))
	}
	if kn.copyRows != nil {
		m.copyRows = func(k int, dst, src []T, ld int) {
			for q := 0; q < k; q++ {
				copy(dst[q*nr:(q+1)*nr], src[q*ld:q*ld+nr])
			}
		}
	}
	if kn.transpose != nil {
		m.transpose = func(k int, dst, src []T, ld int) {
			if k%8 != 0 {
				panic(fmt.Sprintf("transpose of k = %d, not a multiple of 8", k))
			}
			for q := 0; q < k; q++ {
				for j := 0; j < nr; j++ {
					dst[q*nr+j] = src[j*ld+q]
				}
			}
		}
	}
	m.dot = nil
	return m
}

// TestWideTileGeometry runs the contract suite, every edge tile, and A and
// B read in place through the blocked code with Go models of the AVX-512
// kernels (modelOf): 12-row strips, 32- and 16-wide panels, edge kernels
// of 1 to 11 rows, the 12-row packing of A. It runs on every machine.
func TestWideTileGeometry(t *testing.T) {
	defer func(old int) { inPlaceStrips = old }(inPlaceStrips)
	m32, m64 := modelOf(&avx512S), modelOf(&avx512D)
	if m32.mr != 12 || m32.nr != 32 || m64.mr != 12 || m64.nr != 16 {
		t.Skip("this build has no AVX-512 kernels to model (purego, noasm or not amd64)")
	}
	p := path{name: "model", k32: &m32, k64: &m64}
	t.Run("contract32", func(t *testing.T) { gemmtest.TestSgemm(t, p) })
	t.Run("contract64", func(t *testing.T) { gemmtest.TestDgemm(t, p) })
	for _, strips := range []int{0, 1 << 30} {
		inPlaceStrips = strips
		t.Run(fmt.Sprintf("inPlace%d", strips), func(t *testing.T) {
			for _, mn := range [][2]int{{1, 1}, {5, 31}, {11, 32}, {12, 33}, {13, 17}, {23, 64}, {24, 65}, {25, 40}} {
				for _, k := range []int{1, 4, 9, 17} {
					for q := 0; q < 4; q++ {
						for _, ab := range [][2]float64{{1.5, 0.5}, {1, 0}} {
							c := gemmtest.Case{M: mn[0], N: mn[1], K: k, TransA: q&1 != 0, TransB: q&2 != 0, Alpha: ab[0], Beta: ab[1], PadA: k % 2, PadB: mn[0] % 3, PadC: 1, Threads: 1}
							gemmtest.CheckSgemm(t, packed(p), c)
							gemmtest.CheckDgemm(t, packed(p), c)
						}
					}
				}
			}
			for _, s := range [][3]int{{301, 9, 517}, {97, 40, 300}, {30, 130, 64}} {
				for q := 0; q < 4; q++ {
					c := gemmtest.Case{M: s[0], N: s[1], K: s[2], TransA: q&1 != 0, TransB: q&2 != 0, Alpha: 0.5, Beta: 1.5, PadA: 3, PadB: 1, PadC: 2, Threads: 3}
					gemmtest.CheckSgemm(t, p, c)
					gemmtest.CheckDgemm(t, p, c)
				}
			}
		})
	}
	t.Run("MulPackedB", func(t *testing.T) { gemmtest.TestSgemm(t, packedPath(p)) })
}
