package detect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

//go:generate /usr/bin/python3 testdata/gen_detect.py

// golden reads testdata/golden/name.npy, written by testdata/gen_detect.py.
func golden(t testing.TB, name string) *blob.Tensor {
	t.Helper()
	g, err := optest.ReadNPY(filepath.Join("testdata", "golden", name+".npy"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// f32 converts a golden tensor to float32.
func f32(t *blob.Tensor) *blob.Tensor { return optest.F32(t.AsFloat64s(), t.Shape()...) }

// check fails t unless got has want's shape, the type and (within tol)
// its values.
func check(t *testing.T, what string, got *blob.Tensor, dtype blob.DataType, want *blob.Tensor, tol float64) {
	t.Helper()
	if got.DataType() != dtype || !slices.Equal(got.Dims(), want.Dims()) {
		t.Fatalf("%s: %v %v, want %v %v", what, got.DataType(), got.Dims(), dtype, want.Dims())
	}
	optest.CheckClose(t, what, got.AsFloat64s(), want.AsFloat64s(), tol)
}

func op(typ string, in, out string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(typ, strings.Fields(in), strings.Fields(out), args...)
}

var (
	ai = netdef.ArgInt
	af = netdef.ArgFloat
)

// nhwc permutes an NCHW tensor to NHWC.
func nhwc(x *blob.Tensor) *blob.Tensor {
	d := x.Dims()
	v := x.AsFloat64s()
	out := make([]float64, len(v))
	n, c, h, w := d[0], d[1], d[2], d[3]
	for a := range n {
		for k := range c {
			for i := range h {
				for j := range w {
					out[((a*h+i)*w+j)*c+k] = v[((a*c+k)*h+i)*w+j]
				}
			}
		}
	}
	return optest.F32(out, n, h, w, c)
}

// TestRoIAlignGolden compares RoIAlign with the NumPy reference in both
// orders, with adaptive and fixed sampling, aligned or not, and RoIs with
// and without the batch column.
func TestRoIAlignGolden(t *testing.T) {
	x, r := f32(golden(t, "roialign_x")), f32(golden(t, "roialign_r"))
	x0 := optest.F32(x.AsFloat64s()[:x.SizeFromDim(1)], append([]int{1}, x.Dims()[1:]...)...)
	for _, c := range []struct {
		name   string
		x, r   *blob.Tensor
		args   []*netdef.Argument
		golden string
	}{
		{"adaptive", x, r, []*netdef.Argument{ai("pooled_h", 2), ai("pooled_w", 3)}, "roialign_y"},
		{"scaled ratio 2", x, r, []*netdef.Argument{ai("pooled_h", 3), ai("pooled_w", 2), af("spatial_scale", 0.5), ai("sampling_ratio", 2)}, "roialign_y_s2"},
		{"aligned", x, r, []*netdef.Argument{ai("pooled_h", 2), ai("pooled_w", 2), ai("sampling_ratio", 0), netdef.ArgBool("aligned", true)}, "roialign_y_aligned"},
		{"4 columns", x0, f32(golden(t, "roialign_r4")), []*netdef.Argument{ai("pooled_h", 2), ai("pooled_w", 3)}, "roialign_y4"},
	} {
		want := golden(t, c.golden)
		y := optest.MustRunOp(t, op("RoIAlign", "X R", "Y", c.args...), c.x, c.r)[0]
		check(t, c.name, y, blob.Float32, want, 1e-5)
		yn := optest.MustRunOp(t, op("RoIAlign", "X R", "Y", append(c.args, netdef.ArgString("order", "NHWC"))...), nhwc(c.x), c.r)[0]
		check(t, c.name+" NHWC", yn, blob.Float32, nhwc(want), 1e-5)
	}
	empty := optest.MustRunOp(t, op("RoIAlign", "X R", "Y", ai("pooled_h", 2)), x, optest.F32(nil, 0, 5))[0]
	if !slices.Equal(empty.Dims(), []int{0, 3, 2, 1}) {
		t.Errorf("no RoIs: Y is %v", empty.Dims())
	}
}

// TestRoIPoolGolden compares RoIPool's maxima and argmaxes with the NumPy
// reference, including an empty bin (outside the map) and a one-pixel RoI
// at half-pixel coordinates (rounded away from 0).
func TestRoIPoolGolden(t *testing.T) {
	x, r := f32(golden(t, "roialign_x")), f32(golden(t, "roipool_r"))
	for _, c := range []struct {
		args []*netdef.Argument
		sfx  string
	}{
		{[]*netdef.Argument{ai("pooled_h", 2), ai("pooled_w", 3)}, ""},
		{[]*netdef.Argument{ai("pooled_h", 3), ai("pooled_w", 2), af("spatial_scale", 0.5)}, "_s"},
	} {
		out := optest.MustRunOp(t, op("RoIPool", "X R", "Y A", c.args...), x, r)
		check(t, "Y"+c.sfx, out[0], blob.Float32, golden(t, "roipool_y"+c.sfx), 0)
		check(t, "argmaxes"+c.sfx, out[1], blob.Int32, golden(t, "roipool_argmax"+c.sfx), 0)
		test := optest.MustRunOp(t, op("RoIPool", "X R", "Y", append(c.args, ai("is_test", 1))...), x, r)
		check(t, "is_test Y"+c.sfx, test[0], blob.Float32, golden(t, "roipool_y"+c.sfx), 0)
	}
}

// TestBBoxTransformGolden compares BBoxTransform with the NumPy reference:
// two images, four classes, a delta past the log-scale clip, and weights
// without rescaling or the legacy plus-one.
func TestBBoxTransformGolden(t *testing.T) {
	rois, deltas, info := f32(golden(t, "bbox_rois")), f32(golden(t, "bbox_deltas")), f32(golden(t, "bbox_info"))
	out := optest.MustRunOp(t, op("BBoxTransform", "rois deltas im_info", "box splits"), rois, deltas, info)
	check(t, "boxes", out[0], blob.Float32, golden(t, "bbox_out"), 1e-4)
	check(t, "splits", out[1], blob.Float32, golden(t, "bbox_splits"), 0)
	w := op("BBoxTransform", "rois deltas im_info", "box", netdef.ArgFloats("weights", 10, 10, 5, 5),
		netdef.ArgBool("apply_scale", false), netdef.ArgBool("legacy_plus_one", false))
	check(t, "weighted", optest.MustRunOp(t, w, rois, deltas, info)[0], blob.Float32, golden(t, "bbox_out_w"), 1e-4)
}

// TestBBoxTransformRotated checks a hand-worked rotated box: centre moved
// by dx·w, size scaled by e^dw, angle moved by da (radians) and wrapped
// into [−90, 90].
func TestBBoxTransformRotated(t *testing.T) {
	rois := optest.F32([]float64{20, 30, 10, 8, 80}, 1, 5)
	deltas := optest.F32([]float64{0.1, -0.5, 0, 0.6931472, 0.5235988}, 1, 5)
	info := optest.F32([]float64{100, 100, 1}, 1, 3)
	y := optest.MustRunOp(t, op("BBoxTransform", "rois deltas im_info", "box", netdef.ArgBool("rotated", true)), rois, deltas, info)[0]
	optest.CheckClose(t, "rotated", y.AsFloat64s(), []float64{21, 26, 10, 16, -70}, 1e-4)
}

// TestBoxWithNMSLimitGolden compares per-class NMS over two images (batch
// splits), with and without the per-image limit, with the NumPy reference.
func TestBoxWithNMSLimitGolden(t *testing.T) {
	scores, boxes := f32(golden(t, "nms_scores")), f32(golden(t, "nms_boxes"))
	splits := blob.MustFromSlice([]float32{12, 18}, 2)
	for _, c := range []struct {
		name string
		dpi  int64
	}{{"nms", 100}, {"nms_limit", 7}} {
		def := op("BoxWithNMSLimit", "scores boxes splits", "s b c sp k ks", ai("detections_per_im", c.dpi))
		out := optest.MustRunOp(t, def, scores, boxes, splits)
		for i, q := range []string{"scores", "boxes", "classes", "splits", "keeps", "sizes"} {
			dt := blob.Float32
			if i >= 4 {
				dt = blob.Int32
			}
			want := golden(t, c.name+"_out_"+q)
			check(t, c.name+" "+q, out[i], dt, want, 1e-6)
		}
		split32 := blob.MustFromSlice([]int32{12, 18}, 2)
		again := optest.MustRunOp(t, op("BoxWithNMSLimit", "scores boxes splits", "s b c", ai("detections_per_im", c.dpi)), scores, boxes, split32)
		check(t, c.name+" int splits", again[1], blob.Float32, golden(t, c.name+"_out_boxes"), 1e-6)
	}
}

// TestSoftNMS checks Soft-NMS by hand: two overlapping boxes of one class
// (IoU 60/150 = 0.4 with the plus-one) and a far one; the linear method decays the
// second by 1 − IoU above the threshold.
func TestSoftNMS(t *testing.T) {
	scores := optest.F32([]float64{0, 0.9, 0, 0.8, 0, 0.7}, 3, 2)
	boxes := optest.F32([]float64{0, 0, 0, 0, 0, 0, 9, 9, 0, 0, 0, 0, 0, 4, 9, 14, 0, 0, 0, 0, 50, 50, 59, 59}, 3, 8)
	def := op("BoxWithNMSLimit", "scores boxes", "s b c", netdef.ArgBool("soft_nms_enabled", true), af("nms", 0.3))
	out := optest.MustRunOp(t, def, scores, boxes)
	optest.CheckClose(t, "soft scores", out[0].AsFloat64s(), []float64{0.9, 0.7, 0.8 * (1 - 0.4)}, 1e-6)
	gauss := op("BoxWithNMSLimit", "scores boxes", "s b c", netdef.ArgBool("soft_nms_enabled", true), netdef.ArgString("soft_nms_method", "gaussian"))
	out = optest.MustRunOp(t, gauss, scores, boxes)
	optest.CheckClose(t, "gaussian scores", out[0].AsFloat64s(), []float64{0.9, 0.7, 0.8 * 0.7261490}, 1e-5)
}

// TestGenerateProposalsGolden compares GenerateProposals with the NumPy
// reference over two images of different scales.
func TestGenerateProposalsGolden(t *testing.T) {
	def := op("GenerateProposals", "scores deltas info anchors", "rois probs", ai("pre_nms_topN", 30), ai("post_nms_topN", 10),
		af("nms_thresh", 0.5), af("min_size", 4))
	out := optest.MustRunOp(t, def, f32(golden(t, "gp_scores")), f32(golden(t, "gp_deltas")), f32(golden(t, "gp_info")), f32(golden(t, "gp_anchors")))
	check(t, "rois", out[0], blob.Float32, golden(t, "gp_rois"), 1e-4)
	check(t, "probs", out[1], blob.Float32, golden(t, "gp_probs"), 0)
}

// TestFpnGolden compares CollectAndDistributeFpnRpnProposals, and
// CollectRpnProposals followed by DistributeFpnProposals, with the NumPy
// reference.
func TestFpnGolden(t *testing.T) {
	var in []*blob.Tensor
	var names []string
	for l := range 5 {
		in = append(in, f32(golden(t, fmt.Sprintf("fpn_rois_in%d", l))))
		names = append(names, fmt.Sprintf("r%d", l))
	}
	for l := range 5 {
		in = append(in, f32(golden(t, fmt.Sprintf("fpn_scores_in%d", l))))
		names = append(names, fmt.Sprintf("s%d", l))
	}
	top := ai("rpn_post_nms_topN", 25)
	out := optest.MustRunOp(t, op("CollectAndDistributeFpnRpnProposals", strings.Join(names, " "), "rois l2 l3 l4 l5 restore", top), in...)
	check(t, "rois", out[0], blob.Float32, golden(t, "fpn_rois"), 0)
	for q := range 4 {
		check(t, fmt.Sprintf("level %d", q+2), out[q+1], blob.Float32, golden(t, fmt.Sprintf("fpn_rois_lvl%d", q)), 0)
	}
	check(t, "restore", out[5], blob.Int32, golden(t, "fpn_restore"), 0)

	rois := optest.MustRunOp(t, op("CollectRpnProposals", strings.Join(names, " "), "rois", top), in...)[0]
	check(t, "collected", rois, blob.Float32, golden(t, "fpn_rois"), 0)
	dist := optest.MustRunOp(t, op("DistributeFpnProposals", "rois", "l2 l3 l4 l5 restore"), rois)
	for q := range 4 {
		check(t, fmt.Sprintf("distributed level %d", q+2), dist[q], blob.Float32, golden(t, fmt.Sprintf("fpn_rois_lvl%d", q)), 0)
	}
	check(t, "distributed restore", dist[4], blob.Int32, golden(t, "fpn_restore"), 0)
}

// TestIntegralImageGolden compares IntegralImage and its gradient with
// NumPy's cumulative sums.
func TestIntegralImageGolden(t *testing.T) {
	x, dy := f32(golden(t, "integral_x")), f32(golden(t, "integral_dy"))
	check(t, "Y", optest.MustRunOp(t, op("IntegralImage", "X", "Y"), x)[0], blob.Float32, golden(t, "integral_y"), 1e-5)
	check(t, "dX", optest.MustRunOp(t, op("IntegralImageGradient", "X dY", "dX"), x, dy)[0], blob.Float32, golden(t, "integral_dx"), 1e-5)
}

// TestNumericGradients checks the differentiable operators against finite
// differences. The RoIs stay away from pixel boundaries where bilinear
// weights have kinks.
func TestNumericGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := func(shape ...int) *blob.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float64, n)
		for i := range v {
			v[i] = 2*r.Float64() - 1
		}
		return optest.F32(v, shape...)
	}
	rois := optest.F32([]float64{0, 0.3, 0.6, 4.1, 3.7, 1, 1.2, 0.4, 5.3, 4.9}, 2, 5)
	for _, c := range []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
	}{
		{"RoIAlign", op("RoIAlign", "X R", "Y", ai("pooled_h", 2), ai("pooled_w", 2)), []*blob.Tensor{x(2, 2, 6, 6), rois}},
		{"RoIAlign NHWC ratio", op("RoIAlign", "X R", "Y", ai("pooled_h", 2), ai("pooled_w", 3), ai("sampling_ratio", 2), netdef.ArgString("order", "NHWC")), []*blob.Tensor{x(2, 6, 6, 2), rois}},
		{"RoIAlign aligned", op("RoIAlign", "X R", "Y", ai("pooled_h", 2), ai("pooled_w", 2), netdef.ArgBool("aligned", true)), []*blob.Tensor{x(2, 2, 6, 6), rois}},
		{"RoIPool", op("RoIPool", "X R", "Y A", ai("pooled_h", 2), ai("pooled_w", 2)), []*blob.Tensor{x(2, 2, 6, 6), rois}},
		{"IntegralImage", op("IntegralImage", "X", "Y"), []*blob.Tensor{x(2, 2, 3, 4)}},
	} {
		cfg := optest.GradientCheck{}
		if c.def.GetType() == "RoIPool" {
			cfg.OutputsWithGrad = []int{0}
		}
		if _, err := optest.CheckGradient(c.def, c.in, 0, cfg); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestErrors(t *testing.T) {
	x := optest.F32(make([]float64, 2*2*4*4), 2, 2, 4, 4)
	for _, c := range []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
		frag string
	}{
		{"batch index", op("RoIAlign", "X R", "Y"), []*blob.Tensor{x, optest.F32([]float64{2, 0, 0, 1, 1}, 1, 5)}, "batch index"},
		{"RoI columns", op("RoIAlign", "X R", "Y"), []*blob.Tensor{x, optest.F32([]float64{0, 0, 1}, 1, 3)}, "want (R,"},
		{"NaN RoI", op("RoIAlign", "X R", "Y"), []*blob.Tensor{x, optest.F32([]float64{0, 0, 0, 1, nan()}, 1, 5)}, "not finite"},
		{"aligned negative RoI", op("RoIAlign", "X R", "Y", netdef.ArgBool("aligned", true)), []*blob.Tensor{x, optest.F32([]float64{0, 2, 2, 1, 3}, 1, 5)}, "negative size"},
		{"huge RoI", op("RoIAlign", "X R", "Y"), []*blob.Tensor{x, optest.F32([]float64{0, 0, 0, 1e9, 1e9}, 1, 5)}, "more than"},
		{"RoIPool columns", op("RoIPool", "X R", "Y A"), []*blob.Tensor{x, optest.F32([]float64{0, 0, 1, 1}, 1, 4)}, "want (R,"},
		{"RoIPool far", op("RoIPool", "X R", "Y A"), []*blob.Tensor{x, optest.F32([]float64{0, 0, 0, 1e10, 1}, 1, 5)}, "out of range"},
		{"deltas", op("BBoxTransform", "r d i", "b"), []*blob.Tensor{optest.F32(make([]float64, 4), 1, 4), optest.F32(make([]float64, 3), 1, 3), optest.F32([]float64{10, 10, 1}, 1, 3)}, "want (1, 4·K)"},
		{"splits", op("BoxWithNMSLimit", "s b n", "os ob oc"), []*blob.Tensor{optest.F32(make([]float64, 4), 2, 2), optest.F32(make([]float64, 16), 2, 8), blob.MustFromSlice([]float32{1, 2}, 2)}, "do not sum"},
		{"anchors", op("GenerateProposals", "s d i a", "r p"), []*blob.Tensor{optest.F32(make([]float64, 4), 1, 1, 2, 2), optest.F32(make([]float64, 16), 1, 4, 2, 2), optest.F32([]float64{10, 10, 1}, 1, 3), optest.F32(make([]float64, 5), 1, 5)}, "want [1 5 2 2]"},
		{"integral gradient", op("IntegralImageGradient", "X dY", "dX"), []*blob.Tensor{x, x}, "IntegralImage of X"},
	} {
		if _, err := optest.RunOp(c.def, c.in...); err == nil || !strings.Contains(err.Error(), c.frag) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.frag)
		}
	}
	for _, def := range []*netdef.OperatorDef{
		op("RoIPool", "X R", "Y"),
		op("BoxWithNMSLimit", "s b", "s b c", netdef.ArgString("soft_nms_method", "cubic")),
		op("CollectAndDistributeFpnRpnProposals", "a b", "c d e"),
		op("BBoxTransform", "r d i", "b", netdef.ArgFloats("weights", 1, 2)),
	} {
		if _, err := optest.RunOp(def); err == nil {
			t.Errorf("%s %v: no error", def.GetType(), def.Arg)
		}
	}
}

func nan() float64 { return math.NaN() }

// TestGradientDefs checks the gradient operators the makers emit, which
// are Caffe2's.
func TestGradientDefs(t *testing.T) {
	ph := ai("pooled_h", 2)
	for _, c := range []struct {
		def  *netdef.OperatorDef
		want *netdef.OperatorDef
	}{
		{op("RoIAlign", "X R", "Y", ph), optest.GradOp("RoIAlignGradient", []string{"X", "R", "Y_grad"}, []string{"X_grad"}, ph)},
		{op("RoIPool", "X R", "Y A", ph), optest.GradOp("RoIPoolGradient", []string{"X", "R", "A", "Y_grad"}, []string{"X_grad"}, ph)},
		{op("IntegralImage", "X", "Y"), optest.GradOp("IntegralImageGradient", []string{"X", "Y_grad"}, []string{"X_grad"})},
	} {
		gd, err := operators.GetGradientDefs(c.def, []operators.Gradient{operators.Dense(c.def.Output[0] + "_grad"), {}}[:len(c.def.Output)])
		if err != nil {
			t.Fatal(err)
		}
		if len(gd.Ops) != 1 || !proto.Equal(optest.SortedArgs(gd.Ops[0]), optest.SortedArgs(c.want)) {
			t.Errorf("%s: gradient operators %v, want %v", c.def.GetType(), gd.Ops, c.want)
		}
	}
	for _, typ := range []string{"BBoxTransform", "BoxWithNMSLimit", "GenerateProposals", "CollectAndDistributeFpnRpnProposals"} {
		def := op(typ, "a b c", "y")
		if gd, err := operators.GetGradientDefs(def, []operators.Gradient{operators.Dense("y_grad")}); err != nil || len(gd.Ops) != 0 {
			t.Errorf("%s: gradient operators %v, %v; Caffe2 has none", typ, gd, err)
		}
	}
}

// TestRotatedGolden compares the rotated BoxWithNMSLimit and
// GenerateProposals with the NumPy reference, whose overlaps come from
// Sutherland-Hodgman polygon clipping.
func TestRotatedGolden(t *testing.T) {
	def := op("BoxWithNMSLimit", "scores boxes", "s b c", netdef.ArgBool("rotated", true))
	out := optest.MustRunOp(t, def, f32(golden(t, "rot_scores")), f32(golden(t, "rot_boxes")))
	check(t, "rotated scores", out[0], blob.Float32, golden(t, "rot_out_scores"), 0)
	check(t, "rotated boxes", out[1], blob.Float32, golden(t, "rot_out_boxes"), 1e-6)
	check(t, "rotated classes", out[2], blob.Float32, golden(t, "rot_out_classes"), 0)

	gp := op("GenerateProposals", "scores deltas info anchors", "rois probs", ai("pre_nms_topN", 20), ai("post_nms_topN", 8),
		af("nms_thresh", 0.4), af("min_size", 2))
	res := optest.MustRunOp(t, gp, f32(golden(t, "gr_scores")), f32(golden(t, "gr_deltas")), f32(golden(t, "gr_info")), f32(golden(t, "gr_anchors")))
	check(t, "rotated rois", res[0], blob.Float32, golden(t, "gr_rois"), 1e-4)
	check(t, "rotated probs", res[1], blob.Float32, golden(t, "gr_probs"), 0)
}

// TestRotatedIntersection checks the rotated overlap by hand: a box with
// itself, a square and its 45° turn (a regular octagon), disjoint boxes and
// a box inside another.
func TestRotatedIntersection(t *testing.T) {
	for _, c := range []struct {
		a, b []float32
		want float64
	}{
		{[]float32{5, 5, 4, 2, 30}, []float32{5, 5, 4, 2, 30}, 8},
		{[]float32{0, 0, 2, 2, 0}, []float32{0, 0, 2, 2, 45}, 8 * (math.Sqrt2 - 1)},
		{[]float32{0, 0, 2, 2, 10}, []float32{10, 0, 2, 2, 50}, 0},
		{[]float32{0, 0, 10, 10, 0}, []float32{1, 1, 2, 2, 20}, 4},
		{[]float32{0, 0, 4, 2, 0}, []float32{0, 0, 4, 2, 90}, 4},
	} {
		if got := rotatedIntersection(c.a, c.b); math.Abs(float64(got)-c.want) > 1e-4 {
			t.Errorf("%v ∩ %v = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
