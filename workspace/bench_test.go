package workspace_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// BenchmarkRunNetTinyOps measures per-operator dispatch: a net of 1,000
// Scale operators on a one-element tensor. ns/op divided by 1,000 is the
// cost of one operator; allocs/op must be 0.
func BenchmarkRunNetTinyOps(b *testing.B) {
	for _, typ := range []string{"simple", "dag"} {
		b.Run(typ, func(b *testing.B) {
			ws := workspace.New("")
			if err := ws.FeedBlob("x", []float32{1}); err != nil {
				b.Fatal(err)
			}
			n := &netdef.NetDef{Name: proto.String("tiny"), Type: proto.String(typ)}
			in := "x"
			for i := 0; i < 1000; i++ {
				out := fmt.Sprintf("y%d", i%2)
				n.Op = append(n.Op, netdef.NewOperator("Scale", []string{in}, []string{out}, netdef.ArgFloat("scale", 1)))
				in = out
			}
			if err := ws.CreateNet(n, false); err != nil {
				b.Fatal(err)
			}
			if err := ws.RunNet("tiny", 1); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := ws.RunNet("tiny", 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/operator")
		})
	}
}

// BenchmarkRunNetMLP measures one training step of the peer harness's "mlp"
// workload (examples/bench/torch_reference.py): 93 → 512 → ReLU → 512 →
// ReLU → 9, softmax cross-entropy, batch 256, momentum-SGD (0.9, lr 0.01),
// with the backward pass built by AddGradientOperators.
func BenchmarkRunNetMLP(b *testing.B) {
	ws := workspace.New("")
	r := rand.New(rand.NewPCG(1, 2))
	const batch = 256
	dims := []int{93, 512, 512, 9}
	feed := func(name string, scale float64, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * scale)
		}
		if err := ws.FeedBlob(name, blob.MustFromSlice(v, shape...)); err != nil {
			b.Fatal(err)
		}
	}
	feed("data", 1, batch, dims[0])
	labels := make([]int32, batch)
	for i := range labels {
		labels[i] = int32(r.IntN(dims[len(dims)-1]))
	}
	if err := ws.FeedBlob("label", blob.MustFromSlice(labels)); err != nil {
		b.Fatal(err)
	}
	if err := ws.FeedBlob("lr", blob.Scalar[float32](0.01)); err != nil {
		b.Fatal(err)
	}
	n := netdef.NewNet("mlp_train")
	var params []string
	in := "data"
	for l := 0; l+1 < len(dims); l++ {
		w, bias, out := fmt.Sprintf("fc%d_w", l), fmt.Sprintf("fc%d_b", l), fmt.Sprintf("fc%d", l)
		feed(w, 0.05, dims[l+1], dims[l])
		feed(bias, 0, dims[l+1])
		params = append(params, w, bias)
		n.Op("FC", []string{in, w, bias}, []string{out})
		if l+2 < len(dims) {
			n.Op("Relu", []string{out}, []string{out})
		}
		in = out
	}
	n.Op("SoftmaxWithLoss", []string{in, "label"}, []string{"softmax", "loss"})
	grads, err := operators.AddGradientOperators(n.Proto(), []string{"loss"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range params {
		g := grads[p].Dense
		zeros, err := blob.New(blob.Float32, ws.GetBlob(p).Tensor().Shape()...)
		if err != nil {
			b.Fatal(err)
		}
		if err := ws.FeedBlob(p+"_momentum", zeros); err != nil {
			b.Fatal(err)
		}
		n.Op("MomentumSGDUpdate", []string{g, p + "_momentum", "lr", p}, []string{g, p + "_momentum", p}, netdef.ArgFloat("momentum", 0.9))
	}
	if err := ws.CreateNet(n, false); err != nil {
		b.Fatal(err)
	}
	if err := ws.RunNet(n.Name(), 2); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := ws.RunNet(n.Name(), 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/step")
}
