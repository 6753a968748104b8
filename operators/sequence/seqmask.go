package sequence

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// maskMode is SequenceMask's mode.
type maskMode uint8

const (
	modeSequence maskMode = iota
	modeWindow
	modeUpper
	modeLower
	modeUpperDiag
	modeLowerDiag
)

var maskModes = map[string]maskMode{
	"sequence": modeSequence, "window": modeWindow, "upper": modeUpper,
	"lower": modeLower, "upperdiag": modeUpperDiag, "lowerdiag": modeLowerDiag,
}

// sequenceMaskOp is SequenceMask.
type sequenceMaskOp struct {
	*operators.Base
	mode                maskMode
	axis, radius        int
	fill                float32
	batch, repeat       int
	hasBatch, hasRepeat bool
}

func newSequenceMask(b *operators.Base) (operators.Operator, error) {
	if !b.HasArg("mode") {
		return nil, b.Errorf("argument mode is required (sequence, window, upper, lower, upperdiag or lowerdiag)")
	}
	m, ok := maskModes[b.ArgString("mode", "")]
	if !ok {
		return nil, b.Errorf("unsupported mode %q for SequenceMask", b.ArgString("mode", ""))
	}
	if (m == modeSequence || m == modeWindow) && b.NumInputs() < 2 {
		return nil, b.Errorf("mode %q needs input 1 (the sequence lengths or window centers)", b.ArgString("mode", ""))
	}
	o := &sequenceMaskOp{
		Base: b, mode: m, axis: int(b.ArgInt("axis", 1)), radius: int(b.ArgInt("radius", 10)),
		fill:  b.ArgFloat("fill_val", float32(math.Inf(-1))),
		batch: int(b.ArgInt("batch", 0)), hasBatch: b.HasArg("batch"),
		repeat: int(b.ArgInt("repeat_from_axis", 0)), hasRepeat: b.HasArg("repeat_from_axis"),
	}
	if b.ArgBool("grad", false) {
		o.fill = 0
	}
	return o, nil
}

func (o *sequenceMaskOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	nd := x.NumDims()
	axis, ok := operators.CanonicalAxis(o.axis, nd)
	if !ok {
		return o.Errorf("axis %d is out of range for input 0 (%q) of shape %v", o.axis, o.InputName(0), x.Dims())
	}
	// rows is the number of rows of the 2-D mask, batches how often it
	// repeats over the outer dimensions, unit how many columns share one
	// column of the mask (repeat_from_axis).
	rows, batches, unit := x.SizeToDim(axis), 1, 1
	if o.hasBatch {
		batch, ok := operators.CanonicalAxis(o.batch, nd)
		if !ok || batch >= axis {
			return o.Errorf("batch %d must be a dimension of input 0 (%q) of shape %v before axis %d", o.batch, o.InputName(0), x.Dims(), axis)
		}
		batches = x.SizeToDim(batch + 1)
		rows = 1
		for _, d := range x.Dims()[batch+1 : axis] {
			rows *= d
		}
	}
	if o.hasRepeat && o.mode == modeSequence {
		r, ok := operators.CanonicalAxis(o.repeat, nd)
		if !ok || r < axis {
			return o.Errorf("repeat_from_axis %d must be a dimension of input 0 (%q) of shape %v from axis %d on", o.repeat, o.InputName(0), x.Dims(), axis)
		}
		unit = x.SizeFromDim(r)
	}
	var aux []int32
	if o.mode == modeSequence || o.mode == modeWindow {
		t, err := o.InputOf(1, blob.Int32)
		if err != nil {
			return err
		}
		aux = blob.Data[int32](t)
		if x.Size() > 0 && len(aux) < rows {
			return o.Errorf("out of bound: input 1 (%q) has %d elements for the %d rows of the mask of input 0 (%q) of shape %v (axis %d)",
				o.InputName(1), len(aux), rows, o.InputName(0), x.Dims(), axis)
		}
	}
	y := o.Output(0)
	if y != x {
		if err := y.Init(blob.Float32, x.Dims()...); err != nil {
			return o.Errorf("output 0 (%q): %w", o.OutputName(0), err)
		}
	}
	xs, ys := blob.Data[float32](x), blob.Data[float32](y)
	if len(xs) == 0 {
		return nil
	}
	cols := x.SizeFromDim(axis)
	p := 0
	for range batches {
		for i := range rows {
			for j := range cols {
				if o.masked(i, j/unit, aux) {
					ys[p] = o.fill
				} else {
					ys[p] = xs[p]
				}
				p++
			}
		}
	}
	return nil
}

// masked reports whether row i, column j of the mask is masked.
func (o *sequenceMaskOp) masked(i, j int, aux []int32) bool {
	switch o.mode {
	case modeSequence:
		return j >= int(aux[i])
	case modeWindow:
		c := int(aux[i])
		return j > c+o.radius || j < c-o.radius
	case modeUpper:
		return j > i
	case modeLower:
		return j < i
	case modeUpperDiag:
		return j >= i
	}
	return j <= i
}
