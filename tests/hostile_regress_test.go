package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
)

// TestHostileRegressions runs the cases the hostile-argument probe and the
// fuzzers found crashing, hanging or panicking, under a memory budget of
// 64 MiB: each must now end with the error named, or run, within seconds.
func TestHostileRegressions(t *testing.T) {
	old := blob.SetMemoryBudget(64 << 20)
	defer blob.SetMemoryBudget(old)
	f32 := func(dims ...int) *blob.Tensor {
		x, err := blob.New(blob.Float32, dims...)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	i64 := func(dims ...int) *blob.Tensor {
		x, err := blob.New(blob.Int64, dims...)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	in := func(ts ...*blob.Tensor) map[string]*blob.Tensor {
		m := map[string]*blob.Tensor{}
		for i, x := range ts {
			m["in"+string(rune('0'+i))] = x
		}
		return m
	}
	op := func(typ string, nIn int, outs []string, args ...*netdef.Argument) *netdef.OperatorDef {
		var ins []string
		for i := range nIn {
			ins = append(ins, "in"+string(rune('0'+i)))
		}
		return netdef.NewOperator(typ, ins, outs, args...)
	}
	cases := []struct {
		name   string
		op     *netdef.OperatorDef
		inputs map[string]*blob.Tensor // a nil tensor: a blob holding nothing, unknown to shape inference
		want   []string                // in the error; none: it runs
	}{
		// Two outputs in one blob: the second output's Init replaced the
		// storage the first was written through.
		{"Dropout mask is Y", op("Dropout", 1, []string{"y", "y"}), in(f32(2, 3)),
			[]string{"operator 0 Dropout", `outputs 0 and 1 are both "y"`}},
		{"MaxPoolWithIndex index is Y", op("MaxPoolWithIndex", 1, []string{"y", "y"}, netdef.ArgInt("kernel", 1)), in(f32(1, 1, 2, 2)),
			[]string{"operator 0 MaxPoolWithIndex", `outputs 0 and 1 are both "y"`}},
		{"TopK indices are the values", op("TopK", 1, []string{"v", "i", "v"}, netdef.ArgInt("k", 2)), in(f32(3, 3)),
			[]string{"operator 0 TopK", `outputs 0 and 2 are both "v"`}},

		// FC's shape function made Y's rank axis + 1 when X is unknown.
		{"FC axis 2^40, X unknown", op("FC", 3, []string{"y"}, netdef.ArgInt("axis", 1<<40)), in(nil, f32(3, 2), f32(3)),
			[]string{"operator 0 FC", `input 0 ("in0") holds nullptr`}},
		{"FCGradient axis 2^62, X unknown", op("FCGradient", 3, []string{"dw", "db", "dx"}, netdef.ArgInt("axis", 1<<62)), in(nil, f32(3, 2), f32(3)),
			[]string{"operator 0 FCGradient", `("in0") holds nullptr`}},
		{"FC axis 2^31, X empty", op("FC", 3, []string{"y"}, netdef.ArgInt("axis", 1<<31)), in(f32(0, 2), f32(3, 2), f32(3)),
			[]string{"operator 0 FC", "axis 2147483648"}},

		// Empty inputs with huge dims beside their 0: kernels looped over
		// those dims, with nothing to read or write.
		{"RowwiseMax of 2^31 empty matrices", op("RowwiseMax", 1, []string{"y"}), in(f32(1<<31, 0, 1)), nil},
		{"ColwiseMaxGradient of 2^31 empty matrices", op("ColwiseMaxGradient", 3, []string{"dx"}), in(f32(1<<31, 1, 0), f32(1<<31, 0), f32(1<<31, 0)), nil},
		{"Tile 2^40 times, empty", op("Tile", 1, []string{"y"}, netdef.ArgInt("tiles", 1<<40), netdef.ArgInt("axis", 0)), in(f32(0, 0)), nil},
		{"Tile 2^40 times, empty with a dim of 2^40", op("Tile", 1, []string{"y"}, netdef.ArgInt("tiles", 1<<40), netdef.ArgInt("axis", 0)), in(f32(1<<40, 0)),
			[]string{"operator 0 Tile", `tiling input 0 ("in0") of shape [1099511627776 0] 1099511627776 times is too large`}},
		{"TileGradient 2^40 tiles, empty", op("TileGradient", 1, []string{"dx"}, netdef.ArgInt("tiles", 1<<40), netdef.ArgInt("axis", 1)), in(f32(3, 0)), nil},
		{"ArgMax beside 2^31", op("ArgMax", 1, []string{"y"}, netdef.ArgInt("axis", -2)), in(f32(7, 3, 1<<31, 0)), nil},
		{"ReduceFrontSumGradient of 2^40 empty rows", op("ReduceFrontSumGradient", 2, []string{"dx"}), in(f32(0), f32(1<<40, 0)), nil},
		{"SoftmaxGradient of 2^40 empty rows", op("SoftmaxGradient", 2, []string{"dx"}), in(f32(1<<40, 0, 2, 1), f32(0)), nil},
		{"ChannelStats of 2^40 empty images", op("ChannelStats", 1, []string{"s", "s2"}), in(f32(1<<40, 1, 0)), nil},
		{"PRelu of 2^40 empty images", op("PRelu", 2, []string{"y"}), in(f32(1<<40, 0), f32(1<<40, 0)), nil},
		{"PReluGradient of 2^40 empty images", op("PReluGradient", 4, []string{"dx", "dw"}), in(f32(1<<40, 0), f32(1<<40, 0), f32(1<<40, 0), f32(0)), nil},
		{"TopK of 2^31 empty rows", op("TopK", 1, []string{"v", "i"}, netdef.ArgInt("k", 100000), netdef.ArgInt("axis", 2)), in(f32(1<<31, 5, 2, 0)), nil},
		{"TopKGradient of 2^41 empty rows", op("TopKGradient", 3, []string{"dx"}, netdef.ArgInt("axis", 2)), in(f32(2, 1<<40, 0, 4, 3), i64(2, 1<<40, 0, 4, 3), f32(2, 1<<40, 0, 4, 3)), nil},
		{"TopKGradient, empty dValues into a dX of 6", op("TopKGradient", 3, []string{"dx"}, netdef.ArgInt("axis", 1)), in(f32(2, 0), i64(2, 0), f32(2, 3)), nil},
		// The im2col buffer is sized by the kernel and the output, not by a
		// tensor the budget admitted: a 512² image (1 MiB) and a 256² kernel
		// (256 KiB) asked for 66 GB and the process died.
		{"Conv im2col buffer", op("Conv", 2, []string{"y"}, netdef.ArgInt("kernel", 256)), in(f32(1, 1, 512, 512), f32(1, 1, 256, 256)),
			[]string{"operator 0 Conv", "im2col buffer", "over the memory budget"}},
		{"ConvGradient im2col buffer", op("ConvGradient", 3, []string{"dw", "db", "dx"}, netdef.ArgInt("kernel", 256)), in(f32(1, 1, 512, 512), f32(1, 1, 256, 256), f32(1, 1, 257, 257)),
			[]string{"operator 0 ConvGradient", "im2col buffer", "over the memory budget"}},
		{"ConvTranspose im2col buffer", op("ConvTranspose", 2, []string{"y"}, netdef.ArgInt("kernel", 256)), in(f32(1, 1, 512, 512), f32(1, 1, 256, 256)),
			[]string{"operator 0 ConvTranspose", "im2col buffer", "over the memory budget"}},

		// Shape functions that read an input the schema makes optional.
		{"Conv2DGradient without dY", op("Conv2DGradient", 2, []string{"dw", "db"}, netdef.ArgInt("kernel", 3)), in(nil, f32(3, 3, 3)),
			[]string{"operator 0 Conv2DGradient", "2 inputs, want X, filter and dY"}},
	}
	for _, c := range cases {
		hc := hostileCase{op: c.op, inputs: c.inputs}
		type result struct {
			outcome hostileOutcome
			err     error
		}
		done := make(chan result, 1)
		go func() {
			o, err := hc.run(t.TempDir())
			done <- result{o, err}
		}()
		var outcome hostileOutcome
		var err error
		select {
		case r := <-done:
			outcome, err = r.outcome, r.err
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still running after 20s", c.name)
		}
		switch {
		case len(c.want) == 0 && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case len(c.want) > 0 && err == nil:
			t.Errorf("%s: ran, want an error", c.name)
		case outcome == recovered:
			t.Errorf("%s: %v", c.name, err)
		case err != nil:
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %q does not contain %q", c.name, err, w)
				}
			}
		}
	}
}
