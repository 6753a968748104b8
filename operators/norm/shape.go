package norm

import (
	"strings"

	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterShapeFunc("SpatialBN", spatialBNShape)
	operators.MustRegisterShapeFunc("LRN", operators.SameAsInput0)
}

// spatialBNShape: scale, bias, mean and var (and sums, sumsq) have one
// element per channel of X; Y has X's shape and the statistics outputs one
// element per channel.
func spatialBNShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	c := operators.AnyDim
	if x.Rank() >= 2 {
		c = x.Dim(1)
		if strings.EqualFold(b.ArgString("order", "NCHW"), "NHWC") {
			c = x.Dim(x.Rank() - 1)
		}
	}
	for _, s := range in[1:] {
		if s.Unknown {
			continue
		}
		if s.Rank() != 1 || !operators.DimsAgree(s.Dim(0), c) {
			return nil, b.InputShapeError(in, "scale, bias, mean and var must be [%d], one per channel of X", c)
		}
		if c < 0 {
			c = s.Dim(0)
		}
	}
	stat := operators.Shape(x.Type, c)
	return []operators.TensorShape{x, stat, stat, stat, stat}, nil
}

func init() {
	// (X, scale, dY, mean, inv_std[, ...]) → (dX like X, dscale and dbias
	// like scale).
	operators.MustRegisterShapeFunc("SpatialBNGradient", operators.SameShapes([]int{0, 2}, 0, 1, 1))
}
