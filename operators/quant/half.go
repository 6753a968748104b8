package quant

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// fp16Max is the largest finite half-precision value.
const fp16Max = 65504

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "FloatToHalf", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "clip", Default: false, Doc: "clamp to ±65504 first, so that large values do not become infinities"}},
		Doc:  "Converts FLOAT to FLOAT16, rounding to nearest (ties to even).",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &floatToHalfOp{Base: b, clip: b.ArgBool("clip", false)}, nil
	})
	operators.MustRegisterGradient("FloatToHalf", func(g *operators.GradientContext) error {
		g.Op("HalfToFloat", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("FloatToHalf", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{in[0].WithType(blob.Float16)}, nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "HalfToFloat", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Doc: "Converts FLOAT16 to FLOAT exactly.",
	}, func(b *operators.Base) (operators.Operator, error) { return &halfToFloatOp{Base: b}, nil })
	operators.MustRegisterGradient("HalfToFloat", func(g *operators.GradientContext) error {
		g.Op("FloatToHalf", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("HalfToFloat", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{in[0].WithType(blob.Float32)}, nil
	})
}

type floatToHalfOp struct {
	*operators.Base
	clip bool
}

func (o *floatToHalfOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Float16, x.Dims()...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), x.Dims(), err)
	}
	yd := blob.Data[blob.Half](y)
	for i, v := range blob.Data[float32](x) {
		if o.clip {
			v = max(-fp16Max, min(v, fp16Max))
		}
		yd[i] = blob.HalfFromFloat32(v)
	}
	return nil
}

type halfToFloatOp struct{ *operators.Base }

func (o *halfToFloatOp) Run() error {
	x, err := o.InputOf(0, blob.Float16)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, x.Dims()...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), x.Dims(), err)
	}
	yd := blob.Data[float32](y)
	for i, h := range blob.Data[blob.Half](x) {
		yd[i] = h.Float32()
	}
	return nil
}
