package norm

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// sliceN returns images [lo, hi) of the batch t.
func sliceN(t *blob.Tensor, lo, hi int) *blob.Tensor {
	per := t.SizeFromDim(1)
	dims := t.Shape()
	dims[0] = hi - lo
	return convert(blob.MustFromSlice(t.AsFloat64s()[lo*per:hi*per], dims...), t.DataType())
}

func addT(a, b *blob.Tensor) *blob.Tensor {
	v, w := a.AsFloat64s(), b.AsFloat64s()
	for i := range v {
		v[i] += w[i]
	}
	return convert(blob.MustFromSlice(v, a.Shape()...), a.DataType())
}

// TestMultiBatchSpatialBN is data-parallel batch normalization over two
// devices as Caffe2's data_parallel_model builds it: ChannelStats per
// device, the sums added, SpatialBN with num_batches = 2; and in the
// backward pass ChannelBackpropStats per device, the sums added,
// SpatialBNGradient with num_batches = 2. Each device's output and input
// gradient must equal that half of single-device batch normalization over
// the whole batch; the statistics must be the whole batch's.
func TestMultiBatchSpatialBN(t *testing.T) {
	r := newRand(3)
	for _, order := range []string{"NCHW", "NHWC"} {
		ord := argStr("order", order)
		x, dy := randT(r, blob.Float64, -1, 3, 4, 3, 2, 5), randT(r, blob.Float64, -1, 1, 4, 3, 2, 5)
		c := 3
		if order == "NHWC" {
			c = 5
		}
		scale, bias := randT(r, blob.Float64, 0.5, 1.5, c), randT(r, blob.Float64, -1, 1, c)
		rm, rv := randT(r, blob.Float64, -1, 1, c), randT(r, blob.Float64, 0.5, 2, c)
		bnIn := []string{"X", "s", "b", "rm", "rv"}
		bnOut := []string{"Y", "rm", "rv", "sm", "siv"}
		full := optest.MustRunOp(t, op("SpatialBN", bnIn, bnOut, ord), x, scale, bias, rm, rv)
		fullGrad := optest.MustRunOp(t, op("SpatialBNGradient", []string{"X", "s", "dY", "sm", "siv"}, []string{"dX", "ds", "db"}, ord),
			x, scale, dy, full[3], full[4])

		halves := [2][2]int{{0, 2}, {2, 4}}
		var sums, sumsq, dss, dbs *blob.Tensor
		for _, h := range halves {
			st := optest.MustRunOp(t, op("ChannelStats", []string{"X"}, []string{"sum", "sumsq"}, ord), sliceN(x, h[0], h[1]))
			if sums == nil {
				sums, sumsq = st[0], st[1]
			} else {
				sums, sumsq = addT(sums, st[0]), addT(sumsq, st[1])
			}
		}
		expectTensor(t, order+" ChannelStats sum = count·mean", sums, scaleT(full[3], float64(x.Size()/c)), 1e-12)
		for i, h := range halves {
			xs, dys := sliceN(x, h[0], h[1]), sliceN(dy, h[0], h[1])
			dev := optest.MustRunOp(t, op("SpatialBN", append(bnIn, "sums", "sumsq"), bnOut, ord, argInt("num_batches", 2)),
				xs, scale, bias, rm, rv, sums, sumsq)
			expectTensor(t, order+" device Y", dev[0], sliceN(full[0], h[0], h[1]), 1e-12)
			for k := 1; k < 5; k++ {
				expectTensor(t, order+" device statistic", dev[k], full[k], 1e-12)
			}
			bs := optest.MustRunOp(t, op("ChannelBackpropStats", []string{"X", "m", "r", "dY"}, []string{"ds", "db"}, ord), xs, dev[3], dev[4], dys)
			if i == 0 {
				dss, dbs = bs[0], bs[1]
			} else {
				dss, dbs = addT(dss, bs[0]), addT(dbs, bs[1])
			}
		}
		expectTensor(t, order+" ChannelBackpropStats scale", dss, fullGrad[1], 1e-12)
		expectTensor(t, order+" ChannelBackpropStats bias", dbs, fullGrad[2], 1e-12)
		for _, h := range halves {
			// The summed gradients are input and output in place, as the
			// gradient maker emits them.
			g := optest.MustRunOp(t, op("SpatialBNGradient", []string{"X", "s", "dY", "sm", "siv", "s_grad", "b_grad"}, []string{"dX", "s_grad", "b_grad"}, ord, argInt("num_batches", 2)),
				sliceN(x, h[0], h[1]), scale, sliceN(dy, h[0], h[1]), full[3], full[4], dss, dbs)
			expectTensor(t, order+" device dX", g[0], sliceN(fullGrad[0], h[0], h[1]), 1e-12)
			expectTensor(t, order+" device dscale", g[1], scaleT(fullGrad[1], 0.5), 1e-12)
			expectTensor(t, order+" device dbias", g[2], scaleT(fullGrad[2], 0.5), 1e-12)
		}
	}
}

func scaleT(t *blob.Tensor, f float64) *blob.Tensor {
	v := t.AsFloat64s()
	for i := range v {
		v[i] *= f
	}
	return convert(blob.MustFromSlice(v, t.Shape()...), t.DataType())
}

// TestChannelStatsValues checks ChannelStats and ChannelBackpropStats
// against sums written out by hand.
func TestChannelStatsValues(t *testing.T) {
	// X [2, 2, 1, 2] NCHW: channel 0 holds 1, 2 (image 0) and 5, 6 (image 1).
	x := optest.F32([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 1, 2)
	out := optest.MustRunOp(t, op("ChannelStats", []string{"X"}, []string{"s", "s2"}), x)
	expectTensor(t, "sum", out[0], optest.F32([]float64{14, 22}, 2), 0)
	expectTensor(t, "sumsq", out[1], optest.F32([]float64{1 + 4 + 25 + 36, 9 + 16 + 49 + 64}, 2), 0)
	dy := optest.F32([]float64{1, -1, 2, 0, 1, 1, -1, 3}, 2, 2, 1, 2)
	mean, rstd := optest.F32([]float64{3, 5}, 2), optest.F32([]float64{0.5, 2}, 2)
	out = optest.MustRunOp(t, op("ChannelBackpropStats", []string{"X", "m", "r", "dY"}, []string{"ds", "db"}), x, mean, rstd, dy)
	// channel 0: dy·(x−3) = 1·(−2) − 1·(−1) + 1·2 + 1·3 = 4; channel 1: 2·(−2) + 0 − 1·2 + 3·3 = 3.
	expectTensor(t, "scale_grad", out[0], optest.F32([]float64{4 * 0.5, 3 * 2}, 2), 0)
	expectTensor(t, "bias_grad", out[1], optest.F32([]float64{2, 4}, 2), 0)
}

// TestSpatialBNEdgeCases covers running statistics that are not yet
// initialized, in-place use, an empty batch and the values by hand.
func TestSpatialBNEdgeCases(t *testing.T) {
	// One channel, values 1, 3: mean 2, biased variance 1.
	x := optest.F32([]float64{1, 3}, 1, 1, 2)
	one, zero := optest.F32([]float64{1}, 1), optest.F32([]float64{0}, 1)
	empty := optest.F32(nil, 0)
	out := optest.MustRunOp(t, op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"X", "rm", "rv", "sm", "siv"}, argFloat("epsilon", 1e-3), argFloat("momentum", 0.75)),
		x, one, zero, empty, empty)
	r := 1 / sqrtf(1+1e-3)
	expectTensor(t, "Y in place", out[0], optest.F32([]float64{-r, r}, 1, 1, 2), 1e-6)
	expectTensor(t, "running mean from zeros", out[1], optest.F32([]float64{0.25 * 2}, 1), 1e-7)
	expectTensor(t, "running var from zeros", out[2], optest.F32([]float64{0.25 * 1}, 1), 1e-7)
	expectTensor(t, "saved mean", out[3], optest.F32([]float64{2}, 1), 0)
	expectTensor(t, "saved inv var", out[4], optest.F32([]float64{r}, 1), 1e-7)

	nothing := optest.F32(nil, 0, 2, 3)
	two := optest.F32([]float64{1, 1}, 2)
	out = optest.MustRunOp(t, op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"Y", "rm", "rv", "sm", "siv"}), nothing, two, two, two, two)
	expectTensor(t, "empty Y", out[0], nothing, 0)
	expectTensor(t, "empty batch saved mean", out[3], optest.F32([]float64{0, 0}, 2), 0)
	expectTensor(t, "empty batch running mean untouched", out[1], two, 0)
	out = optest.MustRunOp(t, op("SpatialBNGradient", []string{"X", "s", "dY", "sm", "siv"}, []string{"dX", "ds", "db"}), nothing, two, nothing, two, two)
	expectTensor(t, "empty dX", out[0], nothing, 0)
	expectTensor(t, "empty batch dscale", out[1], optest.F32([]float64{0, 0}, 2), 0)
	out = optest.MustRunOp(t, op("SpatialBN", []string{"X", "s", "b", "m", "v"}, []string{"Y"}, argInt("is_test", 1)), nothing, two, two, two, two)
	expectTensor(t, "empty test Y", out[0], nothing, 0)
}

// TestErrors checks that bad arguments, shapes and types are errors that
// name the problem, never panics.
func TestErrors(t *testing.T) {
	r := newRand(5)
	x := randT(r, blob.Float32, -1, 1, 2, 3, 2, 2)
	c3, c2 := randT(r, blob.Float32, 0.5, 1, 3), randT(r, blob.Float32, 0.5, 1, 2)
	c3d := randT(r, blob.Float64, 0.5, 1, 3)
	ints := blob.MustFromSlice([]int32{1, 2, 3}, 3)
	bnIn := []string{"X", "s", "b", "m", "v"}
	bnOut := []string{"Y", "m", "v", "sm", "siv"}
	test := argInt("is_test", 1)
	cases := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		frag   string
	}{
		{"order", op("SpatialBN", bnIn, []string{"Y"}, test, argStr("order", "NCWH")), []*blob.Tensor{x, c3, c3, c3, c3}, "order"},
		{"test outputs", op("SpatialBN", bnIn, bnOut, test), []*blob.Tensor{x, c3, c3, c3, c3}, "1 output"},
		{"training outputs", op("SpatialBN", bnIn, []string{"Y"}), []*blob.Tensor{x, c3, c3, c3, c3}, "5 outputs"},
		{"epsilon", op("SpatialBN", bnIn, bnOut, argFloat("epsilon", 0)), []*blob.Tensor{x, c3, c3, c3, c3}, "epsilon"},
		{"momentum", op("SpatialBN", bnIn, bnOut, argFloat("momentum", 1.5)), []*blob.Tensor{x, c3, c3, c3, c3}, "momentum"},
		{"num_batches", op("SpatialBN", bnIn, bnOut, argInt("num_batches", 2)), []*blob.Tensor{x, c3, c3, c3, c3}, "sums"},
		{"not in place", op("SpatialBN", bnIn, []string{"Y", "m2", "v", "sm", "siv"}), []*blob.Tensor{x, c3, c3, c3, c3}, "same blob"},
		{"2-D X", op("SpatialBN", bnIn, []string{"Y"}, test), []*blob.Tensor{c3, c3, c3, c3, c3}, "at least 3 dimensions"},
		{"scale size", op("SpatialBN", bnIn, []string{"Y"}, test), []*blob.Tensor{x, c2, c3, c3, c3}, "want 3 elements"},
		{"scale type", op("SpatialBN", bnIn, []string{"Y"}, test), []*blob.Tensor{x, c3d, c3, c3, c3}, "type"},
		{"X type", op("SpatialBN", bnIn, []string{"Y"}, test), []*blob.Tensor{ints, c3, c3, c3, c3}, "FLOAT or DOUBLE"},
		{"var size", op("SpatialBN", bnIn, []string{"Y"}, test), []*blob.Tensor{x, c3, c3, c3, c2}, "want 3 elements"},
		{"running mean type", op("SpatialBN", bnIn, bnOut), []*blob.Tensor{x, c3, c3, c3d, c3}, "type"},
		{"gradient dY size", op("SpatialBNGradient", []string{"X", "s", "dY", "m", "r"}, []string{"dX", "ds", "db"}), []*blob.Tensor{x, c3, c3, c3, c3}, "want 24 elements"},
		{"gradient num_batches", op("SpatialBNGradient", []string{"X", "s", "dY", "m", "r"}, []string{"dX", "ds", "db"}, argInt("num_batches", 2)), []*blob.Tensor{x, c3, x, c3, c3}, "7 inputs"},
		{"ChannelStats 2-D", op("ChannelStats", []string{"X"}, []string{"s", "s2"}), []*blob.Tensor{c3}, "at least 3"},
		{"ChannelBackpropStats mean", op("ChannelBackpropStats", []string{"X", "m", "r", "dY"}, []string{"s", "b"}), []*blob.Tensor{x, c2, c3, x}, "want 3 elements"},
		{"InstanceNorm epsilon", op("InstanceNorm", []string{"X", "s", "b"}, []string{"Y"}, argFloat("epsilon", -1)), []*blob.Tensor{x, c3, c3}, "epsilon"},
		{"InstanceNorm 1-D", op("InstanceNorm", []string{"X", "s", "b"}, []string{"Y"}), []*blob.Tensor{c3, c3, c3}, "at least 2"},
		{"InstanceNorm bias", op("InstanceNorm", []string{"X", "s", "b"}, []string{"Y"}), []*blob.Tensor{x, c3, c2}, "want 3 elements"},
		{"InstanceNormGradient mean", op("InstanceNormGradient", []string{"X", "s", "b", "dY", "m", "r"}, []string{"dX", "ds", "db"}), []*blob.Tensor{x, c3, c3, x, c3, c3}, "want 6 elements"},
		{"GroupNorm group", op("GroupNorm", []string{"X", "g", "b"}, []string{"Y"}, argInt("group", 2)), []*blob.Tensor{x, c3, c3}, "multiple of group"},
		{"GroupNorm group 0", op("GroupNorm", []string{"X", "g", "b"}, []string{"Y"}, argInt("group", 0)), []*blob.Tensor{x, c3, c3}, "positive"},
		{"GroupNorm 2 outputs", op("GroupNorm", []string{"X", "g", "b"}, []string{"Y", "m"}, argInt("group", 3)), []*blob.Tensor{x, c3, c3}, "1 or 3 outputs"},
		{"GroupNorm training outputs", op("GroupNorm", []string{"X", "g", "b"}, []string{"Y"}, argInt("group", 3), argInt("is_test", 0)), []*blob.Tensor{x, c3, c3}, "3 outputs"},
		{"GroupNormGradient statistics", op("GroupNormGradient", []string{"dY", "X", "g", "b", "m", "r"}, []string{"dX", "dg", "db"}, argInt("group", 3)), []*blob.Tensor{x, x, c3, c3, c3, c2}, "want 6 elements"},
		{"LayerNorm 1-D", op("LayerNorm", []string{"X"}, []string{"Y", "m", "s"}), []*blob.Tensor{c3}, "at least 2"},
		{"LayerNorm axis", op("LayerNorm", []string{"X"}, []string{"Y", "m", "s"}, argInt("axis", 4)), []*blob.Tensor{x}, "out of range"},
		{"LayerNorm affine inputs", op("LayerNorm", []string{"X"}, []string{"Y", "m", "s"}, argInt("elementwise_affine", 1)), []*blob.Tensor{x}, "3 inputs"},
		{"LayerNorm gamma", op("LayerNorm", []string{"X", "g", "b"}, []string{"Y", "m", "s"}, argInt("elementwise_affine", 1)), []*blob.Tensor{x, c3, c3}, "want 12 elements"},
		{"LayerNormGradient std", op("LayerNormGradient", []string{"dY", "Y", "m", "s", "X"}, []string{"dX"}), []*blob.Tensor{x, x, c2, c3, x}, "want 2 elements"},
		{"LayerNormGradient affine", op("LayerNormGradient", []string{"dY", "Y", "m", "s", "X"}, []string{"dX"}, argInt("elementwise_affine", 1)), []*blob.Tensor{x, x, c2, c2, x}, "6 inputs"},
		{"LRN size", op("LRN", []string{"X"}, []string{"Y"}), []*blob.Tensor{x}, "size"},
		{"LRN 3-D", op("LRN", []string{"X"}, []string{"Y"}, argInt("size", 3)), []*blob.Tensor{randT(r, blob.Float32, 0, 1, 2, 3, 4)}, "4-D"},
		{"LRNGradient Y", op("LRNGradient", []string{"X", "Y", "dY"}, []string{"dX"}, argInt("size", 3)), []*blob.Tensor{x, c3, x}, "want 24 elements"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := optest.RunOp(c.def, c.inputs...)
			if err == nil || !strings.Contains(err.Error(), c.frag) {
				t.Errorf("error %v, want one containing %q", err, c.frag)
			}
		})
	}
}

// TestEmptyTensors runs every operator on batches with no images, no
// channels or no spatial positions. (NHWC rows of no channels once looped
// forever, stepping through them by C = 0.)
func TestEmptyTensors(t *testing.T) {
	for _, shape := range [][]int{{0, 2, 2, 3}, {2, 0, 2, 3}, {2, 3, 0, 2}, {2, 2, 3, 0}} {
		for _, order := range []string{"NCHW", "NHWC"} {
			ord := argStr("order", order)
			x := optest.F32(nil, shape...)
			c := shape[1]
			if order == "NHWC" {
				c = shape[3]
			}
			n := shape[0]
			vc, vnc := optest.F32(make([]float64, c), c), optest.F32(make([]float64, n*c), n, c)
			for _, def := range []struct {
				def    *netdef.OperatorDef
				inputs []*blob.Tensor
			}{
				{op("SpatialBN", []string{"X", "s", "b", "m", "v"}, []string{"Y", "m", "v", "sm", "siv"}, ord), []*blob.Tensor{x, vc, vc, vc, vc}},
				{op("SpatialBNGradient", []string{"X", "s", "dY", "m", "v"}, []string{"dX", "ds", "db"}, ord), []*blob.Tensor{x, vc, x, vc, vc}},
				{op("ChannelStats", []string{"X"}, []string{"s", "s2"}, ord), []*blob.Tensor{x}},
				{op("ChannelBackpropStats", []string{"X", "m", "r", "dY"}, []string{"s", "b"}, ord), []*blob.Tensor{x, vc, vc, x}},
				{op("GroupNormGradient", []string{"dY", "X", "g", "b", "m", "r"}, []string{"dX", "dg", "db"}, ord, argInt("group", 1)), []*blob.Tensor{x, x, vc, vc, optest.F32(make([]float64, n), n, 1), optest.F32(make([]float64, n), n, 1)}},
				{op("InstanceNorm", []string{"X", "s", "b"}, []string{"Y", "m", "r"}, ord), []*blob.Tensor{x, vc, vc}},
				{op("InstanceNormGradient", []string{"X", "s", "b", "dY", "m", "r"}, []string{"dX", "ds", "db"}, ord), []*blob.Tensor{x, vc, vc, x, vnc, vnc}},
				{op("InstanceNormGradient", []string{"X", "s", "b", "dY"}, []string{"dX", "ds", "db"}, ord), []*blob.Tensor{x, vc, vc, x}},
				{op("GroupNorm", []string{"X", "g", "b"}, []string{"Y", "m", "r"}, ord, argInt("group", 1)), []*blob.Tensor{x, vc, vc}},
				{op("LRN", []string{"X"}, []string{"Y", "s"}, ord, argInt("size", 3)), []*blob.Tensor{x}},
				{op("LRNGradient", []string{"X", "Y", "dY"}, []string{"dX"}, ord, argInt("size", 3)), []*blob.Tensor{x, x, x}},
				{op("LayerNorm", []string{"X"}, []string{"Y", "m", "s"}), []*blob.Tensor{x}},
				{op("LayerNormGradient", []string{"dY", "Y", "m", "s", "X"}, []string{"dX"}), []*blob.Tensor{x, x, vnc.Clone(), vnc, x}},
			} {
				if def.def.GetType() == "LayerNormGradient" {
					def.inputs[2] = optest.F32(make([]float64, n), n, 1)
					def.inputs[3] = def.inputs[2]
				}
				out, err := optest.RunOp(def.def, def.inputs...)
				if err != nil {
					t.Errorf("%s %s %v: %v", def.def.GetType(), order, shape, err)
					continue
				}
				if typ := def.def.GetType(); out[0].Size() != 0 && typ != "ChannelStats" && typ != "ChannelBackpropStats" {
					t.Errorf("%s %s %v: output of shape %v", def.def.GetType(), order, shape, out[0].Dims())
				}
			}
		}
	}
}

// TestEmptyWithHugeDims runs the operators on batches with no elements but
// 2^31 images or channels beside the 0: each must finish at once, with an
// empty result or an error (over the memory budget where its scratch or
// outputs would be sized by the huge dim), never looping over the empty
// planes or allocating for them.
func TestEmptyWithHugeDims(t *testing.T) {
	old := blob.SetMemoryBudget(64 << 20)
	defer blob.SetMemoryBudget(old)
	for _, tc := range []struct {
		shape []int
		order string
	}{
		{[]int{1 << 31, 3, 0, 2}, "NCHW"},
		{[]int{1 << 31, 3, 2, 0}, "NHWC"},
		{[]int{1 << 31, 0, 2, 2}, "NCHW"},
		{[]int{4, 3, 0, 1 << 40}, "NCHW"},
	} {
		x := optest.F32(nil, tc.shape...)
		c := tc.shape[1]
		if tc.order == "NHWC" {
			c = tc.shape[3]
		}
		vc := optest.F32(make([]float64, c), c)
		ord := argStr("order", tc.order)
		for _, def := range []struct {
			def    *netdef.OperatorDef
			inputs []*blob.Tensor
		}{
			{op("SpatialBN", []string{"X", "s", "b", "m", "v"}, []string{"Y", "m", "v", "sm", "siv"}, ord), []*blob.Tensor{x, vc, vc, vc, vc}},
			{op("SpatialBN", []string{"X", "s", "b", "m", "v"}, []string{"Y"}, ord, argInt("is_test", 1)), []*blob.Tensor{x, vc, vc, vc, vc}},
			{op("SpatialBNGradient", []string{"X", "s", "dY", "m", "v"}, []string{"dX", "ds", "db"}, ord), []*blob.Tensor{x, vc, x, vc, vc}},
			{op("ChannelStats", []string{"X"}, []string{"s", "s2"}, ord), []*blob.Tensor{x}},
			{op("ChannelBackpropStats", []string{"X", "m", "r", "dY"}, []string{"s", "b"}, ord), []*blob.Tensor{x, vc, vc, x}},
			{op("GroupNorm", []string{"X", "g", "b"}, []string{"Y"}, ord, argInt("group", 1)), []*blob.Tensor{x, vc, vc}},
			{op("InstanceNorm", []string{"X", "s", "b"}, []string{"Y"}, ord), []*blob.Tensor{x, vc, vc}},
			{op("InstanceNormGradient", []string{"X", "s", "b", "dY"}, []string{"dX", "ds", "db"}, ord), []*blob.Tensor{x, vc, vc, x}},
			{op("LRN", []string{"X"}, []string{"Y", "s"}, ord, argInt("size", 3)), []*blob.Tensor{x}},
			{op("LRNGradient", []string{"X", "Y", "dY"}, []string{"dX"}, ord, argInt("size", 3)), []*blob.Tensor{x, x, x}},
			{op("LayerNorm", []string{"X"}, []string{"Y", "m", "s"}), []*blob.Tensor{x}},
		} {
			done := make(chan error, 1)
			go func() {
				_, err := optest.RunOp(def.def, def.inputs...)
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil && (!errors.Is(err, blob.ErrOverBudget) || strings.Contains(err.Error(), "panic")) {
					t.Errorf("%s %s %v: %v", def.def.GetType(), tc.order, tc.shape, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s %s %v: still running after 10s", def.def.GetType(), tc.order, tc.shape)
			}
		}
	}
}
