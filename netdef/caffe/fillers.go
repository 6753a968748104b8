package caffe

import (
	"fmt"
	"math"

	"github.com/caffe2go/caffe2go/netdef"
)

// fillOp returns the Caffe2 fill operator and its arguments (besides
// shape) that draw a parameter of the given shape as Caffe's filler f
// does (a nil filler is Caffe's default, constant 0).
func fillOp(f *FillerParameter, shape []int) (string, []*netdef.Argument, error) {
	f = orEmpty(f)
	switch typ := f.GetType(); typ {
	case "constant":
		return "ConstantFill", []*netdef.Argument{netdef.ArgFloat("value", f.GetValue())}, nil
	case "uniform":
		return "UniformFill", []*netdef.Argument{netdef.ArgFloat("min", f.GetMin()), netdef.ArgFloat("max", f.GetMax())}, nil
	case "gaussian":
		if f.GetSparse() >= 0 {
			return "", nil, fmt.Errorf("a sparse gaussian filler (sparse %d) is %w", f.GetSparse(), ErrUnsupported)
		}
		return "GaussianFill", []*netdef.Argument{netdef.ArgFloat("mean", f.GetMean()), netdef.ArgFloat("std", f.GetStd())}, nil
	case "xavier", "msra":
		n, err := fanNorm(f.GetVarianceNorm(), shape)
		if err != nil {
			return "", nil, err
		}
		if typ == "xavier" {
			scale := float32(math.Sqrt(3 / n))
			return "UniformFill", []*netdef.Argument{netdef.ArgFloat("min", -scale), netdef.ArgFloat("max", scale)}, nil
		}
		return "GaussianFill", []*netdef.Argument{netdef.ArgFloat("mean", 0), netdef.ArgFloat("std", float32(math.Sqrt(2/n)))}, nil
	default:
		return "", nil, fmt.Errorf("filler type %q is %w (constant, uniform, gaussian, xavier and msra are)", typ, ErrUnsupported)
	}
}

// fanNorm returns the n of Caffe's xavier and msra fillers for a blob of
// the given shape: its fan-in (count / shape[0]), its fan-out (count /
// shape[1], or count for a 1-D blob) or their mean.
func fanNorm(norm FillerParameter_VarianceNorm, shape []int) (float64, error) {
	count := 1
	for _, d := range shape {
		count *= d
	}
	if len(shape) == 0 || count == 0 {
		return 0, fmt.Errorf("cannot fill an empty blob of shape %s", shapeString(shape))
	}
	fanIn, fanOut := float64(count/shape[0]), float64(count)
	if len(shape) > 1 {
		fanOut = float64(count / shape[1])
	}
	switch norm {
	case FillerParameter_FAN_OUT:
		return fanOut, nil
	case FillerParameter_AVERAGE:
		return (fanIn + fanOut) / 2, nil
	}
	return fanIn, nil
}
