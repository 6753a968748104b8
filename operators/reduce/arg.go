package reduce

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	for _, a := range []struct {
		typ     string
		largest bool
	}{{"ArgMax", true}, {"ArgMin", false}} {
		what := "largest"
		if !a.largest {
			what = "smallest"
		}
		operators.MustRegisterCPU(operators.Schema{
			Type:      a.typ,
			MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			Args: []operators.ArgSpec{
				{Name: "axis", Default: -1, Doc: "the axis to search (negative counts from the end)"},
				{Name: "keepdims", Default: 1, Doc: "keep the axis as size 1"},
			},
			Doc: "The int64 index of the " + what + " element along axis (the first one on ties).",
		}, newArg(a.largest))
		operators.MustRegisterGradientForbidden(a.typ)
	}
}

type argOp struct {
	*operators.Base
	largest  bool
	axis     int
	keepDims bool
	outDims  []int
	best     any // scratch: a []T of the best values seen, T the input type
}

func newArg(largest bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		return &argOp{Base: b, largest: largest, axis: int(b.ArgInt("axis", -1)), keepDims: b.ArgBool("keepdims", true)}, nil
	}
}

// canonicalAxis maps a possibly negative axis into [0, nd), naming input i
// in the error.
func canonicalAxis(o *operators.Base, axis, nd, i int) (int, error) {
	a, ok := operators.CanonicalAxis(axis, nd)
	if !ok {
		return 0, o.Errorf("axis %d is out of range for input %d (%q) with %d dimensions", axis, i, o.InputName(i), nd)
	}
	return a, nil
}

func (o *argOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	dt := x.DataType()
	if err := checkType(o.Base, 0, dt, true); err != nil {
		return err
	}
	axis, err := canonicalAxis(o.Base, o.axis, x.NumDims(), 0)
	if err != nil {
		return err
	}
	dims := x.Dims()
	prev, n, next := x.SizeToDim(axis), dims[axis], x.SizeFromDim(axis+1)
	if n == 0 && prev*next > 0 {
		return o.Errorf("input %q has shape %v: axis %d is empty", o.InputName(0), dims, axis)
	}
	o.outDims = append(o.outDims[:0], dims[:axis]...)
	if o.keepDims {
		o.outDims = append(o.outDims, 1)
	}
	o.outDims = append(o.outDims, dims[axis+1:]...)
	y := o.Output(0)
	if err := y.Init(blob.Int64, o.outDims...); err != nil {
		return err
	}
	if x.Size() == 0 {
		// Y is empty too (an empty axis of a non-empty rest was refused):
		// the kernel would only loop over, and size its scratch by, the
		// dims beside the 0.
		return nil
	}
	out := blob.Data[int64](y)
	switch dt {
	case blob.Float32:
		argReduce(o.largest, prev, n, next, blob.Data[float32](x), out, scratch[float32](&o.best, next))
	case blob.Float64:
		argReduce(o.largest, prev, n, next, blob.Data[float64](x), out, scratch[float64](&o.best, next))
	case blob.Int32:
		argReduce(o.largest, prev, n, next, blob.Data[int32](x), out, scratch[int32](&o.best, next))
	case blob.Int64:
		argReduce(o.largest, prev, n, next, blob.Data[int64](x), out, scratch[int64](&o.best, next))
	}
	return nil
}

// scratch returns a []T of length n kept in *buf, allocating only when *buf
// holds another type or too little.
func scratch[T number](buf *any, n int) []T {
	if s, ok := (*buf).([]T); ok && cap(s) >= n {
		return s[:n]
	}
	s := make([]T, n)
	*buf = s
	return s
}

// argReduce stores in y[i*next+j] the index k of the largest (smallest)
// x[(i*n+k)*next+j], the first one on ties; best is scratch of length next.
func argReduce[T number](largest bool, prev, n, next int, x []T, y []int64, best []T) {
	clear(y)
	if n == 0 {
		return
	}
	for i := range prev {
		base := i * n * next
		ys := y[i*next : (i+1)*next]
		copy(best, x[base:base+next])
		for k := 1; k < n; k++ {
			xs := x[base+k*next : base+(k+1)*next]
			if largest {
				for j, v := range xs {
					if v > best[j] {
						best[j], ys[j] = v, int64(k)
					}
				}
			} else {
				for j, v := range xs {
					if v < best[j] {
						best[j], ys[j] = v, int64(k)
					}
				}
			}
		}
	}
}
