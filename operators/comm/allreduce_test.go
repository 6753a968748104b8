package comm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	_ "github.com/caffe2go/caffe2go/operators/math" // Sum, the reference
	"github.com/caffe2go/caffe2go/operators/optest"
	_ "github.com/caffe2go/caffe2go/operators/tensor" // Copy, the reference
)

func mustNew(dtype blob.DataType, dims ...int) *blob.Tensor {
	x, err := blob.New(dtype, dims...)
	if err != nil {
		panic(err)
	}
	return x
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("cpu_%d/fc_w_grad", i)
	}
	return out
}

// engine is one registered Allreduce implementation that this machine can
// run.
type engine struct {
	impl operators.Implementation
	dev  *netdef.DeviceOption // nil on the CPU
}

// engines returns every Allreduce implementation the registry holds for the
// CPU and for the device types this machine has, so that a new engine (NCCL,
// a peer-copy engine) is tested without editing the tests.
func engines(t *testing.T) []engine {
	t.Helper()
	var out []engine
	for _, impl := range operators.Implementations("Allreduce") {
		var dev *netdef.DeviceOption
		if impl.Device != netdef.CPU && impl.Device != operators.AnyDevice {
			dev = netdef.NewDeviceOption(impl.Device, 0)
			if _, err := devicescope.Get(dev); err != nil {
				continue
			}
		}
		out = append(out, engine{impl, dev})
	}
	if len(out) == 0 {
		t.Fatal("no Allreduce implementation is registered")
	}
	return out
}

// def returns an Allreduce over in (in place) on e's device with e's engine.
func (e engine) def(in ...string) *netdef.OperatorDef {
	def := netdef.NewOperator("Allreduce", in, in)
	def.DeviceOption = e.dev
	if e.impl.Engine != "" {
		def.Engine = proto.String(e.impl.Engine)
	}
	return def
}

// exact reports whether e must reproduce the reference bit for bit: the
// CPU's tree engines add in the order the reference does, where any other
// engine may round differently.
func (e engine) exact() bool {
	return e.impl.Device == netdef.CPU && (e.impl.Engine == "" || e.impl.Engine == SumTree)
}

func replicas(rng *rand.Rand, dtype blob.DataType, n int, dims ...int) []*blob.Tensor {
	out := make([]*blob.Tensor, n)
	for i := range out {
		out[i] = mustNew(dtype, dims...)
		for j := range out[i].Size() {
			v := rng.NormFloat64()
			if dtype == blob.Float32 {
				blob.Data[float32](out[i])[j] = float32(v)
			} else {
				blob.Data[float64](out[i])[j] = v
			}
		}
	}
	return out
}

// caffe2Tree runs the spec's SUM_TREE as Caffe2's data_parallel_model
// emits it, Sum operators named "dpm" and then Copy broadcasts, and returns
// the replicas it leaves: the independent reference for the engine.
func caffe2Tree(t *testing.T, in []*blob.Tensor) []*blob.Tensor {
	t.Helper()
	n := len(in)
	bufs := make([]*blob.Tensor, n)
	for i := range in {
		bufs[i] = in[i].Clone()
	}
	var levels [][][]int
	switch n {
	case 16:
		levels = [][][]int{{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}, {{0, 2}, {4, 6}, {8, 10}, {12, 14}}, {{0, 4}, {8, 12}}, {{0, 8}}}
	case 8:
		levels = [][][]int{{{0, 1}, {2, 3}, {4, 5}, {6, 7}}, {{0, 2}, {4, 6}}, {{0, 4}}}
	case 4:
		levels = [][][]int{{{0, 1}, {2, 3}}, {{0, 2}}}
	default:
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		levels = [][][]int{{all}}
	}
	for _, level := range levels {
		for _, g := range level {
			ins := make([]*blob.Tensor, len(g))
			for k, d := range g {
				ins[k] = bufs[d]
			}
			sum := netdef.NewOperator("Sum", make([]string, len(g)), []string{"y"})
			for k := range g {
				sum.Input[k] = fmt.Sprintf("x%d", k)
			}
			bufs[g[0]] = optest.MustRunOp(t, sum, ins...)[0]
		}
	}
	for d := 1; d < n; d++ {
		bufs[d] = optest.MustRunOp(t, netdef.NewOperator("Copy", []string{"x"}, []string{"y"}), bufs[0])[0]
	}
	return bufs
}

func TestAllreduce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, e := range engines(t) {
		for _, dtype := range []blob.DataType{blob.Float32, blob.Float64} {
			for _, n := range []int{1, 2, 3, 4, 5, 8, 16, 17} {
				for _, dims := range [][]int{{0}, {1}, {7}, {3, 5}, {64, 33}, {500, 301}} {
					name := fmt.Sprintf("%v/%v/%d replicas/%v", e.impl, dtype, n, dims)
					in := replicas(rng, dtype, n, dims...)
					got := optest.MustRunOp(t, e.def(names(n)...), in...)
					want := caffe2Tree(t, in)
					for d := range got {
						g, w := got[d].AsFloat64s(), want[d].AsFloat64s()
						if len(g) != len(w) {
							t.Fatalf("%s: replica %d has %d elements, want %d", name, d, len(g), len(w))
						}
						for i := range g {
							diff := math.Abs(g[i] - w[i])
							if e.exact() && diff != 0 || diff > 1e-5*(1+math.Abs(w[i])) {
								t.Fatalf("%s: replica %d element %d = %v, want %v", name, d, i, g[i], w[i])
							}
						}
					}
				}
			}
		}
	}
}

func TestAllreduceErrors(t *testing.T) {
	f := func(dims ...int) *blob.Tensor { return mustNew(blob.Float32, dims...) }
	for _, tc := range []struct {
		name   string
		in     []string
		out    []string
		tensor []*blob.Tensor
		want   string
	}{
		{"shape mismatch", []string{"a", "b"}, []string{"a", "b"}, []*blob.Tensor{f(2, 3), f(3, 2)}, `input 1 "b"`},
		{"dtype mismatch", []string{"a", "b"}, []string{"a", "b"}, []*blob.Tensor{f(2), mustNew(blob.Float64, 2)}, "replicas must match"},
		{"integer", []string{"a", "b"}, []string{"a", "b"}, []*blob.Tensor{mustNew(blob.Int32, 2), mustNew(blob.Int32, 2)}, "a"},
		{"not in place", []string{"a", "b"}, []string{"c", "d"}, []*blob.Tensor{f(2), f(2)}, "in place"},
		{"fewer outputs", []string{"a", "b"}, []string{"a"}, []*blob.Tensor{f(2), f(2)}, "in place"},
	} {
		for _, e := range engines(t) {
			def := e.def(tc.in...)
			def.Output = tc.out
			_, err := optest.RunOp(def, tc.tensor...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s, %v: error %v, want it to mention %q", tc.name, e.impl, err, tc.want)
			}
		}
	}
}

func TestAllreduceNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, e := range engines(t) {
		def := e.def(names(4)...)
		// Fed like optest.RunOp, on the engine's device (optest.Steady
		// feeds Go memory).
		w := optest.NewWorkspace()
		for i, x := range replicas(rng, blob.Float32, 4, 1<<16) {
			if err := w.FeedInput(def, i, x); err != nil {
				t.Fatal(err)
			}
		}
		op, err := operators.Create(def, w, -1)
		if err != nil {
			t.Fatalf("%v: %v", e.impl, err)
		}
		if err := op.Run(); err != nil {
			t.Fatalf("%v: %v", e.impl, err)
		}
		optest.AssertOpNoAllocs(t, op)
	}
}

func TestTreeLevels(t *testing.T) {
	got := fmt.Sprint(treeLevels(16))
	want := "[[[0 1] [2 3] [4 5] [6 7] [8 9] [10 11] [12 13] [14 15]] [[0 2] [4 6] [8 10] [12 14]] [[0 4] [8 12]] [[0 8]]]"
	if got != want {
		t.Fatalf("16-replica tree %s, want %s", got, want)
	}
	if got := fmt.Sprint(treeLevels(3)); got != "[[[0 1 2]]]" {
		t.Fatalf("3-replica tree %s", got)
	}
}
