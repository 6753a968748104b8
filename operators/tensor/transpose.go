package tensor

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Transpose", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "axes", Doc: "permutation of the input dimensions (default: reversed)"}},
		Doc:  "Permutes the dimensions of the input: output dimension i is input dimension axes[i].",
	}, newTranspose)
	operators.MustRegisterGradient("Transpose", transposeGradient)
}

// transposeGradient is Transpose(dY) -> dX with the forward arguments, axes
// replaced by its inverse permutation in place.
func transposeGradient(g *operators.GradientContext) error {
	g.CopyArguments = false
	args := make([]*netdef.Argument, len(g.Def().GetArg()))
	for i, a := range g.Def().GetArg() {
		c := proto.Clone(a).(*netdef.Argument)
		if c.GetName() == "axes" {
			if err := checkPermutation(a.Ints); err != nil {
				return err
			}
			for k, ax := range a.Ints {
				c.Ints[ax] = int64(k)
			}
		}
		args[i] = c
	}
	g.Op("Transpose", []string{g.GO(0)}, []string{g.GI(0)}, args...)
	return nil
}

// checkPermutation reports whether axes is a permutation of 0…len(axes)-1.
func checkPermutation(axes []int64) error {
	seen := make([]bool, len(axes))
	for _, a := range axes {
		if a < 0 || int(a) >= len(axes) || seen[a] {
			return fmt.Errorf("axes %v is not a permutation of 0..%d", axes, len(axes)-1)
		}
		seen[a] = true
	}
	return nil
}

type transposeOp struct {
	*operators.Base
	axes    []int // nil: reverse
	perm    []int
	dims    []int
	strides []int
	inner   []int
	idx     []int
}

func newTranspose(b *operators.Base) (operators.Operator, error) {
	op := &transposeOp{Base: b}
	if raw := b.ArgInts("axes", nil); len(raw) > 0 {
		if err := checkPermutation(raw); err != nil {
			return nil, b.Errorf("argument %v", err)
		}
		for _, a := range raw {
			op.axes = append(op.axes, int(a))
		}
	}
	return op, nil
}

func (o *transposeOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	n := x.NumDims()
	perm := o.axes
	if perm == nil {
		perm = ints(o.perm, n)
		o.perm = perm
		for i := range perm {
			perm[i] = n - 1 - i
		}
	} else if len(perm) != n {
		return o.Errorf("axes %v has %d entries, but input 0 (%q) of shape %v has %d dimensions", perm, len(perm), o.InputName(0), x.Dims(), n)
	}
	o.inner, o.dims, o.strides, o.idx = ints(o.inner, n), ints(o.dims, n), ints(o.strides, n), ints(o.idx, n)
	s := 1
	for i := n - 1; i >= 0; i-- {
		o.inner[i] = s
		s *= x.Dim(i)
	}
	for i, p := range perm {
		o.dims[i] = x.Dim(p)
		o.strides[i] = o.inner[p]
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return err
	}
	elemsOf(x.DataType()).transpose(y, x, o.dims, o.strides, o.idx)
	return nil
}
