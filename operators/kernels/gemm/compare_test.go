package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/caffe2go/caffe2go/operators/kernels/gemm/internal/openblas"
)

// The comparison benchmarks run one square float32 product C = A·B on
// GOMAXPROCS threads (2 with -cpu 2) through caffe2go's kernels (the
// assembly one where there is one, and the generic one), gonum's pure-Go
// BLAS and, with the openblas build tag, OpenBLAS through cgo:
//
//	OPENBLAS_CORETYPE=Haswell go test -tags openblas -run '^$' -bench Compare -benchmem -cpu 2 ./operators/kernels/gemm/
//
// and log each one's GFLOP/s as a fraction of OpenBLAS's.

type sgemmFunc func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

func gonumSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if transA {
		ta = blas.Trans
	}
	if transB {
		tb = blas.Trans
	}
	gonum.Implementation{}.Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// onPath returns Sgemm on path p's kernel.
func onPath(p path) sgemmFunc {
	return func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		p.Sgemm(runtime.GOMAXPROCS(0), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
}

func benchCompare(b *testing.B, s int) {
	type impl struct {
		name string
		f    sgemmFunc
		ok   bool
	}
	var impls []impl
	for _, p := range paths() {
		impls = append(impls, impl{"caffe2go-" + p.name, onPath(p), p.skip == ""})
	}
	impls = append(impls, impl{"gonum", gonumSgemm, true}, impl{"openblas", openblas.Sgemm, openblas.Available})
	openblas.SetThreads(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(1, 2))
	x := randSlice[float32](r, s*s)
	y := randSlice[float32](r, s*s)
	z := make([]float32, s*s)
	flops := 2 * float64(s) * float64(s) * float64(s)
	rates := map[string]float64{}
	for _, im := range impls {
		if !im.ok {
			continue
		}
		b.Run(im.name, func(b *testing.B) {
			im.f(false, false, s, s, s, 1, x, s, y, s, 0, z, s)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				im.f(false, false, s, s, s, 1, x, s, y, s, 0, z, s)
			}
			b.StopTimer()
			rate := flops * float64(b.N) / b.Elapsed().Seconds() / 1e9
			b.ReportMetric(rate, "GFLOP/s")
			rates[im.name] = rate
		})
	}
	if ob := rates["openblas"]; ob > 0 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "%d³ float32, %d threads, OpenBLAS %s: %.1f GFLOP/s;", s, runtime.GOMAXPROCS(0), openblas.Config(), ob)
		for _, im := range impls[:len(impls)-1] {
			if v, ok := rates[im.name]; ok {
				fmt.Fprintf(&sb, " %s/openblas = %.2f;", im.name, v/ob)
			}
		}
		b.Log(sb.String())
	}
}

func BenchmarkCompare256(b *testing.B)  { benchCompare(b, 256) }
func BenchmarkCompare1024(b *testing.B) { benchCompare(b, 1024) }

// BenchmarkDgemm1024 is the float64 product on the kernel in use.
func BenchmarkDgemm1024(b *testing.B) {
	const s = 1024
	r := rand.New(rand.NewPCG(1, 2))
	x := randSlice[float64](r, s*s)
	y := randSlice[float64](r, s*s)
	z := make([]float64, s*s)
	Dgemm(false, false, s, s, s, 1, x, s, y, s, 0, z, s)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Dgemm(false, false, s, s, s, 1, x, s, y, s, 0, z, s)
	}
	b.StopTimer()
	b.ReportMetric(2*s*s*s*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
