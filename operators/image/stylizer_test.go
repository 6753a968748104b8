package image

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func preprocessDef(args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(preprocessType, []string{"X", "mean"}, []string{"Y"}, args...)
}

func deprocessDef() *netdef.OperatorDef {
	return netdef.NewOperator(deprocessType, []string{"X", "mean"}, []string{"Y"})
}

// bgra2x2 is a 2×2 BGRA image: pixels (B, G, R, A) in row-major order.
var bgra2x2 = []uint8{
	10, 20, 30, 40,
	0, 255, 128, 7,
	200, 100, 50, 255,
	1, 2, 3, 4,
}

var mean3 = []float32{100, 50, 25}

// TestPreprocessHand checks the preprocessing of a 2×2 image without noise
// and with known noise, worked out by hand.
func TestPreprocessHand(t *testing.T) {
	x := blob.MustFromSlice(bgra2x2, 1, 2, 2, 4)
	mean := blob.MustFromSlice(mean3, 3)
	// Planes B, G, R of pixel − mean; alpha dropped.
	plain := []float64{
		10 - 100, 0 - 100, 200 - 100, 1 - 100,
		20 - 50, 255 - 50, 100 - 50, 2 - 50,
		30 - 25, 128 - 25, 50 - 25, 3 - 25,
	}
	y := optest.MustRunOp(t, preprocessDef(netdef.ArgFloat("noise_std", 0)), x, mean)[0]
	checkTensor(t, "no noise", y, blob.Float32, []int{1, 3, 2, 2}, plain, 0)

	// Known noise of cycle 5 (the blob holds 6 values; the 6th is beyond
	// noise_size and never used), two copies of the image: the cycle runs
	// pixel by pixel, channel by channel, and restarts for each image.
	noise := []float32{0.5, -1, 2, 0.25, 3, 1000}
	// Noise index of pixel p, channel c: (3p + c) mod 5.
	var want []float64
	for range 2 {
		for c := range 3 {
			for p := range 4 {
				want = append(want, plain[c*4+p]+float64(noise[(3*p+c)%5]))
			}
		}
	}
	w := optest.NewWorkspace()
	w.Feed(NoiseBlob, blob.MustFromSlice(noise, 6))
	w.Feed("X", blob.MustFromSlice(append(slices.Clone(bgra2x2), bgra2x2...), 2, 2, 2, 4))
	w.Feed("mean", mean)
	if err := w.Run(preprocessDef(netdef.ArgInt("noise_size", 5))); err != nil {
		t.Fatal(err)
	}
	checkTensor(t, "known noise", w.Tensor("Y"), blob.Float32, []int{2, 3, 2, 2}, want, 1e-7)
}

// TestPreprocessNoise checks the drawn noise: noise_size values of standard
// deviation noise_std, stored in the workspace, reproducible for a seed,
// reused by later runs, and added as the cycle says.
func TestPreprocessNoise(t *testing.T) {
	x := blob.MustFromSlice(bgra2x2, 1, 2, 2, 4)
	mean := blob.MustFromSlice(mean3, 3)
	run := func(seed uint32, args ...*netdef.Argument) (*blob.Tensor, *blob.Tensor, *optest.Workspace) {
		w := optest.NewWorkspace()
		w.Feed("X", x)
		w.Feed("mean", mean)
		if err := w.Run(optest.Seeded(preprocessDef(args...), seed)); err != nil {
			t.Fatal(err)
		}
		return w.Tensor("Y").Clone(), w.Tensor(NoiseBlob).Clone(), w
	}
	y1, n1, w := run(7)
	if n1.DataType() != blob.Float32 || !slices.Equal(n1.Dims(), []int{491}) {
		t.Fatalf("noise: %v %v, want FLOAT [491]", n1.DataType(), n1.Dims())
	}
	var s, s2 float64
	for _, v := range n1.AsFloat64s() {
		s += v
		s2 += v * v
	}
	m := s / 491
	if sd := math.Sqrt(s2/491 - m*m); math.Abs(m) > 1.5 || sd < 8.5 || sd > 11.5 {
		t.Errorf("noise mean %.3f, sd %.3f; want about 0 and 10", m, sd)
	}
	noise := n1.AsFloat64s()
	plain := []float64{-90, -100, 100, -99, -30, 205, 50, -48, 5, 103, 25, -22}
	var want []float64
	for c := range 3 {
		for p := range 4 {
			want = append(want, float64(float32(plain[c*4+p])+float32(noise[3*p+c])))
		}
	}
	checkTensor(t, "noisy Y", y1, blob.Float32, []int{1, 3, 2, 2}, want, 0)

	y2, n2, _ := run(7)
	if !slices.Equal(n1.AsFloat64s(), n2.AsFloat64s()) || !slices.Equal(y1.AsFloat64s(), y2.AsFloat64s()) {
		t.Error("the same seed drew different noise")
	}
	if _, n3, _ := run(8); slices.Equal(n1.AsFloat64s(), n3.AsFloat64s()) {
		t.Error("seeds 7 and 8 drew the same noise")
	}
	// A second operator in the same workspace reuses the stored noise,
	// whatever its own seed and noise_std.
	if err := w.Run(optest.Seeded(preprocessDef(netdef.ArgFloat("noise_std", 3)), 99)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.Tensor("Y").AsFloat64s(), y1.AsFloat64s()) {
		t.Error("a later run did not reuse the workspace's noise")
	}
	// noise_std and noise_size shape the drawn noise.
	if _, n, _ := run(7, netdef.ArgFloat("noise_std", 0.5), netdef.ArgInt("noise_size", 2000)); n.Size() != 2000 || stddev(n.AsFloat64s()) > 0.6 {
		t.Errorf("noise_std 0.5, noise_size 2000: %d values of sd %.3f", n.Size(), stddev(n.AsFloat64s()))
	}
}

func stddev(v []float64) float64 {
	var s, s2 float64
	for _, x := range v {
		s += x
		s2 += x * x
	}
	m := s / float64(len(v))
	return math.Sqrt(s2/float64(len(v)) - m*m)
}

// TestDeprocessHand checks the deprocessing of a 2×2 image, worked out by
// hand: mean added, clamped to [0, 255], truncated, alpha 255.
func TestDeprocessHand(t *testing.T) {
	nan := float32(math.NaN())
	x := blob.MustFromSlice([]float32{
		-90.5, 300, -1000, 0.99, // B + 100 → 9.5 400 -900 100.99
		-50, -50.5, 205, 204.999, // G + 50 → 0 -0.5 255 254.999
		nan, 1e30, float32(math.Copysign(0, -1)), 0.7, // R + 25 → NaN 1e30 25 25.7
	}, 1, 3, 2, 2)
	y := optest.MustRunOp(t, deprocessDef(), x, blob.MustFromSlice(mean3, 3))[0]
	want := []uint8{
		9, 0, 0, 255,
		255, 0, 255, 255,
		0, 255, 25, 255,
		100, 254, 25, 255,
	}
	if y.DataType() != blob.Uint8 || !slices.Equal(y.Dims(), []int{1, 2, 2, 4}) || !slices.Equal(blob.Data[uint8](y), want) {
		t.Fatalf("got %v %v %v, want UINT8 [1 2 2 4] %v", y.DataType(), y.Dims(), y.Raw(), want)
	}
}

// TestStylizerRoundTrip checks that preprocessing without noise and then
// deprocessing returns the original pixels (alpha becomes 255), for every
// byte value in every channel and several means.
func TestStylizerRoundTrip(t *testing.T) {
	const n, h, w = 2, 16, 16
	px := make([]uint8, n*h*w*4)
	want := make([]uint8, len(px))
	for p := range n * h * w {
		q := p % 256
		px[4*p], px[4*p+1], px[4*p+2], px[4*p+3] = uint8(q), uint8(255-q), uint8(q*7), uint8(q*3)
		copy(want[4*p:], []uint8{uint8(q), uint8(255 - q), uint8(q * 7), 255})
	}
	x := blob.MustFromSlice(px, n, h, w, 4)
	for _, m := range [][]float32{{0, 0, 0}, {100, 50, 25}, {103.939, 116.779, 123.68}, {255, 0.5, 127.25}} {
		mean := blob.MustFromSlice(m, 3)
		planes := optest.MustRunOp(t, preprocessDef(netdef.ArgFloat("noise_std", 0)), x, mean)[0]
		back := optest.MustRunOp(t, deprocessDef(), planes, mean)[0]
		if !slices.Equal(back.Dims(), []int{n, h, w, 4}) || !slices.Equal(blob.Data[uint8](back), want) {
			t.Errorf("mean %v: the round trip changed the pixels", m)
		}
	}
}

func TestStylizerErrors(t *testing.T) {
	x := blob.MustFromSlice(bgra2x2, 1, 2, 2, 4)
	mean := blob.MustFromSlice(mean3, 3)
	expectError(t, "float pixels", preprocessDef(), "want UINT8", optest.F32(make([]float64, 16), 1, 2, 2, 4), mean)
	expectError(t, "BGR pixels", preprocessDef(), "(N, H, W, 4)", blob.MustFromSlice(make([]uint8, 12), 1, 2, 2, 3), mean)
	expectError(t, "rank 3 pixels", preprocessDef(), "(N, H, W, 4)", blob.MustFromSlice(make([]uint8, 16), 2, 2, 4), mean)
	expectError(t, "mean size", preprocessDef(), "3 channel means", x, blob.MustFromSlice([]float32{1, 2, 3, 4}, 4))
	expectError(t, "mean type", deprocessDef(), "want FLOAT", optest.F32(make([]float64, 12), 1, 3, 2, 2), blob.MustFromSlice([]float64{1, 2, 3}, 3))
	expectError(t, "noise_size 0", preprocessDef(netdef.ArgInt("noise_size", 0)), "at least 1", x, mean)
	expectError(t, "deprocess planes", deprocessDef(), "(N, 3, H, W)", optest.F32(make([]float64, 16), 1, 4, 2, 2), mean)
	expectError(t, "deprocess uint8", deprocessDef(), "want FLOAT", x, mean)

	for _, c := range []struct {
		name  string
		noise *blob.Tensor
	}{
		{"short noise", optest.F32(make([]float64, 10), 10)},
		{"int noise", blob.MustFromSlice(make([]int32, 491), 491)},
	} {
		w := optest.NewWorkspace()
		w.Feed(NoiseBlob, c.noise)
		w.Feed("X", x)
		w.Feed("mean", mean)
		if err := w.Run(preprocessDef()); err == nil || !strings.Contains(err.Error(), NoiseBlob) {
			t.Errorf("%s: error %v, want one naming %s", c.name, err, NoiseBlob)
		}
	}
}

// TestPreprocessNoiseOverBudget: a noise_size the memory budget refuses is
// an error naming the argument, and leaves the noise blob empty, so that a
// later operator with a smaller noise_size draws its noise.
func TestPreprocessNoiseOverBudget(t *testing.T) {
	old := blob.SetMemoryBudget(64 << 20)
	defer blob.SetMemoryBudget(old)
	w := optest.NewWorkspace()
	w.Feed("X", blob.MustFromSlice(bgra2x2, 1, 2, 2, 4))
	w.Feed("mean", blob.MustFromSlice(mean3, 3))
	for _, size := range []int64{1 << 31, 1 << 40, 1 << 62} {
		err := w.Run(preprocessDef(netdef.ArgInt("noise_size", size)))
		want := fmt.Sprintf("argument noise_size = %d: blob %s: blob: shape [%d] of FLOAT", size, NoiseBlob, size)
		if !errors.Is(err, blob.ErrOverBudget) || !strings.Contains(err.Error(), want) {
			t.Errorf("noise_size %d: error %v, want one over the budget containing %q", size, err, want)
		}
		if b := w.GetBlob(NoiseBlob); b != nil && !b.IsEmpty() {
			t.Errorf("noise_size %d: the failed run left %v in the noise blob", size, b)
		}
	}
	if err := w.Run(preprocessDef(netdef.ArgInt("noise_size", 5))); err != nil {
		t.Fatal(err)
	}
	if n := w.Tensor(NoiseBlob); n.Size() != 5 {
		t.Errorf("noise after the failures: %v, want 5 values", n)
	}
}
