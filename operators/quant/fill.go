package quant

import (
	"math"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	fillArgs := append([]operators.ArgSpec{
		{Name: "values", Doc: "the codes: a byte string for Int8GivenTensorFill, ints for Int8GivenIntTensorFill"},
		{Name: "shape", Doc: "the output shape"},
	}, quantArgs...)
	for _, ints := range []bool{false, true} {
		typ, doc := "Int8GivenTensorFill", "Fills an int8 tensor of the given shape with the bytes of the string argument values as UINT8 codes, with scale Y_scale and zero point Y_zero_point."
		if ints {
			typ, doc = "Int8GivenIntTensorFill", "Fills an int8 tensor of INT32 codes (a bias) of the given shape with the integer argument values, with scale Y_scale and zero point Y_zero_point."
		}
		operators.MustRegisterCPU(operators.Schema{
			Type: typ, MinInputs: 0, MaxInputs: 0, MinOutputs: 1, MaxOutputs: 1,
			Args: fillArgs, Doc: doc,
		}, func(b *operators.Base) (operators.Operator, error) { return newInt8Fill(b, ints) })
		operators.MustRegisterNoGradient(typ)
		dt := blob.Uint8
		if ints {
			dt = blob.Int32
		}
		operators.MustRegisterShapeFunc(typ, func(b *operators.Base, _ []operators.TensorShape) ([]operators.TensorShape, error) {
			dims, ok := argDims(b.ArgInts("shape", nil))
			if !ok {
				return nil, nil
			}
			return []operators.TensorShape{operators.Shape(dt, dims...)}, nil
		})
	}

	given := []struct {
		typ, doc string
		dt       blob.DataType
	}{
		{"GivenTensorFp16Fill", "Fills a FLOAT16 tensor with the float argument values, each rounded to the nearest half (ties to even).", blob.Float16},
		{"GivenTensorByteStringToUInt8Fill", "Fills a UINT8 tensor with the bytes of the argument values: a list of one string, as Caffe2 writes it (a single string is read too).", blob.Uint8},
	}
	for _, g := range given {
		dt := g.dt
		operators.MustRegisterCPU(operators.Schema{
			Type: g.typ, MinInputs: 0, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: operators.InplacePairs([2]int{0, 0}),
			Args: []operators.ArgSpec{
				{Name: "values", Doc: "the elements, in storage order; their count must equal the output size"},
				{Name: "dtype", Doc: "GivenTensorFp16Fill: FLOAT16 only; GivenTensorByteStringToUInt8Fill: STRING (the values' type) only"},
				{Name: "shape", Doc: "output shape when there is no input"},
				{Name: "extra_shape", Doc: "dimensions appended to the shape taken from the input"},
				{Name: "input_as_shape", Default: false, Doc: "take the shape from the input's values (1-D int64) instead of its shape"},
			},
			Doc: g.doc + " The output shape follows Caffe2's filler rules: the shape argument, or input 0's shape (its values with input_as_shape) followed by extra_shape.",
		}, func(b *operators.Base) (operators.Operator, error) { return newGivenFill(b, dt) })
		operators.MustRegisterNoGradient(g.typ)
		operators.MustRegisterShapeFunc(g.typ, func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
			return fillerShape(b, in, dt), nil
		})
	}
}

// argDims converts a shape argument, reporting negative dims and ranks
// over 64 as unusable.
func argDims(v []int64) ([]int, bool) {
	if len(v) > 64 {
		return nil, false
	}
	dims := make([]int, len(v))
	for i, d := range v {
		if d < 0 || d > math.MaxInt32*int64(math.MaxInt32) {
			return nil, false
		}
		dims[i] = int(d)
	}
	return dims, true
}

type int8FillOp struct {
	*operators.Base
	dims  []int
	bytes []uint8
	ints  []int32
	isInt bool
	oq    outputQuant
}

func newInt8Fill(b *operators.Base, ints bool) (operators.Operator, error) {
	dims, ok := argDims(b.ArgInts("shape", nil))
	if !ok {
		return nil, b.Errorf("argument shape %v must hold at most 64 non-negative dims", b.ArgInts("shape", nil))
	}
	o := &int8FillOp{Base: b, dims: dims, isInt: ints, oq: readOutputQuant(b)}
	a := netdef.FindArg(b.Def().GetArg(), "values")
	n := 0
	if ints {
		if a != nil {
			o.ints = make([]int32, len(a.Ints))
			for i, v := range a.Ints {
				if v < math.MinInt32 || v > math.MaxInt32 {
					return nil, b.Errorf("values[%d] = %d does not fit INT32", i, v)
				}
				o.ints[i] = int32(v)
			}
		}
		n = len(o.ints)
	} else {
		if a != nil {
			o.bytes = append([]uint8{}, a.S...)
		}
		n = len(o.bytes)
	}
	if want, ok := elementCount(dims); !ok || want != n {
		return nil, b.Errorf("shape %v and %d values do not match", dims, n)
	}
	return o, nil
}

// elementCount multiplies dims, reporting an overflow.
func elementCount(dims []int) (int, bool) {
	n := 1
	for _, d := range dims {
		if d != 0 && n > math.MaxInt64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

func (o *int8FillOp) Run() error {
	y := int8Output(o.Base, 0)
	dt := blob.Uint8
	if o.isInt {
		dt = blob.Int32
	}
	if err := y.T.Init(dt, o.dims...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), o.dims, err)
	}
	y.Scale, y.ZeroPoint = o.oq.scale, o.oq.zero
	if o.isInt {
		copy(blob.Data[int32](y.T), o.ints)
	} else {
		copy(blob.Data[uint8](y.T), o.bytes)
	}
	return nil
}

// givenFill is GivenTensorFp16Fill and GivenTensorByteStringToUInt8Fill:
// given values with Caffe2's FillerOp shape rules.
type givenFill struct {
	*operators.Base
	dt           blob.DataType
	shape, extra []int
	inputAsShape bool
	halves       []blob.Half
	bytes        []uint8
	dims         []int
}

func newGivenFill(b *operators.Base, dt blob.DataType) (operators.Operator, error) {
	o := &givenFill{Base: b, dt: dt, inputAsShape: b.ArgBool("input_as_shape", false)}
	if a := netdef.FindArg(b.Def().GetArg(), "dtype"); a != nil {
		// GivenTensorFp16Fill's dtype names its own type; the byte-string
		// fill's names its values' (STRING), as Caffe2 has it.
		want := int64(dt)
		if dt == blob.Uint8 {
			want = int64(netdef.TensorProto_STRING)
		}
		got := a.GetI()
		if a.S != nil {
			got = int64(netdef.TensorProto_DataType_value[strings.ToUpper(string(a.S))])
		}
		if got != want {
			return nil, b.Errorf("unexpected dtype %v: %s takes %v", netdef.TensorProto_DataType(got), b.Type(), netdef.TensorProto_DataType(want))
		}
	}
	var ok bool
	if o.shape, ok = argDims(b.ArgInts("shape", nil)); !ok {
		return nil, b.Errorf("argument shape %v must hold at most 64 non-negative dims", b.ArgInts("shape", nil))
	}
	if o.extra, ok = argDims(b.ArgInts("extra_shape", nil)); !ok {
		return nil, b.Errorf("argument extra_shape %v must hold at most 64 non-negative dims", b.ArgInts("extra_shape", nil))
	}
	if b.NumInputs() > 0 && len(o.shape) > 0 {
		return nil, b.Errorf("cannot set the shape argument %v and pass in an input (%q) at the same time", o.shape, b.InputName(0))
	}
	if b.NumInputs() == 0 && (len(o.extra) > 0 || o.inputAsShape) {
		return nil, b.Errorf("extra_shape and input_as_shape need an input")
	}
	a := netdef.FindArg(b.Def().GetArg(), "values")
	if a == nil {
		a = &netdef.Argument{}
	}
	if dt == blob.Float16 {
		for _, v := range a.Floats {
			o.halves = append(o.halves, blob.HalfFromFloat32(v))
		}
	} else {
		switch {
		case len(a.Strings) == 1:
			o.bytes = append([]uint8{}, a.Strings[0]...)
		case len(a.Strings) > 1:
			return nil, b.Errorf("values holds %d strings; it takes one, the bytes", len(a.Strings))
		default:
			o.bytes = append([]uint8{}, a.S...)
		}
	}
	if b.NumInputs() == 0 {
		if n, ok := elementCount(o.shape); !ok || n != o.count() {
			return nil, b.Errorf("shape %v and %d values do not match", o.shape, o.count())
		}
	}
	return o, nil
}

func (o *givenFill) count() int { return len(o.halves) + len(o.bytes) }

func (o *givenFill) Run() error {
	o.dims = append(o.dims[:0], o.shape...)
	if o.NumInputs() > 0 {
		in, err := o.Input(0)
		if err != nil {
			return err
		}
		o.dims = o.dims[:0]
		if o.inputAsShape {
			if in.NumDims() != 1 || in.Size() == 0 || in.Size() > 64 || (in.DataType() != blob.Int64 && in.DataType() != blob.Int32) {
				return o.Errorf("with input_as_shape, input %q must be a 1-D INT64 (or INT32) tensor of at most 64 dims, got %v", o.InputName(0), in)
			}
			for _, v := range in.AsFloat64s() {
				if v < 0 {
					return o.Errorf("input %q holds a negative dimension", o.InputName(0))
				}
				o.dims = append(o.dims, int(v))
			}
		} else {
			o.dims = append(o.dims, in.Dims()...)
		}
		o.dims = append(o.dims, o.extra...)
	}
	if n, ok := elementCount(o.dims); !ok || n != o.count() {
		return o.Errorf("output shape %v and %d values do not match", o.dims, o.count())
	}
	y := o.Output(0)
	if err := y.Init(o.dt, o.dims...); err != nil {
		return o.Errorf("output %q %v: %w", o.OutputName(0), o.dims, err)
	}
	if o.dt == blob.Float16 {
		copy(blob.Data[blob.Half](y), o.halves)
	} else {
		copy(blob.Data[uint8](y), o.bytes)
	}
	return nil
}

// fillerShape is the output shape of a filler of type dt.
func fillerShape(b *operators.Base, in []operators.TensorShape, dt blob.DataType) []operators.TensorShape {
	shape, ok1 := argDims(b.ArgInts("shape", nil))
	extra, ok2 := argDims(b.ArgInts("extra_shape", nil))
	switch {
	case !ok1 || !ok2:
		return nil
	case len(in) == 0:
		return []operators.TensorShape{operators.Shape(dt, shape...)}
	case b.ArgBool("input_as_shape", false) || in[0].Rank() < 0 || in[0].Rank()+len(extra) > 64:
		return nil
	}
	return []operators.TensorShape{operators.Shape(dt, append(append([]int{}, in[0].Dims...), extra...)...)}
}
