package tests

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
	"github.com/caffe2go/caffe2go/workspace"
)

// The tolerance Caffe2's serialized operator tests compare outputs with.
const serializedTol = 1e-4

// TestCaffe2SerializedOperatorTests runs Caffe2's serialized operator tests
// (testdata/caffe2-optests): for each, the operator runs on the recorded
// inputs and must reproduce the recorded outputs, and the gradient operators
// it generates must equal the recorded ones after sorting their arguments.
// Tests whose operator is not implemented are skipped and listed.
func TestCaffe2SerializedOperatorTests(t *testing.T) {
	dirs, err := filepath.Glob("testdata/caffe2-optests/*.*")
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	passed := 0
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		name := filepath.Base(dir)
		def := readOperatorDef(t, filepath.Join(dir, "op.pb"))
		if !operators.IsOperator(def.GetType()) {
			missing = append(missing, fmt.Sprintf("%s (%s)", name, def.GetType()))
			continue
		}
		ok := t.Run(name, func(t *testing.T) {
			checkSerializedOutputs(t, dir, def)
			checkSerializedGradients(t, dir, def)
		})
		if ok {
			passed++
		}
	}
	sort.Strings(missing)
	t.Logf("serialized operator tests: %d run and passed, %d skipped for missing operators", passed, len(missing))
	for _, m := range missing {
		t.Logf("skipped: %s", m)
	}
}

func readOperatorDef(t *testing.T, path string) *netdef.OperatorDef {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var def netdef.OperatorDef
	if err := proto.Unmarshal(data, &def); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &def
}

func checkSerializedOutputs(t *testing.T, dir string, def *netdef.OperatorDef) {
	ws := workspace.New(t.TempDir())
	for i, in := range def.GetInput() {
		x, err := readNPY(filepath.Join(dir, fmt.Sprintf("input_%d.npy", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.FeedBlob(in, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := ws.RunOperatorOnce(def); err != nil {
		t.Fatalf("running %s: %v", prototext.Format(def), err)
	}
	for k, out := range def.GetOutput() {
		want, err := readNPY(filepath.Join(dir, fmt.Sprintf("output_%d.npy", k)))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := ws.FetchBlob(out)
		if err != nil {
			t.Fatal(err)
		}
		compareTensors(t, out, got, want)
	}
}

// compareTensors checks shape equality and |got − want| ≤ atol + rtol·|want|
// elementwise (numeric types are compared as float64). Like NumPy's
// assert_allclose, which Caffe2's checker uses, it lets a 0-d result match a
// stored one-element array: the .npy files store scalars as shape (1,) while
// their meta.json records shape ().
func compareTensors(t *testing.T, name string, got, want *blob.Tensor) {
	t.Helper()
	scalarPair := got.Size() == 1 && want.Size() == 1 && (got.NumDims() == 0 || want.NumDims() == 0)
	if !reflect.DeepEqual(got.Shape(), want.Shape()) && !scalarPair {
		t.Errorf("%s: shape %v, want %v", name, got.Shape(), want.Shape())
		return
	}
	g, w := got.AsFloat64s(), want.AsFloat64s()
	if g == nil || w == nil {
		t.Errorf("%s: cannot compare %v with %v", name, got.DataType(), want.DataType())
		return
	}
	for i := range w {
		if math.Abs(g[i]-w[i]) > serializedTol+serializedTol*math.Abs(w[i]) || math.IsNaN(g[i]) != math.IsNaN(w[i]) {
			t.Errorf("%s[%d] = %v, want %v", name, i, g[i], w[i])
			return
		}
	}
}

func checkSerializedGradients(t *testing.T, dir string, def *netdef.OperatorDef) {
	files, _ := filepath.Glob(filepath.Join(dir, "grad_*.pb"))
	if len(files) == 0 {
		return
	}
	sort.Strings(files)
	var want []*netdef.OperatorDef
	for _, f := range files {
		want = append(want, optest.SortedArgs(readOperatorDef(t, f)))
	}
	gradOut := make([]operators.Gradient, len(def.GetOutput()))
	for i, out := range def.GetOutput() {
		gradOut[i] = operators.Dense(operators.GradientName(out))
	}
	gd, err := operators.GetGradientDefs(def, gradOut)
	if err != nil {
		t.Fatalf("gradient of %s: %v", def.GetType(), err)
	}
	if len(gd.Ops) != len(want) {
		t.Fatalf("gradient of %s: %d ops, want %d:\n%s", def.GetType(), len(gd.Ops), len(want), formatOps(gd.Ops))
	}
	for i := range want {
		if got := optest.SortedArgs(gd.Ops[i]); !proto.Equal(got, want[i]) {
			t.Errorf("gradient op %d:\n got %s\nwant %s", i, prototext.Format(got), prototext.Format(want[i]))
		}
	}
}

func formatOps(ops []*netdef.OperatorDef) string {
	var sb strings.Builder
	for _, op := range ops {
		sb.WriteString(prototext.Format(op))
		sb.WriteString("\n")
	}
	return sb.String()
}
