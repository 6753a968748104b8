package tensor

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func TestInPlace(t *testing.T) {
	t.Run("Reshape", func(t *testing.T) {
		w := optest.NewWorkspace()
		w.Feed("X", seq(2, 3))
		if err := w.Run(op("Reshape", []string{"X"}, []string{"X", "old"}, argIs("shape", 3, 2))); err != nil {
			t.Fatal(err)
		}
		if d := equalTensor(w.Tensor("X"), seq(3, 2)); d != "" {
			t.Error(d)
		}
		if d := equalTensor(w.Tensor("old"), i64(shp(2), 2, 3)); d != "" {
			t.Error("old_shape:", d)
		}
	})
	for _, c := range []struct {
		typ  string
		in   *blob.Tensor
		dims []int64
		want *blob.Tensor
	}{
		{"ExpandDims", seq(2, 3), []int64{1}, seq(2, 1, 3)},
		{"Squeeze", seq(2, 1, 3), []int64{1}, seq(2, 3)},
		{"StopGradient", seq(2, 3), nil, seq(2, 3)},
	} {
		t.Run(c.typ, func(t *testing.T) {
			w := optest.NewWorkspace()
			w.Feed("X", c.in)
			if err := w.Run(op(c.typ, []string{"X"}, []string{"X"}, argIs("dims", c.dims...))); err != nil {
				t.Fatal(err)
			}
			if d := equalTensor(w.Tensor("X"), c.want); d != "" {
				t.Error(d)
			}
		})
	}
}

func TestAliasSharesStorage(t *testing.T) {
	w := optest.NewWorkspace()
	w.Feed("X", seq(2, 2))
	if err := w.Run(op("Alias", []string{"X"}, []string{"Y"})); err != nil {
		t.Fatal(err)
	}
	blob.Data[float32](w.Tensor("X"))[3] = 42
	if got := blob.Data[float32](w.Tensor("Y"))[3]; got != 42 {
		t.Errorf("Y[3] = %g after writing X[3] = 42; Alias must share storage", got)
	}
	if d := equalTensor(w.Tensor("Y"), f32(shp(2, 2), 0, 1, 2, 42)); d != "" {
		t.Error(d)
	}
}

// TestRerun runs one operator instance on inputs that grow and shrink, the
// way a net reuses output storage, and checks every result.
func TestRerun(t *testing.T) {
	cases := []struct {
		def   *netdef.OperatorDef
		feeds [][]*blob.Tensor
		want  [][]*blob.Tensor
	}{
		{op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 1)),
			[][]*blob.Tensor{{seq(1, 1), seq(1, 2)}, {seq(2, 3), seq(2, 1)}, {seq(1, 0), seq(1, 1)}},
			[][]*blob.Tensor{
				{f32(shp(1, 3), 0, 0, 1), i32(shp(2), 1, 2)},
				{f32(shp(2, 4), 0, 1, 2, 0, 3, 4, 5, 1), i32(shp(2), 3, 1)},
				{f32(shp(1, 1), 0), i32(shp(2), 0, 1)}}},
		{op("Transpose", []string{"X"}, []string{"Y"}),
			[][]*blob.Tensor{{seq(2, 3)}, {seq(2, 2, 2)}, {seq(1)}},
			[][]*blob.Tensor{{f32(shp(3, 2), 0, 3, 1, 4, 2, 5)}, {f32(shp(2, 2, 2), 0, 4, 2, 6, 1, 5, 3, 7)}, {seq(1)}}},
		{op("Reshape", []string{"X"}, []string{"Y", "old"}, argIs("shape", -1)),
			[][]*blob.Tensor{{seq(2, 3)}, {seq(1)}},
			[][]*blob.Tensor{{seq(6), i64(shp(2), 2, 3)}, {seq(1), i64(shp(1), 1)}}},
		{op("Cast", []string{"X"}, []string{"Y"}, argI("to", int64(netdef.TensorProto_INT32))),
			[][]*blob.Tensor{{seq(3)}, {i64(shp(2), 7, 8)}, {bools(shp(1), true)}},
			[][]*blob.Tensor{{i32(shp(3), 0, 1, 2)}, {i32(shp(2), 7, 8)}, {i32(shp(1), 1)}}},
	}
	for _, c := range cases {
		t.Run(c.def.GetType(), func(t *testing.T) {
			w := optest.NewWorkspace()
			for i, x := range c.feeds[0] {
				w.Feed(c.def.Input[i], x)
			}
			o, err := operators.Create(c.def, w, -1)
			if err != nil {
				t.Fatal(err)
			}
			for run, feed := range c.feeds {
				for i, x := range feed {
					w.Blobs[c.def.Input[i]].Set(x.Clone())
				}
				if err := o.Run(); err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
				for i, want := range c.want[run] {
					if d := equalTensor(w.Tensor(c.def.Output[i]), want); d != "" {
						t.Errorf("run %d output %d: %s", run, i, d)
					}
				}
			}
		})
	}
}

func TestPrint(t *testing.T) {
	var buf bytes.Buffer
	saved := printStderr
	printStderr = &buf
	defer func() { printStderr = saved }()

	w := optest.NewWorkspace()
	w.Feed("X", f32(shp(2, 2), 1.5, -2, 1e-7, 123456789))
	w.Feed("S", strs(shp(2), "a", "b"))
	w.Feed("E", i64(shp(0, 3)))
	w.Feed("B", bools(shp(3), true, false, true))
	w.CreateBlob("raw").Set([]byte("x"))
	for _, name := range []string{"X", "S", "E", "B", "raw"} {
		if err := w.Run(op("Print", []string{name}, nil)); err != nil {
			t.Fatal(err)
		}
	}
	want := "Tensor X of type float. Dims: (2,2,): 1.5,-2,1e-07,1.23457e+08\n" +
		"Tensor S of type std::string. Dims: (2,): a,b\n" +
		"Tensor E of type long. Dims: (0,3,): \n" +
		"Tensor B of type bool. Dims: (3,): 1,0,1\n" +
		"Blob of type: std::string\n"
	if buf.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", buf.String(), want)
	}

	buf.Reset()
	o, err := operators.Create(op("Print", []string{"X"}, nil, argI("every_n", 2), argI("limit", 2)), w, -1)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := o.Run(); err != nil {
			t.Fatal(err)
		}
	}
	line := "Tensor X of type float. Dims: (2,2,): 1.5,-2\n"
	if got := buf.String(); got != strings.Repeat(line, 3) {
		t.Errorf("every_n=2 over 5 runs printed\n%s\nwant three times\n%s", got, line)
	}
}

func TestPrintToFile(t *testing.T) {
	w := optest.NewWorkspace()
	w.Root = t.TempDir()
	path := filepath.Join(w.Root, "scope", "X.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Feed("scope/X", i32(shp(3), 1, 2, 3))
	o, err := operators.Create(op("Print", []string{"scope/X"}, nil, argI("to_file", 1)), w, -1)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := o.Run(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("Tensor scope/X of type int. Dims: (3,): 1,2,3\n", 2)
	if string(got) != want {
		t.Errorf("file holds %q, want %q", got, want)
	}
}
