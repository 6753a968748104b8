package fill

import (
	"math"
	"math/rand/v2"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	uniformSchema := func(typ, doc string, lo, hi any) operators.Schema {
		s := fillerSchema(typ, doc,
			operators.ArgSpec{Name: "min", Default: lo, Doc: "lower bound (not with 3 inputs)"},
			operators.ArgSpec{Name: "max", Default: hi, Doc: "upper bound (not with 3 inputs)"})
		s.MaxInputs = 3
		s.InputsCheck = func(n int) bool { return n != 2 }
		return s
	}
	register(uniformSchema("UniformFill",
		"Fills a float tensor with samples of U[min, max). Inputs: [shape[, min, max]]; with 3 inputs the bounds come from the scalar inputs, and min > max gives an output whose first dimension is 0.",
		0.0, 1.0), newUniformFill)
	register(uniformSchema("UniformIntFill",
		"Fills an int32 tensor with uniform samples in [min, max], both inclusive. Inputs as for UniformFill.",
		int64(0), int64(1)), newUniformIntFill)
	register(fillerSchema("GaussianFill", "Fills a float tensor with samples of N(mean, std²).",
		operators.ArgSpec{Name: "mean", Default: 0.0},
		operators.ArgSpec{Name: "std", Default: 1.0}), newGaussianFill)
	register(fillerSchema("XavierFill",
		"Fills a float tensor with samples of U[-√(3/fan_in), √(3/fan_in)], fan_in = size/dim0."), newXavierFill)
	register(fillerSchema("MSRAFill",
		"Fills a float tensor with samples of N(0, σ²), σ = √(2/fan_out), fan_out = size/dim1."), newMSRAFill)
	register(fillerSchema("RangeFill", "Fills a float tensor with 0, 1, 2, … in storage order."), newRangeFill)
}

// uniformFill is UniformFill (T = float32, U[min, max)) and UniformIntFill
// (T = int32, [min, max] inclusive).
type uniformFill[T float32 | int32] struct {
	filler
	min, max T
	draw     func(d []T, lo, hi T, r *rand.Rand)
}

func newUniform[T float32 | int32](b *operators.Base, lo, hi T, draw func([]T, T, T, *rand.Rand)) (operators.Operator, error) {
	f, err := newFiller(b)
	if err != nil {
		return nil, err
	}
	if b.NumInputs() == 3 {
		if b.HasArg("min") || b.HasArg("max") {
			return nil, b.Errorf("cannot set min or max arguments together with min and max input blobs")
		}
	} else if !(lo < hi) {
		return nil, b.Errorf("max value (%v) should be bigger than min value (%v)", hi, lo)
	}
	return &uniformFill[T]{filler: f, min: lo, max: hi, draw: draw}, nil
}

func newUniformFill(b *operators.Base) (operators.Operator, error) {
	return newUniform(b, b.ArgFloat("min", 0), b.ArgFloat("max", 1), uniformFloat)
}

func newUniformIntFill(b *operators.Base) (operators.Operator, error) {
	return newUniform(b, int32(b.ArgInt("min", 0)), int32(b.ArgInt("max", 1)), uniformInt)
}

func (o *uniformFill[T]) Run() error {
	dims, err := o.outputShape()
	if err != nil {
		return err
	}
	lo, hi := o.min, o.max
	if o.NumInputs() == 3 {
		if lo, err = o.scalarInput(1); err != nil {
			return err
		}
		if hi, err = o.scalarInput(2); err != nil {
			return err
		}
		if lo > hi {
			// dims is the filler's scratch here (there is an input).
			if len(dims) == 0 {
				return o.Errorf("min (%v) > max (%v) needs an output with a first dimension to make empty, but the shape is 0-d", lo, hi)
			}
			dims[0] = 0
		}
	}
	y, err := o.initOutput(blob.TypeOf[T](), dims)
	if err != nil {
		return err
	}
	o.draw(blob.Data[T](y), lo, hi, o.Rand())
	return nil
}

func (o *uniformFill[T]) scalarInput(i int) (T, error) {
	t, err := o.InputOf(i, blob.TypeOf[T]())
	if err != nil {
		return 0, err
	}
	if t.Size() != 1 {
		return 0, o.Errorf("input %d (%q) must be a scalar, got %v", i, o.InputName(i), t)
	}
	return blob.Data[T](t)[0], nil
}

// uniformFloat fills d with samples of U[lo, hi) (all lo when lo == hi).
func uniformFloat(d []float32, lo, hi float32, r *rand.Rand) {
	width := float64(hi) - float64(lo)
	below := math.Nextafter32(hi, lo) // where rounding to float32 would reach hi
	for i := range d {
		v := float32(float64(lo) + width*r.Float64())
		if v >= hi && lo < hi {
			v = below
		}
		d[i] = v
	}
}

// uniformInt fills d with uniform samples of [lo, hi], both inclusive.
func uniformInt(d []int32, lo, hi int32, r *rand.Rand) {
	n := int64(hi) - int64(lo) + 1
	for i := range d {
		d[i] = int32(int64(lo) + r.Int64N(n))
	}
}

// gaussian fills d with samples of N(mean, std²).
func gaussian(d []float32, mean, std float64, r *rand.Rand) {
	for i := range d {
		d[i] = float32(mean + std*r.NormFloat64())
	}
}

type gaussianFill struct {
	filler
	mean, std float64
}

func newGaussianFill(b *operators.Base) (operators.Operator, error) {
	f, err := newFiller(b)
	if err != nil {
		return nil, err
	}
	o := &gaussianFill{filler: f, mean: float64(b.ArgFloat("mean", 0)), std: float64(b.ArgFloat("std", 1))}
	if o.std < 0 {
		return nil, b.Errorf("standard deviation should be non-negative, got %v", o.std)
	}
	return o, nil
}

func (o *gaussianFill) Run() error {
	y, err := o.output(blob.Float32)
	if err != nil {
		return err
	}
	gaussian(blob.Data[float32](y), o.mean, o.std, o.Rand())
	return nil
}

type xavierFill struct{ filler }

func newXavierFill(b *operators.Base) (operators.Operator, error) {
	f, err := newFiller(b)
	if err != nil {
		return nil, err
	}
	return &xavierFill{f}, nil
}

func (o *xavierFill) Run() error {
	y, err := o.output(blob.Float32)
	if err != nil {
		return err
	}
	if y.NumDims() < 1 {
		return o.Errorf("XavierFill needs an output with at least 1 dimension, got shape %v", y.Dims())
	}
	if y.Size() == 0 {
		return nil
	}
	fanIn := y.Size() / y.Dim(0)
	scale := float32(math.Sqrt(3 / float64(fanIn)))
	uniformFloat(blob.Data[float32](y), -scale, scale, o.Rand())
	return nil
}

type msraFill struct{ filler }

func newMSRAFill(b *operators.Base) (operators.Operator, error) {
	f, err := newFiller(b)
	if err != nil {
		return nil, err
	}
	return &msraFill{f}, nil
}

func (o *msraFill) Run() error {
	y, err := o.output(blob.Float32)
	if err != nil {
		return err
	}
	if y.NumDims() < 2 {
		return o.Errorf("MSRAFill needs an output with at least 2 dimensions, got shape %v", y.Dims())
	}
	if y.Size() == 0 {
		return nil
	}
	fanOut := y.Size() / y.Dim(1)
	gaussian(blob.Data[float32](y), 0, math.Sqrt(2/float64(fanOut)), o.Rand())
	return nil
}

type rangeFill struct{ filler }

func newRangeFill(b *operators.Base) (operators.Operator, error) {
	f, err := newFiller(b)
	if err != nil {
		return nil, err
	}
	return &rangeFill{f}, nil
}

func (o *rangeFill) Run() error {
	y, err := o.output(blob.Float32)
	if err != nil {
		return err
	}
	for i, d := 0, blob.Data[float32](y); i < len(d); i++ {
		d[i] = float32(i)
	}
	return nil
}
