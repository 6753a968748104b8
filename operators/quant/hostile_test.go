package quant

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// hostileInput is one int8 input of a hostile case.
type hostileInput struct {
	shape []int
	dt    blob.DataType
	scale float32
	zero  int32
}

// hostileTemplate is a valid call of an operator that the probe mutates.
type hostileTemplate struct {
	ins  []hostileInput
	args []*netdef.Argument
	outs []string
}

func hostileTemplates() map[string]hostileTemplate {
	img := hostileInput{[]int{2, 5, 5, 4}, blob.Uint8, 0.1, 128}
	same := []*netdef.Argument{netdef.ArgFloat("Y_scale", 0.1), netdef.ArgInt("Y_zero_point", 128), netdef.ArgString("order", "NHWC")}
	unit := []*netdef.Argument{netdef.ArgFloat("Y_scale", 1.0/256), netdef.ArgInt("Y_zero_point", 0)}
	out := []*netdef.Argument{netdef.ArgFloat("Y_scale", 0.5), netdef.ArgInt("Y_zero_point", 100), netdef.ArgString("order", "NHWC")}
	conv := hostileTemplate{[]hostileInput{img, {[]int{6, 3, 3, 2}, blob.Uint8, 0.05, 120}, {[]int{6}, blob.Int32, 0.005, 0}},
		append(out, netdef.ArgInt("kernel", 3), netdef.ArgInt("pad", 1), netdef.ArgInt("group", 2)), []string{"y"}}
	pair := hostileTemplate{[]hostileInput{{[]int{3, 4}, blob.Uint8, 0.1, 128}, {[]int{3, 4}, blob.Uint8, 0.05, 100}}, out, []string{"y"}}
	one := func(args ...*netdef.Argument) hostileTemplate {
		return hostileTemplate{[]hostileInput{img}, append(append([]*netdef.Argument{}, same...), args...), []string{"y"}}
	}
	t := map[string]hostileTemplate{
		"Int8Dequantize": {[]hostileInput{img}, nil, []string{"y"}},
		"Int8FC": {[]hostileInput{{[]int{2, 8}, blob.Uint8, 0.1, 128}, {[]int{3, 8}, blob.Uint8, 0.05, 120}, {[]int{3}, blob.Int32, 0.005, 0}},
			out, []string{"y"}},
		"Int8Conv": conv, "Int8ConvRelu": conv,
		"Int8Relu":        one(),
		"Int8MaxPool":     one(netdef.ArgInt("kernel", 2)),
		"Int8AveragePool": one(netdef.ArgInt("kernel", 3), netdef.ArgInt("pad", 1), netdef.ArgInt("stride", 2)),
		"Int8Add":         pair, "Int8AddRelu": pair, "Int8Sum": pair, "Int8SumRelu": pair,
		"Int8Concat":  {[]hostileInput{img, img}, same, []string{"y", "y2"}},
		"Int8Reshape": {[]hostileInput{img}, append(append([]*netdef.Argument{}, same...), netdef.ArgInts("shape", 0, -1)), []string{"y", "y2"}},
		"Int8Flatten": one(netdef.ArgInt("axis", 2)),
		"Int8Softmax": {[]hostileInput{img}, unit, []string{"y"}},
		"Int8Sigmoid": {[]hostileInput{img}, unit, []string{"y"}},
	}
	return t
}

// TestInt8HostileInputs is the hostile probe for what tests/'s cannot
// reach: int8 operators fed int8 tensors. From a valid call of each
// operator it draws cases with one to three things made hostile: an
// argument (huge, zero, negative), an input's shape (empty ones with huge
// dims beside their 0 included), scale (0, negative, NaN, infinite,
// subnormal, huge) or zero point (outside the uint8 codes). It runs each
// case through shape inference and twice through the operator and fails
// on a panic (which the runner recovers) or an output larger than the
// inputs and arguments justify.
func TestInt8HostileInputs(t *testing.T) {
	templates := hostileTemplates()
	rng := rand.New(rand.NewPCG(2026, 14))
	shapes := [][]int{{}, {0}, {1}, {3, 4}, {1, 1, 1, 1}, {2, 5, 5, 4}, {1, 3, 3, 2}, {2, 4, 4, 6}, {0, 1 << 31, 3, 4},
		{1 << 31, 0}, {2, 0, 5, 4}, {1, 2, 3, 4, 5}, {1, 6, 6, 1}, {4, 1, 1, 8}, {6, 3, 3, 2}, {6}, {1 << 40, 0, 1 << 40}}
	scales := []float32{0, -1, float32(math.NaN()), float32(math.Inf(1)), 1e-40, 1e30, 1e-30, 1}
	zeros := []int32{-5, 256, math.MinInt32, math.MaxInt32, 0, 255}
	hostileInts := []int64{0, -1, 2, 7, 1 << 31, 1 << 40, math.MaxInt64, math.MinInt64}
	argNames := []string{"kernel", "stride", "pad", "dilation", "group", "axis", "global_pooling", "legacy_pad",
		"kernel_h", "kernel_w", "stride_h", "stride_w", "pad_t", "pad_b", "pad_l", "pad_r", "Y_zero_point"}
	cases, ran := 0, 0
	perType := map[string]int{}
	for _, typ := range slices.Sorted(maps.Keys(templates)) {
		tmpl := templates[typ]
		for k := range 400 {
			ins := append([]hostileInput{}, tmpl.ins...)
			args := append([]*netdef.Argument{}, tmpl.args...)
			for range 1 + rng.IntN(3) {
				if k == 0 {
					break // the template itself must run
				}
				i := rng.IntN(len(ins))
				switch rng.IntN(5) {
				case 0:
					args = append(args, netdef.ArgInt(argNames[rng.IntN(len(argNames))], hostileInts[rng.IntN(len(hostileInts))]))
				case 1:
					ins[i].shape = shapes[rng.IntN(len(shapes))]
				case 2:
					ins[i].scale = scales[rng.IntN(len(scales))]
				case 3:
					ins[i].zero = zeros[rng.IntN(len(zeros))]
				case 4:
					args = append(args, netdef.ArgFloat("Y_scale", scales[rng.IntN(len(scales))]),
						netdef.ArgInts("shape", hostileInts[rng.IntN(len(hostileInts))], -1))
				}
			}
			w := newEnv(t)
			names := make([]string, len(ins))
			shapesIn := make([]operators.TensorShape, len(ins))
			for i, in := range ins {
				names[i] = string(rune('a' + i))
				tt := &blob.Tensor{}
				if err := tt.Init(in.dt, in.shape...); err != nil {
					t.Fatal(err)
				}
				if in.dt == blob.Uint8 {
					for j := range blob.Data[uint8](tt) {
						blob.Data[uint8](tt)[j] = uint8(rng.IntN(256))
					}
				}
				w.feed(names[i], &Int8Tensor{T: tt, Scale: in.scale, ZeroPoint: in.zero})
				shapesIn[i] = operators.ShapeOf(tt)
			}
			def := netdef.NewOperator(typ, names, tmpl.outs, args...)
			if _, err := operators.InferShapes(&netdef.NetDef{Op: []*netdef.OperatorDef{def}}, func(name string) operators.TensorShape {
				for i, n := range names {
					if n == name {
						return shapesIn[i]
					}
				}
				return operators.UnknownShape
			}); err != nil && strings.Contains(err.Error(), "shape inference failed") {
				t.Fatalf("%v: %v", def, err)
			}
			cases++
			var err error
			for range 2 {
				if err = w.w.Run(def); err != nil && strings.Contains(err.Error(), "panic") {
					t.Fatalf("%v with inputs %v: %v", def, shapesIn, err)
				}
			}
			if k == 0 && err != nil {
				t.Fatalf("%s: the valid template fails: %v", typ, err)
			}
			if err == nil {
				ran++
				perType[typ]++
				if y, isQ := w.w.Blobs["y"].Get().(*Int8Tensor); isQ && y.T.Size() > 1<<16 {
					t.Fatalf("%v: output %v", def, y.T.Dims())
				}
			}
		}
	}
	t.Logf("%d hostile int8 cases, %d ran without error, no panics; ran per operator: %v", cases, ran, perType)
}
