package quant

import (
	"math"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// addLeftShift is the headroom Int8Add gives its inputs before scaling
// them (Caffe2's kAddLeftShift).
const addLeftShift = 20

func init() {
	for _, s := range []struct {
		typ  string
		relu bool
		min  int
		max  int
	}{{"Int8Add", false, 2, 2}, {"Int8AddRelu", true, 2, 2}, {"Int8Sum", false, 1, operators.Unbounded}, {"Int8SumRelu", true, 1, operators.Unbounded}} {
		doc := "Element-wise sum of two int8 tensors of one shape (no broadcast), requantized to Y_scale and Y_zero_point."
		if s.min == 1 {
			doc = "Int8Add under the name of Sum: it takes exactly two int8 tensors of one shape (the schema's wider count is Caffe2's), requantized to Y_scale and Y_zero_point."
		}
		if s.relu {
			doc += " The output goes through a Relu."
		}
		relu := s.relu
		operators.MustRegisterCPU(operators.Schema{
			Type: s.typ, MinInputs: s.min, MaxInputs: s.max, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: operators.InplacePairs([2]int{0, 0}, [2]int{1, 0}),
			Args:         quantArgs, Doc: doc,
		}, func(b *operators.Base) (operators.Operator, error) {
			if b.NumInputs() != 2 {
				return nil, b.Errorf("%s takes 2 inputs, got %d", b.Type(), b.NumInputs())
			}
			return &int8AddOp{Base: b, relu: relu, oq: readOutputQuant(b)}, nil
		})
		operators.MustRegisterNoGradient(s.typ)
		operators.MustRegisterShapeFunc(s.typ, int8SameShape)
	}

	unary := []struct {
		typ, doc string
		f        func(b *operators.Base) operators.Operator
	}{
		{"Int8Relu", "Relu of an int8 tensor: codes below the zero point are raised to it. Y_scale and Y_zero_point must equal X's.",
			func(b *operators.Base) operators.Operator { return &int8ReluOp{Base: b, oq: readOutputQuant(b)} }},
		{"Int8Sigmoid", "Sigmoid of an int8 tensor through QNNPACK's lookup table; Y_scale must be 1/256 and Y_zero_point 0.",
			func(b *operators.Base) operators.Operator { return &int8LUTOp{Base: b, oq: readOutputQuant(b)} }},
		{"Int8Softmax", "Softmax of an int8 tensor over all but its first dimension, through QNNPACK's lookup table and rounded division; Y_scale must be 1/256 and Y_zero_point 0.",
			func(b *operators.Base) operators.Operator { return &int8SoftmaxOp{Base: b, oq: readOutputQuant(b)} }},
	}
	for _, u := range unary {
		f := u.f
		operators.MustRegisterCPU(operators.Schema{
			Type: u.typ, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: operators.InplacePairs([2]int{0, 0}),
			Args:         quantArgs, Doc: u.doc,
		}, func(b *operators.Base) (operators.Operator, error) { return f(b), nil })
		operators.MustRegisterNoGradient(u.typ)
		operators.MustRegisterShapeFunc(u.typ, int8SameShape)
	}

	operators.MustRegisterCPU(operators.Schema{
		Type: "Int8Quantize", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: quantArgs,
		Doc:  "Quantizes a FLOAT tensor: codes Y_zero_point + round(x / Y_scale) (ties to even), saturated to [0, 255].",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &int8QuantizeOp{Base: b, oq: readOutputQuant(b)}, nil
	})
	operators.MustRegisterNoGradient("Int8Quantize")
	operators.MustRegisterShapeFunc("Int8Quantize", int8SameShape)

	operators.MustRegisterCPU(operators.Schema{
		Type: "Int8Dequantize", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "The FLOAT values scale·(code − zero point) of an int8 tensor.",
	}, func(b *operators.Base) (operators.Operator, error) { return &int8DequantizeOp{Base: b}, nil })
	operators.MustRegisterNoGradient("Int8Dequantize")
	operators.MustRegisterShapeFunc("Int8Dequantize", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{in[0].WithType(blob.Float32)}, nil
	})
}

// int8SameShape gives every output input 0's dims with UINT8 codes.
func int8SameShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	return []operators.TensorShape{in[0].WithType(blob.Uint8)}, nil
}

type int8AddOp struct {
	*operators.Base
	relu bool
	oq   outputQuant
}

func (o *int8AddOp) Run() error {
	a, err := int8Input(o.Base, 0)
	if err != nil {
		return err
	}
	b, err := int8Input(o.Base, 1)
	if err != nil {
		return err
	}
	if !slices.Equal(a.T.Dims(), b.T.Dims()) {
		return o.Errorf("inputs %q %v and %q %v must have one shape (no broadcast)", o.InputName(0), a.T.Dims(), o.InputName(1), b.T.Dims())
	}
	if err := checkQuant(o.Base, "input 0's", a.Scale, a.ZeroPoint); err != nil {
		return err
	}
	if err := checkQuant(o.Base, "input 1's", b.Scale, b.ZeroPoint); err != nil {
		return err
	}
	if err := checkQuant(o.Base, "the output's", o.oq.scale, o.oq.zero); err != nil {
		return err
	}
	// Caffe2's multipliers, in double from the float32 scales.
	twiceMax := 2 * float64(max(a.Scale, b.Scale))
	am, ash, err := quantizeMultiplierSmallerThanOne(float64(a.Scale) / twiceMax)
	if err != nil {
		return o.Errorf("%v", err)
	}
	bm, bsh, err := quantizeMultiplierSmallerThanOne(float64(b.Scale) / twiceMax)
	if err != nil {
		return o.Errorf("%v", err)
	}
	ym, ysh, err := quantizeMultiplierSmallerThanOne(twiceMax / float64(float32(1<<addLeftShift)*o.oq.scale))
	if err != nil {
		return o.Errorf("2·max input scale %g / (2^20·Y_scale %g): %v (Y_scale is too small for these inputs)", twiceMax, o.oq.scale, err)
	}
	lo, hi := activationLimits(o.oq.scale, o.oq.zero, o.relu)
	az, bz := a.ZeroPoint, b.ZeroPoint
	ad, bd := blob.Data[uint8](a.T), blob.Data[uint8](b.T)
	y := int8Output(o.Base, 0)
	if err := y.T.Init(blob.Uint8, a.T.Dims()...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), a.T.Dims(), err)
	}
	y.Scale, y.ZeroPoint = o.oq.scale, o.oq.zero
	yd := blob.Data[uint8](y.T)
	for i := range yd {
		sa := multiplyByQuantizedMultiplierSmallerThanOne((int32(ad[i])-az)<<addLeftShift, am, ash)
		sb := multiplyByQuantizedMultiplierSmallerThanOne((int32(bd[i])-bz)<<addLeftShift, bm, bsh)
		v := multiplyByQuantizedMultiplierSmallerThanOne(sa+sb, ym, ysh) + o.oq.zero
		yd[i] = uint8(max(lo, min(hi, v)))
	}
	return nil
}

type int8ReluOp struct {
	*operators.Base
	oq outputQuant
}

func (o *int8ReluOp) Run() error {
	x, err := int8Input(o.Base, 0)
	if err != nil {
		return err
	}
	if err := o.oq.same(o.Base, x); err != nil {
		return err
	}
	if err := checkZero(o.Base, "X's", x.ZeroPoint); err != nil {
		return err
	}
	scale, zero := x.Scale, x.ZeroPoint
	xd := blob.Data[uint8](x.T)
	y := int8Output(o.Base, 0)
	if err := y.T.Init(blob.Uint8, x.T.Dims()...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), x.T.Dims(), err)
	}
	y.Scale, y.ZeroPoint = scale, zero
	z := uint8(zero)
	yd := blob.Data[uint8](y.T)
	for i, v := range xd {
		yd[i] = max(v, z)
	}
	return nil
}

// checkUnitOutput checks the output quantization that QNNPACK's sigmoid
// and softmax support: scale 1/256, zero point 0.
func checkUnitOutput(b *operators.Base, oq outputQuant) error {
	if oq.scale != 1.0/256 || oq.zero != 0 {
		return b.Errorf("Y_scale %g and Y_zero_point %d: only Y_scale 1/256 and Y_zero_point 0 are supported", oq.scale, oq.zero)
	}
	return nil
}

// int8LUTOp is Int8Sigmoid: each code through a 256-entry table.
type int8LUTOp struct {
	*operators.Base
	oq    outputQuant
	table [256]uint8
}

func (o *int8LUTOp) Run() error {
	x, err := int8Input(o.Base, 0)
	if err != nil {
		return err
	}
	if err := checkUnitOutput(o.Base, o.oq); err != nil {
		return err
	}
	if err := checkQuant(o.Base, "X's", x.Scale, x.ZeroPoint); err != nil {
		return err
	}
	sigmoidTable(&o.table, x.Scale, x.ZeroPoint)
	xd := blob.Data[uint8](x.T)
	y := int8Output(o.Base, 0)
	if err := y.T.Init(blob.Uint8, x.T.Dims()...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), x.T.Dims(), err)
	}
	y.Scale, y.ZeroPoint = o.oq.scale, o.oq.zero
	yd := blob.Data[uint8](y.T)
	for i, v := range xd {
		yd[i] = o.table[v]
	}
	return nil
}

// sigmoidTable is QNNPACK's qnnp_create_sigmoid_nc_q8 table for output
// scale 1/256, zero point 0 and range [0, 255], in float32 arithmetic.
func sigmoidTable(t *[256]uint8, scale float32, zero int32) {
	for i := range t {
		x := scale * float32(int32(i)-zero)
		e := float32(math.Exp(float64(-x)))
		s := 256 / (1 + e)
		s = max(0, min(255, s))
		t[i] = uint8(math.RoundToEven(float64(s)))
	}
}

// int8SoftmaxOp is Int8Softmax: QNNPACK's softargmax over rows of
// size/dim0 codes.
type int8SoftmaxOp struct {
	*operators.Base
	oq    outputQuant
	table [256]uint32
}

func (o *int8SoftmaxOp) Run() error {
	x, err := int8Input(o.Base, 0)
	if err != nil {
		return err
	}
	if err := checkUnitOutput(o.Base, o.oq); err != nil {
		return err
	}
	if err := checkQuant(o.Base, "X's", x.Scale, x.ZeroPoint); err != nil {
		return err
	}
	if x.T.NumDims() == 0 {
		return o.Errorf("X %q is a scalar: Int8Softmax needs a batch dimension", o.InputName(0))
	}
	rows, scale := x.T.Dim(0), x.Scale
	xd := blob.Data[uint8](x.T)
	y := int8Output(o.Base, 0)
	if err := y.T.Init(blob.Uint8, x.T.Dims()...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), x.T.Dims(), err)
	}
	y.Scale, y.ZeroPoint = o.oq.scale, o.oq.zero
	if len(xd) == 0 {
		return nil
	}
	channels := len(xd) / rows
	softmaxTable(&o.table, channels, scale)
	yd := blob.Data[uint8](y.T)
	for r := range rows {
		softmaxRow(xd[r*channels:(r+1)*channels], yd[r*channels:(r+1)*channels], &o.table)
	}
	return nil
}

// softmaxTable is QNNPACK's qnnp_create_softargmax_nc_q8 table:
// lrint(Q·exp((i − 255)·scale)), Q = min(2^32−1 / channels, 2^23 − 1).
func softmaxTable(t *[256]uint32, channels int, scale float32) {
	q := math.Min(float64(math.MaxUint32)/float64(channels), 8388607)
	for i := range t {
		t[i] = uint32(math.RoundToEven(q * math.Exp(float64(i-255)*float64(scale))))
	}
}

// softmaxRow is QNNPACK's u8lut32norm over one row, with the table read so
// that the row's largest code takes entry 255.
func softmaxRow(x, y []uint8, t *[256]uint32) {
	adjust := 255 - int(slices.Max(x))
	var sum uint32
	for _, v := range x {
		sum += t[int(v)+adjust]
	}
	if sum == 0 {
		clear(y)
		return
	}
	rounding := sum >> 1
	for i, v := range x {
		q := (t[int(v)+adjust]<<8 + rounding) / sum
		y[i] = uint8(min(q, 255))
	}
}

type int8QuantizeOp struct {
	*operators.Base
	oq outputQuant
}

func (o *int8QuantizeOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	y := int8Output(o.Base, 0)
	if err := y.T.Init(blob.Uint8, x.Dims()...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), x.Dims(), err)
	}
	y.Scale, y.ZeroPoint = o.oq.scale, o.oq.zero
	yd := blob.Data[uint8](y.T)
	for i, v := range blob.Data[float32](x) {
		yd[i] = quantizeUint8(o.oq.scale, o.oq.zero, v)
	}
	return nil
}

type int8DequantizeOp struct{ *operators.Base }

func (o *int8DequantizeOp) Run() error {
	x, err := int8Input(o.Base, 0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, x.T.Dims()...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), x.T.Dims(), err)
	}
	yd := blob.Data[float32](y)
	for i, v := range blob.Data[uint8](x.T) {
		yd[i] = float32(int32(v)-x.ZeroPoint) * x.Scale
	}
	return nil
}
