package math

import (
	"math"
	"sort"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// Elementwise transforms with arguments or parameter tensors: Mod,
// NegateGradient, BatchBoxCox, PiecewiseLinearTransform,
// SinusoidPositionEncoding and ClipTensorByScaling.
func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Mod", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: inplace00,
		Args: []operators.ArgSpec{
			{Name: "divisor", Default: 0, Doc: "the divisor (not 0)"},
			{Name: "sign_follow_divisor", Default: false, Doc: "give the result the divisor's sign instead of the dividend's"},
		},
		Doc: "Y = X mod divisor elementwise, for INT32 and INT64 X.",
	}, func(b *operators.Base) (operators.Operator, error) {
		d := b.ArgInt("divisor", 0)
		if d == 0 {
			return nil, b.Errorf("divisor must not be 0")
		}
		return &modOp{Base: b, divisor: d, follow: b.ArgBool("sign_follow_divisor", false)}, nil
	})
	operators.MustRegisterGradientForbidden("Mod")
	operators.MustRegisterShapeFunc("Mod", operators.SameAsInput0)

	operators.MustRegisterCPU(operators.Schema{
		Type: "NegateGradient", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: inplace00,
		Doc:          "Y = X; its gradient is the negated output gradient (a gradient reversal layer).",
	}, func(b *operators.Base) (operators.Operator, error) { return &negateGradientOp{Base: b}, nil })
	operators.MustRegisterGradient("NegateGradient", func(g *operators.GradientContext) error {
		g.Op("Negative", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("NegateGradient", operators.SameAsInput0)

	operators.MustRegisterCPU(operators.Schema{
		Type: "BatchBoxCox", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: inplace00,
		Args:         []operators.ArgSpec{{Name: "min_block_size", Default: 256, Doc: "a tuning knob of Caffe2's kernel; no effect here"}},
		Doc: "(data [N, D], lambda1 [D], lambda2 [D]) → Y: the Box-Cox transform of each column, " +
			"((max(x + λ2, 1e-6))^λ1 − 1)/λ1, or ln(max(x + λ2, 1e-6)) where λ1 is 0. FLOAT.",
	}, func(b *operators.Base) (operators.Operator, error) { return &boxCoxOp{Base: b}, nil })
	operators.MustRegisterGradientNotImplemented("BatchBoxCox")
	operators.MustRegisterShapeFunc("BatchBoxCox", operators.SameAsInput0)

	operators.MustRegisterCPU(operators.Schema{
		Type: "PiecewiseLinearTransform", MinInputs: 1, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1,
		InputsCheck:  func(n int) bool { return n == 1 || n == 4 },
		AllowInplace: inplace00,
		Args: []operators.ArgSpec{
			{Name: "bounds", Doc: "the sorted bounds of the pieces, P+1 per column"},
			{Name: "slopes", Doc: "the slopes, P per column"},
			{Name: "intercepts", Doc: "the intercepts, P per column"},
			{Name: "binary", Default: false, Doc: "X is [N] or [N, 1] probabilities, or [N, 2] whose column 1 is transformed and column 0 set to 1 − it"},
		},
		Doc: "(X[, bounds, slopes, intercepts]) → Y: each column j of X [N, M] through its own piecewise linear function, " +
			"y = slope·x + intercept of the piece holding x, clamped to the values at the outer bounds. " +
			"The functions come from the arguments, or else from inputs 1-3. FLOAT.",
	}, newPiecewise)
	operators.MustRegisterNoGradient("PiecewiseLinearTransform")
	operators.MustRegisterShapeFunc("PiecewiseLinearTransform", operators.SameAsInput0)

	operators.MustRegisterCPU(operators.Schema{
		Type: "SinusoidPositionEncoding", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "embedding_size", Default: 100, Doc: "E, the length of each encoding"},
			{Name: "alpha", Default: float32(10000), Doc: "the base of the wavelengths"},
			{Name: "amplitude", Default: float32(1), Doc: "the scale of the output"},
		},
		Doc: "positions [M, K] (INT32 or INT64) → Y [M, K, E] FLOAT: Y[i, j, k] = amplitude·sin(p/alpha^(k/E)) for even k " +
			"and amplitude·cos(p/alpha^(k/E)) for odd k, with p = positions[i, 0] for every j (as in Caffe2).",
	}, func(b *operators.Base) (operators.Operator, error) {
		e := b.ArgInt("embedding_size", 100)
		if e < 0 {
			return nil, b.Errorf("embedding_size is %d, want ≥ 0", e)
		}
		return &sinusoidOp{Base: b, e: int(e), alpha: b.ArgFloat("alpha", 10000), amplitude: b.ArgFloat("amplitude", 1)}, nil
	})
	operators.MustRegisterNoGradient("SinusoidPositionEncoding")
	operators.MustRegisterShapeFunc("SinusoidPositionEncoding", sinusoidShape)

	operators.MustRegisterCPU(operators.Schema{
		Type: "ClipTensorByScaling", MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: inplace00,
		Args:         []operators.ArgSpec{{Name: "threshold", Doc: "the largest val left unscaled (> 0)"}},
		Doc: "(X, val[, scale]) → Y: X·threshold/val where val > threshold, else X; threshold is the argument times the " +
			"optional one-element input 2; X FLOAT with at least one element, val one FLOAT (typically X's norm).",
	}, func(b *operators.Base) (operators.Operator, error) {
		t := b.ArgFloat("threshold", 0)
		if !(t > 0) {
			return nil, b.Errorf("threshold is %g: it must be greater than 0", t)
		}
		return &clipByScalingOp{Base: b, threshold: t}, nil
	})
	operators.MustRegisterGradientForbidden("ClipTensorByScaling")
	operators.MustRegisterShapeFunc("ClipTensorByScaling", operators.SameAsInput0)
}

type modOp struct {
	*operators.Base
	divisor int64
	follow  bool
}

func (o *modOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if y != x {
		if err := y.Init(x.DataType(), x.Dims()...); err != nil {
			return err
		}
	}
	switch x.DataType() {
	case blob.Int32:
		mod(blob.Data[int32](y), blob.Data[int32](x), o.divisor, o.follow)
	case blob.Int64:
		mod(blob.Data[int64](y), blob.Data[int64](x), o.divisor, o.follow)
	default:
		return o.Errorf("input 0 (%q) has type %v, want INT32 or INT64", o.InputName(0), x.DataType())
	}
	return nil
}

func mod[T int32 | int64](y, x []T, d int64, follow bool) {
	x = x[:len(y)]
	for i, v := range x {
		r := int64(v) % d
		if r != 0 && follow && (r > 0) != (d > 0) {
			r += d
		}
		y[i] = T(r)
	}
}

type negateGradientOp struct{ *operators.Base }

func (o *negateGradientOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	if y := o.Output(0); y != x {
		return y.CopyFrom(x)
	}
	return nil
}

type boxCoxOp struct{ *operators.Base }

func (o *boxCoxOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	if x.NumDims() < 1 {
		return o.Errorf("data (%q) is a scalar: it needs a dimension of rows", o.InputName(0))
	}
	y := o.Output(0)
	if y != x {
		if err := y.Init(blob.Float32, x.Dims()...); err != nil {
			return err
		}
	}
	if x.Size() == 0 {
		return nil
	}
	d := x.Size() / x.Dim(0)
	var l [2][]float32
	for k := range l {
		t, err := o.InputOf(k+1, blob.Float32)
		if err != nil {
			return err
		}
		if t.Size() != d {
			return o.Errorf("input %d (%q) has shape %v, want %d elements, one per column of data %v", k+1, o.InputName(k+1), t.Dims(), d, x.Dims())
		}
		l[k] = blob.Data[float32](t)
	}
	const eps = 1e-6
	xv, yv := blob.Data[float32](x), blob.Data[float32](y)
	for i, v := range xv {
		j := i % d
		l1 := float64(l[0][j])
		b := max(float64(v)+float64(l[1][j]), eps)
		if l1 == 0 {
			yv[i] = float32(math.Log(b))
		} else {
			yv[i] = float32((math.Pow(b, l1) - 1) / l1)
		}
	}
	return nil
}

// piecewiseOp is PiecewiseLinearTransform.
type piecewiseOp struct {
	*operators.Base
	binary    bool
	fromArgs  bool
	b, s, i   []float32 // the functions of the arguments
	groups, p int       // functions and pieces per function, from the arguments
}

// piecewiseShape checks the counts of bounds, slopes and intercepts and
// returns the number of functions and of pieces each.
func piecewiseShape(b *operators.Base, nb, ns, ni int, binary bool) (groups, pieces int, err error) {
	if ns != ni {
		return 0, 0, b.Errorf("%d slopes and %d intercepts: they must be as many", ns, ni)
	}
	groups = nb - ns
	if groups <= 0 {
		return 0, 0, b.Errorf("%d bounds and %d slopes: each function needs one bound more than slopes", nb, ns)
	}
	if binary && groups != 1 {
		return 0, 0, b.Errorf("binary transforms take one function, got %d (%d bounds, %d slopes)", groups, nb, ns)
	}
	if ns%groups != 0 || ns/groups == 0 {
		return 0, 0, b.Errorf("%d slopes do not split into %d functions of at least one piece", ns, groups)
	}
	return groups, ns / groups, nil
}

func newPiecewise(b *operators.Base) (operators.Operator, error) {
	o := &piecewiseOp{Base: b, binary: b.ArgBool("binary", false)}
	o.b, o.s, o.i = b.ArgFloats("bounds", nil), b.ArgFloats("slopes", nil), b.ArgFloats("intercepts", nil)
	set := 0
	for _, a := range [][]float32{o.b, o.s, o.i} {
		if len(a) > 0 {
			set++
		}
	}
	switch set {
	case 0:
		if b.NumInputs() != 4 {
			return nil, b.Errorf("without the bounds, slopes and intercepts arguments the functions must be inputs 1-3")
		}
		return o, nil
	case 3:
	default:
		return nil, b.Errorf("bounds, slopes, intercepts must be all set or all not set")
	}
	if b.NumInputs() != 1 {
		return nil, b.Errorf("the functions are given as arguments: the operator takes X alone, got %d inputs", b.NumInputs())
	}
	var err error
	if o.groups, o.p, err = piecewiseShape(b, len(o.b), len(o.s), len(o.i), o.binary); err != nil {
		return nil, err
	}
	for g := range o.groups {
		if !sort.SliceIsSorted(o.b[g*(o.p+1):(g+1)*(o.p+1)], func(x, y int) bool { return o.b[g*(o.p+1)+x] < o.b[g*(o.p+1)+y] }) {
			return nil, b.Errorf("bounds must be sorted for each group")
		}
	}
	o.fromArgs = true
	return o, nil
}

// transform maps x through the function with bounds b (p+1), slopes s and
// intercepts c (p each).
func transform(x float32, b, s, c []float32) float32 {
	p := len(s)
	switch {
	case x <= b[0]:
		return s[0]*b[0] + c[0]
	case x >= b[p]:
		return s[p-1]*b[p] + c[p-1]
	}
	// std::lower_bound: the first bound not less than x.
	k := sort.Search(len(b), func(i int) bool { return !(b[i] < x) }) - 1
	k = min(max(k, 0), p-1) // unsorted bounds from inputs, or a NaN x
	return s[k]*x + c[k]
}

func (o *piecewiseOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	bounds, slopes, intercepts, groups, p := o.b, o.s, o.i, o.groups, o.p
	if !o.fromArgs {
		var in [3][]float32
		for k := range in {
			t, err := o.InputOf(k+1, blob.Float32)
			if err != nil {
				return err
			}
			in[k] = blob.Data[float32](t)
		}
		bounds, slopes, intercepts = in[0], in[1], in[2]
		if groups, p, err = piecewiseShape(o.Base, len(bounds), len(slopes), len(intercepts), o.binary); err != nil {
			return err
		}
	}
	var n, m int
	switch {
	case o.binary && (x.NumDims() == 1 || x.NumDims() == 2):
		n, m = x.Dim(0), 1
		if x.NumDims() == 2 {
			m = x.Dim(1)
		}
		if m != 1 && m != 2 {
			return o.Errorf("X (%q) has shape %v: if binary is set to true, the input must be Nx2 or Nx1 tensor", o.InputName(0), x.Dims())
		}
	case o.binary:
		return o.Errorf("X (%q) has shape %v: binary transforms take [N], [N, 1] or [N, 2]", o.InputName(0), x.Dims())
	case x.NumDims() == 2:
		n, m = x.Dim(0), x.Dim(1)
		if groups != m {
			return o.Errorf("X (%q) has %d columns but there are %d functions", o.InputName(0), m, groups)
		}
	default:
		return o.Errorf("X (%q) has shape %v, want [N, M]", o.InputName(0), x.Dims())
	}
	y := o.Output(0)
	if y != x {
		if err := y.Init(blob.Float32, x.Dims()...); err != nil {
			return err
		}
	}
	xv, yv := blob.Data[float32](x), blob.Data[float32](y)
	if o.binary {
		b, s, c := bounds[:p+1], slopes[:p], intercepts[:p]
		for i := range n {
			if m == 1 {
				yv[i] = transform(xv[i], b, s, c)
				continue
			}
			v := transform(xv[2*i+1], b, s, c)
			yv[2*i+1], yv[2*i] = v, 1-v
		}
		return nil
	}
	for j := range m {
		b, s, c := bounds[j*(p+1):(j+1)*(p+1)], slopes[j*p:(j+1)*p], intercepts[j*p:(j+1)*p]
		for i := range n {
			yv[i*m+j] = transform(xv[i*m+j], b, s, c)
		}
	}
	return nil
}

// sinusoidShape: [M, K] positions give [M, K, E].
func sinusoidShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	e := int(b.ArgInt("embedding_size", 100))
	x := in[0]
	if x.Unknown {
		return []operators.TensorShape{operators.Shape(blob.Float32, operators.AnyDim, operators.AnyDim, e)}, nil
	}
	if x.Rank() != 2 {
		return nil, b.InputShapeError(in, "POSITIONS should be a 2-D tensor")
	}
	return []operators.TensorShape{operators.Shape(blob.Float32, x.Dim(0), x.Dim(1), e)}, nil
}

type sinusoidOp struct {
	*operators.Base
	e                int
	alpha, amplitude float32
	dims             [3]int
}

func (o *sinusoidOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	if x.NumDims() != 2 {
		return o.Errorf("POSITIONS (%q) should be a 2-D tensor, got shape %v", o.InputName(0), x.Dims())
	}
	var pos func(i int) float64
	switch x.DataType() {
	case blob.Int32:
		v := blob.Data[int32](x)
		pos = func(i int) float64 { return float64(v[i]) }
	case blob.Int64:
		v := blob.Data[int64](x)
		pos = func(i int) float64 { return float64(v[i]) }
	default:
		return o.Errorf("positions (%q) have type %v, want INT32 or INT64", o.InputName(0), x.DataType())
	}
	m, k := x.Dim(0), x.Dim(1)
	o.dims = [3]int{m, k, o.e}
	y := o.Output(0)
	if err := y.Init(blob.Float32, o.dims[:]...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	yv := blob.Data[float32](y)
	logAlpha := math.Log(float64(o.alpha))
	amp := float64(o.amplitude)
	row := o.e * k
	for i := range m {
		// Every example of row i encodes positions[i, 0], as in Caffe2.
		logPos := math.Log(pos(i * k))
		out := yv[i*row : i*row+o.e]
		for j := range out {
			v := math.Exp(logPos - logAlpha*float64(j)/float64(o.e))
			if j%2 == 1 {
				v += math.Pi / 2
			}
			out[j] = float32(amp * math.Sin(v))
		}
		for j := 1; j < k; j++ {
			copy(yv[i*row+j*o.e:i*row+(j+1)*o.e], out)
		}
	}
	return nil
}

type clipByScalingOp struct {
	*operators.Base
	threshold float32
}

func (o *clipByScalingOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	if x.Size() == 0 {
		return o.Errorf("input 0 (%q) has no elements", o.InputName(0))
	}
	val, err := o.InputOf(1, blob.Float32)
	if err != nil {
		return err
	}
	if val.Size() != 1 {
		return o.Errorf("val (%q) has shape %v, want one element", o.InputName(1), val.Dims())
	}
	threshold := o.threshold
	if o.NumInputs() > 2 {
		s, err := o.InputOf(2, blob.Float32)
		if err != nil {
			return err
		}
		if s.Size() != 1 {
			return o.Errorf("input 2 (%q) has shape %v, want one element", o.InputName(2), s.Dims())
		}
		threshold *= blob.Data[float32](s)[0]
	}
	y := o.Output(0)
	if y != x {
		if err := y.Init(blob.Float32, x.Dims()...); err != nil {
			return err
		}
	}
	xv, yv := blob.Data[float32](x), blob.Data[float32](y)
	v := blob.Data[float32](val)[0]
	if v > threshold {
		r := threshold / v
		for i, e := range xv {
			yv[i] = r * e
		}
	} else if y != x {
		copy(yv, xv)
	}
	return nil
}
