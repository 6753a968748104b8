package loss

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// spatialIgnoreLabel marks a pixel that SpatialSoftmaxWithLoss leaves out
// of the loss and the gradient (Caffe2's DONT_CARE).
const spatialIgnoreLabel = -1

func init() {
	args := []operators.ArgSpec{
		{Name: "scale", Default: 1.0, Doc: "factor applied to the averaged loss (≥ 0)"},
		{Name: "order", Default: "NCHW", Doc: "only NCHW is supported"},
	}
	operators.MustRegisterCPU(operators.Schema{Type: "SpatialSoftmaxWithLoss", MinInputs: 2, MaxInputs: 3, MinOutputs: 2, MaxOutputs: 2, Args: args,
		Doc: "SpatialSoftmaxWithLoss(logits [N, D, H, W], labels int32 [N, H, W][, weights [N, H, W]]) → (softmax, loss): " +
			"a softmax over D at every pixel; loss = scale·Σ w·(−log max(p[label], 1e-20))/Σ w over the pixels whose label " +
			"is not −1 (0 when Σ w = 0), a 0-d scalar."},
		newSpatialSoftmaxWithLoss)
	operators.MustRegisterCPU(operators.Schema{Type: "SpatialSoftmaxWithLossGradient", MinInputs: 4, MaxInputs: 5, MinOutputs: 1, MaxOutputs: 1,
		Args: append(args, operators.ArgSpec{Name: "only_loss", Default: int64(0), Doc: "accepted and ignored on CPU, as in Caffe2"}),
		Doc:  "SpatialSoftmaxWithLossGradient(logits, labels[, weights], softmax, loss_grad) → logits_grad."},
		newSpatialSoftmaxWithLossGradient)
	operators.MustRegisterGradient("SpatialSoftmaxWithLoss", softmaxLossGradient("SpatialSoftmaxWithLossGradient"))
}

// spatialSoftmaxLoss holds what SpatialSoftmaxWithLoss and its gradient
// share: the scale argument, the checks of logits, labels and weights, and
// per-pixel scratch.
type spatialSoftmaxLoss struct {
	*operators.Base
	scale   float64
	scratch []float64
}

func newSpatialSoftmaxLoss(b *operators.Base) (spatialSoftmaxLoss, error) {
	scale, err := softmaxLossScale(b)
	return spatialSoftmaxLoss{Base: b, scale: scale}, err
}

func newSpatialSoftmaxWithLoss(b *operators.Base) (operators.Operator, error) {
	o, err := newSpatialSoftmaxLoss(b)
	return &spatialSoftmaxWithLoss{o}, err
}

func newSpatialSoftmaxWithLossGradient(b *operators.Base) (operators.Operator, error) {
	o, err := newSpatialSoftmaxLoss(b)
	return &spatialSoftmaxWithLossGradient{o}, err
}

// spatialInputs are the checked logits (N images of D classes at HW
// pixels), labels and weights (nil when absent).
type spatialInputs struct {
	x        *blob.Tensor
	n, d, hw int
	labels   []int32
	weights  *blob.Tensor
}

// inputs checks the logits (input 0), the labels (input 1) and, when
// weighted, the weights (input 2).
func (o *spatialSoftmaxLoss) inputs(weighted bool) (in spatialInputs, err error) {
	if in.x, err = o.FloatInput(0); err != nil {
		return in, err
	}
	x := in.x
	if x.NumDims() != 4 {
		return in, o.Errorf("logits %q have shape %v; SpatialSoftmaxWithLoss needs 4-D [N, D, H, W] logits", o.InputName(0), x.Dims())
	}
	in.n, in.d, in.hw = x.Dim(0), x.Dim(1), x.Dim(2)*x.Dim(3)
	t, err := o.InputOf(1, blob.Int32)
	if err != nil {
		return in, err
	}
	if t.NumDims() != 3 || t.Dim(0) != in.n || t.Dim(1) != x.Dim(2) || t.Dim(2) != x.Dim(3) {
		return in, o.Errorf("labels %q have shape %v, want [%d, %d, %d] for logits of shape %v", o.InputName(1), t.Dims(), in.n, x.Dim(2), x.Dim(3), x.Dims())
	}
	in.labels = blob.Data[int32](t)
	for k, l := range in.labels {
		if l != spatialIgnoreLabel && (l < 0 || int(l) >= in.d) {
			return in, o.Errorf("label %d of %q is %d, outside [0, %d) and not the ignored label -1", k, o.InputName(1), l, in.d)
		}
	}
	if weighted {
		if in.weights, err = o.InputOf(2, x.DataType()); err != nil {
			return in, err
		}
		if in.weights.Size() != len(in.labels) {
			return in, o.Errorf("weights %q have shape %v, want %d elements (one per pixel)", o.InputName(2), in.weights.Dims(), len(in.labels))
		}
	}
	return in, nil
}

type spatialSoftmaxWithLoss struct{ spatialSoftmaxLoss }

func (o *spatialSoftmaxWithLoss) Run() error {
	in, err := o.inputs(o.NumInputs() > 2)
	if err != nil {
		return err
	}
	p, loss, err := softmaxOutputs(o.Base, in.x)
	if err != nil {
		return err
	}
	o.scratch = grow64(o.scratch, 2*in.hw)
	var sum, weightSum float64
	if in.x.DataType() == blob.Float32 {
		sum, weightSum = spatialSoftmaxForward(blob.Data[float32](in.x), blob.Data[float32](p), in.labels, floatData[float32](in.weights), in.n, in.d, in.hw, o.scratch)
	} else {
		sum, weightSum = spatialSoftmaxForward(blob.Data[float64](in.x), blob.Data[float64](p), in.labels, floatData[float64](in.weights), in.n, in.d, in.hw, o.scratch)
	}
	setMeanLoss(loss, o.scale, sum, weightSum)
	return nil
}

// grow64 returns s resized to n elements, reusing its storage when it is
// large enough.
func grow64(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// spatialSoftmaxForward writes the softmax over the d class planes of each
// of the n images of x (hw pixels each) to p, and returns Σ w·(−log
// max(p[label], 1e-20)) and Σ w over the pixels not labelled −1 (w = 1
// without weights). scratch holds 2·hw values.
func spatialSoftmaxForward[T blob.Float](x, p []T, labels []int32, w []T, n, d, hw int, scratch []float64) (lossSum, weightSum float64) {
	mx, sum := scratch[:hw], scratch[hw:2*hw]
	for i := range n {
		img, out := x[i*d*hw:(i+1)*d*hw], p[i*d*hw:(i+1)*d*hw]
		for j := range mx {
			mx[j] = math.Inf(-1)
		}
		for c := range d {
			for j, v := range img[c*hw : (c+1)*hw] {
				mx[j] = math.Max(mx[j], float64(v))
			}
		}
		clear(sum)
		for c := range d {
			plane := out[c*hw : (c+1)*hw]
			for j, v := range img[c*hw : (c+1)*hw] {
				e := math.Exp(float64(v) - mx[j])
				plane[j] = T(e)
				sum[j] += e
			}
		}
		for j := range sum {
			sum[j] = 1 / sum[j]
		}
		for c := range d {
			plane := out[c*hw : (c+1)*hw]
			for j, v := range plane {
				plane[j] = T(float64(v) * sum[j])
			}
		}
		for j, l := range labels[i*hw : (i+1)*hw] {
			if l == spatialIgnoreLabel {
				continue
			}
			wj := 1.0
			if w != nil {
				wj = float64(w[i*hw+j])
			}
			lossSum -= wj * math.Log(clampProb(out[int(l)*hw+j]))
			weightSum += wj
		}
	}
	return lossSum, weightSum
}

type spatialSoftmaxWithLossGradient struct{ spatialSoftmaxLoss }

func (o *spatialSoftmaxWithLossGradient) Run() error {
	in, err := o.inputs(o.NumInputs() == 5)
	if err != nil {
		return err
	}
	p, dx, dloss, err := softmaxGradInputs(o.Base, in.x)
	if err != nil {
		return err
	}
	o.scratch = grow64(o.scratch, len(in.labels))
	if in.x.DataType() == blob.Float32 {
		spatialSoftmaxBackward(blob.Data[float32](p), blob.Data[float32](dx), in.labels, floatData[float32](in.weights), in.n, in.d, in.hw, o.scale, dloss, o.scratch)
	} else {
		spatialSoftmaxBackward(blob.Data[float64](p), blob.Data[float64](dx), in.labels, floatData[float64](in.weights), in.n, in.d, in.hw, o.scale, dloss, o.scratch)
	}
	return nil
}

// spatialSoftmaxBackward sets dx = (p − onehot(label))·w·g per pixel, with
// g = dloss·scale/Σ w when Σ w > 0 and g = dloss otherwise (as Caffe2's CPU
// kernel does), and dx = 0 at pixels labelled −1. factor holds one value
// per pixel.
func spatialSoftmaxBackward[T blob.Float](p, dx []T, labels []int32, w []T, n, d, hw int, scale, dloss float64, factor []float64) {
	var total float64
	for k, l := range labels {
		f := 0.0
		if l != spatialIgnoreLabel {
			f = 1
			if w != nil {
				f = float64(w[k])
			}
			total += f
		}
		factor[k] = f
	}
	g := dloss
	if total > 0 {
		g *= scale / total
	}
	for i := range n {
		fi, li := factor[i*hw:(i+1)*hw], labels[i*hw:(i+1)*hw]
		for c := range d {
			off := (i*d + c) * hw
			pp, dd := p[off:off+hw], dx[off:off+hw]
			for j, v := range pp {
				t := 0.0
				if int(li[j]) == c {
					t = 1
				}
				dd[j] = T((float64(v) - t) * fi[j] * g)
			}
		}
	}
}
