package norm

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// serializedDir holds Caffe2's serialized operator tests (see
// tests/conformance_test.go, which runs all of them once the package is
// linked into the standard operator set).
const serializedDir = "../../tests/testdata/caffe2-optests"

// TestCaffe2SerializedTests runs the serialized tests of this package's
// operators (such as layer_norm_op_test.test_layer_norm_grad_op): the
// recorded operator on the recorded inputs must reproduce the recorded
// outputs within Caffe2's tolerance, |got − want| ≤ 1e-4 + 1e-4·|want|.
func TestCaffe2SerializedTests(t *testing.T) {
	ours := map[string]bool{}
	for _, typ := range []string{"SpatialBN", "SpatialBNGradient", "InstanceNorm", "InstanceNormGradient", "LayerNorm",
		"LayerNormGradient", "GroupNorm", "GroupNormGradient", "LRN", "LRNGradient", "ChannelStats", "ChannelBackpropStats"} {
		ours[typ] = true
	}
	dirs, err := filepath.Glob(filepath.Join(serializedDir, "*.*"))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "op.pb"))
		if err != nil {
			continue
		}
		def := &netdef.OperatorDef{}
		if err := proto.Unmarshal(data, def); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if !ours[def.GetType()] {
			continue
		}
		ran++
		t.Run(filepath.Base(dir), func(t *testing.T) { runSerialized(t, dir, def) })
	}
	if ran == 0 {
		t.Fatalf("no serialized test of this package's operators in %s", serializedDir)
	}
}

func runSerialized(t *testing.T, dir string, def *netdef.OperatorDef) {
	var inputs []*blob.Tensor
	for i := range def.Input {
		x, err := optest.ReadNPY(filepath.Join(dir, fmt.Sprintf("input_%d.npy", i)))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, x)
	}
	var meta struct {
		Outputs []struct {
			File  string
			Shape []int
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	outs := optest.MustRunOp(t, def, inputs...)
	for k, o := range meta.Outputs {
		want, err := optest.ReadNPY(filepath.Join(dir, o.File))
		if err != nil {
			t.Fatal(err)
		}
		got := outs[k]
		if got.DataType() != want.DataType() || !slices.Equal(got.Dims(), o.Shape) {
			t.Fatalf("%s: %v %v, want %v %v", o.File, got.DataType(), got.Dims(), want.DataType(), o.Shape)
		}
		g, w := got.AsFloat64s(), want.AsFloat64s()
		for i := range w {
			if !(math.Abs(g[i]-w[i]) <= 1e-4+1e-4*math.Abs(w[i])) {
				t.Fatalf("%s[%d] = %v, want %v", o.File, i, g[i], w[i])
			}
		}
	}
}
