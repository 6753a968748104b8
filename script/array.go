package script

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
)

// Array is a NumPy-style n-dimensional array: a Starlark value wrapping a
// *blob.Tensor. It has NumPy's attributes and methods (shape, dtype,
// reshape, astype, tolist, …), integer indexing (x[0], x[1, 2], x[-1]),
// slicing along the first axis (x[1:3]), element assignment, iteration over
// the first axis, the arithmetic operators + - * / // % with broadcasting,
// and NumPy's printing.
//
// Unlike NumPy, indexing and slicing return copies, not views.
type Array struct {
	t      *blob.Tensor
	frozen bool
}

// NewArray wraps t (not a copy).
func NewArray(t *blob.Tensor) *Array { return &Array{t: t} }

// Tensor returns the wrapped tensor.
func (a *Array) Tensor() *blob.Tensor { return a.t }

var (
	_ starlark.HasAttrs   = (*Array)(nil)
	_ starlark.Mapping    = (*Array)(nil)
	_ starlark.HasSetKey  = (*Array)(nil)
	_ starlark.Sliceable  = (*Array)(nil)
	_ starlark.Iterable   = (*Array)(nil)
	_ starlark.HasBinary  = (*Array)(nil)
	_ starlark.HasUnary   = (*Array)(nil)
	_ starlark.Comparable = (*Array)(nil)
)

// String formats the array as NumPy's str() does.
func (a *Array) String() string { return formatArray(a.t, false) }

// Repr formats the array as NumPy's repr() does: array([...], dtype=...).
func (a *Array) Repr() string { return formatArray(a.t, true) }

// Type returns "ndarray".
func (a *Array) Type() string { return "ndarray" }

// Freeze makes the array read-only.
func (a *Array) Freeze() { a.frozen = true }

// Truth reports whether the array is non-empty and, for a one-element
// array, whether that element is non-zero.
func (a *Array) Truth() starlark.Bool {
	if a.t.Size() == 1 {
		return elemValue(a.t, 0).Truth()
	}
	return a.t.Size() > 0
}

// Hash fails: arrays are mutable.
func (a *Array) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: ndarray") }

// CompareSameType refuses to compare arrays: NumPy compares element by
// element, which a Starlark comparison cannot express.
func (a *Array) CompareSameType(op syntax.Token, _ starlark.Value, _ int) (bool, error) {
	return false, fmt.Errorf("ndarray %s ndarray: compare arrays with np.equal(a, b) (element-wise) or np.array_equal(a, b)", op)
}

var arrayMethods = binding.NewMethodTable("ndarray",
	"ndarray: a NumPy-style array wrapping a caffe2go tensor.\n\n"+
		"Attributes: shape, dtype, ndim, size, T. Indexing x[i], x[i, j], slicing x[a:b] (copies),\n"+
		"assignment x[i] = v, iteration over the first axis, + - * / // % with broadcasting.",
	[]binding.Fn{
		{Name: "reshape", Doc: "reshape(*shape)\n\nReturns a copy with a new shape (a tuple or separate ints; one dimension may be -1).", Body: arrReshape},
		{Name: "astype", Doc: "astype(dtype)\n\nReturns a copy converted to dtype (np.float32, \"int64\", …).", Body: arrAstype},
		{Name: "tolist", Doc: "tolist()\n\nReturns the elements as nested lists of Starlark numbers (a scalar for a 0-d array).", Body: arrTolist},
		{Name: "flatten", Doc: "flatten()\n\nReturns a 1-D copy.", Body: arrFlatten},
		{Name: "copy", Doc: "copy()\n\nReturns a copy.", Body: arrCopy},
		{Name: "item", Doc: "item()\n\nReturns the only element of a one-element array as a Starlark number.", Body: arrItem},
		{Name: "transpose", Doc: "transpose()\n\nReturns a copy with the axes reversed (as x.T).", Body: arrTranspose},
		{Name: "sum", Doc: "sum(axis=None)\n\nAs np.sum(x, axis).", Body: arrReduce("sum")},
		{Name: "mean", Doc: "mean(axis=None)\n\nAs np.mean(x, axis).", Body: arrReduce("mean")},
		{Name: "max", Doc: "max(axis=None)\n\nAs np.max(x, axis).", Body: arrReduce("max")},
		{Name: "min", Doc: "min(axis=None)\n\nAs np.min(x, axis).", Body: arrReduce("min")},
		{Name: "argmax", Doc: "argmax(axis=None)\n\nAs np.argmax(x, axis).", Body: arrReduce("argmax")},
		{Name: "argmin", Doc: "argmin(axis=None)\n\nAs np.argmin(x, axis).", Body: arrReduce("argmin")},
	})

// Attr returns an attribute or a bound method.
func (a *Array) Attr(name string) (starlark.Value, error) {
	switch name {
	case "shape":
		return shapeTuple(a.t.Dims()), nil
	case "dtype":
		return DType{a.t.DataType()}, nil
	case "ndim":
		return starlark.MakeInt(a.t.NumDims()), nil
	case "size":
		return starlark.MakeInt(a.t.Size()), nil
	case "T":
		return &Array{t: transpose(a.t)}, nil
	}
	return arrayMethods.Bind(name, a), nil
}

// AttrNames lists the attributes and methods.
func (a *Array) AttrNames() []string {
	return append([]string{"T", "dtype", "ndim", "shape", "size"}, arrayMethods.Names()...)
}

func shapeTuple(dims []int) starlark.Tuple {
	t := make(starlark.Tuple, len(dims))
	for i, d := range dims {
		t[i] = starlark.MakeInt(d)
	}
	return t
}

// elemValue returns element i of t as a Starlark scalar.
func elemValue(t *blob.Tensor, i int) starlark.Value {
	switch d := t.Raw().(type) {
	case []float64:
		return starlark.Float(d[i])
	case []float32:
		return convert.Float32Value(d[i])
	case []blob.Half:
		return convert.Float32Value(d[i].Float32())
	case []bool:
		return starlark.Bool(d[i])
	case []string:
		return starlark.String(d[i])
	}
	return starlark.MakeInt64(intsOf(t)[i])
}

// gather returns a tensor of t's type and the given shape holding t's
// elements at the flat indices idx.
func gather(t *blob.Tensor, idx []int, shape []int) *blob.Tensor {
	switch d := t.Raw().(type) {
	case []float32:
		return gatherT(d, idx, shape)
	case []float64:
		return gatherT(d, idx, shape)
	case []blob.Half:
		return gatherT(d, idx, shape)
	case []int8:
		return gatherT(d, idx, shape)
	case []int16:
		return gatherT(d, idx, shape)
	case []int32:
		return gatherT(d, idx, shape)
	case []int64:
		return gatherT(d, idx, shape)
	case []uint8:
		return gatherT(d, idx, shape)
	case []uint16:
		return gatherT(d, idx, shape)
	case []bool:
		return gatherT(d, idx, shape)
	case []string:
		return gatherT(d, idx, shape)
	}
	panic(fmt.Sprintf("gather: unsupported tensor type %s", t.DataType()))
}

func gatherT[T blob.Element](d []T, idx []int, shape []int) *blob.Tensor {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = d[j]
	}
	return blob.MustFromSlice(out, dims(shape)...)
}

// scatter writes src's elements (already of dst's type, one per index) into
// dst at the flat indices idx.
func scatter(dst, src *blob.Tensor, idx []int) {
	switch d := dst.Raw().(type) {
	case []float32:
		scatterT(d, src, idx)
	case []float64:
		scatterT(d, src, idx)
	case []blob.Half:
		scatterT(d, src, idx)
	case []int8:
		scatterT(d, src, idx)
	case []int16:
		scatterT(d, src, idx)
	case []int32:
		scatterT(d, src, idx)
	case []int64:
		scatterT(d, src, idx)
	case []uint8:
		scatterT(d, src, idx)
	case []uint16:
		scatterT(d, src, idx)
	case []bool:
		scatterT(d, src, idx)
	case []string:
		scatterT(d, src, idx)
	}
}

func scatterT[T blob.Element](d []T, src *blob.Tensor, idx []int) {
	s := blob.Data[T](src)
	for i, j := range idx {
		d[j] = s[i]
	}
}

// rangeIdx returns [start, start+n).
func rangeIdx(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}

// indexOffset resolves an index key (an int or a tuple of ints) to the
// flat offset of the selected sub-array and the sub-array's shape.
func (a *Array) indexOffset(key starlark.Value) (offset int, shape []int, err error) {
	var idx []starlark.Value
	if tup, ok := key.(starlark.Tuple); ok {
		idx = tup
	} else {
		idx = []starlark.Value{key}
	}
	dims := a.t.Dims()
	if len(idx) > len(dims) {
		return 0, nil, fmt.Errorf("too many indices for array: array is %d-dimensional, but %d were indexed", len(dims), len(idx))
	}
	for k, v := range idx {
		i, err := starlark.AsInt32(v)
		if err != nil {
			return 0, nil, fmt.Errorf("only integers are valid indices (got %s)", v.Type())
		}
		if i < 0 {
			i += dims[k]
		}
		if i < 0 || i >= dims[k] {
			return 0, nil, fmt.Errorf("index %s is out of bounds for axis %d with size %d", v, k, dims[k])
		}
		offset = offset*dims[k] + i
	}
	rest := dims[len(idx):]
	for _, d := range rest {
		offset *= d
	}
	return offset, append([]int{}, rest...), nil
}

// Get implements x[i] and x[i, j, …]: a sub-array, or a scalar when every
// axis is indexed.
func (a *Array) Get(key starlark.Value) (starlark.Value, bool, error) {
	off, shape, err := a.indexOffset(key)
	if err != nil {
		return nil, false, err
	}
	if len(shape) == 0 {
		return elemValue(a.t, off), true, nil
	}
	return &Array{t: gather(a.t, rangeIdx(off, product(shape)), shape)}, true, nil
}

// SetKey implements x[i] = v and x[i, j] = v: v (a number or an array
// broadcastable to the selected sub-array) is converted to x's type.
func (a *Array) SetKey(key, v starlark.Value) error {
	if a.frozen {
		return fmt.Errorf("cannot assign to an element of a frozen ndarray")
	}
	off, shape, err := a.indexOffset(key)
	if err != nil {
		return err
	}
	src, err := toTensor(v, a.t.DataType(), true)
	if err != nil {
		return err
	}
	if !sameShape(src.Dims(), shape) {
		out, ok := broadcastShape(src.Dims(), shape)
		if !ok || !sameShape(out, shape) {
			return fmt.Errorf("could not broadcast input array from shape %s into shape %s", shapeString(src.Dims()), shapeString(shape))
		}
		src = gather(src, broadcastIndex(src.Dims(), shape), shape)
	}
	scatter(a.t, src, rangeIdx(off, product(shape)))
	return nil
}

// Len returns the length of the first axis (0 for a 0-d array).
func (a *Array) Len() int {
	if a.t.NumDims() == 0 {
		return 0
	}
	return a.t.Dim(0)
}

// Index returns x[i] for 0 <= i < Len().
func (a *Array) Index(i int) starlark.Value {
	v, _, err := a.Get(starlark.MakeInt(i))
	if err != nil {
		return starlark.None
	}
	return v
}

// Slice implements x[start:end:step] along the first axis.
func (a *Array) Slice(start, end, step int) starlark.Value {
	dims := a.t.Dims()
	inner := product(dims[1:])
	var idx []int
	n := 0
	for i := start; (step > 0 && i < end) || (step < 0 && i > end); i += step {
		idx = append(idx, rangeIdx(i*inner, inner)...)
		n++
	}
	shape := append([]int{n}, dims[1:]...)
	return &Array{t: gather(a.t, idx, shape)}
}

// Iterate iterates over the first axis.
func (a *Array) Iterate() starlark.Iterator { return &arrayIter{a: a} }

type arrayIter struct {
	a *Array
	i int
}

func (it *arrayIter) Next(p *starlark.Value) bool {
	if it.i >= it.a.Len() {
		return false
	}
	*p = it.a.Index(it.i)
	it.i++
	return true
}

func (it *arrayIter) Done() {}

// Unary implements -x and +x.
func (a *Array) Unary(op syntax.Token) (starlark.Value, error) {
	switch op {
	case syntax.PLUS:
		return &Array{t: a.t.Clone()}, nil
	case syntax.MINUS:
		switch kindOf(a.t.DataType()) {
		case kindFloat:
			vals := floatsOf(a.t)
			out := make([]float64, len(vals))
			for i, v := range vals {
				out[i] = -v
			}
			t, err := tensorFromFloats(a.t.DataType(), a.t.Shape(), out)
			return &Array{t: t}, err
		case kindInt, kindUint:
			vals := intsOf(a.t)
			out := make([]int64, len(vals))
			for i, v := range vals {
				out[i] = -v
			}
			t, err := tensorFromInts(a.t.DataType(), a.t.Shape(), out)
			return &Array{t: t}, err
		}
		return nil, fmt.Errorf("unary - is not supported for %s arrays", dtypeName(a.t.DataType()))
	}
	return nil, nil
}

// Binary implements + - * / // % between arrays and numbers, with NumPy's
// broadcasting and type promotion.
func (a *Array) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	switch op {
	case syntax.PLUS, syntax.MINUS, syntax.STAR, syntax.SLASH, syntax.SLASHSLASH, syntax.PERCENT:
	default:
		return nil, nil
	}
	other, ok := toOperand(y)
	if !ok {
		return nil, nil
	}
	x, z := operand{t: a.t}, other
	if side == starlark.Right {
		x, z = other, operand{t: a.t}
	}
	t, err := arith(op, x, z)
	if err != nil {
		return nil, err
	}
	return &Array{t: t}, nil
}

// operand is an argument of element-wise arithmetic: an array, or a
// Starlark scalar (weak), whose kind defers to the array's type.
type operand struct {
	t    *blob.Tensor
	weak bool
	kind dtypeKind
}

func toOperand(v starlark.Value) (operand, bool) {
	switch x := v.(type) {
	case *Array:
		return operand{t: x.t}, true
	case starlark.Int:
		i, ok := x.Int64()
		if !ok {
			return operand{}, false
		}
		return operand{t: blob.Scalar(i), weak: true, kind: kindInt}, true
	case starlark.Float:
		return operand{t: blob.Scalar(float64(x)), weak: true, kind: kindFloat}, true
	case starlark.Bool:
		return operand{t: blob.Scalar(bool(x)), weak: true, kind: kindBool}, true
	}
	return operand{}, false
}

func resultType(x, y operand) blob.DataType {
	switch {
	case x.weak && y.weak:
		return promote(x.t.DataType(), y.t.DataType())
	case x.weak:
		return promoteScalar(y.t.DataType(), x.kind)
	case y.weak:
		return promoteScalar(x.t.DataType(), y.kind)
	}
	return promote(x.t.DataType(), y.t.DataType())
}

func arith(op syntax.Token, x, y operand) (*blob.Tensor, error) {
	dt := resultType(x, y)
	if kindOf(dt) == kindString {
		return nil, fmt.Errorf("unsupported operand types for %s: %s and %s arrays", op, dtypeName(x.t.DataType()), dtypeName(y.t.DataType()))
	}
	shape, ok := broadcastShape(x.t.Dims(), y.t.Dims())
	if !ok {
		return nil, fmt.Errorf("operands could not be broadcast together with shapes %s %s", shapeString(x.t.Dims()), shapeString(y.t.Dims()))
	}
	xi, yi := broadcastIndex(x.t.Dims(), shape), broadcastIndex(y.t.Dims(), shape)
	if op == syntax.SLASH && kindOf(dt) != kindFloat {
		dt = blob.Float64
	}
	if kindOf(dt) == kindFloat {
		xs, ys := floatsOf(x.t), floatsOf(y.t)
		out := make([]float64, len(xi))
		for i := range out {
			out[i] = floatOp(op, xs[xi[i]], ys[yi[i]])
		}
		return tensorFromFloats(dt, shape, out)
	}
	xs, ys := intsOf(x.t), intsOf(y.t)
	out := make([]int64, len(xi))
	for i := range out {
		out[i] = intOp(op, xs[xi[i]], ys[yi[i]])
	}
	return tensorFromInts(dt, shape, out)
}

func floatOp(op syntax.Token, a, b float64) float64 {
	switch op {
	case syntax.PLUS:
		return a + b
	case syntax.MINUS:
		return a - b
	case syntax.STAR:
		return a * b
	case syntax.SLASH:
		return a / b
	case syntax.SLASHSLASH:
		return math.Floor(a / b)
	}
	m := math.Mod(a, b)
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m
}

// intOp applies op with Python's floor semantics; division by zero gives 0,
// as NumPy's integer division does.
func intOp(op syntax.Token, a, b int64) int64 {
	switch op {
	case syntax.PLUS:
		return a + b
	case syntax.MINUS:
		return a - b
	case syntax.STAR:
		return a * b
	}
	if b == 0 {
		return 0
	}
	q, r := a/b, a%b
	if r != 0 && (r < 0) != (b < 0) {
		q--
		r += b
	}
	if op == syntax.SLASHSLASH {
		return q
	}
	return r
}

func product(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// broadcastShape returns the shape NumPy broadcasts a and b to.
func broadcastShape(a, b []int) ([]int, bool) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := 0; i < n; i++ {
		da, db := 1, 1
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// broadcastIndex returns, for each flat index of an array of shape out, the
// flat index of the element of an array of shape in that broadcasts to it.
func broadcastIndex(in, out []int) []int {
	n := product(out)
	strides := make([]int, len(out))
	s := 1
	for i := len(in) - 1; i >= 0; i-- {
		j := len(out) - len(in) + i
		if in[i] != 1 {
			strides[j] = s
		}
		s *= in[i]
	}
	idx := make([]int, n)
	counter := make([]int, len(out))
	off := 0
	for k := 0; k < n; k++ {
		idx[k] = off
		for d := len(out) - 1; d >= 0; d-- {
			counter[d]++
			off += strides[d]
			if counter[d] < out[d] {
				break
			}
			off -= strides[d] * counter[d]
			counter[d] = 0
		}
	}
	return idx
}

// transpose reverses the axes of t.
func transpose(t *blob.Tensor) *blob.Tensor {
	dims := t.Dims()
	n := len(dims)
	out := make([]int, n)
	for i := range dims {
		out[i] = dims[n-1-i]
	}
	inStrides := make([]int, n)
	s := 1
	for i := n - 1; i >= 0; i-- {
		inStrides[i] = s
		s *= dims[i]
	}
	// Output axis i is input axis n-1-i.
	revStrides := make([]int, n)
	for i := range revStrides {
		revStrides[i] = inStrides[n-1-i]
	}
	idx := make([]int, 0, t.Size())
	var rec func(axis, base int)
	rec = func(axis, base int) {
		if axis == n {
			idx = append(idx, base)
			return
		}
		for i := 0; i < out[axis]; i++ {
			rec(axis+1, base+i*revStrides[axis])
		}
	}
	rec(0, 0)
	return gather(t, idx, out)
}

// tolist converts t's elements from flat offset off with the given shape
// to nested Starlark lists.
func tolist(t *blob.Tensor, off int, shape []int) starlark.Value {
	if len(shape) == 0 {
		return elemValue(t, off)
	}
	inner := product(shape[1:])
	items := make([]starlark.Value, shape[0])
	for i := range items {
		items[i] = tolist(t, off+i*inner, shape[1:])
	}
	return starlark.NewList(items)
}

// shapeArgs reads a shape given as separate ints or as one tuple or list.
func shapeArgs(args starlark.Tuple) ([]int, error) {
	if len(args) == 1 {
		if _, ok := args[0].(starlark.Int); !ok {
			return shapeOf(args[0])
		}
	}
	return shapeOf(args)
}

// shapeOf reads a shape: an int, or a sequence of ints.
func shapeOf(v starlark.Value) ([]int, error) {
	if i, ok := v.(starlark.Int); ok {
		n, err := starlark.AsInt32(i)
		return []int{n}, err
	}
	seq, ok := v.(starlark.Indexable)
	if !ok {
		return nil, fmt.Errorf("shape must be an int or a tuple of ints, not %s", v.Type())
	}
	out := make([]int, seq.Len())
	for i := range out {
		n, err := starlark.AsInt32(seq.Index(i))
		if err != nil {
			return nil, fmt.Errorf("shape must be a tuple of ints: %v", err)
		}
		out[i] = n
	}
	return out, nil
}

// resolveShape fills in one -1 dimension so that shape holds size elements.
func resolveShape(shape []int, size int) ([]int, error) {
	shape = append([]int{}, shape...)
	unknown, known := -1, 1
	for i, d := range shape {
		switch {
		case d == -1 && unknown < 0:
			unknown = i
		case d < 0:
			return nil, fmt.Errorf("can only specify one unknown dimension, and dimensions must be non-negative")
		default:
			known *= d
		}
	}
	if unknown >= 0 && known > 0 && size%known == 0 {
		shape[unknown] = size / known
	}
	if product(shape) != size || (unknown >= 0 && shape[unknown] < 0) {
		return nil, fmt.Errorf("cannot reshape array of size %d into shape %s", size, shapeString(shape))
	}
	return shape, nil
}

func arrReshape(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	a := b.Receiver().(*Array)
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("%s: unexpected keyword arguments", b.Name())
	}
	shape, err := shapeArgs(args)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	shape, err = resolveShape(shape, a.t.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	t := a.t.Clone()
	if err := t.Reshape(shape...); err != nil {
		return nil, err
	}
	return &Array{t: t}, nil
}

func arrAstype(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	a := b.Receiver().(*Array)
	var d starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "dtype", &d); err != nil {
		return nil, err
	}
	dt, ok, err := dtypeOf(d)
	if err != nil || !ok {
		return nil, fmt.Errorf("%s: data type %s not understood", b.Name(), d)
	}
	t, err := astype(a.t, dt)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return &Array{t: t}, nil
}

func arrTolist(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	a := b.Receiver().(*Array)
	return tolist(a.t, 0, a.t.Dims()), nil
}

func arrFlatten(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	t := b.Receiver().(*Array).t.Clone()
	if err := t.Reshape(t.Size()); err != nil {
		return nil, err
	}
	return &Array{t: t}, nil
}

func arrCopy(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return &Array{t: b.Receiver().(*Array).t.Clone()}, nil
}

func arrItem(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	a := b.Receiver().(*Array)
	if a.t.Size() != 1 {
		return nil, fmt.Errorf("%s: can only convert an array of size 1 to a Starlark scalar (size is %d)", b.Name(), a.t.Size())
	}
	return elemValue(a.t, 0), nil
}

func arrTranspose(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return &Array{t: transpose(b.Receiver().(*Array).t)}, nil
}

func arrReduce(kind string) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var axis starlark.Value = starlark.None
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "axis?", &axis); err != nil {
			return nil, err
		}
		v, err := reduce(kind, b.Receiver().(*Array).t, axis)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		return v, nil
	}
}
