package np

import (
	"fmt"
	"time"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/ndarray"
)

var randomModule = binding.NewModule(binding.ModuleSpec{
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
	s, err := ndarray.ShapeOf(v)
	if err == nil && ndarray.Product(s) > 1<<31 {
		err = fmt.Errorf("size %s is too big", ndarray.ShapeString(s))
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
	vals := make([]float64, ndarray.Product(shape))
	for i := range vals {
		vals[i] = gen()
	}
	t, err := blob.FromSlice(vals, ndarray.Dims(shape)...)
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
		shape, err := ndarray.ShapeOf(args)
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
	dt, ok, err := ndarray.DTypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if !ok {
		dt = blob.Int64
	}
	if ndarray.KindOf(dt) != ndarray.KindInt && ndarray.KindOf(dt) != ndarray.KindUint && ndarray.KindOf(dt) != ndarray.KindBool {
		return nil, fmt.Errorf("%s: unsupported dtype %s", b.Name(), ndarray.DTypeName(dt))
	}
	rng := binding.StateOf(thread).RNG
	draw := func() int64 { return lo + rng.Int64N(hi-lo) }
	if !hasShape {
		return starlark.MakeInt64(draw()), nil
	}
	vals := make([]int64, ndarray.Product(shape))
	for i := range vals {
		vals[i] = draw()
	}
	t, err := ndarray.TensorFromInts(dt, shape, vals)
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
	t, err := ndarray.TensorArg(b.Name(), x)
	if err != nil {
		return nil, err
	}
	if t.NumDims() == 0 {
		return nil, fmt.Errorf("%s: x must be an int or an array of at least one dimension", b.Name())
	}
	inner := t.SizeFromDim(1)
	var idx []int
	for _, r := range rng.Perm(t.Dim(0)) {
		idx = append(idx, ndarray.RangeIdx(r*inner, inner)...)
	}
	return &Array{t: ndarray.Gather(t, idx, t.Shape())}, nil
}
