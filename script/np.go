package script

import (
	"fmt"
	"math"
	"time"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
)

// toTensor converts a Starlark value to a tensor: an Array (copied, or
// converted to dt), a number, a bool, a string, or nested lists and tuples
// of those (rectangular). Without hasDT the type is inferred as NumPy does:
// bool, then int64, then float64 (or the arrays' own types), and object
// for strings.
func toTensor(v starlark.Value, dt blob.DataType, hasDT bool) (*blob.Tensor, error) {
	if a, ok := v.(*Array); ok {
		if !hasDT {
			return a.t.Clone(), nil
		}
		return astype(a.t, dt)
	}
	var leaves []starlark.Value
	var arrayType blob.DataType
	sawArray := false
	var walk func(v starlark.Value, depth int) ([]int, error)
	walk = func(v starlark.Value, depth int) ([]int, error) {
		switch x := v.(type) {
		case *Array:
			if !sawArray {
				arrayType, sawArray = x.t.DataType(), true
			} else {
				arrayType = promote(arrayType, x.t.DataType())
			}
			for i := 0; i < x.t.Size(); i++ {
				leaves = append(leaves, elemValue(x.t, i))
			}
			return x.t.Shape(), nil
		case *starlark.List, starlark.Tuple:
			seq := x.(starlark.Indexable)
			if depth > 32 {
				return nil, fmt.Errorf("nesting too deep")
			}
			if seq.Len() == 0 {
				return []int{0}, nil
			}
			var inner []int
			for i := 0; i < seq.Len(); i++ {
				s, err := walk(seq.Index(i), depth+1)
				if err != nil {
					return nil, err
				}
				if i == 0 {
					inner = s
				} else if !sameShape(s, inner) {
					return nil, fmt.Errorf("setting an array element with a sequence: the requested array has an inhomogeneous shape after %d dimensions", depth+1)
				}
			}
			return append([]int{seq.Len()}, inner...), nil
		case starlark.Int, starlark.Float, starlark.Bool, starlark.String:
			leaves = append(leaves, v)
			return nil, nil
		}
		return nil, fmt.Errorf("cannot make an array element of a %s", v.Type())
	}
	shape, err := walk(v, 0)
	if err != nil {
		return nil, err
	}
	if !hasDT {
		dt = inferType(leaves, arrayType, sawArray)
	}
	switch kindOf(dt) {
	case kindString:
		strs := make([]string, len(leaves))
		for i, l := range leaves {
			s, ok := l.(starlark.String)
			if !ok {
				return nil, fmt.Errorf("cannot mix strings and numbers in an array")
			}
			strs[i] = string(s)
		}
		return blob.FromSlice(strs, dims(shape)...)
	case kindFloat:
		vals := make([]float64, len(leaves))
		for i, l := range leaves {
			f, ok := starlark.AsFloat(l)
			if !ok {
				if b, isBool := l.(starlark.Bool); isBool && bool(b) {
					f, ok = 1, true
				} else if isBool {
					ok = true
				}
			}
			if !ok {
				return nil, fmt.Errorf("could not convert %s to float", l.Type())
			}
			vals[i] = f
		}
		return tensorFromFloats(dt, shape, vals)
	}
	vals := make([]int64, len(leaves))
	for i, l := range leaves {
		switch x := l.(type) {
		case starlark.Int:
			n, ok := x.Int64()
			if !ok {
				return nil, fmt.Errorf("integer %s is too large", x)
			}
			vals[i] = n
		case starlark.Bool:
			if x {
				vals[i] = 1
			}
		case starlark.Float:
			if dt == blob.Bool {
				if x != 0 {
					vals[i] = 1
				}
			} else {
				vals[i] = floatToInt(float64(x))
			}
		default:
			return nil, fmt.Errorf("could not convert %s to %s", l.Type(), dtypeName(dt))
		}
	}
	return tensorFromInts(dt, shape, vals)
}

func inferType(leaves []starlark.Value, arrayType blob.DataType, sawArray bool) blob.DataType {
	k := kindBool
	strs := false
	for _, l := range leaves {
		switch l.(type) {
		case starlark.String:
			strs = true
		case starlark.Float:
			k = max(k, kindFloat)
		case starlark.Int:
			k = max(k, kindInt)
		}
	}
	switch {
	case strs:
		return blob.String
	case sawArray:
		return arrayType
	case len(leaves) == 0 || k == kindFloat:
		return blob.Float64
	case k == kindInt:
		return blob.Int64
	}
	return blob.Bool
}

// arrayArg converts an argument that should be an array (an Array, or
// anything np.array accepts).
func arrayArg(fnName string, v starlark.Value) (*blob.Tensor, error) {
	if a, ok := v.(*Array); ok {
		return a.t, nil
	}
	t, err := toTensor(v, 0, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fnName, err)
	}
	return t, nil
}

// scalarOrArray returns a Starlark scalar for a 0-d tensor, else an Array.
func scalarOrArray(t *blob.Tensor) starlark.Value {
	if t.NumDims() == 0 {
		return elemValue(t, 0)
	}
	return &Array{t: t}
}

// reduce implements sum, mean, max, min, argmax and argmin over all
// elements (axis None, giving a scalar) or along one axis.
func reduce(kind string, t *blob.Tensor, axis starlark.Value) (starlark.Value, error) {
	if kindOf(t.DataType()) == kindString {
		return nil, fmt.Errorf("cannot %s an array of strings", kind)
	}
	dims := t.Dims()
	outer, n, inner := 1, t.Size(), 1
	var outShape []int
	if axis != starlark.None {
		ax, err := starlark.AsInt32(axis)
		if err != nil {
			return nil, fmt.Errorf("axis must be an int or None")
		}
		if ax < 0 {
			ax += len(dims)
		}
		if ax < 0 || ax >= len(dims) {
			return nil, fmt.Errorf("axis %s is out of bounds for array of dimension %d", axis, len(dims))
		}
		outer, n, inner = product(dims[:ax]), dims[ax], product(dims[ax+1:])
		outShape = append(append([]int{}, dims[:ax]...), dims[ax+1:]...)
	}
	if n == 0 && kind != "sum" && kind != "mean" {
		return nil, fmt.Errorf("zero-size array to reduction operation %s which has no identity", kind)
	}
	src := t.DataType()
	var dt blob.DataType
	switch {
	case kind == "argmax" || kind == "argmin":
		dt = blob.Int64
	case kind == "max" || kind == "min":
		dt = src
	case kindOf(src) == kindFloat:
		dt = src
	case kind == "mean":
		dt = blob.Float64
	default:
		dt = blob.Int64
	}
	m := outer * inner
	useFloat := kindOf(src) == kindFloat || kind == "mean"
	var fs []float64
	var is []int64
	if useFloat {
		fs = floatsOf(t)
	} else {
		is = intsOf(t)
	}
	outF := make([]float64, m)
	outI := make([]int64, m)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			at := func(k int) int { return (o*n+k)*inner + i }
			r := o*inner + i
			if useFloat {
				outF[r], outI[r] = reduceFloats(kind, n, func(k int) float64 { return fs[at(k)] })
			} else {
				outF[r], outI[r] = reduceInts(kind, n, func(k int) int64 { return is[at(k)] })
			}
		}
	}
	var res *blob.Tensor
	var err error
	if kind == "argmax" || kind == "argmin" || !useFloat {
		res, err = tensorFromInts(dt, outShape, outI)
	} else {
		res, err = tensorFromFloats(dt, outShape, outF)
	}
	if err != nil {
		return nil, err
	}
	return scalarOrArray(res), nil
}

// reduceFloats reduces n values; argmax and argmin give their index in the
// second result, the others their value in the first.
func reduceFloats(kind string, n int, at func(int) float64) (float64, int64) {
	switch kind {
	case "sum", "mean":
		s := 0.0
		for k := 0; k < n; k++ {
			s += at(k)
		}
		if kind == "mean" {
			return s / float64(n), 0
		}
		return s, 0
	}
	best, bi := at(0), 0
	for k := 1; k < n && !math.IsNaN(best); k++ {
		v := at(k)
		if math.IsNaN(v) || ((kind == "max" || kind == "argmax") && v > best) || ((kind == "min" || kind == "argmin") && v < best) {
			best, bi = v, k
		}
	}
	return best, int64(bi)
}

func reduceInts(kind string, n int, at func(int) int64) (float64, int64) {
	switch kind {
	case "sum":
		var s int64
		for k := 0; k < n; k++ {
			s += at(k)
		}
		return 0, s
	}
	best, bi := at(0), 0
	for k := 1; k < n; k++ {
		v := at(k)
		if ((kind == "max" || kind == "argmax") && v > best) || ((kind == "min" || kind == "argmin") && v < best) {
			best, bi = v, k
		}
	}
	if kind == "max" || kind == "min" {
		return 0, best
	}
	return 0, int64(bi)
}

// concatFlat concatenates the elements of tensors of one type into a 1-D
// tensor.
func concatFlat(ts []*blob.Tensor) *blob.Tensor {
	switch ts[0].Raw().(type) {
	case []float32:
		return concatT[float32](ts)
	case []float64:
		return concatT[float64](ts)
	case []blob.Half:
		return concatT[blob.Half](ts)
	case []int8:
		return concatT[int8](ts)
	case []int16:
		return concatT[int16](ts)
	case []int32:
		return concatT[int32](ts)
	case []int64:
		return concatT[int64](ts)
	case []uint8:
		return concatT[uint8](ts)
	case []uint16:
		return concatT[uint16](ts)
	case []bool:
		return concatT[bool](ts)
	}
	return concatT[string](ts)
}

func concatT[T blob.Element](ts []*blob.Tensor) *blob.Tensor {
	var out []T
	for _, t := range ts {
		out = append(out, blob.Data[T](t)...)
	}
	return blob.MustFromSlice(out)
}

var npModule = binding.NewModule(binding.ModuleSpec{
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
			"random": npRandomModule,
			"pi":     starlark.Float(math.Pi),
			"bool_":  DType{blob.Bool},
		}
		for _, t := range dtypes {
			d[t.name] = DType{t.dt}
		}
		return d
	},
})

var npRandomModule = binding.NewModule(binding.ModuleSpec{
	Name: "np.random",
	Doc:  "np.random: random arrays from the interpreter's generator (PCG; seed it with np.random.seed).",
	Funcs: []binding.Fn{
		{Name: "seed", Doc: "seed(seed=None)\n\nReseeds the generator (None: from the clock).", Body: npSeed},
		{Name: "rand", Doc: "rand(d0, d1, ...)\n\nUniform float64 samples in [0, 1) of the given shape (a float without arguments).", Body: npRand(false)},
		{Name: "randn", Doc: "randn(d0, d1, ...)\n\nStandard normal float64 samples of the given shape (a float without arguments).", Body: npRand(true)},
		{Name: "randint", Doc: "randint(low, high=None, size=None, dtype=int64)\n\nUniform integers in [low, high), or [0, low) without high.", Body: npRandint},
		{Name: "uniform", Doc: "uniform(low=0.0, high=1.0, size=None)\n\nUniform float64 samples in [low, high).", Body: npUniform},
		{Name: "normal", Doc: "normal(loc=0.0, scale=1.0, size=None)\n\nNormal float64 samples with mean loc and standard deviation scale.", Body: npNormal},
		{Name: "permutation", Doc: "permutation(x)\n\nA shuffled np.arange(x) for an int, else a copy of x shuffled along its first axis.", Body: npPermutation},
	},
})

func npArray(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var obj, d starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "object", &obj, "dtype?", &d); err != nil {
		return nil, err
	}
	dt, ok, err := dtypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	t, err := toTensor(obj, dt, ok)
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
	dt, ok, err := dtypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if a, isArr := obj.(*Array); isArr && (!ok || a.t.DataType() == dt) {
		return a, nil
	}
	t, err := toTensor(obj, dt, ok)
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
	n := product(shape)
	if n > 1<<31 {
		return nil, fmt.Errorf("array of %d elements is too big", n)
	}
	if kindOf(dt) == kindString {
		s, ok := v.(starlark.String)
		if !ok {
			return nil, fmt.Errorf("cannot fill an object array with %s", v.Type())
		}
		vals := make([]string, n)
		for i := range vals {
			vals[i] = string(s)
		}
		return blob.FromSlice(vals, dims(shape)...)
	}
	one, err := toTensor(v, dt, true)
	if err != nil {
		return nil, err
	}
	return gather(one, make([]int, n), shape), nil
}

func npFilled(value int) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var shapeV, d starlark.Value = nil, starlark.None
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "shape", &shapeV, "dtype?", &d); err != nil {
			return nil, err
		}
		shape, err := shapeOf(shapeV)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		dt, ok, err := dtypeOf(d)
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
	shape, err := shapeOf(shapeV)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	dt, ok, err := dtypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if !ok {
		dt = inferType([]starlark.Value{fill}, 0, false)
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
		t, err := arrayArg(b.Name(), a)
		if err != nil {
			return nil, err
		}
		dt, ok, err := dtypeOf(d)
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
	dt, ok, err := dtypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if !ok {
		dt = blob.Float64
		if allInt {
			dt = blob.Int64
		}
	}
	t, err := tensorFromFloats(dt, []int{n}, vals)
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
	dt, ok, err := dtypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if !ok {
		dt = blob.Float64
	}
	t, err := tensorFromFloats(dt, []int{num}, vals)
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
	t, err := arrayArg(b.Name(), a)
	if err != nil {
		return nil, err
	}
	shape, err := shapeOf(newshape)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	shape, err = resolveShape(shape, t.Size())
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
		t, err := arrayArg(b.Name(), arrays.Index(i))
		if err != nil {
			return nil, err
		}
		ts[i] = t
		if i == 0 {
			dt = t.DataType()
		} else {
			dt = promote(dt, t.DataType())
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
			c, err := astype(t, dt)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", b.Name(), err)
			}
			ts[i] = c
		}
	}
	flat := concatFlat(ts)
	outer, inner := product(dims0[:ax]), product(dims0[ax+1:])
	starts := make([]int, len(ts))
	for i := 1; i < len(ts); i++ {
		starts[i] = starts[i-1] + ts[i-1].Size()
	}
	var idx []int
	for o := 0; o < outer; o++ {
		for i, t := range ts {
			block := t.Dim(ax) * inner
			idx = append(idx, rangeIdx(starts[i]+o*block, block)...)
		}
	}
	shape := append([]int{}, dims0...)
	shape[ax] = total
	return &Array{t: gather(flat, idx, shape)}, nil
}

func npDot(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var av, bv starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &av, "b", &bv); err != nil {
		return nil, err
	}
	x, err := arrayArg(b.Name(), av)
	if err != nil {
		return nil, err
	}
	y, err := arrayArg(b.Name(), bv)
	if err != nil {
		return nil, err
	}
	if x.NumDims() < 1 || x.NumDims() > 2 || y.NumDims() < 1 || y.NumDims() > 2 {
		return nil, fmt.Errorf("%s: only 1-D and 2-D arrays are supported, got shapes %s and %s", b.Name(), shapeString(x.Dims()), shapeString(y.Dims()))
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
		return nil, fmt.Errorf("%s: shapes %s and %s not aligned: %d (dim %d) != %d (dim 0)", b.Name(), shapeString(x.Dims()), shapeString(y.Dims()), k, x.NumDims()-1, k2)
	}
	var shape []int
	if x.NumDims() == 2 {
		shape = append(shape, m)
	}
	if y.NumDims() == 2 {
		shape = append(shape, n)
	}
	dt := promote(x.DataType(), y.DataType())
	if kindOf(dt) == kindString {
		return nil, fmt.Errorf("%s: cannot multiply strings", b.Name())
	}
	if kindOf(dt) == kindFloat {
		xs, ys := floatsOf(x), floatsOf(y)
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
		t, err := tensorFromFloats(dt, shape, out)
		if err != nil {
			return nil, err
		}
		return scalarOrArray(t), nil
	}
	xs, ys := intsOf(x), intsOf(y)
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
	t, err := tensorFromInts(dt, shape, out)
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
		t, err := arrayArg(b.Name(), a)
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
	if x, err = arrayArg(name, av); err != nil {
		return
	}
	if y, err = arrayArg(name, bv); err != nil {
		return
	}
	var ok bool
	if shape, ok = broadcastShape(x.Dims(), y.Dims()); !ok {
		err = fmt.Errorf("%s: operands could not be broadcast together with shapes %s %s", name, shapeString(x.Dims()), shapeString(y.Dims()))
		return
	}
	return x, y, shape, broadcastIndex(x.Dims(), shape), broadcastIndex(y.Dims(), shape), nil
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
	if kindOf(x.DataType()) == kindString || kindOf(y.DataType()) == kindString {
		return nil, fmt.Errorf("%s: cannot compare strings numerically", b.Name())
	}
	xs, ys := floatsOf(x), floatsOf(y)
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
	x, err := arrayArg(b.Name(), av)
	if err != nil {
		return nil, err
	}
	y, err := arrayArg(b.Name(), bv)
	if err != nil {
		return nil, err
	}
	if !sameShape(x.Dims(), y.Dims()) {
		return starlark.False, nil
	}
	for i := 0; i < x.Size(); i++ {
		if eq, err := starlark.Equal(elemValue(x, i), elemValue(y, i)); err != nil || !eq {
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
		eq, err := starlark.Equal(elemValue(x, xi[i]), elemValue(y, yi[i]))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		out[i] = eq
	}
	return scalarOrArray(blob.MustFromSlice(out, dims(shape)...)), nil
}

func npUnary(name string, f func(float64) float64) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var xv starlark.Value
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &xv); err != nil {
			return nil, err
		}
		x, err := arrayArg(b.Name(), xv)
		if err != nil {
			return nil, err
		}
		k := kindOf(x.DataType())
		if k == kindString {
			return nil, fmt.Errorf("%s: not supported for object arrays", b.Name())
		}
		if name == "abs" && k != kindFloat {
			is := intsOf(x)
			out := make([]int64, len(is))
			for i, v := range is {
				out[i] = v
				if v < 0 {
					out[i] = -v
				}
			}
			t, err := tensorFromInts(x.DataType(), x.Shape(), out)
			if err != nil {
				return nil, err
			}
			return scalarOrArray(t), nil
		}
		dt := x.DataType()
		if k != kindFloat {
			dt = blob.Float64
		}
		fs := floatsOf(x)
		out := make([]float64, len(fs))
		for i, v := range fs {
			out[i] = f(v)
		}
		t, err := tensorFromFloats(dt, x.Shape(), out)
		if err != nil {
			return nil, err
		}
		return scalarOrArray(t), nil
	}
}

func npSeed(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var seed starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "seed?", &seed); err != nil {
		return nil, err
	}
	st := binding.StateOf(thread)
	if seed == starlark.None {
		st.RNG = binding.NewRNG(uint64(time.Now().UnixNano()))
		return starlark.None, nil
	}
	n, ok := convert.IntOf(seed)
	if !ok || n < 0 {
		return nil, fmt.Errorf("%s: seed must be a non-negative int, got %s", b.Name(), seed)
	}
	st.RNG = binding.NewRNG(uint64(n))
	return starlark.None, nil
}

// sizeArg reads a size argument: None (a scalar), an int or a tuple.
func sizeArg(v starlark.Value) ([]int, bool, error) {
	if v == starlark.None {
		return nil, false, nil
	}
	s, err := shapeOf(v)
	if err == nil && product(s) > 1<<31 {
		err = fmt.Errorf("size %s is too big", shapeString(s))
	}
	return s, true, err
}

// randomArray fills an array of the given shape (or returns a scalar when
// hasShape is false) with samples of gen.
func randomArray(shape []int, hasShape bool, gen func() float64) (starlark.Value, error) {
	if !hasShape {
		return starlark.Float(gen()), nil
	}
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dimensions are not allowed")
		}
	}
	vals := make([]float64, product(shape))
	for i := range vals {
		vals[i] = gen()
	}
	t, err := blob.FromSlice(vals, dims(shape)...)
	if err != nil {
		return nil, err
	}
	return &Array{t: t}, nil
}

func npRand(normal bool) binding.Func {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(kwargs) > 0 {
			return nil, fmt.Errorf("%s: unexpected keyword arguments", b.Name())
		}
		shape, err := shapeOf(args)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		rng := binding.StateOf(thread).RNG
		gen := rng.Float64
		if normal {
			gen = rng.NormFloat64
		}
		v, err := randomArray(shape, len(args) > 0, gen)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		return v, nil
	}
}

func npRandint(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var low int64
	var high, size, d starlark.Value = starlark.None, starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "low", &low, "high?", &high, "size?", &size, "dtype?", &d); err != nil {
		return nil, err
	}
	lo, hi := int64(0), low
	if high != starlark.None {
		h, ok := convert.IntOf(high)
		if !ok {
			return nil, fmt.Errorf("%s: high must be an int, got %s", b.Name(), high.Type())
		}
		lo, hi = low, h
	}
	if lo >= hi {
		return nil, fmt.Errorf("%s: low >= high", b.Name())
	}
	shape, hasShape, err := sizeArg(size)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	dt, ok, err := dtypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if !ok {
		dt = blob.Int64
	}
	if kindOf(dt) != kindInt && kindOf(dt) != kindUint && kindOf(dt) != kindBool {
		return nil, fmt.Errorf("%s: unsupported dtype %s", b.Name(), dtypeName(dt))
	}
	rng := binding.StateOf(thread).RNG
	draw := func() int64 { return lo + rng.Int64N(hi-lo) }
	if !hasShape {
		return starlark.MakeInt64(draw()), nil
	}
	vals := make([]int64, product(shape))
	for i := range vals {
		vals[i] = draw()
	}
	t, err := tensorFromInts(dt, shape, vals)
	if err != nil {
		return nil, err
	}
	return &Array{t: t}, nil
}

func npUniform(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	low, high := convert.Float(0), convert.Float(1)
	var size starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "low?", &low, "high?", &high, "size?", &size); err != nil {
		return nil, err
	}
	shape, hasShape, err := sizeArg(size)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	rng := binding.StateOf(thread).RNG
	v, err := randomArray(shape, hasShape, func() float64 { return float64(low) + float64(high-low)*rng.Float64() })
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return v, nil
}

func npNormal(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	loc, scale := convert.Float(0), convert.Float(1)
	var size starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "loc?", &loc, "scale?", &scale, "size?", &size); err != nil {
		return nil, err
	}
	if scale < 0 {
		return nil, fmt.Errorf("%s: scale < 0", b.Name())
	}
	shape, hasShape, err := sizeArg(size)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	rng := binding.StateOf(thread).RNG
	v, err := randomArray(shape, hasShape, func() float64 { return float64(loc) + float64(scale)*rng.NormFloat64() })
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return v, nil
}

func npPermutation(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x); err != nil {
		return nil, err
	}
	rng := binding.StateOf(thread).RNG
	if n, ok := x.(starlark.Int); ok {
		k, err := starlark.AsInt32(n)
		if err != nil || k < 0 {
			return nil, fmt.Errorf("%s: want a non-negative int, got %s", b.Name(), n)
		}
		vals := make([]int64, k)
		for i, j := range rng.Perm(k) {
			vals[i] = int64(j)
		}
		return &Array{t: blob.MustFromSlice(vals)}, nil
	}
	t, err := arrayArg(b.Name(), x)
	if err != nil {
		return nil, err
	}
	if t.NumDims() == 0 {
		return nil, fmt.Errorf("%s: x must be an int or an array of at least one dimension", b.Name())
	}
	inner := t.SizeFromDim(1)
	var idx []int
	for _, r := range rng.Perm(t.Dim(0)) {
		idx = append(idx, rangeIdx(r*inner, inner)...)
	}
	return &Array{t: gather(t, idx, t.Shape())}, nil
}
