package norm

import (
	"fmt"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/parallel"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

func init() {
	bnArgs := []operators.ArgSpec{
		{Name: "is_test", Default: int64(0), Doc: "1: normalize with the given mean and var (inputs 3 and 4); 0: with the batch statistics"},
		{Name: "epsilon", Default: 1e-5, Doc: "added to the variance (> 0)"},
		{Name: "momentum", Default: 0.9, Doc: "running = running·momentum + batch·(1 − momentum), in [0, 1]"},
		orderArg,
		{Name: "num_batches", Default: int64(1), Doc: "> 1: the batch statistics come from the sums and sumsq inputs, over num_batches batches"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "SpatialBN", MinInputs: 5, MaxInputs: 7, InputsCheck: func(n int) bool { return n == 5 || n == 7 },
		MinOutputs: 1, MaxOutputs: 5,
		AllowInplace:   operators.InplacePairs([2]int{0, 0}),
		EnforceInplace: [][2]int{{3, 1}, {4, 2}},
		Args:           bnArgs,
		Doc: "SpatialBN(X, scale, bias, mean, var[, sums, sumsq]) → Y[, running_mean, running_var, saved_mean, saved_inv_var]: " +
			"Y = (X − μ)/√(σ² + ε)·scale + bias per channel. Training (is_test=0, 5 outputs): μ and the biased σ² over N and the " +
			"spatial dimensions (or from sums and sumsq over num_batches batches), running statistics updated in place " +
			"(outputs 1 and 2 are inputs 3 and 4), saved_inv_var = 1/√(σ² + ε). Test (1 output): μ and σ² are inputs 3 and 4.",
	}, newSpatialBN)
	operators.MustRegisterCPU(operators.Schema{
		Type: "SpatialBNGradient", MinInputs: 5, MaxInputs: 7, InputsCheck: func(n int) bool { return n == 5 || n == 7 },
		MinOutputs: 3, MaxOutputs: 3,
		AllowInplace: operators.InplacePairs([2]int{5, 1}, [2]int{6, 2}),
		Args:         bnArgs,
		Doc: "SpatialBNGradient(X, scale, dY, saved_mean, saved_inv_var[, dscale_sum, dbias_sum]) → (dX, dscale, dbias). " +
			"With num_batches > 1, dscale and dbias are the given sums over the batches divided by num_batches. With is_test=1 " +
			"the inputs are (X, scale, dY, est_mean, est_var) and dX = dY·scale/√(est_var + ε).",
	}, newSpatialBNGradient)
	operators.MustRegisterGradient("SpatialBN", func(g *operators.GradientContext) error {
		isTest := g.ArgInt("is_test", 0) != 0
		numBatches := g.ArgInt("num_batches", 1)
		outs := []string{g.GI(0), g.GI(1), g.GI(2)}
		var ins []string
		switch {
		case isTest:
			if g.NumInputs() != 5 || g.NumOutputs() != 1 {
				return fmt.Errorf("in test mode SpatialBN needs 5 inputs and 1 output, got %d and %d", g.NumInputs(), g.NumOutputs())
			}
			ins = []string{g.I(0), g.I(1), g.GO(0), g.I(3), g.I(4)}
		case numBatches > 1:
			if g.NumInputs() != 7 || g.NumOutputs() != 5 {
				return fmt.Errorf("with num_batches > 1 SpatialBN needs 7 inputs and 5 outputs, got %d and %d", g.NumInputs(), g.NumOutputs())
			}
			ins = []string{g.I(0), g.I(1), g.GO(0), g.O(3), g.O(4), g.GI(1), g.GI(2)}
		default:
			if g.NumInputs() != 5 || g.NumOutputs() != 5 {
				return fmt.Errorf("in training mode SpatialBN needs 5 inputs and 5 outputs, got %d and %d", g.NumInputs(), g.NumOutputs())
			}
			ins = []string{g.I(0), g.I(1), g.GO(0), g.O(3), g.O(4)}
		}
		g.Op("SpatialBNGradient", ins, outs)
		return nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "ChannelStats", MinInputs: 1, MaxInputs: 1, MinOutputs: 2, MaxOutputs: 2, Args: []operators.ArgSpec{orderArg},
		Doc: "ChannelStats(X) → (sum, sumsq): per channel, the sum of the elements of X and the sum of their squares, " +
			"for SpatialBN's multi-batch statistics.",
	}, newChannelStats)
	operators.MustRegisterGradientForbidden("ChannelStats")
	operators.MustRegisterCPU(operators.Schema{
		Type: "ChannelBackpropStats", MinInputs: 4, MaxInputs: 4, MinOutputs: 2, MaxOutputs: 2, Args: []operators.ArgSpec{orderArg},
		Doc: "ChannelBackpropStats(X, mean, inv_std, dY) → (scale_grad, bias_grad): per channel, Σ dY·(X − mean)·inv_std " +
			"and Σ dY, for SpatialBNGradient's multi-batch gradients.",
	}, newChannelBackpropStats)
	operators.MustRegisterGradientForbidden("ChannelBackpropStats")
}

// Phases of bnKernel.
const (
	bnStats     = iota // s, s2 = Σ(x − shift), Σ(x − shift)² per channel
	bnGradSums         // s, s2 = Σ dy, Σ dy·(x − m) per channel
	bnApply            // y = (x − m)·a + d
	bnGradApply        // dx = dy·a + (x − m)·c + d
	bnForward          // NCHW, per channel: bnStats, forwardChannel, bnApply
	bnBackward         // NCHW, per channel: bnGradSums, gradChannel, bnGradApply
)

// bnKernel holds the per-channel work of the batch normalization
// operators. Reductions over NHWC data keep one partial sum per part in s
// and s2 (parts·C entries) that reduce adds up. On NCHW data the training
// passes run channel by channel (bnForward, bnBackward), so that a
// channel's data is still in cache when it is normalized after its
// reduction.
type bnKernel[T blob.Float] struct {
	l          layout
	phase      int
	x, y, dy   []T // y is the output: Y or dX
	shift      []float64
	s, s2      []float64
	m, a, c, d []T
	ch         bnChannel[T]
}

// bnChannel is what the per-channel coefficients are computed from, and
// the per-channel outputs.
type bnChannel[T blob.Float] struct {
	count         int // elements per channel in the statistics
	inv           float64
	eps, momentum float64
	test, multi   bool
	scale, bias   []T
	// forward, training
	runMean, runVar, savedMean, savedRstd []T
	// gradient: the saved inverse standard deviation (training) or the
	// estimated variance (test)
	stat, dscale, dbias []T
}

// setup sizes the per-channel buffers for layout l.
func (k *bnKernel[T]) setup(l layout) {
	k.l = l
	k.shift, k.s, k.s2 = grow(k.shift, l.c), grow(k.s, l.c), grow(k.s2, l.c)
	k.m, k.a, k.c, k.d = grow(k.m, l.c), grow(k.a, l.c), grow(k.c, l.c), grow(k.d, l.c)
}

// forwardChannel turns channel c's shifted sums into its batch statistics:
// it updates the running statistics, saves the mean and inverse standard
// deviation, and sets the normalization coefficients.
func (k *bnKernel[T]) forwardChannel(c int) {
	ch := &k.ch
	mean, variance := moments(k.s[c], k.s2[c], ch.count, k.shift[c])
	ch.runMean[c] = T((1-ch.momentum)*mean + ch.momentum*float64(ch.runMean[c]))
	ch.runVar[c] = T((1-ch.momentum)*variance + ch.momentum*float64(ch.runVar[c]))
	r := rsqrt(variance + ch.eps)
	ch.savedMean[c], ch.savedRstd[c] = T(mean), T(r)
	k.m[c], k.a[c], k.d[c] = T(mean), T(float64(ch.scale[c])*r), ch.bias[c]
}

// gradChannel turns channel c's gradient sums (Σ dy, Σ dy·(x − μ); with
// multiple batches, the given dbias and dscale) into dscale, dbias and the
// coefficients of dx = α·dy − α·(x − μ)·r·dscale/(N·HxW) − α·dbias/(N·HxW),
// α = scale·r, r the inverse standard deviation (Caffe2's
// SpatialBNGradient); in test mode the statistics are constants and
// dx = α·dy.
func (k *bnKernel[T]) gradChannel(c int) {
	ch := &k.ch
	r := float64(ch.stat[c])
	if ch.test {
		r = rsqrt(r + ch.eps)
	}
	db, ds := k.s[c], k.s2[c]
	if !ch.multi {
		ds *= r
	}
	ch.dscale[c], ch.dbias[c] = T(ds), T(db)
	alpha := float64(ch.scale[c]) * r
	k.a[c] = T(alpha)
	if ch.test {
		k.c[c], k.d[c] = 0, 0
	} else {
		k.c[c], k.d[c] = T(-alpha*ds*r*ch.inv), T(-alpha*db*ch.inv)
	}
}

// reduce runs a reduction phase (bnStats or bnGradSums); afterwards s[:C]
// and s2[:C] hold the per-channel sums. In NHWC every part adds each row
// into partial sums of its own, which lie cache lines apart
// (parallel.Padded): parts that shared a line would take it from each
// other at every row.
func (k *bnKernel[T]) reduce(phase int) {
	k.phase = phase
	l := k.l
	work := l.n * l.c * l.hw
	if !l.nhwc {
		parallel.Run(k, l.c, parallel.Parts(l.threads, l.c, work))
		return
	}
	rows := l.n * l.hw
	parts := parallel.Parts(l.threads, rows, work)
	stride := parallel.Padded(l.c, 8)
	k.s, k.s2 = grow(k.s, parts*stride), grow(k.s2, parts*stride)
	parallel.Run(k, rows, parts)
	for p := 1; p < parts; p++ {
		for c := range l.c {
			k.s[c] += k.s[p*stride+c]
			k.s2[c] += k.s2[p*stride+c]
		}
	}
}

// apply runs an elementwise phase (bnApply or bnGradApply) writing out.
func (k *bnKernel[T]) apply(phase int, out []T) {
	k.phase, k.y = phase, out
	l := k.l
	if l.hw == 0 {
		return // nothing to write, in however many empty planes
	}
	items := l.n * l.c
	if l.nhwc {
		items = l.n * l.hw
	}
	parallel.Run(k, items, parallel.Parts(l.threads, items, l.n*l.c*l.hw))
}

// forward normalizes with the batch statistics of x (training, one batch),
// writing out.
func (k *bnKernel[T]) forward(out []T) {
	k.channelShift()
	if k.l.nhwc {
		k.reduce(bnStats)
		for c := range k.l.c {
			k.forwardChannel(c)
		}
		k.apply(bnApply, out)
		return
	}
	k.phase, k.y = bnForward, out
	parallel.Run(k, k.l.c, parallel.Parts(k.l.threads, k.l.c, k.l.n*k.l.c*k.l.hw))
}

// backward computes dx (written to out), dscale and dbias from x and dy.
func (k *bnKernel[T]) backward(out []T) {
	if k.l.nhwc {
		k.reduce(bnGradSums)
		for c := range k.l.c {
			k.gradChannel(c)
		}
		k.apply(bnGradApply, out)
		return
	}
	k.phase, k.y = bnBackward, out
	parallel.Run(k, k.l.c, parallel.Parts(k.l.threads, k.l.c, k.l.n*k.l.c*k.l.hw))
}

// RunRange processes the channels, planes or NHWC rows [lo, hi) of the
// phase, as part part (NHWC partial sums go to the part's slot).
func (k *bnKernel[T]) RunRange(part, lo, hi int) {
	l := k.l
	if l.nhwc {
		k.runRows(part, lo, hi)
		return
	}
	switch k.phase {
	case bnStats, bnGradSums:
		for c := lo; c < hi; c++ {
			k.s[c], k.s2[c] = k.channelSums(c, k.phase)
		}
	case bnApply, bnGradApply:
		for p := lo; p < hi; p++ {
			k.applyPlane(p%l.c, p*l.hw)
		}
	case bnForward, bnBackward:
		for c := lo; c < hi; c++ {
			if k.phase == bnForward {
				k.s[c], k.s2[c] = k.channelSums(c, bnStats)
				k.forwardChannel(c)
			} else {
				k.s[c], k.s2[c] = k.channelSums(c, bnGradSums)
				k.gradChannel(c)
			}
			if l.hw == 0 {
				continue // no planes to apply, in however many images
			}
			for n := range l.n {
				k.applyPlane(c, (n*l.c+c)*l.hw)
			}
		}
	}
}

// channelSums returns the sums of a reduction phase over NCHW channel c
// (none when its planes are empty, however many images there are).
func (k *bnKernel[T]) channelSums(c, phase int) (s, s2 float64) {
	l := k.l
	if l.hw == 0 {
		return 0, 0
	}
	for n := range l.n {
		off := (n*l.c + c) * l.hw
		var a, b float64
		if phase == bnStats {
			a, b = vec.ShiftedSums(k.x[off:off+l.hw], k.shift[c])
		} else {
			a, b = vec.GradSums(k.dy[off:off+l.hw], k.x[off:off+l.hw], float64(k.m[c]))
		}
		s += a
		s2 += b
	}
	return s, s2
}

// applyPlane normalizes (forward phases) or back-propagates (gradient
// phases) the NCHW plane of channel c at off.
func (k *bnKernel[T]) applyPlane(c, off int) {
	hw := k.l.hw
	switch k.phase {
	case bnApply, bnForward:
		vec.Normalize(k.x[off:off+hw], k.y[off:off+hw], k.m[c], k.a[c], k.d[c])
	default:
		vec.NormalizeGrad(k.dy[off:off+hw], k.x[off:off+hw], k.y[off:off+hw], k.m[c], k.a[c], k.c[c], k.d[c])
	}
}

// runRows processes NHWC rows [lo, hi) (one spatial position of one
// image, C channels each). The loops step through x, whole rows, until its
// end, which also ends them when C is 0.
func (k *bnKernel[T]) runRows(part, lo, hi int) {
	C := k.l.c
	x := k.x[lo*C : hi*C]
	switch k.phase {
	case bnStats, bnGradSums:
		at := part * parallel.Padded(C, 8) // see reduce
		s, s2 := k.s[at:at+C], k.s2[at:at+C]
		clear(s)
		clear(s2)
		if k.phase == bnStats {
			shift := k.shift[:C]
			for r := 0; r < len(x); r += C {
				for c, v := range x[r : r+C] {
					d := float64(v) - shift[c]
					s[c] += d
					s2[c] += d * d
				}
			}
			return
		}
		dy, m := k.dy[lo*C:hi*C], k.m[:C]
		for r := 0; r < len(x); r += C {
			xr := x[r : r+C]
			for c, g := range dy[r : r+C] {
				s[c] += float64(g)
				s2[c] += float64(g) * (float64(xr[c]) - float64(m[c]))
			}
		}
	case bnApply:
		y, m, a, d := k.y[lo*C:hi*C], k.m[:C], k.a[:C], k.d[:C]
		for r := 0; r < len(x); r += C {
			yr := y[r : r+C]
			for c, v := range x[r : r+C] {
				yr[c] = (v-m[c])*a[c] + d[c]
			}
		}
	case bnGradApply:
		dy, dx, m, a, cc, d := k.dy[lo*C:hi*C], k.y[lo*C:hi*C], k.m[:C], k.a[:C], k.c[:C], k.d[:C]
		for r := 0; r < len(x); r += C {
			xr, dxr := x[r:r+C], dx[r:r+C]
			for c, g := range dy[r : r+C] {
				dxr[c] = g*a[c] + (xr[c]-m[c])*cc[c] + d[c]
			}
		}
	}
}

// channelShift sets shift[c] to the first element of channel c, a value
// near the channel's mean that keeps the one-pass variance accurate.
func (k *bnKernel[T]) channelShift() {
	for c := range k.l.c {
		if k.l.nhwc {
			k.shift[c] = at(k.x, c)
		} else {
			k.shift[c] = at(k.x, c*k.l.hw)
		}
	}
}

type spatialBN struct {
	*operators.Base
	isTest        bool
	eps, momentum float64
	nhwc          bool
	numBatches    int
	k32           bnKernel[float32]
	k64           bnKernel[float64]
}

func newSpatialBN(b *operators.Base) (operators.Operator, error) {
	o := &spatialBN{Base: b, isTest: b.ArgInt("is_test", 0) != 0, eps: float64(b.ArgFloat("epsilon", 1e-5)),
		momentum: float64(b.ArgFloat("momentum", 0.9)), numBatches: int(b.ArgInt("num_batches", 1))}
	var err error
	if o.nhwc, err = readOrder(b); err != nil {
		return nil, err
	}
	switch {
	case o.isTest && b.NumOutputs() != 1:
		return nil, b.Errorf("in test mode (is_test=1) SpatialBN has 1 output, got %d", b.NumOutputs())
	case !o.isTest && b.NumOutputs() != 5:
		return nil, b.Errorf("in training mode (is_test=0) SpatialBN has 5 outputs, got %d", b.NumOutputs())
	case !(o.eps > 0):
		return nil, b.Errorf("epsilon must be positive, got %v", o.eps)
	case !(o.momentum >= 0 && o.momentum <= 1):
		return nil, b.Errorf("momentum must be in [0, 1], got %v", o.momentum)
	case !o.isTest && o.numBatches > 1 && b.NumInputs() != 7:
		return nil, b.Errorf("num_batches = %d needs the sums and sumsq inputs (7 inputs), got %d inputs", o.numBatches, b.NumInputs())
	}
	return o, nil
}

func (o *spatialBN) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runSpatialBN(o, &o.k32, x)
	}
	return runSpatialBN(o, &o.k64, x)
}

func runSpatialBN[T blob.Float](o *spatialBN, k *bnKernel[T], x *blob.Tensor) error {
	l, err := spatialLayout(o.Base, 0, x, o.nhwc, 3)
	if err != nil {
		return err
	}
	scale, err := inputLike(o.Base, 1, x, l.c)
	if err != nil {
		return err
	}
	bias, err := inputLike(o.Base, 2, x, l.c)
	if err != nil {
		return err
	}
	dtype := x.DataType()
	y, err := initOutput(o.Base, 0, dtype, x.Dims()...)
	if err != nil {
		return err
	}
	k.setup(l)
	k.x = blob.Data[T](x)
	ch := &k.ch
	ch.scale, ch.bias, ch.eps, ch.momentum = blob.Data[T](scale), blob.Data[T](bias), o.eps, o.momentum
	if o.isTest {
		if l.n == 0 {
			return nil
		}
		mean, err := inputLike(o.Base, 3, x, l.c)
		if err != nil {
			return err
		}
		variance, err := inputLike(o.Base, 4, x, l.c)
		if err != nil {
			return err
		}
		mv, vv := blob.Data[T](mean), blob.Data[T](variance)
		for c := range l.c {
			k.m[c], k.a[c], k.d[c] = mv[c], T(float64(ch.scale[c])*rsqrt(float64(vv[c])+o.eps)), ch.bias[c]
		}
		k.apply(bnApply, blob.Data[T](y))
		return nil
	}
	if ch.runMean, err = runningStat[T](o, 3, 1, x, l.c); err != nil {
		return err
	}
	if ch.runVar, err = runningStat[T](o, 4, 2, x, l.c); err != nil {
		return err
	}
	savedMean, err := initOutput(o.Base, 3, dtype, l.c)
	if err != nil {
		return err
	}
	savedRstd, err := initOutput(o.Base, 4, dtype, l.c)
	if err != nil {
		return err
	}
	ch.savedMean, ch.savedRstd = blob.Data[T](savedMean), blob.Data[T](savedRstd)
	if l.n == 0 {
		clear(ch.savedMean)
		clear(ch.savedRstd)
		return nil
	}
	ch.count = o.numBatches * l.n * l.hw
	if o.numBatches == 1 {
		k.forward(blob.Data[T](y))
		return nil
	}
	sums, err := inputLike(o.Base, 5, x, l.c)
	if err != nil {
		return err
	}
	sumsq, err := inputLike(o.Base, 6, x, l.c)
	if err != nil {
		return err
	}
	clear(k.shift)
	sv, s2v := blob.Data[T](sums), blob.Data[T](sumsq)
	for c := range l.c {
		k.s[c], k.s2[c] = float64(sv[c]), float64(s2v[c])
		k.forwardChannel(c)
	}
	k.apply(bnApply, blob.Data[T](y))
	return nil
}

// runningStat returns the data of a running statistic, input in, which is
// also output out. A statistic without c elements is (re)initialized to c
// zeros, as in Caffe2.
func runningStat[T blob.Float](o *spatialBN, in, out int, x *blob.Tensor, c int) ([]T, error) {
	t, err := o.Input(in)
	if err != nil {
		return nil, err
	}
	if t.Size() == c {
		if t, err = inputLike(o.Base, in, x, c); err != nil {
			return nil, err
		}
		return blob.Data[T](t), nil
	}
	r, err := initOutput(o.Base, out, x.DataType(), c)
	if err != nil {
		return nil, err
	}
	d := blob.Data[T](r)
	clear(d)
	return d, nil
}

type spatialBNGradient struct {
	*operators.Base
	isTest     bool
	eps        float64
	nhwc       bool
	numBatches int
	k32        bnKernel[float32]
	k64        bnKernel[float64]
}

func newSpatialBNGradient(b *operators.Base) (operators.Operator, error) {
	o := &spatialBNGradient{Base: b, isTest: b.ArgInt("is_test", 0) != 0, eps: float64(b.ArgFloat("epsilon", 1e-5)),
		numBatches: int(b.ArgInt("num_batches", 1))}
	var err error
	if o.nhwc, err = readOrder(b); err != nil {
		return nil, err
	}
	if !o.isTest && o.numBatches > 1 && b.NumInputs() != 7 {
		return nil, b.Errorf("num_batches = %d needs the dscale and dbias sums (7 inputs), got %d inputs", o.numBatches, b.NumInputs())
	}
	return o, nil
}

func (o *spatialBNGradient) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runSpatialBNGradient(o, &o.k32, x)
	}
	return runSpatialBNGradient(o, &o.k64, x)
}

func runSpatialBNGradient[T blob.Float](o *spatialBNGradient, k *bnKernel[T], x *blob.Tensor) error {
	l, err := spatialLayout(o.Base, 0, x, o.nhwc, 3)
	if err != nil {
		return err
	}
	scale, err := inputLike(o.Base, 1, x, l.c)
	if err != nil {
		return err
	}
	dy, err := inputLike(o.Base, 2, x, x.Size())
	if err != nil {
		return err
	}
	mean, err := inputLike(o.Base, 3, x, l.c)
	if err != nil {
		return err
	}
	stat, err := inputLike(o.Base, 4, x, l.c)
	if err != nil {
		return err
	}
	multi := !o.isTest && o.numBatches > 1
	gradDims := scale.Dims()
	var dscaleSum, dbiasSum []T
	if multi {
		ds, err := inputLike(o.Base, 5, x, l.c)
		if err != nil {
			return err
		}
		db, err := inputLike(o.Base, 6, x, l.c)
		if err != nil {
			return err
		}
		gradDims = ds.Dims()
		dscaleSum, dbiasSum = blob.Data[T](ds), blob.Data[T](db)
	}
	dtype := x.DataType()
	dx, err := initOutput(o.Base, 0, dtype, x.Dims()...)
	if err != nil {
		return err
	}
	dscale, err := initOutput(o.Base, 1, dtype, gradDims...)
	if err != nil {
		return err
	}
	dbias, err := initOutput(o.Base, 2, dtype, gradDims...)
	if err != nil {
		return err
	}
	k.setup(l)
	ch := &k.ch
	ch.dscale, ch.dbias = blob.Data[T](dscale), blob.Data[T](dbias)
	if l.n == 0 {
		clear(ch.dscale)
		clear(ch.dbias)
		return nil
	}
	k.x, k.dy = blob.Data[T](x), blob.Data[T](dy)
	ch.scale, ch.stat, ch.eps = blob.Data[T](scale), blob.Data[T](stat), o.eps
	ch.test, ch.multi, ch.inv = o.isTest, multi, 1/float64(l.n*l.hw)
	copy(k.m, blob.Data[T](mean))
	if !multi {
		k.backward(blob.Data[T](dx))
		return nil
	}
	// The sums may be the dscale and dbias outputs (in place): read them all
	// before writing.
	for c := range l.c {
		k.s[c], k.s2[c] = float64(dbiasSum[c])/float64(o.numBatches), float64(dscaleSum[c])/float64(o.numBatches)
	}
	for c := range l.c {
		k.gradChannel(c)
	}
	k.apply(bnGradApply, blob.Data[T](dx))
	return nil
}

type channelStats struct {
	*operators.Base
	nhwc bool
	k32  bnKernel[float32]
	k64  bnKernel[float64]
}

func newChannelStats(b *operators.Base) (operators.Operator, error) {
	nhwc, err := readOrder(b)
	return &channelStats{Base: b, nhwc: nhwc}, err
}

func (o *channelStats) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runChannelStats(o, &o.k32, x)
	}
	return runChannelStats(o, &o.k64, x)
}

func runChannelStats[T blob.Float](o *channelStats, k *bnKernel[T], x *blob.Tensor) error {
	l, err := spatialLayout(o.Base, 0, x, o.nhwc, 3)
	if err != nil {
		return err
	}
	sum, err := initOutput(o.Base, 0, x.DataType(), l.c)
	if err != nil {
		return err
	}
	sumsq, err := initOutput(o.Base, 1, x.DataType(), l.c)
	if err != nil {
		return err
	}
	k.setup(l)
	k.x = blob.Data[T](x)
	clear(k.shift)
	k.reduce(bnStats)
	s, s2 := blob.Data[T](sum), blob.Data[T](sumsq)
	for c := range l.c {
		s[c], s2[c] = T(k.s[c]), T(k.s2[c])
	}
	return nil
}

type channelBackpropStats struct {
	*operators.Base
	nhwc bool
	k32  bnKernel[float32]
	k64  bnKernel[float64]
}

func newChannelBackpropStats(b *operators.Base) (operators.Operator, error) {
	nhwc, err := readOrder(b)
	return &channelBackpropStats{Base: b, nhwc: nhwc}, err
}

func (o *channelBackpropStats) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runChannelBackpropStats(o, &o.k32, x)
	}
	return runChannelBackpropStats(o, &o.k64, x)
}

func runChannelBackpropStats[T blob.Float](o *channelBackpropStats, k *bnKernel[T], x *blob.Tensor) error {
	l, err := spatialLayout(o.Base, 0, x, o.nhwc, 3)
	if err != nil {
		return err
	}
	mean, err := inputLike(o.Base, 1, x, l.c)
	if err != nil {
		return err
	}
	rstd, err := inputLike(o.Base, 2, x, l.c)
	if err != nil {
		return err
	}
	dy, err := inputLike(o.Base, 3, x, x.Size())
	if err != nil {
		return err
	}
	dscale, err := initOutput(o.Base, 0, x.DataType(), l.c)
	if err != nil {
		return err
	}
	dbias, err := initOutput(o.Base, 1, x.DataType(), l.c)
	if err != nil {
		return err
	}
	k.setup(l)
	k.x, k.dy = blob.Data[T](x), blob.Data[T](dy)
	copy(k.m, blob.Data[T](mean))
	k.reduce(bnGradSums)
	ds, db, r := blob.Data[T](dscale), blob.Data[T](dbias), blob.Data[T](rstd)
	for c := range l.c {
		ds[c], db[c] = T(k.s2[c]*float64(r[c])), T(k.s[c])
	}
	return nil
}
