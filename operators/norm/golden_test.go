package norm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// goldenCase runs one operator on the inputs of a PyTorch golden case
// (testdata/gen_golden.py) and compares its outputs with the golden ones.
// Blobs are named "blob=golden" (or just "golden" when both are the same);
// an output with an empty golden name is not compared. Spatial tensors are
// NCHW; with nhwc the case also runs in NHWC order on transposed spatial
// inputs, its spatial outputs transposed back.
type goldenCase struct {
	name    string
	typ     string
	args    []*netdef.Argument
	in, out []string
	spatial []string // golden names of the 4-D NCHW tensors
	nhwc    bool
}

func splitName(s string) (blobName, golden string) {
	if b, g, ok := strings.Cut(s, "="); ok {
		return b, g
	}
	return s, s
}

func goldenCases() []goldenCase {
	bnTrain := []*netdef.Argument{argInt("is_test", 0)}
	return []goldenCase{
		{name: "SpatialBN training", typ: "SpatialBN", args: bnTrain,
			in:      []string{"x=bn_train.x", "s=bn_train.scale", "b=bn_train.bias", "rm=bn_train.rm", "rv=bn_train.rv"},
			out:     []string{"y=bn_train.y", "rm=bn_train.running_mean", "rv=bn_train.running_var", "sm=bn_train.saved_mean", "siv=bn_train.saved_inv_var"},
			spatial: []string{"bn_train.x", "bn_train.y"}, nhwc: true},
		{name: "SpatialBNGradient training", typ: "SpatialBNGradient", args: bnTrain,
			in:      []string{"x=bn_train.x", "s=bn_train.scale", "dy=bn_train.dy", "sm=bn_train.saved_mean", "siv=bn_train.saved_inv_var"},
			out:     []string{"dx=bn_train.dx", "ds=bn_train.dscale", "db=bn_train.dbias"},
			spatial: []string{"bn_train.x", "bn_train.dy", "bn_train.dx"}, nhwc: true},
		{name: "SpatialBN test", typ: "SpatialBN", args: []*netdef.Argument{argInt("is_test", 1)},
			in:      []string{"bn_test.x", "bn_test.scale", "bn_test.bias", "bn_test.mean", "bn_test.var"},
			out:     []string{"bn_test.y"},
			spatial: []string{"bn_test.x", "bn_test.y"}, nhwc: true},
		{name: "SpatialBNGradient test", typ: "SpatialBNGradient", args: []*netdef.Argument{argInt("is_test", 1)},
			in:      []string{"bn_test.x", "bn_test.scale", "bn_test.dy", "bn_test.mean", "bn_test.var"},
			out:     []string{"bn_test.dx", "bn_test.dscale", "bn_test.dbias"},
			spatial: []string{"bn_test.x", "bn_test.dy", "bn_test.dx"}, nhwc: true},
		{name: "InstanceNorm", typ: "InstanceNorm",
			in:      []string{"instance_norm.x", "instance_norm.scale", "instance_norm.bias"},
			out:     []string{"instance_norm.y", "instance_norm.mean", "instance_norm.inv_stdev"},
			spatial: []string{"instance_norm.x", "instance_norm.y"}, nhwc: true},
		{name: "InstanceNormGradient saved statistics", typ: "InstanceNormGradient",
			in:      []string{"instance_norm.x", "instance_norm.scale", "instance_norm.bias", "instance_norm.dy", "instance_norm.mean", "instance_norm.inv_stdev"},
			out:     []string{"instance_norm.dx", "instance_norm.dscale", "instance_norm.dbias"},
			spatial: []string{"instance_norm.x", "instance_norm.dy", "instance_norm.dx"}, nhwc: true},
		{name: "InstanceNormGradient recomputed statistics", typ: "InstanceNormGradient",
			in:      []string{"instance_norm.x", "instance_norm.scale", "instance_norm.bias", "instance_norm.dy"},
			out:     []string{"instance_norm.dx", "instance_norm.dscale", "instance_norm.dbias"},
			spatial: []string{"instance_norm.x", "instance_norm.dy", "instance_norm.dx"}, nhwc: true},
		{name: "LayerNorm", typ: "LayerNorm",
			in:  []string{"layer_norm.x"},
			out: []string{"layer_norm.y", "layer_norm.mean", "layer_norm.std"}},
		{name: "LayerNormGradient", typ: "LayerNormGradient",
			in:  []string{"layer_norm.dy", "layer_norm.y", "layer_norm.mean", "layer_norm.std", "layer_norm.x"},
			out: []string{"layer_norm.dx"}},
		{name: "LayerNorm affine axis 2", typ: "LayerNorm", args: []*netdef.Argument{argInt("axis", 2), argInt("elementwise_affine", 1)},
			in:  []string{"layer_norm_affine.x", "layer_norm_affine.gamma", "layer_norm_affine.beta"},
			out: []string{"layer_norm_affine.y", "layer_norm_affine.mean", "layer_norm_affine.std"}},
		{name: "LayerNormGradient affine axis -2", typ: "LayerNormGradient", args: []*netdef.Argument{argInt("axis", -2), argInt("elementwise_affine", 1)},
			in:  []string{"layer_norm_affine.dy", "layer_norm_affine.y", "layer_norm_affine.mean", "layer_norm_affine.std", "layer_norm_affine.x", "layer_norm_affine.gamma"},
			out: []string{"layer_norm_affine.dx", "layer_norm_affine.dgamma", "layer_norm_affine.dbeta"}},
		{name: "GroupNorm", typ: "GroupNorm", args: []*netdef.Argument{argInt("group", 3)},
			in:      []string{"group_norm.x", "group_norm.gamma", "group_norm.beta"},
			out:     []string{"group_norm.y", "group_norm.mean", "group_norm.inv_std"},
			spatial: []string{"group_norm.x", "group_norm.y"}, nhwc: true},
		{name: "GroupNormGradient", typ: "GroupNormGradient", args: []*netdef.Argument{argInt("group", 3)},
			in:      []string{"group_norm.dy", "group_norm.x", "group_norm.gamma", "group_norm.beta", "group_norm.mean", "group_norm.inv_std"},
			out:     []string{"group_norm.dx", "group_norm.dgamma", "group_norm.dbeta"},
			spatial: []string{"group_norm.x", "group_norm.dy", "group_norm.dx"}, nhwc: true},
		lrnGolden("lrn5", 5, 0.05, 0.75, 1), lrnGolden("lrn4", 4, 0.1, 0.6, 2), lrnGolden("lrn3", 3, 0.2, 0.5, 1.5),
		lrnGradGolden("lrn5", 5, 0.05, 0.75, 1), lrnGradGolden("lrn4", 4, 0.1, 0.6, 2), lrnGradGolden("lrn3", 3, 0.2, 0.5, 1.5),
	}
}

func lrnArgs(size int64, alpha, beta, bias float32) []*netdef.Argument {
	return []*netdef.Argument{argInt("size", size), argFloat("alpha", alpha), argFloat("beta", beta), argFloat("bias", bias)}
}

func lrnGolden(c string, size int64, alpha, beta, bias float32) goldenCase {
	return goldenCase{name: "LRN " + c, typ: "LRN", args: lrnArgs(size, alpha, beta, bias),
		in: []string{c + ".x"}, out: []string{c + ".y", c + ".scale"},
		spatial: []string{c + ".x", c + ".y", c + ".scale"}, nhwc: true}
}

func lrnGradGolden(c string, size int64, alpha, beta, bias float32) goldenCase {
	return goldenCase{name: "LRNGradient " + c, typ: "LRNGradient", args: lrnArgs(size, alpha, beta, bias),
		in: []string{c + ".x", c + ".y", c + ".dy"}, out: []string{c + ".dx"},
		spatial: []string{c + ".x", c + ".y", c + ".dy", c + ".dx"}, nhwc: true}
}

// TestPyTorchGoldens compares every operator's outputs, in float32 and
// float64 and in both orders, with PyTorch's (see testdata/gen_golden.py
// for how Caffe2's definitions differ from PyTorch's and how the goldens
// follow Caffe2).
func TestPyTorchGoldens(t *testing.T) {
	tols := map[blob.DataType]float64{blob.Float32: 1e-6, blob.Float64: 1e-13}
	for _, c := range goldenCases() {
		orders := []string{"NCHW"}
		if c.nhwc {
			orders = append(orders, "NHWC")
		}
		for _, dtype := range []blob.DataType{blob.Float32, blob.Float64} {
			for _, order := range orders {
				t.Run(fmt.Sprintf("%s/%v/%s", c.name, dtype, order), func(t *testing.T) {
					runGoldenCase(t, c, dtype, order, tols[dtype])
				})
			}
		}
	}
}

func runGoldenCase(t *testing.T, c goldenCase, dtype blob.DataType, order string, tol float64) {
	spatial := map[string]bool{}
	for _, s := range c.spatial {
		spatial[s] = true
	}
	prep := func(golden string, t64 *blob.Tensor) *blob.Tensor {
		v := convert(t64, dtype)
		if order == "NHWC" && spatial[golden] {
			v = toNHWC(v)
		}
		return v
	}
	var inNames, outNames []string
	var inputs []*blob.Tensor
	for _, s := range c.in {
		b, g := splitName(s)
		inNames = append(inNames, b)
		inputs = append(inputs, prep(g, readGolden(t, g)))
	}
	for _, s := range c.out {
		b, _ := splitName(s)
		outNames = append(outNames, b)
	}
	args := append([]*netdef.Argument{argStr("order", order)}, c.args...)
	outs := optest.MustRunOp(t, op(c.typ, inNames, outNames, args...), inputs...)
	for i, s := range c.out {
		_, g := splitName(s)
		got := outs[i]
		if got.DataType() != dtype {
			t.Fatalf("%s: type %v, want %v", g, got.DataType(), dtype)
		}
		if order == "NHWC" && spatial[g] {
			got = toNCHW(got)
		}
		expectTensor(t, g, got, readGolden(t, g), tol)
	}
}
