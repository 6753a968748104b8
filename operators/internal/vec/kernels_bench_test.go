package vec

import (
	"fmt"
	"testing"
)

// BenchmarkKernels times the element-wise kernels on lengths whose data
// sits in L1 (784, a 28×28 plane, and 4099, with a tail) and in L2
// (65536). Compare the paths on one CPU with GODEBUG=cpu.avx512f=off (AVX2)
// and the purego build tag (Go).
func BenchmarkKernels(b *testing.B) {
	for _, n := range []int{784, 4099, 65536} {
		x, y, dy := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], dy[i] = float32(i%7)-3, float32(i%5)
		}
		run := func(name string, bytes int, f func()) {
			b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
				b.SetBytes(int64(bytes))
				for range b.N {
					f()
				}
			})
		}
		run("Add", 12*n, func() { Add(y, x) })
		run("Relu32", 8*n, func() { Relu32(x, y) })
		run("ReluGrad32", 12*n, func() { ReluGrad32(x, dy, y) })
		run("Normalize", 8*n, func() { Normalize(x, y, 0.5, 2, 1) })
		run("NormalizeGrad", 12*n, func() { NormalizeGrad(dy, x, y, 0.5, 2, -1, 1) })
		h := n / 4 // pool outputs from two rows of 2h inputs
		run("MaxPairs32", 20*h, func() { MaxPairs32(x[:2*h], x[2*h:4*h], y[:h]) })
		run("MaxPairsGrad32", 40*h, func() { MaxPairsGrad32(x[:2*h], x[2*h:4*h], y[:h], y[h:2*h], dy[:2*h], dy[2*h:4*h]) })
	}
}
