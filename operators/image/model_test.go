package image_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	_ "github.com/caffe2go/caffe2go/operators/convpool"
	_ "github.com/caffe2go/caffe2go/operators/fill"
	"github.com/caffe2go/caffe2go/operators/image"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// styleTypes are the operator types of the crayon style-transfer model's
// init and predict nets.
var styleTypes = []string{
	"AveragePool",
	"BRGNCHWCToPackedInt8BGRAStylizerDeprocess",
	"ConstantFill",
	"Conv",
	"ConvTranspose",
	"GivenTensorFill",
	"PRelu",
	"PackedInt8BGRANHWCToNCHWCStylizerPreprocess",
	"PadImage",
}

// styleModels is where the style-transfer example keeps the models it
// embeds; this test reads the crayon model from there: crayon/init_net.pb
// and the predict net that all the styles share, predict_net.pb.
const styleModels = "../../examples/styletransfer/models"

// readNet reads the net at path, relative to styleModels.
func readNet(t *testing.T, path string) *netdef.NetDef {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(styleModels, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	var n netdef.NetDef
	if err := proto.Unmarshal(b, &n); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &n
}

func readNPY(t *testing.T, name string) *blob.Tensor {
	t.Helper()
	x, err := optest.ReadNPY(filepath.Join("testdata", "style", name))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// runStyle runs the init net and then the predict net on pixels in a fresh
// workspace; with noise set, it first stores it as the preprocessing noise.
func runStyle(t *testing.T, initNet, predictNet *netdef.NetDef, pixels, noise *blob.Tensor) *optest.Workspace {
	t.Helper()
	w := optest.NewWorkspace()
	for _, op := range initNet.Op {
		if err := w.Run(op); err != nil {
			t.Fatal(err)
		}
	}
	w.Feed("data_int8_bgra", pixels)
	if noise != nil {
		w.Feed(image.NoiseBlob, noise)
	}
	for _, op := range predictNet.Op {
		if err := w.Run(op); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// TestStyleTransferCrayon runs Caffe2's crayon style-transfer model (real
// trained weights from the model zoo, the one examples/styletransfer ships)
// on a synthetic 48×64 image and compares it with the PyTorch reference of
// testdata/gen_style.py. It is skipped while an operator type the nets use
// is not registered.
func TestStyleTransferCrayon(t *testing.T) {
	initNet, predictNet := readNet(t, "crayon/init_net.pb"), readNet(t, "predict_net.pb")
	var types, missing []string
	for _, n := range []*netdef.NetDef{initNet, predictNet} {
		for _, op := range n.Op {
			if typ := op.GetType(); !slices.Contains(types, typ) {
				types = append(types, typ)
				if !operators.IsOperator(typ) {
					missing = append(missing, typ)
				}
			}
		}
	}
	slices.Sort(types)
	if !slices.Equal(types, styleTypes) {
		t.Fatalf("the nets use %v, want %v", types, styleTypes)
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Skipf("operator types not registered: %v", missing)
	}

	pixels := readNPY(t, "input.npy")
	wantPlanes, wantPixels := readNPY(t, "planes.npy"), readNPY(t, "output.npy")
	last := predictNet.Op[len(predictNet.Op)-1]
	zeros := blob.MustFromSlice(make([]float32, 491), 491)
	w := runStyle(t, initNet, predictNet, pixels, zeros)

	planes := w.Tensor(last.Input[0])
	if !slices.Equal(planes.Dims(), wantPlanes.Dims()) {
		t.Fatalf("planes: shape %v, want %v", planes.Dims(), wantPlanes.Dims())
	}
	// float32 through nine layers: errors relative to the planes' range.
	gp, wp := planes.AsFloat64s(), wantPlanes.AsFloat64s()
	var scale float64
	for _, v := range wp {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range gp {
		if math.Abs(gp[i]-wp[i]) > 1e-5*scale {
			t.Fatalf("planes[%d] = %.6g, want %.6g (range ±%.4g)", i, gp[i], wp[i], scale)
		}
	}

	got := w.Tensor(predictNet.ExternalOutput[0])
	if got.DataType() != blob.Uint8 || !slices.Equal(got.Dims(), wantPixels.Dims()) {
		t.Fatalf("output: %v %v, want UINT8 %v", got.DataType(), got.Dims(), wantPixels.Dims())
	}
	// Pixels agree up to one level where float rounding crosses an integer.
	g, want := blob.Data[uint8](got), blob.Data[uint8](wantPixels)
	off := 0
	for i := range g {
		if d := int(g[i]) - int(want[i]); d != 0 {
			if d < -1 || d > 1 {
				t.Fatalf("pixel byte %d = %d, want %d", i, g[i], want[i])
			}
			off++
		}
	}
	if off > len(g)/100 {
		t.Errorf("%d of %d pixel bytes differ by one level", off, len(g))
	}

	// With the model's own noise (noise_std 5, random_seed 0) the result is
	// reproducible and stays near the noiseless one.
	n1 := runStyle(t, initNet, predictNet, pixels, nil)
	n2 := runStyle(t, initNet, predictNet, pixels, nil)
	noisy := blob.Data[uint8](n1.Tensor(predictNet.ExternalOutput[0]))
	if !slices.Equal(noisy, blob.Data[uint8](n2.Tensor(predictNet.ExternalOutput[0]))) {
		t.Error("two runs with random_seed 0 differ")
	}
	if sz := n1.Tensor(image.NoiseBlob).Size(); sz != 491 {
		t.Errorf("noise blob holds %d values, want 491", sz)
	}
	var diff float64
	for i := range noisy {
		diff += math.Abs(float64(noisy[i]) - float64(g[i]))
	}
	if mad := diff / float64(len(noisy)); mad == 0 || mad > 20 {
		t.Errorf("mean difference between noisy and noiseless output is %.2f levels", mad)
	}
}
