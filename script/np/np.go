package np

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/ndarray"
)

// Module is the np module.
var Module = binding.NewModule(binding.ModuleSpec{
	Name: "np",
	Doc: "np: NumPy's names for making and inspecting arrays (ndarray values wrap caffe2go tensors).\n\n" +
		"dtypes: np.bool_, int8, int16, int32, int64, uint8, uint16, float16, float32, float64, object.\n" +
		"np.random holds the random generators (seeded with np.random.seed; the stream differs from NumPy's).",
	Funcs: []binding.Fn{
		{Name: "array", Doc: "array(object, dtype=None)\n\nReturns a new array from a number, nested lists or tuples, or an array (copied).\nWithout dtype the type is inferred: bool, int64, float64, or object for strings.", Body: npArray},
		{Name: "asarray", Doc: "asarray(a, dtype=None)\n\nAs np.array, but returns a itself when it is already an array of that dtype.", Body: npAsarray},
		{Name: "zeros", Doc: "zeros(shape, dtype=float64)\n\nReturns an array of zeros.", Body: npFilled(0)},
		{Name: "ones", Doc: "ones(shape, dtype=float64)\n\nReturns an array of ones.", Body: npFilled(1)},
		{Name: "full", Doc: "full(shape, fill_value, dtype=None)\n\nReturns an array filled with fill_value (dtype inferred from it).", Body: npFull},
		{Name: "zeros_like", Doc: "zeros_like(a, dtype=None)\n\nReturns zeros with a's shape and dtype.", Body: npLike(0)},
		{Name: "ones_like", Doc: "ones_like(a, dtype=None)\n\nReturns ones with a's shape and dtype.", Body: npLike(1)},
		{Name: "arange", Doc: "arange([start,] stop[, step], dtype=None)\n\nReturns evenly spaced values in [start, stop): int64 for int arguments, else float64.", Body: npArange},
		{Name: "linspace", Doc: "linspace(start, stop, num=50, endpoint=True, dtype=None)\n\nReturns num evenly spaced float64 values from start to stop.", Body: npLinspace},
		{Name: "reshape", Doc: "reshape(a, newshape)\n\nReturns a copy of a with a new shape (one dimension may be -1).", Body: npReshape},
		{Name: "concatenate", Doc: "concatenate(arrays, axis=0)\n\nJoins arrays along an existing axis.", Body: npConcatenate},
		{Name: "dot", Doc: "dot(a, b)\n\nDot product of 1-D arrays, matrix product of 2-D arrays, matrix-vector products.", Body: npDot},
		{Name: "sum", Doc: "sum(a, axis=None)\n\nSum of the elements (a scalar), or along an axis. Integers sum to int64.", Body: npReduce("sum")},
		{Name: "mean", Doc: "mean(a, axis=None)\n\nMean of the elements, or along an axis. Integers average to float64.", Body: npReduce("mean")},
		{Name: "max", Doc: "max(a, axis=None)\n\nLargest element, or along an axis.", Body: npReduce("max")},
		{Name: "min", Doc: "min(a, axis=None)\n\nSmallest element, or along an axis.", Body: npReduce("min")},
		{Name: "argmax", Doc: "argmax(a, axis=None)\n\nIndex of the largest element (of the flattened array), or along an axis.", Body: npReduce("argmax")},
		{Name: "argmin", Doc: "argmin(a, axis=None)\n\nIndex of the smallest element (of the flattened array), or along an axis.", Body: npReduce("argmin")},
		{Name: "allclose", Doc: "allclose(a, b, rtol=1e-05, atol=1e-08)\n\nReports whether |a - b| <= atol + rtol * |b| element-wise (with broadcasting).", Body: npAllclose},
		{Name: "array_equal", Doc: "array_equal(a1, a2)\n\nReports whether two arrays have the same shape and elements.", Body: npArrayEqual},
		{Name: "equal", Doc: "equal(x1, x2)\n\nElement-wise equality, with broadcasting: a bool array.", Body: npEqual},
		{Name: "abs", Doc: "abs(x)\n\nElement-wise absolute value.", Body: npUnary("abs", math.Abs)},
		{Name: "sqrt", Doc: "sqrt(x)\n\nElement-wise square root (float).", Body: npUnary("sqrt", math.Sqrt)},
		{Name: "exp", Doc: "exp(x)\n\nElement-wise exponential (float).", Body: npUnary("exp", math.Exp)},
		{Name: "log", Doc: "log(x)\n\nElement-wise natural logarithm (float).", Body: npUnary("log", math.Log)},
	},
	Values: func() starlark.StringDict {
		d := starlark.StringDict{
			"random": randomModule,
			"pi":     starlark.Float(math.Pi),
			"bool_":  DType{blob.Bool},
		}
		for _, t := range ndarray.DTypes {
			d[t.Name] = DType{t.Type}
		}
		return d
	},
})

func npArray(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var obj, d starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "object", &obj, "dtype?", &d); err != nil {
		return nil, err
	}
	dt, ok, err := ndarray.DTypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	t, err := ndarray.ToTensor(obj, dt, ok)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return &Array{t: t}, nil
}

func npAsarray(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var obj, d starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &obj, "dtype?", &d); err != nil {
		return nil, err
	}
	dt, ok, err := ndarray.DTypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if a, isArr := obj.(*Array); isArr && (!ok || a.t.DataType() == dt) {
		return a, nil
	}
	t, err := ndarray.ToTensor(obj, dt, ok)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return &Array{t: t}, nil
}

// filled returns a tensor of the given type and shape with every element
// set to v (a Starlark number or bool).
func filled(dt blob.DataType, shape []int, v starlark.Value) (*blob.Tensor, error) {
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dimensions are not allowed")
		}
	}
	n := ndarray.Product(shape)
	if n > 1<<31 {
		return nil, fmt.Errorf("array of %d elements is too big", n)
	}
	if ndarray.KindOf(dt) == ndarray.KindString {
		s, ok := v.(starlark.String)
		if !ok {
			return nil, fmt.Errorf("cannot fill an object array with %s", v.Type())
		}
		vals := make([]string, n)
		for i := range vals {
			vals[i] = string(s)
		}
		return blob.FromSlice(vals, ndarray.Dims(shape)...)
	}
	one, err := ndarray.ToTensor(v, dt, true)
	if err != nil {
		return nil, err
	}
	return ndarray.Gather(one, make([]int, n), shape), nil
}

func npFilled(value int) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var shapeV, d starlark.Value = nil, starlark.None
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "shape", &shapeV, "dtype?", &d); err != nil {
			return nil, err
		}
		shape, err := ndarray.ShapeOf(shapeV)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		dt, ok, err := ndarray.DTypeOf(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		if !ok {
			dt = blob.Float64
		}
		var fill starlark.Value = starlark.MakeInt(value)
		if dt == blob.String {
			fill = starlark.String("")
		}
		t, err := filled(dt, shape, fill)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		return &Array{t: t}, nil
	}
}

func npFull(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var shapeV, fill, d starlark.Value = nil, nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "shape", &shapeV, "fill_value", &fill, "dtype?", &d); err != nil {
		return nil, err
	}
	shape, err := ndarray.ShapeOf(shapeV)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	dt, ok, err := ndarray.DTypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if !ok {
		dt = ndarray.InferType([]starlark.Value{fill}, 0, false)
		if a, isArr := fill.(*Array); isArr {
			dt = a.t.DataType()
		}
	}
	t, err := filled(dt, shape, fill)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return &Array{t: t}, nil
}

func npLike(value int) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var a, d starlark.Value = nil, starlark.None
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &a, "dtype?", &d); err != nil {
			return nil, err
		}
		t, err := ndarray.TensorArg(b.Name(), a)
		if err != nil {
			return nil, err
		}
		dt, ok, err := ndarray.DTypeOf(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		if !ok {
			dt = t.DataType()
		}
		var fill starlark.Value = starlark.MakeInt(value)
		if dt == blob.String {
			fill = starlark.String("")
		}
		out, err := filled(dt, t.Shape(), fill)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		return &Array{t: out}, nil
	}
}

func npArange(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var d starlark.Value = starlark.None
	var pos []starlark.Value
	for _, kv := range kwargs {
		switch kv[0].(starlark.String) {
		case "dtype":
			d = kv[1]
		case "start", "stop", "step":
			return nil, fmt.Errorf("%s: give start, stop and step positionally", b.Name())
		default:
			return nil, fmt.Errorf("%s: unexpected keyword argument %s", b.Name(), kv[0])
		}
	}
	pos = append(pos, args...)
	if len(pos) < 1 || len(pos) > 3 {
		return nil, fmt.Errorf("%s: want 1 to 3 positional arguments, got %d", b.Name(), len(pos))
	}
	start, stop, step := starlark.Value(starlark.MakeInt(0)), pos[0], starlark.Value(starlark.MakeInt(1))
	if len(pos) >= 2 {
		start, stop = pos[0], pos[1]
	}
	if len(pos) == 3 {
		step = pos[2]
	}
	allInt := true
	var fs [3]float64
	for i, v := range []starlark.Value{start, stop, step} {
		f, ok := starlark.AsFloat(v)
		if !ok {
			return nil, fmt.Errorf("%s: arguments must be numbers, got %s", b.Name(), v.Type())
		}
		fs[i] = f
		if _, isInt := v.(starlark.Int); !isInt {
			allInt = false
		}
	}
	if fs[2] == 0 {
		return nil, fmt.Errorf("%s: step must not be zero", b.Name())
	}
	n := int(math.Max(0, math.Ceil((fs[1]-fs[0])/fs[2])))
	if n > 1<<31 {
		return nil, fmt.Errorf("%s: too many elements (%d)", b.Name(), n)
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = fs[0] + float64(i)*fs[2]
	}
	dt, ok, err := ndarray.DTypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if !ok {
		dt = blob.Float64
		if allInt {
			dt = blob.Int64
		}
	}
	t, err := ndarray.TensorFromFloats(dt, []int{n}, vals)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return &Array{t: t}, nil
}

func npLinspace(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var start, stop convert.Float
	num, endpoint := 50, true
	var d starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "start", &start, "stop", &stop, "num?", &num, "endpoint?", &endpoint, "dtype?", &d); err != nil {
		return nil, err
	}
	if num < 0 {
		return nil, fmt.Errorf("%s: number of samples, %d, must be non-negative", b.Name(), num)
	}
	div := num
	if endpoint {
		div = num - 1
	}
	vals := make([]float64, num)
	for i := range vals {
		if div > 0 {
			vals[i] = float64(start) + float64(i)*float64(stop-start)/float64(div)
		} else {
			vals[i] = float64(start)
		}
	}
	if endpoint && num > 1 {
		vals[num-1] = float64(stop)
	}
	dt, ok, err := ndarray.DTypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if !ok {
		dt = blob.Float64
	}
	t, err := ndarray.TensorFromFloats(dt, []int{num}, vals)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return &Array{t: t}, nil
}

func npReshape(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, newshape starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &a, "newshape", &newshape); err != nil {
		return nil, err
	}
	t, err := ndarray.TensorArg(b.Name(), a)
	if err != nil {
		return nil, err
	}
	shape, err := ndarray.ShapeOf(newshape)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	shape, err = ndarray.ResolveShape(shape, t.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	out := t.Clone()
	if err := out.Reshape(shape...); err != nil {
		return nil, err
	}
	return &Array{t: out}, nil
}

func npConcatenate(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var arrays starlark.Indexable
	axis := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "arrays", &arrays, "axis?", &axis); err != nil {
		return nil, err
	}
	if arrays.Len() == 0 {
		return nil, fmt.Errorf("%s: need at least one array to concatenate", b.Name())
	}
	ts := make([]*blob.Tensor, arrays.Len())
	var dt blob.DataType
	for i := range ts {
		t, err := ndarray.TensorArg(b.Name(), arrays.Index(i))
		if err != nil {
			return nil, err
		}
		ts[i] = t
		if i == 0 {
			dt = t.DataType()
		} else {
			dt = ndarray.Promote(dt, t.DataType())
		}
	}
	dims0 := ts[0].Dims()
	nd := len(dims0)
	if nd == 0 {
		return nil, fmt.Errorf("%s: zero-dimensional arrays cannot be concatenated", b.Name())
	}
	ax := axis
	if ax < 0 {
		ax += nd
	}
	if ax < 0 || ax >= nd {
		return nil, fmt.Errorf("%s: axis %d is out of bounds for array of dimension %d", b.Name(), axis, nd)
	}
	total := 0
	for i, t := range ts {
		d := t.Dims()
		if len(d) != nd {
			return nil, fmt.Errorf("%s: all the input arrays must have the same number of dimensions, but array 0 has %d and array %d has %d", b.Name(), nd, i, len(d))
		}
		for k := range d {
			if k != ax && d[k] != dims0[k] {
				return nil, fmt.Errorf("%s: array %d has size %d along dimension %d, array 0 has %d", b.Name(), i, d[k], k, dims0[k])
			}
		}
		total += d[ax]
		if t.DataType() != dt {
			c, err := ndarray.Astype(t, dt)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", b.Name(), err)
			}
			ts[i] = c
		}
	}
	flat := ndarray.ConcatFlat(ts)
	outer, inner := ndarray.Product(dims0[:ax]), ndarray.Product(dims0[ax+1:])
	starts := make([]int, len(ts))
	for i := 1; i < len(ts); i++ {
		starts[i] = starts[i-1] + ts[i-1].Size()
	}
	var idx []int
	for o := 0; o < outer; o++ {
		for i, t := range ts {
			block := t.Dim(ax) * inner
			idx = append(idx, ndarray.RangeIdx(starts[i]+o*block, block)...)
		}
	}
	shape := append([]int{}, dims0...)
	shape[ax] = total
	return &Array{t: ndarray.Gather(flat, idx, shape)}, nil
}

func npDot(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var av, bv starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &av, "b", &bv); err != nil {
		return nil, err
	}
	x, err := ndarray.TensorArg(b.Name(), av)
	if err != nil {
		return nil, err
	}
	y, err := ndarray.TensorArg(b.Name(), bv)
	if err != nil {
		return nil, err
	}
	if x.NumDims() < 1 || x.NumDims() > 2 || y.NumDims() < 1 || y.NumDims() > 2 {
		return nil, fmt.Errorf("%s: only 1-D and 2-D arrays are supported, got shapes %s and %s", b.Name(), ndarray.ShapeString(x.Dims()), ndarray.ShapeString(y.Dims()))
	}
	m, k := 1, x.Dim(-1)
	if x.NumDims() == 2 {
		m = x.Dim(0)
	}
	k2, n := y.Dim(0), 1
	if y.NumDims() == 2 {
		n = y.Dim(1)
	}
	if k != k2 {
		return nil, fmt.Errorf("%s: shapes %s and %s not aligned: %d (dim %d) != %d (dim 0)", b.Name(), ndarray.ShapeString(x.Dims()), ndarray.ShapeString(y.Dims()), k, x.NumDims()-1, k2)
	}
	var shape []int
	if x.NumDims() == 2 {
		shape = append(shape, m)
	}
	if y.NumDims() == 2 {
		shape = append(shape, n)
	}
	dt := ndarray.Promote(x.DataType(), y.DataType())
	if ndarray.KindOf(dt) == ndarray.KindString {
		return nil, fmt.Errorf("%s: cannot multiply strings", b.Name())
	}
	if ndarray.KindOf(dt) == ndarray.KindFloat {
		xs, ys := ndarray.FloatsOf(x), ndarray.FloatsOf(y)
		out := make([]float64, m*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for p := 0; p < k; p++ {
					s += xs[i*k+p] * ys[p*n+j]
				}
				out[i*n+j] = s
			}
		}
		t, err := ndarray.TensorFromFloats(dt, shape, out)
		if err != nil {
			return nil, err
		}
		return scalarOrArray(t), nil
	}
	xs, ys := ndarray.IntsOf(x), ndarray.IntsOf(y)
	out := make([]int64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s int64
			for p := 0; p < k; p++ {
				s += xs[i*k+p] * ys[p*n+j]
			}
			out[i*n+j] = s
		}
	}
	t, err := ndarray.TensorFromInts(dt, shape, out)
	if err != nil {
		return nil, err
	}
	return scalarOrArray(t), nil
}

func npReduce(kind string) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var a, axis starlark.Value = nil, starlark.None
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &a, "axis?", &axis); err != nil {
			return nil, err
		}
		t, err := ndarray.TensorArg(b.Name(), a)
		if err != nil {
			return nil, err
		}
		v, err := reduce(kind, t, axis)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		return v, nil
	}
}

// broadcastPair converts two arguments to tensors and returns their
// broadcast shape with the index maps into each.
func broadcastPair(name string, av, bv starlark.Value) (x, y *blob.Tensor, shape, xi, yi []int, err error) {
	if x, err = ndarray.TensorArg(name, av); err != nil {
		return
	}
	if y, err = ndarray.TensorArg(name, bv); err != nil {
		return
	}
	var ok bool
	if shape, ok = ndarray.BroadcastShape(x.Dims(), y.Dims()); !ok {
		err = fmt.Errorf("%s: operands could not be broadcast together with shapes %s %s", name, ndarray.ShapeString(x.Dims()), ndarray.ShapeString(y.Dims()))
		return
	}
	return x, y, shape, ndarray.BroadcastIndex(x.Dims(), shape), ndarray.BroadcastIndex(y.Dims(), shape), nil
}

func npAllclose(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var av, bv starlark.Value
	rtol, atol := convert.Float(1e-5), convert.Float(1e-8)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &av, "b", &bv, "rtol?", &rtol, "atol?", &atol); err != nil {
		return nil, err
	}
	x, y, _, xi, yi, err := broadcastPair(b.Name(), av, bv)
	if err != nil {
		return nil, err
	}
	if ndarray.KindOf(x.DataType()) == ndarray.KindString || ndarray.KindOf(y.DataType()) == ndarray.KindString {
		return nil, fmt.Errorf("%s: cannot compare strings numerically", b.Name())
	}
	xs, ys := ndarray.FloatsOf(x), ndarray.FloatsOf(y)
	for i := range xi {
		p, q := xs[xi[i]], ys[yi[i]]
		if p == q {
			continue
		}
		if !(math.Abs(p-q) <= float64(atol)+float64(rtol)*math.Abs(q)) {
			return starlark.False, nil
		}
	}
	return starlark.True, nil
}

func npArrayEqual(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var av, bv starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a1", &av, "a2", &bv); err != nil {
		return nil, err
	}
	x, err := ndarray.TensorArg(b.Name(), av)
	if err != nil {
		return nil, err
	}
	y, err := ndarray.TensorArg(b.Name(), bv)
	if err != nil {
		return nil, err
	}
	if !ndarray.SameShape(x.Dims(), y.Dims()) {
		return starlark.False, nil
	}
	for i := 0; i < x.Size(); i++ {
		if eq, err := starlark.Equal(ndarray.ElemValue(x, i), ndarray.ElemValue(y, i)); err != nil || !eq {
			return starlark.False, nil
		}
	}
	return starlark.True, nil
}

func npEqual(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var av, bv starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x1", &av, "x2", &bv); err != nil {
		return nil, err
	}
	x, y, shape, xi, yi, err := broadcastPair(b.Name(), av, bv)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(xi))
	for i := range out {
		eq, err := starlark.Equal(ndarray.ElemValue(x, xi[i]), ndarray.ElemValue(y, yi[i]))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		out[i] = eq
	}
	return scalarOrArray(blob.MustFromSlice(out, ndarray.Dims(shape)...)), nil
}

func npUnary(name string, f func(float64) float64) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var xv starlark.Value
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &xv); err != nil {
			return nil, err
		}
		x, err := ndarray.TensorArg(b.Name(), xv)
		if err != nil {
			return nil, err
		}
		k := ndarray.KindOf(x.DataType())
		if k == ndarray.KindString {
			return nil, fmt.Errorf("%s: not supported for object arrays", b.Name())
		}
		if name == "abs" && k != ndarray.KindFloat {
			is := ndarray.IntsOf(x)
			out := make([]int64, len(is))
			for i, v := range is {
				out[i] = v
				if v < 0 {
					out[i] = -v
				}
			}
			t, err := ndarray.TensorFromInts(x.DataType(), x.Shape(), out)
			if err != nil {
				return nil, err
			}
			return scalarOrArray(t), nil
		}
		dt := x.DataType()
		if k != ndarray.KindFloat {
			dt = blob.Float64
		}
		fs := ndarray.FloatsOf(x)
		out := make([]float64, len(fs))
		for i, v := range fs {
			out[i] = f(v)
		}
		t, err := ndarray.TensorFromFloats(dt, x.Shape(), out)
		if err != nil {
			return nil, err
		}
		return scalarOrArray(t), nil
	}
}
