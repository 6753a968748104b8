package caffe

import (
	"fmt"
	"math"
)

// Shapes are tracked as Caffe computes them. A nil shape is unknown (its
// rank too); a dimension of -1 is unknown.

// known reports whether every dimension of s is known.
func known(s []int) bool {
	if s == nil {
		return false
	}
	for _, d := range s {
		if d < 0 {
			return false
		}
	}
	return true
}

// count is the product of s[lo:hi], or -1 when a dimension is unknown.
func count(s []int, lo, hi int) int {
	n := 1
	for _, d := range s[lo:hi] {
		if d < 0 {
			return -1
		}
		n *= d
	}
	return n
}

// unknownDims returns a shape of rank r with every dimension unknown.
func unknownDims(r int) []int {
	s := make([]int, r)
	for i := range s {
		s[i] = -1
	}
	return s
}

// maxAxes is the most axes a Caffe blob has (kMaxBlobAxes).
const maxAxes = 32

// canonicalAxis is Caffe's Blob::CanonicalAxisIndex: a negative axis counts
// from the end of a shape of rank r. With an unknown rank (r < 0) only a
// non-negative axis is accepted.
func canonicalAxis(axis int32, r int, what string) (int, error) {
	if r < 0 {
		if axis < 0 {
			return 0, fmt.Errorf("%s %d counts from the end of a bottom whose shape is unknown (give it with InputShape)", what, axis)
		}
		if axis >= maxAxes {
			return 0, fmt.Errorf("%s %d is beyond Caffe's %d axes", what, axis, maxAxes)
		}
		return int(axis), nil
	}
	if int(axis) < -r || int(axis) >= r {
		return 0, fmt.Errorf("%s %d is out of range for a bottom of %d axes", what, axis, r)
	}
	if axis < 0 {
		return int(axis) + r, nil
	}
	return int(axis), nil
}

// convOut is the output size of a convolution over one spatial axis (-1
// when the input size is unknown).
func convOut(in, kernel, stride, pad, dilation int) int {
	if in < 0 {
		return -1
	}
	return (in+2*pad-(dilation*(kernel-1)+1))/stride + 1
}

// poolOut is Caffe's pooled size over one axis (PoolingLayer::Reshape):
// rounded up, or down in FLOOR mode, and, with padding, reduced by one when
// the last window would start in the padding.
func poolOut(in, kernel, stride, pad int, floor bool) int {
	if in < 0 {
		return -1
	}
	v := float64(float32(in+2*pad-kernel) / float32(stride))
	var out int
	if floor {
		out = int(math.Floor(v)) + 1
	} else {
		out = int(math.Ceil(v)) + 1
	}
	if pad > 0 && (out-1)*stride >= in+pad {
		out--
	}
	return out
}

// deconvOut is the output size of a deconvolution over one spatial axis.
func deconvOut(in, kernel, stride, pad int) int {
	if in < 0 {
		return -1
	}
	return stride*(in-1) + kernel - 2*pad
}
