package comm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// BenchmarkAllreduce times both engines at 1, 10 and 100 MB of float32
// gradients per replica. Each run reports the bytes of one replica as its
// throughput, so MB/s reads as gradient bytes all-reduced per second.
// BenchmarkMemoryBound gives the figure to compare against.
func BenchmarkAllreduce(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, replicasN := range []int{2, 4} {
		for _, mb := range []int{1, 10, 100} {
			elements := mb << 20 / 4
			in := replicas(rng, blob.Float32, replicasN, elements)
			for _, engine := range []string{SumTree, Ring} {
				b.Run(fmt.Sprintf("%s/%d-replicas/%dMB", engine, replicasN, mb), func(b *testing.B) {
					bs := names(replicasN)
					def := netdef.NewOperator("Allreduce", bs, bs)
					def.Engine = &engine
					op := optest.Steady(b, def, in...)
					b.SetBytes(int64(elements * 4))
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						if err := op.Run(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkMemoryBound adds the other replicas' buffers into the first,
// single-threaded, in one streaming pass each: the reduction half of an
// all-reduce at the speed of a plain loop, without the copy back. An
// all-reduce near this figure is bound by memory bandwidth, not by its
// algorithm.
func BenchmarkMemoryBound(b *testing.B) {
	for _, replicasN := range []int{2, 4} {
		for _, mb := range []int{1, 10, 100} {
			elements := mb << 20 / 4
			bufs := make([][]float32, replicasN)
			for i := range bufs {
				bufs[i] = make([]float32, elements)
			}
			b.Run(fmt.Sprintf("%d-replicas/%dMB", replicasN, mb), func(b *testing.B) {
				b.SetBytes(int64(elements * 4))
				for range b.N {
					dst := bufs[0]
					for _, src := range bufs[1:] {
						for i, v := range src {
							dst[i] += v
						}
					}
				}
			})
		}
	}
}
