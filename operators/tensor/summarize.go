package tensor

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Summarize", MinInputs: 1, MaxInputs: 1, MinOutputs: 0, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "to_file", Default: 0, Doc: "1 appends \"min max mean std\" to <root_folder>/<input name>.summary (truncated when the operator is created)"},
		},
		Doc: "Summarize(X) -> [Y]: the min, max, mean and unbiased standard deviation of a FLOAT tensor, as a FLOAT vector of 4.",
	}, newSummarize)
	operators.MustRegisterShapeFunc("Summarize", func(b *operators.Base, _ []operators.TensorShape) ([]operators.TensorShape, error) {
		if b.NumOutputs() == 0 {
			return nil, nil
		}
		return []operators.TensorShape{operators.Shape(blob.Float32, 4)}, nil
	})
	operators.MustRegisterGradientForbidden("Summarize")
}

// summarizeOp is Summarize.
type summarizeOp struct {
	*operators.Base
	w   io.Writer // nil without to_file
	buf []byte
}

func newSummarize(b *operators.Base) (operators.Operator, error) {
	o := &summarizeOp{Base: b}
	if b.ArgInt("to_file", 0) != 0 {
		path := filepath.Join(b.Workspace().RootFolder(), b.InputName(0)+".summary")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, b.Errorf("cannot create the folder of the summary file of input 0 (%q): %v", b.InputName(0), err)
		}
		f, err := os.Create(path)
		if err != nil {
			return nil, b.Errorf("cannot open the summary file of input 0 (%q): %v", b.InputName(0), err)
		}
		o.w = f
	}
	return o, nil
}

func (o *summarizeOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	v := blob.Data[float32](x)
	if len(v) == 0 {
		return o.Errorf("input 0 (%q) of shape %v is empty: there is nothing to summarize", o.InputName(0), x.Dims())
	}
	lo, hi, mean := v[0], v[0], float32(0)
	for _, e := range v {
		mean += e
		lo, hi = min(lo, e), max(hi, e)
	}
	mean /= float32(len(v))
	var ss float32
	for _, e := range v {
		d := e - mean
		ss += d * d
	}
	var std float32
	if len(v) > 1 {
		std = float32(math.Sqrt(float64(ss / float32(len(v)-1))))
	}
	stats := [4]float32{lo, hi, mean, std}
	if o.w != nil {
		buf := o.buf[:0]
		for i, s := range stats {
			if i > 0 {
				buf = append(buf, ' ')
			}
			buf = strconv.AppendFloat(buf, float64(s), 'g', 6, 32)
		}
		o.buf = append(buf, '\n')
		if _, err := o.w.Write(o.buf); err != nil {
			return o.Errorf("writing the summary of input 0 (%q): %v", o.InputName(0), err)
		}
	}
	if o.NumOutputs() > 0 {
		y := o.Output(0)
		if err := y.Init(blob.Float32, 4); err != nil {
			return o.Errorf("output %q: %w", o.OutputName(0), err)
		}
		copy(blob.Data[float32](y), stats[:])
	}
	return nil
}
