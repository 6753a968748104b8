package math

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// Broadcaster is the broadcast step of Add, Sub, Mul and Div, for other
// operator families that combine two tensors element by element under the
// same rules (operators/logic's comparisons and logical operators): with
// broadcast=1 Caffe2's legacy rule (B a block of A's dimensions starting at
// axis or axis_str), otherwise NumPy broadcasting. See the package comment.
// The zero value is not usable; NewBroadcaster parses the arguments.
type Broadcaster struct {
	args broadcastArgs
	p    plan
}

// BroadcastArgs returns the schema arguments the broadcast rules read
// (broadcast, axis, axis_str, order), with Caffe2's defaults.
func BroadcastArgs() []operators.ArgSpec {
	return append([]operators.ArgSpec(nil), broadcastArgSpecs...)
}

// NewBroadcaster reads the operator's broadcast arguments; an axis given
// without broadcast=1 is an error, as in Caffe2.
func NewBroadcaster(b *operators.Base) (*Broadcaster, error) {
	args, err := parseBroadcastArgs(b)
	if err != nil {
		return nil, err
	}
	return &Broadcaster{args: args}, nil
}

// Shape checks the shapes of the operator's inputs 0 (A) and 1 (B) against
// each other and returns the output's shape, or an error that names both
// blobs and shapes. It prepares Rows for these shapes. The returned slice
// is the Broadcaster's own (or A's dims) and is valid until the next call.
func (x *Broadcaster) Shape(o *operators.Base, a, b *blob.Tensor) ([]int, error) {
	return binaryShapes(o, x.args, &x.p, a.Dims(), b.Dims(), b.Size())
}

// Rows calls f once for each row of the output prepared by Shape, in
// order: the row holds the n output elements from off; its elements come
// from A at offA, offA+sa, offA+2·sa, … and from B at offB, offB+sb, …
// (sa and sb are 1, or 0 where that operand is repeated).
func (x *Broadcaster) Rows(f func(off, offA, offB, n, sa, sb int)) {
	p := &x.p
	if p.size == 0 {
		return
	}
	n, sa, sb := p.inner()
	p.reset()
	for off := 0; off < p.size; off += n {
		f(off, p.offA, p.offB, n, sa, sb)
		p.step()
	}
}

// BroadcastShape is the shape function of a two-input operator under these
// rules: the output has A's element type and the broadcast shape.
func BroadcastShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	return binaryShape(b, in)
}
