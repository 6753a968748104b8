package tensor

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	tileArgs := []operators.ArgSpec{
		{Name: "tiles", Doc: "number of copies (or give it as input 1)"},
		{Name: "axis", Doc: "axis to repeat along; negative counts from the end (or give it as input 2)"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "Tile", MinInputs: 1, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: tileArgs,
		Doc: "Repeats X tiles times along axis. tiles and axis come from the arguments, or from 1-element " +
			"INT32/INT64 inputs 1 and 2; as in Caffe2, an INT64 tiles input without an axis input sets axis to 0.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return newTile(b, false), nil
	})
	operators.MustRegisterGradient("Tile", func(g *operators.GradientContext) error {
		ins := []string{g.GO(0)}
		for i := 1; i < g.NumInputs(); i++ {
			ins = append(ins, g.I(i))
		}
		g.Op("TileGradient", ins, []string{g.GI(0)})
		return nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "TileGradient", MinInputs: 1, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1, Args: tileArgs,
		Doc: "Gradient of Tile: sums the tiles copies of each block of dY.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return newTile(b, true), nil
	})
}

// tileOp is Tile, or TileGradient when grad is set.
type tileOp struct {
	*operators.Base
	grad     bool
	tiles    int
	axis     int
	hasTiles bool
	hasAxis  bool
	dims     []int
}

func newTile(b *operators.Base, grad bool) *tileOp {
	return &tileOp{
		Base: b, grad: grad,
		tiles: int(b.ArgInt("tiles", 1)), axis: int(b.ArgInt("axis", 0)),
		hasTiles: b.HasArg("tiles"), hasAxis: b.HasArg("axis"),
	}
}

// scalarInput reads input i, a 1-D INT32 or INT64 tensor of one element.
func (o *tileOp) scalarInput(i int) (int, blob.DataType, error) {
	t, err := o.Input(i)
	if err != nil {
		return 0, 0, err
	}
	if t.NumDims() != 1 || t.Size() != 1 {
		return 0, 0, o.Errorf("input %d (%q) must be a vector of one element, has shape %v", i, o.InputName(i), t.Dims())
	}
	switch t.DataType() {
	case blob.Int32:
		return int(blob.Data[int32](t)[0]), blob.Int32, nil
	case blob.Int64:
		return int(blob.Data[int64](t)[0]), blob.Int64, nil
	}
	return 0, 0, o.Errorf("input %d (%q) has type %v, want INT32 or INT64", i, o.InputName(i), t.DataType())
}

// params returns tiles and axis from the inputs or the arguments.
func (o *tileOp) params() (tiles, axis int, err error) {
	tiles, axis = o.tiles, o.axis
	if o.NumInputs() == 1 {
		if !o.hasTiles {
			return 0, 0, o.Errorf("argument tiles is missing and was not given as input 1")
		}
		if !o.hasAxis {
			return 0, 0, o.Errorf("argument axis is missing and was not given as input 2")
		}
		return tiles, axis, nil
	}
	tiles, dt, err := o.scalarInput(1)
	if err != nil {
		return 0, 0, err
	}
	if dt == blob.Int64 && !o.grad {
		// Caffe2 keeps this for models saved by an old, buggy version.
		axis = 0
	}
	if o.NumInputs() > 2 {
		if axis, _, err = o.scalarInput(2); err != nil {
			return 0, 0, err
		}
	} else if !o.hasAxis {
		return 0, 0, o.Errorf("argument axis is missing and was not given as input 2")
	}
	return tiles, axis, nil
}

func (o *tileOp) Run() error {
	tiles, rawAxis, err := o.params()
	if err != nil {
		return err
	}
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	axis, ok := operators.CanonicalAxis(rawAxis, x.NumDims())
	if !ok {
		return o.Errorf("axis %d is out of range for input 0 (%q) of shape %v", rawAxis, o.InputName(0), x.Dims())
	}
	o.dims = append(o.dims[:0], x.Dims()...)
	y := o.Output(0)
	if !o.grad {
		if tiles < 0 {
			return o.Errorf("tiles is %d, must be >= 0", tiles)
		}
		// The tiled dimension too: an empty X may have any dims.
		if tiles > 0 && (x.Size() > (1<<62)/tiles || o.dims[axis] > (1<<62)/tiles) {
			return o.Errorf("tiling input 0 (%q) of shape %v %d times is too large", o.InputName(0), x.Dims(), tiles)
		}
		o.dims[axis] *= tiles
		if err := y.Init(x.DataType(), o.dims...); err != nil {
			return err
		}
		if y.Size() > 0 { // else the kernel would loop tiles times over nothing
			elemsOf(x.DataType()).tile(y, x, x.SizeToDim(axis), x.SizeFromDim(axis), tiles)
		}
		return nil
	}
	if tiles <= 0 {
		return o.Errorf("tiles is %d, must be >= 1", tiles)
	}
	if o.dims[axis]%tiles != 0 {
		return o.Errorf("input 0 (%q) of shape %v: dimension %d is not a multiple of tiles %d", o.InputName(0), x.Dims(), axis, tiles)
	}
	a := arithOf(x.DataType())
	if a == nil {
		return o.Errorf("input 0 (%q) has type %v; the gradient needs a numeric type", o.InputName(0), x.DataType())
	}
	o.dims[axis] /= tiles
	if err := y.Init(x.DataType(), o.dims...); err != nil {
		return err
	}
	if y.Size() > 0 {
		a.tileSum(y, x, y.SizeToDim(axis), y.SizeFromDim(axis), tiles)
	}
	return nil
}
