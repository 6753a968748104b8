package logic

//go:generate python3 testdata/gen_golden.py

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// goldenArgs are the arguments of a golden case, by the shape part of its
// name (testdata/gen_golden.py).
var goldenArgs = map[string][]*netdef.Argument{
	"legacy_suffix": {netdef.ArgInt("broadcast", 1)},
	"legacy_axis":   {netdef.ArgInt("broadcast", 1), netdef.ArgInt("axis", 1)},
	"legacy_ones":   {netdef.ArgInt("broadcast", 1), netdef.ArgInt("axis", 0)},
	"rows":          {netdef.ArgBool("broadcast_on_rows", true)},
	"ReplaceNaN":    {netdef.ArgFloat("value", 2.5)},
}

// TestGolden runs every NumPy golden case of testdata/golden.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.Z.npy"))
	if err != nil || len(files) < 70 {
		t.Fatalf("golden files: %d, %v", len(files), err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".Z.npy")
		t.Run(name, func(t *testing.T) {
			typ, _, _ := strings.Cut(name, "_")
			var args []*netdef.Argument
			for key, a := range goldenArgs {
				if strings.Contains(name, key) {
					args = append(args, a...)
				}
			}
			var in []*blob.Tensor
			var names []string
			for _, n := range []string{"A", "B", "C", "X", "Y"} {
				p := filepath.Join("testdata", "golden", name+"."+n+".npy")
				if _, err := os.Stat(p); err != nil {
					continue
				}
				x, err := optest.ReadNPY(p)
				if err != nil {
					t.Fatal(err)
				}
				in, names = append(in, x), append(names, n)
			}
			want, err := optest.ReadNPY(f)
			if err != nil {
				t.Fatal(err)
			}
			out, err := optest.RunOp(netdef.NewOperator(typ, names, []string{"Z"}, args...), in...)
			if err != nil {
				t.Fatal(err)
			}
			if d := diff(out[0], want); d != "" {
				t.Errorf("%s: %s", name, d)
			}
		})
	}
}

// diff reports how got differs from want, NaN equal to NaN.
func diff(got, want *blob.Tensor) string {
	if got.DataType() != want.DataType() || !reflect.DeepEqual(got.Shape(), want.Shape()) {
		return "got " + got.String() + ", want " + want.String()
	}
	switch got.DataType() {
	case blob.Float32, blob.Float64:
		g, w := got.AsFloat64s(), want.AsFloat64s()
		for i := range g {
			if g[i] != w[i] && !(math.IsNaN(g[i]) && math.IsNaN(w[i])) {
				return "elements differ: got " + fmtAny(g) + ", want " + fmtAny(w)
			}
		}
		return ""
	}
	if !reflect.DeepEqual(got.Raw(), want.Raw()) {
		return "elements differ: got " + fmtAny(got.Raw()) + ", want " + fmtAny(want.Raw())
	}
	return ""
}

func fmtAny(v any) string { return fmt.Sprint(v) }

func run(t *testing.T, def *netdef.OperatorDef, in ...*blob.Tensor) ([]*blob.Tensor, error) {
	t.Helper()
	return optest.RunOp(def, in...)
}

// TestErrors checks the errors Caffe2 raises, each naming the operator's
// blobs and shapes.
func TestErrors(t *testing.T) {
	f := func(v ...float32) *blob.Tensor { return blob.MustFromSlice(v, len(v)) }
	b := func(v ...bool) *blob.Tensor { return blob.MustFromSlice(v, len(v)) }
	for _, c := range []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
		want []string
	}{
		{"mismatched shapes", netdef.NewOperator("LT", []string{"a", "b"}, []string{"c"}), []*blob.Tensor{f(1, 2, 3), f(1, 2)}, []string{"did you forget to set broadcast=1?", `"a"`, `"b"`}},
		{"mismatched types", netdef.NewOperator("EQ", []string{"a", "b"}, []string{"c"}), []*blob.Tensor{f(1), blob.MustFromSlice([]int32{1}, 1)}, []string{"they must match", "INT32"}},
		{"axis without broadcast", netdef.NewOperator("GT", []string{"a", "b"}, []string{"c"}, netdef.ArgInt("axis", 0)), []*blob.Tensor{f(1), f(1)}, []string{"do not specify axis"}},
		{"legacy mismatch", netdef.NewOperator("GE", []string{"a", "b"}, []string{"c"}, netdef.ArgInt("broadcast", 1)), []*blob.Tensor{blob.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3), f(1, 2)}, []string{"broadcast dimension mismatch"}},
		{"And of floats", netdef.NewOperator("And", []string{"a", "b"}, []string{"c"}), []*blob.Tensor{f(1), f(1)}, []string{"takes BOOL"}},
		{"EQ of strings", netdef.NewOperator("EQ", []string{"a", "b"}, []string{"c"}), []*blob.Tensor{blob.MustFromSlice([]string{"x"}, 1), blob.MustFromSlice([]string{"x"}, 1)}, []string{"STRING"}},
		{"Not of floats", netdef.NewOperator("Not", []string{"a"}, []string{"c"}), []*blob.Tensor{f(1)}, []string{"BOOL"}},
		{"Where shapes", netdef.NewOperator("Where", []string{"c", "x", "y"}, []string{"z"}), []*blob.Tensor{b(true), f(1, 2), f(1, 2)}, []string{`C ("c") has shape [1]`}},
		{"Where rows", netdef.NewOperator("Where", []string{"c", "x", "y"}, []string{"z"}, netdef.ArgBool("broadcast_on_rows", true)), []*blob.Tensor{b(true), f(1, 2), f(1, 2)}, []string{"broadcast_on_rows"}},
		{"Where types", netdef.NewOperator("Where", []string{"c", "x", "y"}, []string{"z"}), []*blob.Tensor{b(true), f(1), blob.MustFromSlice([]float64{1}, 1)}, []string{"must match"}},
		{"NanCheck", netdef.NewOperator("NanCheck", []string{"x"}, []string{"y"}), []*blob.Tensor{f(1, float32(math.NaN()), 2, float32(math.Inf(-1)))}, []string{"NaN or inf", `"x"`, "positions 1 3"}},
		{"IsNaN of ints", netdef.NewOperator("IsNaN", []string{"x"}, []string{"y"}), []*blob.Tensor{blob.MustFromSlice([]int32{1}, 1)}, []string{"FLOAT or DOUBLE"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := run(t, c.def, c.in...)
			if err == nil {
				t.Fatalf("no error, want one mentioning %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestInPlace runs the operators that Caffe2 lets overwrite an input.
func TestInPlace(t *testing.T) {
	w := optest.NewWorkspace()
	w.Feed("a", blob.MustFromSlice([]bool{true, true, false, false}, 2, 2))
	w.Feed("b", blob.MustFromSlice([]bool{true, false}, 2))
	w.Feed("b2", blob.MustFromSlice([]bool{true, false, true, false}, 2, 2))
	for _, def := range []*netdef.OperatorDef{
		netdef.NewOperator("Xor", []string{"a", "b"}, []string{"a"}), // a = [F T T F]
		netdef.NewOperator("Not", []string{"a"}, []string{"a"}),      // a = [T F F T]
		netdef.NewOperator("Or", []string{"b", "a"}, []string{"a"}),  // a = [T F T T]
		netdef.NewOperator("And", []string{"a", "a"}, []string{"a"}), // a = [T F T T]
		netdef.NewOperator("Where", []string{"b2", "a", "a"}, []string{"a"}),
	} {
		if err := w.Run(def); err != nil {
			t.Fatalf("%s: %v", def.GetType(), err)
		}
	}
	if got := blob.Data[bool](w.Tensor("a")); !reflect.DeepEqual(got, []bool{true, false, true, true}) {
		t.Errorf("a = %v, want [true false true true]", got)
	}

	w.Feed("x", blob.MustFromSlice([]float64{1, math.NaN(), 3}, 3))
	for _, def := range []*netdef.OperatorDef{
		netdef.NewOperator("ReplaceNaN", []string{"x"}, []string{"x"}, netdef.ArgFloat("value", -1)),
		netdef.NewOperator("NanCheck", []string{"x"}, []string{"x"}),
	} {
		if err := w.Run(def); err != nil {
			t.Fatalf("%s: %v", def.GetType(), err)
		}
	}
	if got := blob.Data[float64](w.Tensor("x")); !reflect.DeepEqual(got, []float64{1, -1, 3}) {
		t.Errorf("x = %v, want [1 -1 3]", got)
	}
}

// TestGradients checks the gradient makers: NanCheck passes its gradient
// through NanCheck, and every other operator here forbids a gradient.
func TestGradients(t *testing.T) {
	def := netdef.NewOperator("NanCheck", []string{"x", "extra"}, []string{"y"})
	gd, err := operators.GetGradientDefs(def, optest.DenseGradients(def))
	if err != nil {
		t.Fatal(err)
	}
	if len(gd.Ops) != 1 || gd.Ops[0].GetType() != "NanCheck" || !reflect.DeepEqual(gd.Ops[0].Input, []string{"y_grad"}) || !reflect.DeepEqual(gd.Ops[0].Output, []string{"x_grad"}) {
		t.Errorf("NanCheck gradient: %v", gd.Ops)
	}
	x := blob.MustFromSlice([]float32{0.5, -1, 2}, 3)
	if _, err := optest.CheckGradient(netdef.NewOperator("NanCheck", []string{"x"}, []string{"y"}), []*blob.Tensor{x}, 0, optest.GradientCheck{}); err != nil {
		t.Error(err)
	}
	for _, typ := range []string{"EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Xor", "Not", "Where", "IsNaN", "ReplaceNaN"} {
		def := netdef.NewOperator(typ, []string{"a", "b"}, []string{"c"})
		if _, err := operators.GetGradientDefs(def, optest.DenseGradients(def)); err == nil {
			t.Errorf("%s: a gradient was made, Caffe2 forbids one", typ)
		}
	}
}

// TestShapeInference checks the shape functions against the kernels'
// outputs on the golden-style shapes.
func TestShapeInference(t *testing.T) {
	net := &netdef.NetDef{Op: []*netdef.OperatorDef{
		netdef.NewOperator("LT", []string{"a", "b"}, []string{"c"}),
		netdef.NewOperator("And", []string{"c", "c"}, []string{"d"}, netdef.ArgInt("broadcast", 1)),
		netdef.NewOperator("IsNaN", []string{"a"}, []string{"e"}),
		netdef.NewOperator("Where", []string{"d", "a", "a"}, []string{"f"}),
	}}
	shapes, err := operators.InferShapes(net, func(name string) operators.TensorShape {
		switch name {
		case "a":
			return operators.Shape(blob.Float32, 2, 3, 4)
		case "b":
			return operators.Shape(blob.Float32, 3, 1)
		}
		return operators.UnknownShape
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]operators.TensorShape{
		"c": operators.Shape(blob.Bool, 2, 3, 4),
		"d": operators.Shape(blob.Bool, 2, 3, 4),
		"e": operators.Shape(blob.Uint8, 2, 3, 4),
		"f": operators.Shape(blob.Float32, 2, 3, 4),
	} {
		if got := shapes[name]; got.String() != want.String() {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	bad := &netdef.NetDef{Op: []*netdef.OperatorDef{netdef.NewOperator("EQ", []string{"a", "b"}, []string{"c"})}}
	if _, err := operators.InferShapes(bad, func(name string) operators.TensorShape {
		return operators.Shape(blob.Float32, map[string]int{"a": 3, "b": 4}[name])
	}); err == nil {
		t.Error("EQ of shapes [3] and [4] inferred without error")
	}
}
