package tensor

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "OneHot", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "Turns indices [N] (INT64 or INT32) and a scalar index size K into FLOAT one-hot rows [N, K].",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &oneHotOp{Base: b}, nil
	})
	operators.MustRegisterNoGradient("OneHot")
}

type oneHotOp struct {
	*operators.Base
	idx  []int
	dims []int
}

func (o *oneHotOp) Run() error {
	ind, err := o.Input(0)
	if err != nil {
		return err
	}
	st, err := o.Input(1)
	if err != nil {
		return err
	}
	if ind.NumDims() != 1 {
		return o.Errorf("indices input 0 (%q) must be 1-D, has shape %v", o.InputName(0), ind.Dims())
	}
	if st.Size() != 1 {
		return o.Errorf("index size input 1 (%q) must hold one element, has shape %v", o.InputName(1), st.Dims())
	}
	var size int
	switch st.DataType() {
	case blob.Int64:
		size = int(blob.Data[int64](st)[0])
	case blob.Int32:
		size = int(blob.Data[int32](st)[0])
	default:
		return o.Errorf("index size input 1 (%q) has type %v, want INT64 or INT32", o.InputName(1), st.DataType())
	}
	if size < 0 {
		return o.Errorf("index size input 1 (%q) is %d, must be >= 0", o.InputName(1), size)
	}
	var ok bool
	if o.idx, ok = readIndices(o.idx[:0], ind); !ok {
		return o.Errorf("indices input 0 (%q) has type %v, want INT64 or INT32", o.InputName(0), ind.DataType())
	}
	o.dims = append(o.dims[:0], len(o.idx), size)
	y := o.Output(0)
	if err := y.Init(blob.Float32, o.dims...); err != nil {
		return err
	}
	out := blob.Data[float32](y)
	clear(out)
	for i, k := range o.idx {
		if k < 0 || k >= size {
			return o.Errorf("indices input 0 (%q) element %d is %d, out of range for index size %d", o.InputName(0), i, k, size)
		}
		out[i*size+k] = 1
	}
	return nil
}
