package tests

import (
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
)

// TestHostileRegressions runs the cases the hostile-argument probe and the
// fuzzers found crashing, hanging or panicking, under a memory budget of
// 64 MiB: each must now end with the error named, or run.
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
	}
	for _, c := range cases {
		hc := hostileCase{op: c.op, inputs: c.inputs}
		outcome, err := hc.run(t.TempDir())
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
