package np

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/ndarray"
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

// scalarOrArray returns a Starlark scalar for a 0-d tensor, else an Array.
func scalarOrArray(t *blob.Tensor) starlark.Value {
	if t.NumDims() == 0 {
		return ndarray.ElemValue(t, 0)
	}
	return &Array{t: t}
}

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
func (a *Array) String() string { return ndarray.Format(a.t, false) }

// Repr formats the array as NumPy's repr() does: array([...], dtype=...).
func (a *Array) Repr() string { return ndarray.Format(a.t, true) }

// Type returns "ndarray".
func (a *Array) Type() string { return "ndarray" }

// Freeze makes the array read-only.
func (a *Array) Freeze() { a.frozen = true }

// Truth reports whether the array is non-empty and, for a one-element
// array, whether that element is non-zero.
func (a *Array) Truth() starlark.Bool {
	if a.t.Size() == 1 {
		return ndarray.ElemValue(a.t, 0).Truth()
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
		return ndarray.ShapeTuple(a.t.Dims()), nil
	case "dtype":
		return DType{a.t.DataType()}, nil
	case "ndim":
		return starlark.MakeInt(a.t.NumDims()), nil
	case "size":
		return starlark.MakeInt(a.t.Size()), nil
	case "T":
		return &Array{t: ndarray.Transpose(a.t)}, nil
	}
	return arrayMethods.Bind(name, a), nil
}

// AttrNames lists the attributes and methods.
func (a *Array) AttrNames() []string {
	return append([]string{"T", "dtype", "ndim", "shape", "size"}, arrayMethods.Names()...)
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
		return ndarray.ElemValue(a.t, off), true, nil
	}
	return &Array{t: ndarray.Gather(a.t, ndarray.RangeIdx(off, ndarray.Product(shape)), shape)}, true, nil
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
	src, err := ndarray.ToTensor(v, a.t.DataType(), true)
	if err != nil {
		return err
	}
	if !ndarray.SameShape(src.Dims(), shape) {
		out, ok := ndarray.BroadcastShape(src.Dims(), shape)
		if !ok || !ndarray.SameShape(out, shape) {
			return fmt.Errorf("could not broadcast input array from shape %s into shape %s", ndarray.ShapeString(src.Dims()), ndarray.ShapeString(shape))
		}
		src = ndarray.Gather(src, ndarray.BroadcastIndex(src.Dims(), shape), shape)
	}
	ndarray.Scatter(a.t, src, ndarray.RangeIdx(off, ndarray.Product(shape)))
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
	inner := ndarray.Product(dims[1:])
	var idx []int
	n := 0
	for i := start; (step > 0 && i < end) || (step < 0 && i > end); i += step {
		idx = append(idx, ndarray.RangeIdx(i*inner, inner)...)
		n++
	}
	shape := append([]int{n}, dims[1:]...)
	return &Array{t: ndarray.Gather(a.t, idx, shape)}
}

// Iterate iterates over the first axis.
func (a *Array) Iterate() starlark.Iterator { return &arrayIter{a: a} }

type arrayIter struct {
	a *Array
	i int
}

// Next yields the next sub-array (or element) along the first axis.
func (it *arrayIter) Next(p *starlark.Value) bool {
	if it.i >= it.a.Len() {
		return false
	}
	*p = it.a.Index(it.i)
	it.i++
	return true
}

// Done does nothing: the iteration holds no resources.
func (it *arrayIter) Done() {}

// Unary implements -x and +x.
func (a *Array) Unary(op syntax.Token) (starlark.Value, error) {
	switch op {
	case syntax.PLUS:
		return &Array{t: a.t.Clone()}, nil
	case syntax.MINUS:
		switch ndarray.KindOf(a.t.DataType()) {
		case ndarray.KindFloat:
			vals := ndarray.FloatsOf(a.t)
			out := make([]float64, len(vals))
			for i, v := range vals {
				out[i] = -v
			}
			t, err := ndarray.TensorFromFloats(a.t.DataType(), a.t.Shape(), out)
			return &Array{t: t}, err
		case ndarray.KindInt, ndarray.KindUint:
			vals := ndarray.IntsOf(a.t)
			out := make([]int64, len(vals))
			for i, v := range vals {
				out[i] = -v
			}
			t, err := ndarray.TensorFromInts(a.t.DataType(), a.t.Shape(), out)
			return &Array{t: t}, err
		}
		return nil, fmt.Errorf("unary - is not supported for %s arrays", ndarray.DTypeName(a.t.DataType()))
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

func arrReshape(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	a := b.Receiver().(*Array)
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("%s: unexpected keyword arguments", b.Name())
	}
	shape, err := ndarray.ShapeArgs(args)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	shape, err = ndarray.ResolveShape(shape, a.t.Size())
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
	dt, ok, err := ndarray.DTypeOf(d)
	if err != nil || !ok {
		return nil, fmt.Errorf("%s: data type %s not understood", b.Name(), d)
	}
	t, err := ndarray.Astype(a.t, dt)
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
	return ndarray.ToList(a.t, 0, a.t.Dims()), nil
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
	return ndarray.ElemValue(a.t, 0), nil
}

func arrTranspose(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return &Array{t: ndarray.Transpose(b.Receiver().(*Array).t)}, nil
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
