package optest

import (
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope/devicetest"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// mapOp is a test operator y = f(x) on float32 tensors. On a device with
// memory of its own it computes on a host copy, as a device kernel would
// compute on the device.
type mapOp struct {
	*operators.Base
	f    func(x, dy float32) float32
	grad bool // inputs are (X, dY): y = f(x, dy)
	host [2]*blob.Tensor
}

func (o *mapOp) Run() error {
	for i := range o.NumInputs() {
		x, err := o.InputOf(i, blob.Float32)
		if err != nil {
			return err
		}
		if o.host[i] == nil {
			o.host[i] = blob.MustFromSlice([]float32{})
		}
		if err := o.host[i].CopyFrom(x); err != nil {
			return err
		}
	}
	x := blob.Data[float32](o.host[0])
	out, err := blob.New(blob.Float32, o.host[0].Dims()...)
	if err != nil {
		return err
	}
	for i := range x {
		dy := float32(0)
		if o.grad {
			dy = blob.Data[float32](o.host[1])[i]
		}
		blob.Data[float32](out)[i] = o.f(x[i], dy)
	}
	return o.Output(0).CopyFrom(out)
}

// registerMap registers typ (one input) for the CPU and, when dev is not
// nil, its own function for the test device.
func registerMap(typ string, inputs int, cpu, dev func(x, dy float32) float32) {
	operators.MustRegisterCPU(operators.Schema{Type: typ, MinInputs: inputs, MaxInputs: inputs, MinOutputs: 1, MaxOutputs: 1},
		func(b *operators.Base) (operators.Operator, error) {
			return &mapOp{Base: b, f: cpu, grad: inputs == 2}, nil
		})
	if dev != nil {
		operators.MustRegister(typ, devicetest.Type, "", func(b *operators.Base) (operators.Operator, error) {
			return &mapOp{Base: b, f: dev, grad: inputs == 2}, nil
		})
	}
}

func gradientOf(typ string) {
	operators.MustRegisterGradient(typ, func(g *operators.GradientContext) error {
		g.Op(typ+"Gradient", []string{g.I(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
}

func init() {
	double := func(x, _ float32) float32 { return 2 * x }
	doubleGrad := func(_, dy float32) float32 { return 2 * dy }
	// Right on both devices, with a right gradient.
	registerMap("OptestDouble", 1, double, double)
	registerMap("OptestDoubleGradient", 2, doubleGrad, doubleGrad)
	gradientOf("OptestDouble")
	// Wrong on the test device.
	registerMap("OptestBuggy", 1, double, func(x, _ float32) float32 { return 2*x + 1 })
	// A gradient off by a factor of two on the CPU.
	registerMap("OptestSquare", 1, func(x, _ float32) float32 { return x * x }, nil)
	registerMap("OptestSquareGradient", 2, func(x, dy float32) float32 { return x * dy }, nil)
	gradientOf("OptestSquare")
	// A shape function that disagrees with the kernel.
	registerMap("OptestBadShape", 1, double, nil)
	operators.MustRegisterShapeFunc("OptestBadShape", func(_ *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{operators.Shape(blob.Float32, 7)}, nil
	})
	// Registered, but no case checks it.
	registerMap("OptestUnchecked", 1, double, nil)
}

func mapCase(typ string, grad ...int) Case {
	return Case{
		Op:     netdef.NewOperator(typ, []string{"X"}, []string{"Y"}),
		Inputs: []*blob.Tensor{blob.MustFromSlice([]float32{0.5, -1.25, 2}, 3)},
		Grad:   grad,
	}
}

// TestCaseChecksEachImplementation runs cases the way CheckRegistry does
// and checks that each kind of defect is reported.
func TestCaseChecksEachImplementation(t *testing.T) {
	cpu, dev := target{device: netdef.CPU}, target{device: devicetest.Type}
	for _, tc := range []struct {
		name string
		c    Case
		tg   target
		want string // "" for success
	}{
		{"right on the CPU", mapCase("OptestDouble", 0), cpu, ""},
		{"right on a device", mapCase("OptestDouble", 0), dev, ""},
		{"wrong output on a device", mapCase("OptestBuggy"), dev, "output 0 (\"Y\")[0] = 2 here, 1 on the CPU"},
		{"wrong gradient", mapCase("OptestSquare", 0), cpu, "analytic"},
		{"wrong shape function", mapCase("OptestBadShape"), cpu, "shape inference says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.check(tc.tg, map[operators.Implementation]bool{})
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestCheckCasesReportsUncovered walks the registry of this test binary
// (the test operators above, and the copy operators' absence) with cases
// for some of them: every implementation that no case exercises is
// reported, gradient operators included, and so is a case naming an
// unregistered type.
func TestCheckCasesReportsUncovered(t *testing.T) {
	covered := map[operators.Implementation]bool{}
	missing := CheckCases(t, []Case{
		mapCase("OptestDouble", 0),
		{Op: netdef.NewOperator("OptestNoSuchType", []string{"X"}, []string{"Y"})},
	}, covered)
	for _, impl := range []operators.Implementation{
		{Type: "OptestDouble", Device: netdef.CPU}, {Type: "OptestDouble", Device: devicetest.Type},
		{Type: "OptestDoubleGradient", Device: netdef.CPU}, {Type: "OptestDoubleGradient", Device: devicetest.Type},
	} {
		if !covered[impl] {
			t.Errorf("%v was not exercised", impl)
		}
	}
	want := []string{
		"OptestBadShape on CPU: no conformance case exercises it",
		"OptestBuggy on CPU: no conformance case exercises it",
		"OptestBuggy on UNKNOWN_DEVICE_1000: no conformance case exercises it",
		"OptestSquare on CPU: no conformance case exercises it",
		"OptestSquareGradient on CPU: no conformance case exercises it",
		"OptestUnchecked on CPU: no conformance case exercises it",
		"a conformance case names OptestNoSuchType, which is not registered",
	}
	slices.Sort(missing)
	if !slices.Equal(missing, want) {
		t.Errorf("reported\n%s\nwant\n%s", strings.Join(missing, "\n"), strings.Join(want, "\n"))
	}
}
