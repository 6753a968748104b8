package math

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// varKind selects what a variadic elementwise operator computes.
type varKind uint8

const (
	varSum varKind = iota
	varMean
	varMax
	varMin
)

func init() {
	for _, s := range []struct {
		typ  string
		kind varKind
		doc  string
	}{
		{"Sum", varSum, "Elementwise sum of inputs of one type and shape (FLOAT, DOUBLE, INT32, INT64); the output may be input 0."},
		{"Mean", varMean, "Elementwise mean of inputs of one type and shape (FLOAT, DOUBLE); the output may be input 0."},
		{"Max", varMax, "Elementwise maximum of inputs of one type and shape (FLOAT, DOUBLE); the output may be input 0."},
		{"Min", varMin, "Elementwise minimum of inputs of one type and shape (FLOAT, DOUBLE); the output may be input 0."},
	} {
		kind := s.kind
		operators.MustRegisterCPU(operators.Schema{
			Type: s.typ, MinInputs: 1, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: operators.InplacePairs([2]int{0, 0}), Doc: s.doc,
		}, func(b *operators.Base) (operators.Operator, error) {
			return &variadicOp{Base: b, kind: kind}, nil
		})
	}
	operators.MustRegisterGradient("Sum", func(g *operators.GradientContext) error {
		for i := 0; i < g.NumInputs(); i++ {
			g.SetDense(i, g.GO(0))
		}
		return nil
	})
	operators.MustRegisterGradient("Mean", func(g *operators.GradientContext) error {
		outs := make([]string, g.NumInputs())
		for i := range outs {
			outs[i] = g.GI(i)
		}
		g.Op("MeanGradient", []string{g.GO(0)}, outs)
		return nil
	})
	operators.MustRegisterGradient("Max", selectGradient("MaxGradient"))
	operators.MustRegisterGradient("Min", selectGradient("MinGradient"))

	operators.MustRegisterCPU(operators.Schema{
		Type: "MeanGradient", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: operators.Unbounded,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Doc:          "MeanGradient(dY) -> (dX0, dX1, …): every dXi is dY divided by the number of outputs.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &meanGradOp{Base: b}, nil
	})
	for _, typ := range []string{"MaxGradient", "MinGradient"} {
		operators.MustRegisterCPU(operators.Schema{
			Type: typ, MinInputs: 3, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: operators.Unbounded,
			Doc: typ + "(Y, dY, X0, X1, …) -> (dX0, dX1, …): dXi is dY where Xi equals Y, else 0.",
		}, func(b *operators.Base) (operators.Operator, error) {
			if b.NumOutputs() != b.NumInputs()-2 {
				return nil, b.Errorf("%d outputs for %d inputs: want one gradient per input after Y and dY", b.NumOutputs(), b.NumInputs())
			}
			return &selectGradOp{Base: b}, nil
		})
	}

	operators.MustRegisterCPU(operators.Schema{
		Type: "WeightedSum", MinInputs: 2, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: 1,
		InputsCheck:  func(n int) bool { return n%2 == 0 },
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args: []operators.ArgSpec{
			{Name: "grad_on_w", Default: false, Doc: "read by the gradient maker: also compute the weights' gradients"},
		},
		Doc: "WeightedSum(X0, w0, X1, w1, …) -> Y = Σ wi·Xi: the Xi have X0's size (X0 non-empty), each wi one element; Y has X0's shape and may be X0.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &weightedSumOp{Base: b}, nil
	})
	operators.MustRegisterGradient("WeightedSum", func(g *operators.GradientContext) error {
		gradOnW := g.ArgInt("grad_on_w", 0) != 0
		ins := []string{g.GO(0)}
		var outs []string
		for i := 0; i < g.NumInputs(); i += 2 {
			ins = append(ins, g.I(i), g.I(i+1))
			outs = append(outs, g.GI(i))
		}
		if gradOnW {
			for i := 1; i < g.NumInputs(); i += 2 {
				outs = append(outs, g.GI(i))
			}
		}
		g.Op("WeightedSumGradient", ins, outs)
		return nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "WeightedSumGradient", MinInputs: 1, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: operators.Unbounded,
		InputsCheck: func(n int) bool { return n%2 == 1 },
		Args: []operators.ArgSpec{
			{Name: "grad_on_w", Default: false, Doc: "also output dwi = dY·Xi (after all the dXi)"},
		},
		Doc: "WeightedSumGradient(dY, X0, w0, X1, w1, …) -> (dX0, dX1, …[, dw0, dw1, …]): dXi = wi·dY.",
	}, func(b *operators.Base) (operators.Operator, error) {
		gradOnW := b.ArgBool("grad_on_w", false)
		k := b.NumInputs() / 2
		want := k
		if gradOnW {
			want = 2 * k
		}
		if b.NumOutputs() != want {
			return nil, b.Errorf("%d outputs, want %d for %d weighted inputs (grad_on_w=%v)", b.NumOutputs(), want, k, gradOnW)
		}
		return &weightedSumGradOp{Base: b, gradOnW: gradOnW}, nil
	})
}

// selectGradient returns the maker of Max's or Min's gradient:
// typ(Y, dY, X0, X1, …) -> (dX0, dX1, …).
func selectGradient(typ string) operators.GradientMaker {
	return func(g *operators.GradientContext) error {
		ins := []string{g.O(0), g.GO(0)}
		outs := make([]string, g.NumInputs())
		for i := range outs {
			ins = append(ins, g.I(i))
			outs[i] = g.GI(i)
		}
		g.Op(typ, ins, outs)
		return nil
	}
}

// checkSameAs checks that input i has the type and shape of input 0.
func checkSameAs(o *operators.Base, i int, x0, xi *blob.Tensor) error {
	if xi.DataType() != x0.DataType() || !equalDims(xi.Dims(), x0.Dims()) {
		return o.Errorf("input %d (%q) is %v, but input 0 (%q) is %v: all inputs must have one type and shape", i, o.InputName(i), xi, o.InputName(0), x0)
	}
	return nil
}

// variadicOp is Sum, Mean, Max or Min.
type variadicOp struct {
	*operators.Base
	kind varKind
}

func (o *variadicOp) Run() error {
	x0, err := o.Input(0)
	if err != nil {
		return err
	}
	dt := x0.DataType()
	switch {
	case dt == blob.Float32 || dt == blob.Float64:
	case (dt == blob.Int32 || dt == blob.Int64) && o.kind == varSum:
	default:
		return o.Errorf("input 0 (%q) has type %v, which %s does not support", o.InputName(0), dt, o.Type())
	}
	for i := 1; i < o.NumInputs(); i++ {
		xi, err := o.Input(i)
		if err != nil {
			return err
		}
		if err := checkSameAs(o.Base, i, x0, xi); err != nil {
			return err
		}
	}
	y := o.Output(0)
	if y != x0 {
		if err := y.Init(dt, x0.Dims()...); err != nil {
			return err
		}
	}
	switch dt {
	case blob.Float32:
		variadicRun[float32](o, x0, y)
	case blob.Float64:
		variadicRun[float64](o, x0, y)
	case blob.Int32:
		variadicRun[int32](o, x0, y)
	case blob.Int64:
		variadicRun[int64](o, x0, y)
	}
	return nil
}

// variadicRun folds the inputs into y (which may be x0), whose shape is
// set. The inputs were checked, so Input cannot fail here.
func variadicRun[T num](o *variadicOp, x0, y *blob.Tensor) {
	dst := blob.Data[T](y)
	if y != x0 {
		copy(dst, blob.Data[T](x0))
	}
	for i := 1; i < o.NumInputs(); i++ {
		xi, _ := o.Input(i)
		src := blob.Data[T](xi)[:len(dst)]
		switch o.kind {
		case varSum, varMean:
			for j, v := range src {
				dst[j] += v
			}
		case varMax:
			for j, v := range src {
				if v > dst[j] {
					dst[j] = v
				}
			}
		case varMin:
			for j, v := range src {
				if v < dst[j] {
					dst[j] = v
				}
			}
		}
	}
	if o.kind == varMean {
		s := 1 / T(o.NumInputs())
		for j := range dst {
			dst[j] *= s
		}
	}
}

// meanGradOp is MeanGradient(dY) -> (dX0, dX1, …).
type meanGradOp struct{ *operators.Base }

func (o *meanGradOp) Run() error {
	dy, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	dt := dy.DataType()
	for i := o.NumOutputs() - 1; i >= 0; i-- {
		dx := o.Output(i)
		if dx != dy {
			if err := dx.Init(dt, dy.Dims()...); err != nil {
				return err
			}
		}
	}
	if dt == blob.Float32 {
		meanGradRun[float32](o, dy)
	} else {
		meanGradRun[float64](o, dy)
	}
	return nil
}

// meanGradRun fills the outputs; output 0 may be dY itself, so the others
// are written first.
func meanGradRun[T float](o *meanGradOp, dy *blob.Tensor) {
	src := blob.Data[T](dy)
	s := 1 / T(o.NumOutputs())
	for i := o.NumOutputs() - 1; i >= 0; i-- {
		dst := blob.Data[T](o.Output(i))[:len(src)]
		for j, v := range src {
			dst[j] = v * s
		}
	}
}

// selectGradOp is MaxGradient or MinGradient.
type selectGradOp struct{ *operators.Base }

func (o *selectGradOp) Run() error {
	y, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	dy, err := o.Input(1)
	if err != nil {
		return err
	}
	dt := y.DataType()
	for i := 1; i < o.NumInputs(); i++ {
		xi, err := o.Input(i)
		if err != nil {
			return err
		}
		if err := checkSameAs(o.Base, i, y, xi); err != nil {
			return err
		}
	}
	for i := 0; i < o.NumOutputs(); i++ {
		if err := o.Output(i).Init(dt, y.Dims()...); err != nil {
			return err
		}
	}
	if dt == blob.Float32 {
		selectGradRun[float32](o, y, dy)
	} else {
		selectGradRun[float64](o, y, dy)
	}
	return nil
}

func selectGradRun[T float](o *selectGradOp, y, dy *blob.Tensor) {
	yv, g := blob.Data[T](y), blob.Data[T](dy)
	g = g[:len(yv)]
	for i := 0; i < o.NumOutputs(); i++ {
		xt, _ := o.Input(i + 2)
		x := blob.Data[T](xt)[:len(yv)]
		dx := blob.Data[T](o.Output(i))[:len(yv)]
		for j := range dx {
			if x[j] == yv[j] {
				dx[j] = g[j]
			} else {
				dx[j] = 0
			}
		}
	}
}

// scalarOf returns the value of a one-element FLOAT or DOUBLE tensor.
func scalarOf(t *blob.Tensor) (float64, bool) {
	if t.Size() != 1 {
		return 0, false
	}
	switch t.DataType() {
	case blob.Float32:
		return float64(blob.Data[float32](t)[0]), true
	case blob.Float64:
		return blob.Data[float64](t)[0], true
	}
	return 0, false
}

// weightedSumOp is WeightedSum(X0, w0, X1, w1, …) -> Y.
type weightedSumOp struct{ *operators.Base }

func (o *weightedSumOp) Run() error {
	x0, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	dt := x0.DataType()
	if x0.Size() == 0 {
		return o.Errorf("input 0 (%q) is empty", o.InputName(0))
	}
	for i := 0; i < o.NumInputs(); i += 2 {
		xi, err := o.Input(i)
		if err != nil {
			return err
		}
		if xi.DataType() != dt || xi.Size() != x0.Size() {
			return o.Errorf("input %d (%q) is %v, but input 0 (%q) is %v: all X inputs must have one type and size", i, o.InputName(i), xi, o.InputName(0), x0)
		}
		w, err := o.Input(i + 1)
		if err != nil {
			return err
		}
		if _, ok := scalarOf(w); !ok {
			return o.Errorf("weight input %d (%q) is %v, want one FLOAT or DOUBLE element", i+1, o.InputName(i+1), w)
		}
	}
	y := o.Output(0)
	if y != x0 {
		if err := y.Init(dt, x0.Dims()...); err != nil {
			return err
		}
	}
	if dt == blob.Float32 {
		weightedSumRun[float32](o, y)
	} else {
		weightedSumRun[float64](o, y)
	}
	return nil
}

func weightedSumRun[T float](o *weightedSumOp, y *blob.Tensor) {
	dst := blob.Data[T](y)
	for i := 0; i < o.NumInputs(); i += 2 {
		xt, _ := o.Input(i)
		wt, _ := o.Input(i + 1)
		wv, _ := scalarOf(wt)
		w := T(wv)
		x := blob.Data[T](xt)[:len(dst)]
		if i == 0 {
			for j, v := range x {
				dst[j] = w * v
			}
			continue
		}
		for j, v := range x {
			dst[j] += w * v
		}
	}
}

// weightedSumGradOp is WeightedSumGradient(dY, X0, w0, …) -> (dX0, …[, dw0, …]).
type weightedSumGradOp struct {
	*operators.Base
	gradOnW bool
}

func (o *weightedSumGradOp) Run() error {
	dy, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	dt := dy.DataType()
	k := o.NumInputs() / 2
	for i := 0; i < k; i++ {
		w, err := o.Input(2*i + 2)
		if err != nil {
			return err
		}
		if _, ok := scalarOf(w); !ok {
			return o.Errorf("weight input %d (%q) is %v, want one FLOAT or DOUBLE element", 2*i+2, o.InputName(2*i+2), w)
		}
		if o.gradOnW {
			x, err := o.Input(2*i + 1)
			if err != nil {
				return err
			}
			if x.DataType() != dt || x.Size() != dy.Size() {
				return o.Errorf("input %d (%q) is %v, but the gradient (%q) is %v: they must have one type and size", 2*i+1, o.InputName(2*i+1), x, o.InputName(0), dy)
			}
		}
	}
	for i := 0; i < k; i++ {
		if err := o.Output(i).Init(dt, dy.Dims()...); err != nil {
			return err
		}
		if o.gradOnW {
			w, _ := o.Input(2*i + 2)
			if err := o.Output(k+i).Init(w.DataType(), 1); err != nil {
				return err
			}
		}
	}
	if dt == blob.Float32 {
		weightedSumGradRun[float32](o, dy, k)
	} else {
		weightedSumGradRun[float64](o, dy, k)
	}
	return nil
}

func weightedSumGradRun[T float](o *weightedSumGradOp, dy *blob.Tensor, k int) {
	g := blob.Data[T](dy)
	for i := 0; i < k; i++ {
		wt, _ := o.Input(2*i + 2)
		wv, _ := scalarOf(wt)
		w := T(wv)
		dx := blob.Data[T](o.Output(i))[:len(g)]
		for j, v := range g {
			dx[j] = w * v
		}
		if !o.gradOnW {
			continue
		}
		xt, _ := o.Input(2*i + 1)
		x := blob.Data[T](xt)[:len(g)]
		var dot T
		for j, v := range g {
			dot += v * x[j]
		}
		dw := o.Output(k + i)
		if dw.DataType() == blob.Float32 {
			blob.Data[float32](dw)[0] = float32(dot)
		} else {
			blob.Data[float64](dw)[0] = float64(dot)
		}
	}
}
