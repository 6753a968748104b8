package operators_test

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// engineOp records which implementation was chosen by writing its tag.
type engineOp struct {
	*operators.Base
	tag float32
}

func (o *engineOp) Run() error {
	y := o.Output(0)
	if err := y.Init(blob.Float32); err != nil {
		return err
	}
	blob.Data[float32](y)[0] = o.tag
	return nil
}

func init() {
	impl := func(tag float32) operators.Factory {
		return func(b *operators.Base) (operators.Operator, error) { return &engineOp{b, tag}, nil }
	}
	operators.MustRegister("RegTestOp", netdef.CPU, "", impl(0))
	operators.MustRegister("RegTestOp", netdef.CPU, "FAST", impl(1))
	operators.MustRegister("RegTestOp", netdef.CPU, "EXACT", impl(2))
	operators.MustRegister("RegTestCUDAOnly", netdef.CUDA, "", impl(3))
	operators.MustRegisterSchema(operators.Schema{
		Type: "RegTestSchema", MinInputs: 1, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 2,
		AllowInplace:   operators.InplacePairs([2]int{0, 0}),
		EnforceInplace: [][2]int{{1, 1}},
	})
	operators.MustRegister("RegTestSchema", netdef.CPU, "", impl(4))
}

func TestEngineSelection(t *testing.T) {
	cases := []struct {
		engine string
		want   float32
	}{
		{"", 0},
		{"DEFAULT", 0},
		{"FAST", 1},
		{"CUDNN,FAST", 1}, // unknown engines are skipped
		{"EXACT,FAST", 2}, // the first known engine wins
		{"CUDNN", 0},      // and fall back to the default silently
	}
	for _, c := range cases {
		op := netdef.NewOperator("RegTestOp", nil, []string{"y"})
		if c.engine != "" {
			op.Engine = proto.String(c.engine)
		}
		out, err := optest.RunOp(op)
		if err != nil {
			t.Fatalf("engine %q: %v", c.engine, err)
		}
		if got := blob.Data[float32](out[0])[0]; got != c.want {
			t.Errorf("engine %q chose implementation %v, want %v", c.engine, got, c.want)
		}
	}
	if !operators.IsOperatorWithEngine("RegTestOp", "FAST") || operators.IsOperatorWithEngine("RegTestOp", "CUDNN") {
		t.Error("IsOperatorWithEngine disagrees with the registrations")
	}
	keys := operators.RegisteredOperators()
	for _, want := range []string{"RegTestOp", "RegTestOp_ENGINE_FAST", "RegTestOp_ENGINE_EXACT"} {
		if !slices.Contains(keys, want) {
			t.Errorf("RegisteredOperators lacks %q", want)
		}
	}
	if !slices.IsSorted(keys) {
		t.Error("RegisteredOperators is not sorted")
	}
}

func TestRegisterTwiceIsAnError(t *testing.T) {
	f := func(b *operators.Base) (operators.Operator, error) { return &engineOp{b, 0}, nil }
	if err := operators.Register("RegTestOp", netdef.CPU, "FAST", f); err == nil {
		t.Error("duplicate implementation accepted")
	}
	if err := operators.RegisterSchema(operators.Schema{Type: "RegTestSchema"}); err == nil {
		t.Error("duplicate schema accepted")
	}
	if err := operators.Register("", netdef.CPU, "", f); err == nil {
		t.Error("empty type accepted")
	}
}

func TestCreateErrors(t *testing.T) {
	cases := []struct {
		name string
		op   *netdef.OperatorDef
		want string
	}{
		{"unknown type", netdef.NewOperator("RegTestNoSuchOp", nil, []string{"y"}), "no operator of that type"},
		{"wrong device", netdef.NewOperator("RegTestCUDAOnly", nil, []string{"y"}), "no implementation for that device"},
		{"missing input", netdef.NewOperator("RegTestOp", []string{"absent"}, []string{"y"}), `"absent"`},
		{"too many inputs", netdef.NewOperator("RegTestSchema", []string{"a", "b", "c"}, []string{"y"}), "1 to 2 inputs"},
		{"no outputs", netdef.NewOperator("RegTestSchema", []string{"a"}, nil), "1 to 2 outputs"},
		{"in place not allowed", netdef.NewOperator("RegTestSchema", []string{"a", "b"}, []string{"b"}), "in place"},
		{"two outputs in one blob", netdef.NewOperator("RegTestOp", nil, []string{"y", "z", "y"}), `outputs 0 and 2 are both "y"`},
		{"in place enforced", netdef.NewOperator("RegTestSchema", []string{"a", "b"}, []string{"y", "z"}), "must be the same blob"},
		{"no type", &netdef.OperatorDef{}, "no type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := optest.NewWorkspace()
			ws.Feed("a", blob.Scalar[float32](1))
			ws.Feed("b", blob.Scalar[float32](1))
			ws.Feed("c", blob.Scalar[float32](1))
			_, err := operators.Create(c.op, ws, 3)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Create error %v, want one mentioning %q", err, c.want)
			}
			if c.op.GetType() != "" && !strings.Contains(err.Error(), "operator 3 "+c.op.GetType()) {
				t.Errorf("error %q does not name the operator by index and type", err)
			}
		})
	}
	// Allowed and enforced in-place uses pass.
	ws := optest.NewWorkspace()
	ws.Feed("a", blob.Scalar[float32](1))
	ws.Feed("b", blob.Scalar[float32](1))
	if _, err := operators.Create(netdef.NewOperator("RegTestSchema", []string{"a", "b"}, []string{"a", "b"}), ws, 0); err != nil {
		t.Fatal(err)
	}
}

func TestCreateMakesOutputs(t *testing.T) {
	ws := optest.NewWorkspace()
	if _, err := operators.Create(netdef.NewOperator("RegTestOp", nil, []string{"y1", "y2"}), ws, 0); err != nil {
		t.Fatal(err)
	}
	if ws.GetBlob("y1") == nil || ws.GetBlob("y2") == nil {
		t.Fatal("outputs were not created at construction")
	}
}

func TestArgumentHelpers(t *testing.T) {
	def := netdef.NewOperator("RegTestOp", nil, []string{"y"},
		netdef.ArgInt("i", 7), netdef.ArgFloat("f", 2.5), netdef.ArgString("s", "text"),
		netdef.ArgInts("is", 1, 2), netdef.ArgFloats("fs", 0.5), netdef.ArgStrings("ss", "a", "b"),
		netdef.ArgBool("flag", true))
	op, err := operators.Create(def, optest.NewWorkspace(), 0)
	if err != nil {
		t.Fatal(err)
	}
	b := op.OpBase()
	if b.ArgInt("i", 0) != 7 || b.ArgInt("f", 0) != 2 || b.ArgInt("missing", 9) != 9 {
		t.Error("ArgInt")
	}
	if b.ArgFloat("f", 0) != 2.5 || b.ArgFloat("i", 0) != 7 || b.ArgFloat("missing", 1.5) != 1.5 {
		t.Error("ArgFloat")
	}
	if b.ArgString("s", "") != "text" || b.ArgString("missing", "d") != "d" {
		t.Error("ArgString")
	}
	if !slices.Equal(b.ArgInts("is", nil), []int64{1, 2}) || !slices.Equal(b.ArgFloats("fs", nil), []float32{0.5}) ||
		!slices.Equal(b.ArgStrings("ss", nil), []string{"a", "b"}) {
		t.Error("list arguments")
	}
	if !b.ArgBool("flag", false) || b.ArgBool("missing", false) || !b.HasArg("s") || b.HasArg("missing") {
		t.Error("ArgBool/HasArg")
	}
}

func TestFloatInput(t *testing.T) {
	ws := optest.NewWorkspace()
	ws.Feed("f", blob.MustFromSlice([]float32{1}))
	ws.Feed("d", blob.MustFromSlice([]float64{1}))
	ws.Feed("i", blob.MustFromSlice([]int32{1}))
	op, err := operators.Create(netdef.NewOperator("RegTestOp", []string{"f", "d", "i"}, []string{"y"}), ws, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := op.OpBase()
	for i, want := range []blob.DataType{blob.Float32, blob.Float64} {
		if x, err := b.FloatInput(i); err != nil || x.DataType() != want {
			t.Errorf("FloatInput(%d) = %v, %v", i, x, err)
		}
	}
	if _, err := b.FloatInput(2); err == nil || !strings.Contains(err.Error(), `input 2 ("i") has type INT32, want FLOAT or DOUBLE`) {
		t.Errorf("FloatInput of an int32 input: %v", err)
	}
}

func TestCanonicalAxis(t *testing.T) {
	for _, c := range []struct {
		axis, ndim, want int
		ok               bool
	}{
		{0, 3, 0, true}, {2, 3, 2, true}, {-1, 3, 2, true}, {-3, 3, 0, true},
		{3, 3, 0, false}, {-4, 3, 0, false}, {0, 0, 0, false},
	} {
		if got, ok := operators.CanonicalAxis(c.axis, c.ndim); got != c.want || ok != c.ok {
			t.Errorf("CanonicalAxis(%d, %d) = %d, %v, want %d, %v", c.axis, c.ndim, got, ok, c.want, c.ok)
		}
	}
}

func TestRandIsSeededByDeviceOption(t *testing.T) {
	draw := func(seed *uint32) uint64 {
		def := netdef.NewOperator("RegTestOp", nil, []string{"y"})
		if seed != nil {
			def.DeviceOption = &netdef.DeviceOption{RandomSeed: seed}
		}
		op, err := operators.Create(def, optest.NewWorkspace(), 0)
		if err != nil {
			t.Fatal(err)
		}
		return op.OpBase().Rand().Uint64()
	}
	if draw(proto.Uint32(5)) != draw(proto.Uint32(5)) {
		t.Error("the same random_seed gave different streams")
	}
	if draw(proto.Uint32(5)) == draw(proto.Uint32(6)) {
		t.Error("different seeds gave the same stream")
	}
	if draw(nil) == draw(nil) {
		t.Error("unseeded operators share a stream")
	}
}

func TestRunSafelyRecoversPanics(t *testing.T) {
	ws := optest.NewWorkspace()
	ws.Feed("x", blob.Scalar[float32](1))
	op, err := operators.Create(netdef.NewOperator("RegTestOp", nil, []string{"y"}), ws, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := operators.RunSafely(panicking{op.OpBase()}); err == nil || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("RunSafely = %v", err)
	}
}

type panicking struct{ *operators.Base }

func (panicking) Run() error { panic("kernel bug") }
