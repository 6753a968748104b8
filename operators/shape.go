package operators

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
)

// AnyDim is the extent of a dimension shape inference does not know, such
// as the batch size of a net whose input is not fed yet.
const AnyDim = -1

// TensorShape is what shape inference knows of a blob before a net runs:
// its element type (blob.Undefined when not known) and its dims, some of
// which may be AnyDim. Unknown says that nothing is known, not even the
// rank.
type TensorShape struct {
	Type    blob.DataType
	Dims    []int
	Unknown bool
}

// UnknownShape is the shape of a blob inference knows nothing about.
var UnknownShape = TensorShape{Unknown: true}

// maxArgRank is the largest rank AnyDims gives: no tensor has that many
// dims in practice.
const maxArgRank = 64

// AnyDims returns n unknown dims (AnyDim), for a shape function that knows
// a rank from an operator's argument alone, such as FC's axis when X's
// shape is unknown; ok is false, and there are no dims, when n is negative
// or above 64. The function then knows nothing of the shape, so that no
// argument value sizes an allocation of shape inference.
func AnyDims(n int) (dims []int, ok bool) {
	if n < 0 || n > maxArgRank {
		return nil, false
	}
	dims = make([]int, n)
	for i := range dims {
		dims[i] = AnyDim
	}
	return dims, true
}

// ShapeOf returns the shape of a tensor that exists.
func ShapeOf(t *blob.Tensor) TensorShape {
	return TensorShape{Type: t.DataType(), Dims: t.Dims()}
}

// Shape returns a known-rank shape of type dtype.
func Shape(dtype blob.DataType, dims ...int) TensorShape {
	return TensorShape{Type: dtype, Dims: dims}
}

// Rank returns the number of dims, or -1 for an unknown shape.
func (s TensorShape) Rank() int {
	if s.Unknown {
		return -1
	}
	return len(s.Dims)
}

// Dim returns dim i, AnyDim for an unknown shape or a dim out of range.
func (s TensorShape) Dim(i int) int {
	if s.Unknown || i < 0 || i >= len(s.Dims) {
		return AnyDim
	}
	return s.Dims[i]
}

// Size returns the product of dims [from, to) and whether all of them are
// known.
func (s TensorShape) Size(from, to int) (int, bool) {
	if s.Unknown {
		return 0, false
	}
	n := 1
	for _, d := range s.Dims[from:to] {
		if d < 0 {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// WithType returns s with the element type dtype.
func (s TensorShape) WithType(dtype blob.DataType) TensorShape {
	s.Type = dtype
	return s
}

// String writes the dims as [64 ? 28 28], or "unknown".
func (s TensorShape) String() string {
	if s.Unknown {
		return "unknown"
	}
	var sb strings.Builder
	sb.WriteByte('[')
	for i, d := range s.Dims {
		if i > 0 {
			sb.WriteByte(' ')
		}
		if d < 0 {
			sb.WriteByte('?')
		} else {
			sb.WriteString(strconv.Itoa(d))
		}
	}
	sb.WriteByte(']')
	return sb.String()
}

// DimsAgree reports whether two extents can be equal: they are, or one is
// not known.
func DimsAgree(a, b int) bool { return a < 0 || b < 0 || a == b }

// Agrees reports whether s and o can be one shape: one of them is unknown,
// or they have one rank and every pair of dims agrees.
func (s TensorShape) Agrees(o TensorShape) bool {
	if s.Unknown || o.Unknown {
		return true
	}
	if len(s.Dims) != len(o.Dims) {
		return false
	}
	for i, d := range s.Dims {
		if !DimsAgree(d, o.Dims[i]) {
			return false
		}
	}
	return true
}

// ShapeFunc infers the shapes of an operator's outputs from its inputs'
// shapes. b carries the operator's definition and arguments only (no
// blobs, workspace or device). It returns one shape per output it knows
// (missing ones are unknown) and an error, naming the inputs and their
// shapes, when the inputs cannot go together, whatever the unknown dims
// turn out to be.
type ShapeFunc func(b *Base, in []TensorShape) ([]TensorShape, error)

var shapeFuncs struct {
	sync.RWMutex
	m map[string]ShapeFunc
}

// RegisterShapeFunc records f as the shape function of operator type typ.
// Registering a type twice is an error.
func RegisterShapeFunc(typ string, f ShapeFunc) error {
	shapeFuncs.Lock()
	defer shapeFuncs.Unlock()
	if shapeFuncs.m == nil {
		shapeFuncs.m = map[string]ShapeFunc{}
	}
	if _, dup := shapeFuncs.m[typ]; dup {
		return fmt.Errorf("operators: shape function for %s registered twice", typ)
	}
	shapeFuncs.m[typ] = f
	return nil
}

// MustRegisterShapeFunc is RegisterShapeFunc for init functions; it panics
// on a duplicate, which is a programming error.
func MustRegisterShapeFunc(typ string, f ShapeFunc, more ...string) {
	for _, t := range append([]string{typ}, more...) {
		if err := RegisterShapeFunc(t, f); err != nil {
			panic(err)
		}
	}
}

// HasShapeFunc reports whether operator type typ has a shape function.
func HasShapeFunc(typ string) bool {
	shapeFuncs.RLock()
	defer shapeFuncs.RUnlock()
	_, ok := shapeFuncs.m[typ]
	return ok
}

// SameAsInput0 is the shape function of operators whose outputs all have
// the shape and type of input 0 (element-wise operators).
func SameAsInput0(b *Base, in []TensorShape) ([]TensorShape, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]TensorShape, len(b.def.GetOutput()))
	for i := range out {
		out[i] = in[0]
	}
	return out, nil
}

// SameShapes returns the shape function of an operator whose inputs
// listed in same must all have one shape and whose output i has the shape
// of input like[i]: gradient operators (dX like X) and in-place updates
// (a parameter, its gradient and its moments).
func SameShapes(same []int, like ...int) ShapeFunc {
	return func(b *Base, in []TensorShape) ([]TensorShape, error) {
		if err := checkSameShapes(b, in, same); err != nil {
			return nil, err
		}
		out := make([]TensorShape, len(like))
		for i, j := range like {
			out[i] = UnknownShape
			if j < len(in) {
				out[i] = in[j]
			}
		}
		return out, nil
	}
}

// checkSameShapes reports inputs listed in idx whose known dims disagree.
func checkSameShapes(b *Base, in []TensorShape, idx []int) error {
	first := UnknownShape
	for _, i := range idx {
		if i >= len(in) {
			continue
		}
		if first.Unknown {
			first = in[i]
			continue
		}
		if !in[i].Agrees(first) {
			names := make([]string, len(idx))
			for k, j := range idx {
				if j < len(b.def.GetInput()) {
					names[k] = strconv.Quote(b.def.GetInput()[j])
				}
			}
			return b.InputShapeError(in, "%s must have one shape", strings.Join(names, ", "))
		}
	}
	return nil
}

// InferShapes walks net's operators in order and infers the shape of every
// blob they write, starting from the shapes lookup gives for the blobs
// that exist before the net runs (UnknownShape for those it does not
// know). Operators without a shape function make their outputs unknown.
// It returns the shapes of the blobs the net writes, or the first
// contradiction, as an *OpError naming the operator, its inputs and their
// shapes.
func InferShapes(net *netdef.NetDef, lookup func(blob string) TensorShape) (shapes map[string]TensorShape, err error) {
	shapes = map[string]TensorShape{}
	for i, op := range net.GetOp() {
		in := make([]TensorShape, len(op.GetInput()))
		for j, name := range op.GetInput() {
			s, ok := shapes[name]
			if !ok {
				s = lookup(name)
			}
			in[j] = s
		}
		out, err := inferOp(op, in)
		if err != nil {
			return nil, &OpError{Index: i, Type: op.GetType(), Name: op.GetName(), Err: err}
		}
		for j, name := range op.GetOutput() {
			s := UnknownShape
			if j < len(out) {
				s = out[j]
			}
			shapes[name] = s
		}
	}
	return shapes, nil
}

// inferOp runs op's shape function; a panic in it (a bug in the function)
// becomes an error rather than crossing the API.
func inferOp(op *netdef.OperatorDef, in []TensorShape) (out []TensorShape, err error) {
	shapeFuncs.RLock()
	f := shapeFuncs.m[op.GetType()]
	shapeFuncs.RUnlock()
	if f == nil {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("shape inference failed for inputs %s: %v", describeInputs(op, in), r)
		}
	}()
	return f(&Base{def: op}, in)
}

func describeInputs(op *netdef.OperatorDef, in []TensorShape) string {
	parts := make([]string, len(in))
	for i, s := range in {
		parts[i] = fmt.Sprintf("%q %v", op.GetInput()[i], s)
	}
	return strings.Join(parts, ", ")
}

// InputShapeError returns the error of a shape function whose inputs do
// not go together: it names every input with its shape, then why.
func (b *Base) InputShapeError(in []TensorShape, format string, args ...any) error {
	return fmt.Errorf("inputs %s: %s", describeInputs(b.def, in), fmt.Sprintf(format, args...))
}
