package tensor

//go:generate python3 testdata/gen_shaping.py

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// golden reads testdata/shaping/<c>.<name>.npy, or returns nil when there
// is no such file.
func golden(t *testing.T, c, name string) *blob.Tensor {
	t.Helper()
	p := filepath.Join("testdata", "shaping", c+"."+name+".npy")
	if _, err := os.Stat(p); err != nil {
		return nil
	}
	x, err := optest.ReadNPY(p)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func goldenCases(t *testing.T, prefix string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "shaping", prefix+"*.Y.npy"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files %s*: %v", prefix, err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".Y.npy"))
	}
	return names
}

func mustRun(t *testing.T, def *netdef.OperatorDef, in ...*blob.Tensor) []*blob.Tensor {
	t.Helper()
	out, err := optest.RunOp(def, in...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkEqual(t *testing.T, what string, got, want *blob.Tensor) {
	t.Helper()
	if d := equalTensor(got, want); d != "" {
		t.Errorf("%s: %s", what, d)
	}
}

func TestSliceGolden(t *testing.T) {
	for _, c := range goldenCases(t, "slice_") {
		t.Run(c, func(t *testing.T) {
			x, s, e := golden(t, c, "X"), golden(t, c, "starts"), golden(t, c, "ends")
			y, dy, dx := golden(t, c, "Y"), golden(t, c, "dY"), golden(t, c, "dX")
			args := []*netdef.Argument{netdef.ArgInts("starts", blob.Data[int64](s)...), netdef.ArgInts("ends", blob.Data[int64](e)...)}
			checkEqual(t, "Slice (arguments)", mustRun(t, op("Slice", []string{"X"}, []string{"Y"}, args...), x)[0], y)
			checkEqual(t, "Slice (inputs)", mustRun(t, op("Slice", []string{"X", "s", "e"}, []string{"Y"}), x, s, e)[0], y)
			checkEqual(t, "SliceGradient (arguments)", mustRun(t, op("SliceGradient", []string{"X", "dY"}, []string{"dX"}, args...), x, dy)[0], dx)
			checkEqual(t, "SliceGradient (inputs)", mustRun(t, op("SliceGradient", []string{"X", "s", "e", "dY"}, []string{"dX"}), x, s, e, dy)[0], dx)
		})
	}
}

func TestExpandGolden(t *testing.T) {
	for _, c := range goldenCases(t, "expand_") {
		t.Run(c, func(t *testing.T) {
			x, shape, y := golden(t, c, "X"), golden(t, c, "shape"), golden(t, c, "Y")
			checkEqual(t, "Expand", mustRun(t, op("Expand", []string{"X", "shape"}, []string{"Y"}), x, shape)[0], y)
			got := mustRun(t, op("ExpandGradient", []string{"dY", "X"}, []string{"dX"}), golden(t, c, "dY"), x)[0]
			want := golden(t, c, "dX")
			optest.CheckClose(t, "ExpandGradient", got.AsFloat64s(), want.AsFloat64s(), 1e-5)
		})
	}
}

func TestNumpyTileGolden(t *testing.T) {
	for _, c := range goldenCases(t, "tile_") {
		t.Run(c, func(t *testing.T) {
			got := mustRun(t, op("NumpyTile", []string{"X", "r"}, []string{"Y"}), golden(t, c, "X"), golden(t, c, "repeats"))[0]
			checkEqual(t, "NumpyTile", got, golden(t, c, "Y"))
		})
	}
}

func TestRangeGolden(t *testing.T) {
	for _, c := range goldenCases(t, "range_") {
		t.Run(c, func(t *testing.T) {
			var in []*blob.Tensor
			var names []string
			for i := 0; ; i++ {
				x := golden(t, c, "in"+string(rune('0'+i)))
				if x == nil {
					break
				}
				in, names = append(in, x), append(names, "in"+string(rune('0'+i)))
			}
			checkEqual(t, "Range", mustRun(t, op("Range", names, []string{"Y"}), in...)[0], golden(t, c, "Y"))
		})
	}
}

func TestSummarizeGolden(t *testing.T) {
	dir := t.TempDir()
	for _, c := range goldenCases(t, "summarize_") {
		t.Run(c, func(t *testing.T) {
			w := optest.NewWorkspace()
			w.Root = dir
			w.Feed("X", golden(t, c, "X"))
			if err := w.Run(op("Summarize", []string{"X"}, []string{"Y"}, netdef.ArgInt("to_file", 1))); err != nil {
				t.Fatal(err)
			}
			want := golden(t, c, "Y")
			optest.CheckClose(t, "Summarize", w.Tensor("Y").AsFloat64s(), want.AsFloat64s(), 1e-5)
			line, err := os.ReadFile(filepath.Join(dir, "X.summary"))
			if err != nil {
				t.Fatal(err)
			}
			if f := strings.Fields(string(line)); len(f) != 4 || !strings.HasSuffix(string(line), "\n") {
				t.Errorf("summary file holds %q, want one line of 4 numbers", line)
			}
		})
	}
}

func TestShapingOps(t *testing.T) {
	x := seq(2, 3)
	checkEqual(t, "Size", mustRun(t, op("Size", []string{"X"}, []string{"n"}), x)[0], blob.Scalar(int64(6)))
	checkEqual(t, "Size of empty", mustRun(t, op("Size", []string{"X"}, []string{"n"}), f32(shp(1<<40, 0)))[0], blob.Scalar(int64(0)))
	// Empty starts and ends arguments slice nothing (a hostile-probe case:
	// they once sent Slice looking for inputs it did not have).
	checkEqual(t, "Slice of nothing", mustRun(t, op("Slice", []string{"X"}, []string{"Y"}, netdef.ArgInts("starts"), netdef.ArgInts("ends")), x)[0], x)
	checkEqual(t, "LengthsToShape", mustRun(t, op("LengthsToShape", []string{"L"}, []string{"s"}), i32(shp(3), 4, 4, 4))[0], i32(shp(2), 3, 4))

	// SplitByLengths: lengths [1, 2, 3, 0] in two groups of two.
	out := mustRun(t, op("SplitByLengths", []string{"X", "L"}, []string{"a", "b"}, netdef.ArgInt("axis", 1)), seq(2, 6), i32(shp(4), 1, 2, 3, 0))
	checkEqual(t, "SplitByLengths 0", out[0], f32(shp(2, 3), 0, 1, 2, 6, 7, 8))
	checkEqual(t, "SplitByLengths 1", out[1], f32(shp(2, 3), 3, 4, 5, 9, 10, 11))
	// With use_scaling each length is doubled (6 channels / sum 3).
	out = mustRun(t, op("SplitByLengths", []string{"X", "L"}, []string{"a", "b"}, netdef.ArgBool("use_scaling", true)), seq(6), i32(shp(2), 1, 2))
	checkEqual(t, "SplitByLengths scaled 0", out[0], f32(shp(2), 0, 1))
	checkEqual(t, "SplitByLengths scaled 1", out[1], f32(shp(4), 2, 3, 4, 5))

	for _, c := range []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
		want string
	}{
		{"Slice two dims out of range", op("Slice", []string{"X"}, []string{"Y"}, netdef.ArgInts("starts", 2), netdef.ArgInts("ends", 1)), []*blob.Tensor{x}, "out of range"},
		{"Slice too many starts", op("Slice", []string{"X"}, []string{"Y"}, netdef.ArgInts("starts", 0, 0, 0), netdef.ArgInts("ends", 1, 1, 1)), []*blob.Tensor{x}, "more than the 2 dimensions"},
		{"Expand mismatch", op("Expand", []string{"X", "s"}, []string{"Y"}), []*blob.Tensor{x, i64(shp(1), 4)}, "dimensions format invalid"},
		{"NumpyTile repeats", op("NumpyTile", []string{"X", "r"}, []string{"Y"}), []*blob.Tensor{x, i64(shp(1), 2)}, "one element per dimension"},
		{"NumpyTile huge", op("NumpyTile", []string{"X", "r"}, []string{"Y"}), []*blob.Tensor{x, i64(shp(2), 1<<40, 1<<40)}, "too large"},
		{"LengthsToShape unequal", op("LengthsToShape", []string{"L"}, []string{"s"}), []*blob.Tensor{i32(shp(2), 1, 2)}, "must be the same"},
		{"Range step 0", op("Range", []string{"a", "b", "c"}, []string{"Y"}), []*blob.Tensor{blob.Scalar(int32(0)), blob.Scalar(int32(3)), blob.Scalar(int32(0))}, "cannot be 0"},
		{"Range huge", op("Range", []string{"a"}, []string{"Y"}), []*blob.Tensor{blob.Scalar(float32(math.Inf(1)))}, "too many elements"},
		{"SplitByLengths sum", op("SplitByLengths", []string{"X", "L"}, []string{"a"}), []*blob.Tensor{x, i32(shp(1), 3)}, "sum of the lengths"},
		{"Summarize empty", op("Summarize", []string{"X"}, []string{"Y"}), []*blob.Tensor{f32(shp(0))}, "empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := optest.RunOp(c.def, c.in...)
			wantErr(t, err, c.want)
		})
	}
}

// TestShapingGradients checks Slice, Expand and SplitByLengths against
// finite differences, and the gradient operators Caffe2 emits.
func TestShapingGradients(t *testing.T) {
	x := f32(shp(3, 4), 0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9, 1.1, -1.2, 1.3)
	for _, c := range []struct {
		def *netdef.OperatorDef
		in  []*blob.Tensor
	}{
		{op("Slice", []string{"X"}, []string{"Y"}, netdef.ArgInts("starts", 1, 1), netdef.ArgInts("ends", -1, 3)), []*blob.Tensor{x}},
		{op("Slice", []string{"X", "s", "e"}, []string{"Y"}), []*blob.Tensor{x, i32(shp(1), 0), i32(shp(1), 2)}},
		{op("Expand", []string{"X", "shape"}, []string{"Y"}), []*blob.Tensor{f32(shp(3, 1), 0.5, -1, 2), i64(shp(3), 2, 3, 4)}},
		{op("SplitByLengths", []string{"X", "L"}, []string{"a", "b"}), []*blob.Tensor{x, i32(shp(2), 1, 2)}},
	} {
		if _, err := optest.CheckGradient(c.def, c.in, 0, optest.GradientCheck{}); err != nil {
			t.Errorf("%s: %v", c.def.GetType(), err)
		}
	}
	for typ, want := range map[string]string{
		"Slice":          "SliceGradient(X s e Y_grad) -> X_grad",
		"Expand":         "ExpandGradient(Y_grad X) -> X_grad",
		"SplitByLengths": "Concat(Y_grad) -> X_grad _X_grad_dims",
	} {
		def := op(typ, []string{"X", "s", "e"}, []string{"Y"})
		if typ != "Slice" {
			def = op(typ, []string{"X", "L"}, []string{"Y"})
		}
		gd, err := operators.GetGradientDefs(def, optest.DenseGradients(def))
		if err != nil {
			t.Fatal(err)
		}
		g := gd.Ops[0]
		if got := g.GetType() + "(" + strings.Join(g.Input, " ") + ") -> " + strings.Join(g.Output, " "); got != want {
			t.Errorf("%s gradient: %s, want %s", typ, got, want)
		}
	}
}
