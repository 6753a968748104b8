package norm

import (
	"fmt"
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/parallel"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

func init() {
	gnArgs := []operators.ArgSpec{
		{Name: "group", Default: int64(32), Doc: "number of groups G; C must be a multiple of G"},
		{Name: "epsilon", Default: 1e-5, Doc: "added to the variance"},
		orderArg,
		{Name: "is_test", Default: int64(1), Doc: "0: the op must have all 3 outputs (for the gradient)"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "GroupNorm", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 3,
		Args: gnArgs,
		Doc: "GroupNorm(X, gamma, beta) → Y[, mean, inv_std]: the C channels form G groups of C/G; per image and group, " +
			"Y = gamma·(X − μ)/√(σ² + ε) + beta with μ and the biased σ² over the group's channels and spatial positions. " +
			"mean and inv_std have shape [N, G].",
	}, newGroupNorm)
	operators.MustRegisterCPU(operators.Schema{
		Type: "GroupNormGradient", MinInputs: 6, MaxInputs: 6, MinOutputs: 3, MaxOutputs: 3, Args: gnArgs,
		Doc: "GroupNormGradient(dY, X, gamma, beta, mean, inv_std) → (dX, dgamma, dbeta).",
	}, newGroupNormGradient)
	operators.MustRegisterGradient("GroupNorm", func(g *operators.GradientContext) error {
		if g.NumOutputs() != 3 {
			return fmt.Errorf("GroupNorm needs its mean and inv_std outputs for the gradient, got %d outputs", g.NumOutputs())
		}
		g.Op("GroupNormGradient", []string{g.GO(0), g.I(0), g.I(1), g.I(2), g.O(1), g.O(2)}, []string{g.GI(0), g.GI(1), g.GI(2)})
		return nil
	})
}

// Phases of groupKernel.
const (
	gStats     = iota // mean, rstd per (image, group)
	gApply            // y = (x − m)·a + b, per (image, channel)
	gGradSums         // db, dsc = Σ dy, Σ dy·(x − μ) per (image, channel)
	gGradApply        // dx = dy·a + (x − m)·xs + bs, per (image, channel)
)

// groupKernel is the work of GroupNorm and InstanceNorm (which is GroupNorm
// with one channel per group): statistics over each group of k channels of
// each image, normalization with per-channel affine parameters, and the
// gradient. The elementwise coefficients are expanded to one per (image,
// channel), so that NHWC rows are processed by flat loops over the
// channels.
type groupKernel[T blob.Float] struct {
	l        layout
	g, k     int // groups and channels per group
	eps      float64
	phase    int
	x, y, dy []T
	// per (image, group)
	mean, rstd []float64
	// per (image, channel)
	m, a, b, xs, bs []T
	cm              []float64 // the group's shift (gStats) or mean (gGradSums)
	db, dsc         []float64 // sums (also the per-channel partial sums of gStats on NHWC data)
	// per channel
	dg, dbt []float64
}

// setup sizes the buffers for layout l split into g groups. Their size
// is the batch's dims, which an empty batch does not bound (2^31 images
// of 4 channels and no positions): growing them must fit the memory
// budget.
func (k *groupKernel[T]) setup(l layout, g int, eps float64) error {
	k.l, k.g, k.k, k.eps = l, g, 0, eps
	if g > 0 {
		k.k = l.c / g
	}
	if l.n > 0 && (g > math.MaxInt/l.n || l.c > math.MaxInt/l.n) {
		return fmt.Errorf("a batch of %d images of %d channels in %d groups is too large", l.n, l.c, g)
	}
	ng, nc := l.n*g, l.n*l.c
	if cap(k.mean) < ng || cap(k.m) < nc || cap(k.dg) < l.c {
		// mean, rstd: ng each; m, a, b, xs, bs, cm, db, dsc: nc each; dg,
		// dbt: c each; 8 bytes at most per element.
		if err := blob.CheckAllocation(int64(min(8*(2*float64(ng)+8*float64(nc)+2*float64(l.c)), math.MaxInt64))); err != nil {
			return fmt.Errorf("scratch for %d images of %d channels in %d groups: %w", l.n, l.c, g, err)
		}
	}
	k.mean, k.rstd = grow(k.mean, ng), grow(k.rstd, ng)
	k.m, k.a, k.b, k.xs, k.bs = grow(k.m, nc), grow(k.a, nc), grow(k.b, nc), grow(k.xs, nc), grow(k.bs, nc)
	k.cm, k.db, k.dsc = grow(k.cm, nc), grow(k.db, nc), grow(k.dsc, nc)
	k.dg, k.dbt = grow(k.dg, l.c), grow(k.dbt, l.c)
	return nil
}

// channels returns the (image, channel) indexes [p0, p1) of group i.
func (k *groupKernel[T]) channels(i int) (p0, p1 int) {
	p0 = i/k.g*k.l.c + i%k.g*k.k
	return p0, p0 + k.k
}

// forward computes the statistics of x (into mean and rstd) and
// y = gamma·(x − μ)·rstd + beta.
func (k *groupKernel[T]) forward(x, y, gamma, beta []T) {
	k.x = x
	k.run(gStats, nil)
	C := k.l.c
	for i := range k.l.n * k.g {
		p0, p1 := k.channels(i)
		for p := p0; p < p1; p++ {
			c := p % C
			k.m[p], k.a[p], k.b[p] = T(k.mean[i]), T(float64(gamma[c])*k.rstd[i]), beta[c]
		}
	}
	k.run(gApply, y)
}

// backward computes dx, dgamma and dbeta from dy, x and gamma, given the
// statistics in mean and rstd.
func (k *groupKernel[T]) backward(dy, x, gamma, dx, dgamma, dbeta []T) {
	k.x, k.dy = x, dy
	C := k.l.c
	for i := range k.l.n * k.g {
		p0, p1 := k.channels(i)
		for p := p0; p < p1; p++ {
			k.cm[p] = k.mean[i]
		}
	}
	k.run(gGradSums, nil)
	clear(k.dg)
	clear(k.dbt)
	inv := 1 / float64(k.k*k.l.hw)
	for i := range k.l.n * k.g {
		r := k.rstd[i]
		p0, p1 := k.channels(i)
		var sdsc, sdb float64
		for p := p0; p < p1; p++ {
			c, gc := p%C, float64(gamma[p%C])
			sdsc += gc * k.dsc[p]
			sdb += gc * k.db[p]
			k.a[p] = T(gc * r)
			k.dg[c] += k.dsc[p] * r
			k.dbt[c] += k.db[p]
		}
		xs, bs := T(-sdsc*r*r*r*inv), T(-sdb*r*inv)
		for p := p0; p < p1; p++ {
			k.m[p], k.xs[p], k.bs[p] = T(k.mean[i]), xs, bs
		}
	}
	k.run(gGradApply, dx)
	for c := range C {
		dgamma[c], dbeta[c] = T(k.dg[c]), T(k.dbt[c])
	}
}

// run runs one phase; gApply and gGradApply write out.
func (k *groupKernel[T]) run(phase int, out []T) {
	k.phase, k.y = phase, out
	l := k.l
	if l.c == 0 {
		return // no channels, no groups: nothing to do in however many images
	}
	work := l.n * l.c * l.hw
	var items int
	switch {
	case phase == gStats && !l.nhwc:
		items = l.n * k.g
	case phase == gStats || phase == gGradSums && l.nhwc:
		items = l.n
	case l.nhwc:
		items = l.n * l.hw
	default:
		items = l.n * l.c
	}
	parallel.Run(k, items, parallel.Parts(k.l.threads, items, work))
}

// RunRange processes the items [lo, hi) of the phase: NCHW groups, planes
// or images, or NHWC images or positions.
func (k *groupKernel[T]) RunRange(_, lo, hi int) {
	l := k.l
	hw := l.hw
	switch {
	case k.phase == gStats && !l.nhwc:
		size := k.k * hw
		for i := lo; i < hi; i++ {
			blk := k.x[i*size : (i+1)*size]
			shift := at(blk, 0)
			s, s2 := vec.ShiftedSums(blk, shift)
			k.finishStats(i, s, s2, shift)
		}
	case k.phase == gStats:
		k.statsNHWC(lo, hi)
	case k.phase == gGradSums && !l.nhwc:
		for p := lo; p < hi; p++ {
			off := p * hw
			k.db[p], k.dsc[p] = vec.GradSums(k.dy[off:off+hw], k.x[off:off+hw], k.cm[p])
		}
	case k.phase == gGradSums:
		k.gradSumsNHWC(lo, hi)
	case !l.nhwc:
		for p := lo; p < hi; p++ {
			off := p * hw
			if k.phase == gApply {
				vec.Normalize(k.x[off:off+hw], k.y[off:off+hw], k.m[p], k.a[p], k.b[p])
			} else {
				vec.NormalizeGrad(k.dy[off:off+hw], k.x[off:off+hw], k.y[off:off+hw], k.m[p], k.a[p], k.xs[p], k.bs[p])
			}
		}
	default:
		k.applyNHWC(lo, hi)
	}
}

// finishStats stores the mean and inverse standard deviation of group i
// from its shifted sums.
func (k *groupKernel[T]) finishStats(i int, s, s2, shift float64) {
	mean, variance := moments(s, s2, k.k*k.l.hw, shift)
	k.mean[i], k.rstd[i] = mean, rsqrt(variance+k.eps)
}

// statsNHWC computes the group statistics of images [lo, hi): per channel
// sums shifted by the group's first element, added up per group.
func (k *groupKernel[T]) statsNHWC(lo, hi int) {
	C, G, HW := k.l.c, k.g, k.l.hw
	for n := lo; n < hi; n++ {
		img := k.x[n*HW*C : (n+1)*HW*C]
		shift, s, s2 := k.cm[n*C:(n+1)*C], k.db[n*C:(n+1)*C], k.dsc[n*C:(n+1)*C]
		for g := range G {
			p0, p1 := k.channels(g)
			for c := p0; c < p1; c++ {
				shift[c] = at(img, p0)
			}
		}
		clear(s)
		clear(s2)
		for r := 0; r < len(img); r += C {
			for c, v := range img[r : r+C] {
				d := float64(v) - shift[c]
				s[c] += d
				s2[c] += d * d
			}
		}
		for g := range G {
			p0, p1 := k.channels(g)
			var a, b float64
			for c := p0; c < p1; c++ {
				a += s[c]
				b += s2[c]
			}
			k.finishStats(n*G+g, a, b, at(shift, p0)) // a group of no channels has no shift
		}
	}
}

// gradSumsNHWC computes the per-channel gradient sums of images [lo, hi).
func (k *groupKernel[T]) gradSumsNHWC(lo, hi int) {
	C, HW := k.l.c, k.l.hw
	for n := lo; n < hi; n++ {
		x, dy := k.x[n*HW*C:(n+1)*HW*C], k.dy[n*HW*C:(n+1)*HW*C]
		db, dsc, mean := k.db[n*C:(n+1)*C], k.dsc[n*C:(n+1)*C], k.cm[n*C:(n+1)*C]
		clear(db)
		clear(dsc)
		for r := 0; r < len(x); r += C {
			xr := x[r : r+C]
			for c, g := range dy[r : r+C] {
				db[c] += float64(g)
				dsc[c] += float64(g) * (float64(xr[c]) - mean[c])
			}
		}
	}
}

// applyNHWC runs gApply or gGradApply on rows [lo, hi) (one position of
// one image each).
func (k *groupKernel[T]) applyNHWC(lo, hi int) {
	C, HW := k.l.c, k.l.hw
	for r := lo; r < hi; r++ {
		n := r / HW
		x, y := k.x[r*C:(r+1)*C], k.y[r*C:(r+1)*C]
		m, a := k.m[n*C:(n+1)*C], k.a[n*C:(n+1)*C]
		if k.phase == gApply {
			b := k.b[n*C : (n+1)*C]
			for c, v := range x {
				y[c] = (v-m[c])*a[c] + b[c]
			}
			continue
		}
		dy, xs, bs := k.dy[r*C:(r+1)*C], k.xs[n*C:(n+1)*C], k.bs[n*C:(n+1)*C]
		for c, v := range x {
			y[c] = dy[c]*a[c] + (v-m[c])*xs[c] + bs[c]
		}
	}
}

type groupNorm struct {
	*operators.Base
	group int
	eps   float64
	nhwc  bool
	k32   groupKernel[float32]
	k64   groupKernel[float64]
}

func newGroupNorm(b *operators.Base) (operators.Operator, error) {
	o := &groupNorm{Base: b, group: int(b.ArgInt("group", 32)), eps: float64(b.ArgFloat("epsilon", 1e-5))}
	var err error
	if o.nhwc, err = readOrder(b); err != nil {
		return nil, err
	}
	switch {
	case b.NumOutputs() == 2:
		return nil, b.Errorf("GroupNorm has 1 or 3 outputs, got 2")
	case !b.ArgBool("is_test", true) && b.NumOutputs() != 3:
		return nil, b.Errorf("in training mode (is_test=0) GroupNorm has 3 outputs, got %d", b.NumOutputs())
	case o.group <= 0:
		return nil, b.Errorf("group must be positive, got %d", o.group)
	}
	return o, nil
}

// groups checks that the channels of l split into o.group groups.
func (o *groupNorm) groups(i int, l layout) error {
	if l.c%o.group != 0 {
		return o.Errorf("input %d (%q) has %d channels, not a multiple of group = %d", i, o.InputName(i), l.c, o.group)
	}
	return nil
}

func (o *groupNorm) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runGroupNorm(o, &o.k32, x)
	}
	return runGroupNorm(o, &o.k64, x)
}

func runGroupNorm[T blob.Float](o *groupNorm, k *groupKernel[T], x *blob.Tensor) error {
	l, err := spatialLayout(o.Base, 0, x, o.nhwc, 2)
	if err != nil {
		return err
	}
	if err := o.groups(0, l); err != nil {
		return err
	}
	gamma, err := inputLike(o.Base, 1, x, l.c)
	if err != nil {
		return err
	}
	beta, err := inputLike(o.Base, 2, x, l.c)
	if err != nil {
		return err
	}
	y, err := initOutput(o.Base, 0, x.DataType(), x.Dims()...)
	if err != nil {
		return err
	}
	if err := k.setup(l, o.group, o.eps); err != nil {
		return o.Errorf("input 0 (%q) of shape %v: %w", o.InputName(0), x.Dims(), err)
	}
	k.forward(blob.Data[T](x), blob.Data[T](y), blob.Data[T](gamma), blob.Data[T](beta))
	if o.NumOutputs() < 3 {
		return nil
	}
	if err := storeStat[T](o.Base, k.mean, 1, l.n, o.group); err != nil {
		return err
	}
	return storeStat[T](o.Base, k.rstd, 2, l.n, o.group)
}

// storeStat writes the first n·g values of a statistic of the kernel (its
// mean or rstd) to output i, shaped [n, g].
func storeStat[T blob.Float](b *operators.Base, src []float64, i, n, g int) error {
	t, err := initOutput(b, i, blob.TypeOf[T](), n, g)
	if err != nil {
		return err
	}
	d := blob.Data[T](t)
	for j, v := range src[:n*g] {
		d[j] = T(v)
	}
	return nil
}

type groupNormGradient struct {
	*operators.Base
	group int
	nhwc  bool
	k32   groupKernel[float32]
	k64   groupKernel[float64]
}

func newGroupNormGradient(b *operators.Base) (operators.Operator, error) {
	o := &groupNormGradient{Base: b, group: int(b.ArgInt("group", 32))}
	var err error
	if o.nhwc, err = readOrder(b); err != nil {
		return nil, err
	}
	if o.group <= 0 {
		return nil, b.Errorf("group must be positive, got %d", o.group)
	}
	return o, nil
}

func (o *groupNormGradient) Run() error {
	x, err := o.FloatInput(1)
	if err != nil {
		return err
	}
	if x.DataType() == blob.Float32 {
		return runGroupNormGradient(o, &o.k32, x)
	}
	return runGroupNormGradient(o, &o.k64, x)
}

func runGroupNormGradient[T blob.Float](o *groupNormGradient, k *groupKernel[T], x *blob.Tensor) error {
	l, err := spatialLayout(o.Base, 1, x, o.nhwc, 2)
	if err != nil {
		return err
	}
	if l.c%o.group != 0 {
		return o.Errorf("input 1 (%q) has %d channels, not a multiple of group = %d", o.InputName(1), l.c, o.group)
	}
	dy, err := inputLike(o.Base, 0, x, x.Size())
	if err != nil {
		return err
	}
	gamma, err := inputLike(o.Base, 2, x, l.c)
	if err != nil {
		return err
	}
	beta, err := inputLike(o.Base, 3, x, l.c)
	if err != nil {
		return err
	}
	ng := l.n * o.group
	mean, err := inputLike(o.Base, 4, x, ng)
	if err != nil {
		return err
	}
	rstd, err := inputLike(o.Base, 5, x, ng)
	if err != nil {
		return err
	}
	outs, err := gradOutputs(o.Base, x, gamma, beta)
	if err != nil {
		return err
	}
	if err := k.setup(l, o.group, 0); err != nil {
		return o.Errorf("input 1 (%q) of shape %v: %w", o.InputName(1), x.Dims(), err)
	}
	loadStats(k, blob.Data[T](mean), blob.Data[T](rstd))
	k.backward(blob.Data[T](dy), blob.Data[T](x), blob.Data[T](gamma), blob.Data[T](outs[0]), blob.Data[T](outs[1]), blob.Data[T](outs[2]))
	return nil
}

// gradOutputs shapes outputs 0, 1 and 2 like x, gamma and beta.
func gradOutputs(b *operators.Base, x, gamma, beta *blob.Tensor) ([3]*blob.Tensor, error) {
	var outs [3]*blob.Tensor
	for i, like := range [3]*blob.Tensor{x, gamma, beta} {
		t, err := initOutput(b, i, x.DataType(), like.Dims()...)
		if err != nil {
			return outs, err
		}
		outs[i] = t
	}
	return outs, nil
}

// loadStats copies given means and inverse standard deviations into the
// kernel.
func loadStats[T blob.Float](k *groupKernel[T], mean, rstd []T) {
	for i := range k.mean {
		k.mean[i], k.rstd[i] = float64(mean[i]), float64(rstd[i])
	}
}
