package fill

import (
	"fmt"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// filler is what every fill operator embeds: its Base and the output-shape
// rules of Caffe2's FillerOp, read once when the operator is created.
type filler struct {
	*operators.Base
	shape        []int // the "shape" argument, used when there is no input
	extraShape   []int
	inputAsShape bool
	dims         []int // scratch: the output shape of the current run
}

func newFiller(b *operators.Base) (filler, error) {
	f := filler{Base: b, inputAsShape: b.ArgBool("input_as_shape", false)}
	if a := netdef.FindArg(b.Def().Arg, "shape"); a != nil && len(a.Ints) == 0 && a.I != nil {
		return f, b.Errorf("the 'shape' argument was a scalar (%d), a list is expected", a.GetI())
	}
	var err error
	if f.shape, err = dimsArg(b, "shape"); err != nil {
		return f, err
	}
	if f.extraShape, err = dimsArg(b, "extra_shape"); err != nil {
		return f, err
	}
	if b.NumInputs() > 0 {
		if len(f.shape) != 0 {
			return f, b.Errorf("cannot set the shape argument %v and pass in an input (%q) at the same time", f.shape, b.InputName(0))
		}
	} else {
		if len(f.extraShape) != 0 {
			return f, b.Errorf("cannot set extra_shape %v when there is no input", f.extraShape)
		}
		if f.inputAsShape {
			return f, b.Errorf("input_as_shape is set but there is no input")
		}
	}
	return f, nil
}

// dimsArg reads a list of non-negative dimensions.
func dimsArg(b *operators.Base, name string) ([]int, error) {
	v := b.ArgInts(name, nil)
	dims := make([]int, len(v))
	for i, d := range v {
		if d < 0 {
			return nil, b.Errorf("argument %q has a negative dimension: %v", name, v)
		}
		dims[i] = int(d)
	}
	return dims, nil
}

// outputShape returns the output shape of this run. The slice is the
// filler's scratch (or its shape argument) and stays valid until the next
// call; callers must not keep it.
func (f *filler) outputShape() ([]int, error) {
	if f.NumInputs() == 0 {
		return f.shape, nil
	}
	in, err := f.Input(0)
	if err != nil {
		return nil, err
	}
	f.dims = f.dims[:0]
	if f.inputAsShape {
		if in.NumDims() != 1 || in.Size() == 0 {
			return nil, f.Errorf("with input_as_shape, input %q must be a non-empty 1-D int64 tensor, got %v", f.InputName(0), in)
		}
		switch in.DataType() {
		case blob.Int64:
			f.dims = appendDims(f.dims, blob.Data[int64](in))
		case blob.Int32:
			f.dims = appendDims(f.dims, blob.Data[int32](in))
		default:
			return nil, f.Errorf("with input_as_shape, input %q must hold int64 (or int32) dimensions, got %v", f.InputName(0), in.DataType())
		}
		for _, d := range f.dims {
			if d < 0 {
				return nil, f.Errorf("input %q holds a negative dimension: %v", f.InputName(0), f.dims)
			}
		}
	} else {
		f.dims = append(f.dims, in.Dims()...)
	}
	f.dims = append(f.dims, f.extraShape...)
	return f.dims, nil
}

func appendDims[T int32 | int64](dims []int, v []T) []int {
	for _, d := range v {
		dims = append(dims, int(d))
	}
	return dims
}

// initOutput gives the output the element type and shape; its storage is
// reused when it is large enough. An error (such as a shape over the
// memory budget) names the output and where its shape came from.
func (f *filler) initOutput(dtype blob.DataType, dims []int) (*blob.Tensor, error) {
	y := f.Output(0)
	if err := y.Init(dtype, dims...); err != nil {
		return nil, f.Errorf("output %q, shaped by %s: %w", f.OutputName(0), f.shapeSource(), err)
	}
	return y, nil
}

// shapeSource says where the output shape comes from: the arguments or
// the input.
func (f *filler) shapeSource() string {
	src := "the shape argument"
	switch {
	case f.NumInputs() > 0 && f.inputAsShape:
		src = fmt.Sprintf("the values of input %q (input_as_shape)", f.InputName(0))
	case f.NumInputs() > 0:
		src = fmt.Sprintf("the dims of input %q", f.InputName(0))
	}
	if len(f.extraShape) > 0 {
		src += fmt.Sprintf(" and extra_shape %v", f.extraShape)
	}
	return src
}

// output computes the run's shape and initializes the output with it.
func (f *filler) output(dtype blob.DataType) (*blob.Tensor, error) {
	dims, err := f.outputShape()
	if err != nil {
		return nil, err
	}
	return f.initOutput(dtype, dims)
}

// fillerSchema is the schema of a fill operator taking zero or one input.
func fillerSchema(typ, doc string, args ...operators.ArgSpec) operators.Schema {
	return operators.Schema{
		Type: typ, MinInputs: 0, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args:         append(args, shapeArgs...),
		Doc:          doc,
	}
}

var shapeArgs = []operators.ArgSpec{
	{Name: "shape", Doc: "output shape when there is no input"},
	{Name: "extra_shape", Doc: "dimensions appended to the shape taken from the input"},
	{Name: "input_as_shape", Default: false, Doc: "take the shape from the input's values (1-D int64) instead of its shape"},
}

func register(s operators.Schema, f operators.Factory) {
	operators.MustRegisterCPU(s, f)
	operators.MustRegisterNoGradient(s.Type)
}
