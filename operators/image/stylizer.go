package image

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// NoiseBlob is the workspace blob in which
// PackedInt8BGRANHWCToNCHWCStylizerPreprocess keeps its noise (float32),
// drawn on first use and reused by every later run in the workspace.
const NoiseBlob = "__CAFFE2_STYLIZER_NOISE__"

const (
	preprocessType = "PackedInt8BGRANHWCToNCHWCStylizerPreprocess"
	deprocessType  = "BRGNCHWCToPackedInt8BGRAStylizerDeprocess"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: preprocessType, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "noise_std", Default: float32(10), Doc: "standard deviation of the Gaussian noise, used when the noise is drawn"},
			{Name: "noise_size", Default: int64(491), Doc: "length of the noise cycle (a prime, to avoid artifacts)"},
		},
		Doc: "PackedInt8BGRANHWCToNCHWCStylizerPreprocess(X, mean) → Y turns uint8 BGRA pixels X (N, H, W, 4) into " +
			"float32 planes Y (N, 3, H, W): Y[n][c][p] = X[n][p][c] − mean[c] + noise[i], c = 0, 1, 2 (B, G, R; alpha is dropped), " +
			"where i runs through the first noise_size noise values, pixel by pixel and channel by channel, from 0 for each image. " +
			"The noise lives in the workspace blob " + NoiseBlob + ", drawn from N(0, noise_std²) on first use.",
	}, func(b *operators.Base) (operators.Operator, error) {
		size := b.ArgInt("noise_size", 491)
		if size < 1 {
			return nil, b.Errorf("argument noise_size is %d; it must be at least 1", size)
		}
		return &preprocessOp{Base: b, noiseStd: float64(b.ArgFloat("noise_std", 10)), noiseSize: int(size)}, nil
	})
	operators.MustRegisterNoGradient(preprocessType)

	operators.MustRegisterCPU(operators.Schema{
		Type: deprocessType, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "BRGNCHWCToPackedInt8BGRAStylizerDeprocess(X, mean) → Y turns float32 planes X (N, 3, H, W) into uint8 " +
			"BGRA pixels Y (N, H, W, 4): Y[n][p][c] = X[n][c][p] + mean[c] clamped to [0, 255] and truncated, and alpha 255.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &deprocessOp{Base: b}, nil
	})
	operators.MustRegisterNoGradient(deprocessType)
}

// stylizerMean returns input 1, the float32 per-channel mean of the three
// colour channels.
func stylizerMean(o *operators.Base) ([]float32, error) {
	m, err := o.InputOf(1, blob.Float32)
	if err != nil {
		return nil, err
	}
	if m.Size() != 3 {
		return nil, o.Errorf("input 1 (%q) has shape %v; it must hold 3 channel means", o.InputName(1), m.Dims())
	}
	return blob.Data[float32](m), nil
}

type preprocessOp struct {
	*operators.Base
	noiseStd  float64
	noiseSize int
}

func (o *preprocessOp) Run() error {
	noise, err := o.noise()
	if err != nil {
		return err
	}
	x, err := o.InputOf(0, blob.Uint8)
	if err != nil {
		return err
	}
	mean, err := stylizerMean(o.Base)
	if err != nil {
		return err
	}
	if x.NumDims() != 4 || x.Dim(3) != 4 {
		return o.Errorf("input 0 (%q) has shape %v; want packed BGRA pixels (N, H, W, 4)", o.InputName(0), x.Dims())
	}
	n, h, w := x.Dim(0), x.Dim(1), x.Dim(2)
	y := o.Output(0)
	if err := y.Init(blob.Float32, n, 3, h, w); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	preprocess(blob.Data[uint8](x), mean, noise, blob.Data[float32](y), n, h*w)
	return nil
}

// noise returns the first noiseSize values of the workspace's noise,
// drawing noise of that length when the blob holds no tensor yet.
func (o *preprocessOp) noise() ([]float32, error) {
	nb := o.Workspace().CreateBlob(NoiseBlob)
	if !nb.IsTensor() {
		// The blob gets the noise only once it is drawn, so that a
		// noise_size the memory budget refuses leaves it as it was.
		t, err := blob.New(blob.Float32, o.noiseSize)
		if err != nil {
			return nil, o.Errorf("argument noise_size = %d: blob %s: %w", o.noiseSize, NoiseBlob, err)
		}
		r := o.Rand()
		for i := range blob.Data[float32](t) {
			blob.Data[float32](t)[i] = float32(r.NormFloat64() * o.noiseStd)
		}
		nb.Set(t)
	}
	t := nb.Tensor()
	if t.DataType() != blob.Float32 || t.Size() < o.noiseSize {
		return nil, o.Errorf("blob %s holds a %v tensor of shape %v; want at least noise_size = %d FLOAT values", NoiseBlob, t.DataType(), t.Dims(), o.noiseSize)
	}
	return blob.Data[float32](t)[:o.noiseSize], nil
}

// preprocess converts n images of hw BGRA pixels into 3 float planes each,
// subtracting the mean and adding the noise cycle (restarted per image).
func preprocess(x []uint8, mean, noise, y []float32, n, hw int) {
	for img := range n {
		xi := x[img*4*hw : (img+1)*4*hw]
		yi := y[img*3*hw : (img+1)*3*hw]
		planes := [3][]float32{yi[:hw], yi[hw : 2*hw], yi[2*hw:]}
		k := 0
		for p := range hw {
			px := xi[4*p : 4*p+3]
			for c, v := range px {
				planes[c][p] = float32(v) - mean[c] + noise[k]
				if k++; k == len(noise) {
					k = 0
				}
			}
		}
	}
}

type deprocessOp struct{ *operators.Base }

func (o *deprocessOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	mean, err := stylizerMean(o.Base)
	if err != nil {
		return err
	}
	if x.NumDims() != 4 || x.Dim(1) != 3 {
		return o.Errorf("input 0 (%q) has shape %v; want 3 colour planes (N, 3, H, W)", o.InputName(0), x.Dims())
	}
	n, h, w := x.Dim(0), x.Dim(2), x.Dim(3)
	y := o.Output(0)
	if err := y.Init(blob.Uint8, n, h, w, 4); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	deprocess(blob.Data[float32](x), mean, blob.Data[uint8](y), n, h*w)
	return nil
}

// deprocess converts n images of 3 float planes of hw pixels into packed
// BGRA pixels, adding the mean and clamping; alpha is 255.
func deprocess(x, mean []float32, y []uint8, n, hw int) {
	for img := range n {
		xi := x[img*3*hw : (img+1)*3*hw]
		planes := [3][]float32{xi[:hw], xi[hw : 2*hw], xi[2*hw:]}
		yi := y[img*4*hw : (img+1)*4*hw]
		for p := range hw {
			px := yi[4*p : 4*p+4]
			for c := range 3 {
				px[c] = clampByte(planes[c][p] + mean[c])
			}
			px[3] = 255
		}
	}
}

// clampByte is Caffe2's clamped_cast<uint8_t>: 255 from 255 up, 0 from 0
// down, else truncated toward zero. NaN, which Caffe2 leaves undefined,
// gives 0.
func clampByte(f float32) uint8 {
	switch {
	case f >= 255:
		return 255
	case f > 0:
		return uint8(f)
	default:
		return 0
	}
}
