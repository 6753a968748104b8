package detect

import (
	"fmt"
	"math"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestGenerateProposalsCaffe2Cases runs the cases of Caffe2's
// generate_proposals_op_test.cc: TestRealDownSampled (an RPN head's real
// outputs, with Caffe2's expected RoIs and probabilities), its rotated
// variants and TestEmpty (tiny images: every proposal is filtered out).
func TestGenerateProposalsCaffe2Cases(t *testing.T) {
	scores := blob.MustFromSlice([]float32{
		5.44218998e-03, 1.19207997e-03, 1.12379994e-03, 1.17181998e-03,
		1.20544003e-03, 6.17993006e-04, 1.05261997e-05, 8.91025957e-06,
		9.29536981e-09, 6.09605013e-05, 4.72735002e-04, 1.13482002e-10,
		1.50015003e-05, 4.45032993e-06, 3.21612994e-08, 8.02662980e-04,
		1.40488002e-04, 3.12508007e-07, 3.02616991e-06, 1.97759000e-08,
		2.66913995e-02, 5.26766013e-03, 5.05053019e-03, 5.62100019e-03,
		5.37420018e-03, 5.26280981e-03, 2.48894998e-04, 1.06842002e-04,
		3.92931997e-06, 1.79388002e-03, 4.79440019e-03, 3.41609990e-07,
		5.20430971e-04, 3.34090000e-05, 2.19159006e-07, 2.28786003e-03,
		5.16703985e-05, 4.04523007e-06, 1.79227004e-06, 5.32449000e-08}, 1, 2, 4, 5)
	deltas := blob.MustFromSlice([]float32{
		-1.65040009e-02, -1.84051003e-02, -1.85930002e-02, -2.08263006e-02,
		-1.83814000e-02, -2.89172009e-02, -3.89706008e-02, -7.52277970e-02,
		-1.54091999e-01, -2.55433004e-02, -1.77490003e-02, -1.10340998e-01,
		-4.20190990e-02, -2.71421000e-02, 6.89801015e-03, 5.71171008e-02,
		-1.75665006e-01, 2.30021998e-02, 3.08554992e-02, -1.39333997e-02,
		3.40579003e-01, 3.91070992e-01, 3.91624004e-01, 3.92527014e-01,
		3.91445011e-01, 3.79328012e-01, 4.26631987e-01, 3.64892989e-01,
		2.76894987e-01, 5.13985991e-01, 3.79999995e-01, 1.80457994e-01,
		4.37402993e-01, 4.18545991e-01, 2.51549989e-01, 4.48318988e-01,
		1.68564007e-01, 4.65440989e-01, 4.21891987e-01, 4.45928007e-01,
		3.27155995e-03, 3.71480011e-03, 3.60032008e-03, 4.27092984e-03,
		3.74579988e-03, 5.95752988e-03, -3.14473989e-03, 3.52022005e-03,
		-1.88564006e-02, 1.65188999e-03, 1.73791999e-03, -3.56074013e-02,
		-1.66615995e-04, 3.14146001e-03, -1.11830998e-02, -5.35363983e-03,
		6.49790000e-03, -9.27671045e-03, -2.83346009e-02, -1.61233004e-02,
		-2.15505004e-01, -2.19910994e-01, -2.20872998e-01, -2.12831005e-01,
		-2.19145000e-01, -2.27687001e-01, -3.43973994e-01, -2.75869995e-01,
		-3.19516987e-01, -2.50418007e-01, -2.48537004e-01, -5.08224010e-01,
		-2.28724003e-01, -2.82402009e-01, -3.75815988e-01, -2.86352992e-01,
		-5.28333001e-02, -4.43836004e-01, -4.55134988e-01, -4.34897989e-01,
		-5.65053988e-03, -9.25739005e-04, -1.06790999e-03, -2.37016007e-03,
		-9.71166010e-04, -8.90910998e-03, -1.17592998e-02, -2.08992008e-02,
		-4.94231991e-02, 6.63906988e-03, 3.20469006e-03, -6.44695014e-02,
		-3.11607006e-03, 2.02738005e-03, 1.48096997e-02, 4.39785011e-02,
		-8.28424022e-02, 3.62076014e-02, 2.71668993e-02, 1.38250999e-02,
		6.76669031e-02, 1.03252999e-01, 1.03255004e-01, 9.89722982e-02,
		1.03646003e-01, 4.79663983e-02, 1.11014001e-01, 9.31736007e-02,
		1.15768999e-01, 1.04014002e-01, -8.90677981e-03, 1.13103002e-01,
		1.33085996e-01, 1.25405997e-01, 1.50051996e-01, -1.13038003e-01,
		7.01059997e-02, 1.79651007e-01, 1.41055003e-01, 1.62841007e-01,
		-1.00247003e-02, -8.17587040e-03, -8.32176022e-03, -8.90108012e-03,
		-8.13035015e-03, -1.77263003e-02, -3.69572006e-02, -3.51580009e-02,
		-5.92143014e-02, -1.80795006e-02, -5.46086021e-03, -4.10550982e-02,
		-1.83081999e-02, -2.15411000e-02, -1.17953997e-02, 3.33894007e-02,
		-5.29635996e-02, -6.97528012e-03, -3.15250992e-03, -3.27355005e-02,
		1.29676998e-01, 1.16080999e-01, 1.15947001e-01, 1.21797003e-01,
		1.16089001e-01, 1.44875005e-01, 1.15617000e-01, 1.31586999e-01,
		1.74735002e-02, 1.21973999e-01, 1.31596997e-01, 2.48907991e-02,
		6.18605018e-02, 1.12855002e-01, -6.99798986e-02, 9.58312973e-02,
		1.53593004e-01, -8.75087008e-02, -4.92327996e-02, -3.32239009e-02}, 1, 8, 4, 5)
	info := blob.MustFromSlice([]float32{60, 80, 0.166667}, 1, 3)
	anchors := blob.MustFromSlice([]float32{-38, -16, 53, 31, -120, -120, 135, 135}, 2, 4)
	def := op("GenerateProposals", "scores deltas info anchors", "rois probs", af("spatial_scale", 1.0/16), ai("pre_nms_topN", 6000),
		ai("post_nms_topN", 300), af("nms_thresh", 0.7), af("min_size", 16))
	out := optest.MustRunOp(t, def, scores, deltas, info, anchors)
	wantRoIs := optest.F32([]float64{
		0, 0, 0, 79, 59,
		0, 0, 5.0005703, 51.6324, 42.6950,
		0, 24.13628387, 7.51243401, 79, 45.0663,
		0, 0, 7.50924301, 67.4779, 45.0336,
		0, 0, 23.09477997, 50.61448669, 59,
		0, 0, 39.52141571, 51.44710541, 59,
		0, 23.57396317, 29.98791885, 79, 59,
		0, 0, 41.90219116, 79, 59,
		0, 0, 23.30098343, 78.2413, 58.7287}, 9, 5)
	check(t, "rois", out[0], blob.Float32, wantRoIs, 1e-4)
	wantProbs := optest.F32([]float64{2.66913995e-02, 5.44218998e-03, 1.20544003e-03, 1.19207997e-03, 6.17993006e-04,
		4.72735002e-04, 6.09605013e-05, 1.50015003e-05, 8.91025957e-06}, 9)
	check(t, "rois_probs", out[1], blob.Float32, wantProbs, 1e-4)

	// TestRealDownSampledRotatedAngle0: the same with rotated anchors at
	// angle 0 (so clipped like upright boxes) gives the same RoIs as
	// [ctr_x, ctr_y, w, h, 0]; TestRealDownSampledRotated: anchors at 45°
	// and angle deltas of 10° give RoIs at 55°.
	for _, c := range []struct {
		angle, delta, want float32
		anchor             float32
	}{{0, 0, 0, 7.5}, {45, 0.174533, 55, 8}} {
		withAngle := make([]float32, 0, 2*5*20)
		dv := blob.Data[float32](deltas)
		for a := range 2 {
			withAngle = append(withAngle, dv[a*80:(a+1)*80]...)
			for range 20 {
				withAngle = append(withAngle, c.delta)
			}
		}
		rot := blob.MustFromSlice([]float32{c.anchor, c.anchor, 92, 48, c.angle, c.anchor, c.anchor, 256, 256, c.angle}, 2, 5)
		res := optest.MustRunOp(t, def, scores, blob.MustFromSlice(withAngle, 1, 10, 4, 5), info, rot)
		if c.angle == 0 {
			xywh := make([]float64, 0, 9*6)
			v := wantRoIs.AsFloat64s()
			for i := range 9 {
				r := v[i*5 : i*5+5]
				xywh = append(xywh, 0, (r[1]+r[3])/2, (r[2]+r[4])/2, r[3]-r[1]+1, r[4]-r[2]+1, 0)
			}
			check(t, "rotated angle 0 rois", res[0], blob.Float32, optest.F32(xywh, 9, 6), 1e-3)
			check(t, "rotated angle 0 probs", res[1], blob.Float32, wantProbs, 1e-4)
			continue
		}
		if res[0].Dim(0) == 0 {
			t.Fatal("rotated: no RoIs")
		}
		v := res[0].AsFloat64s()
		for i := 5; i < len(v); i += 6 {
			if math.Abs(v[i]-float64(c.want)) > 1e-4 {
				t.Errorf("rotated RoI %d has angle %v, want %v", i/6, v[i], c.want)
			}
		}
	}

	// TestEmpty: 3 images of 0.1×0.1 pixels, constant scores.
	const n, a, h, w = 3, 4, 10, 8
	lin := make([]float64, n*4*a*h*w)
	for i := range lin {
		lin[i] = 10 * float64(i) / float64(len(lin)-1)
	}
	ones := func(v float64, shape ...int) *blob.Tensor {
		s := make([]float64, numel(shape))
		for i := range s {
			s[i] = v
		}
		return optest.F32(s, shape...)
	}
	empty := optest.MustRunOp(t, op("GenerateProposals", "scores deltas info anchors", "rois probs", af("spatial_scale", 2)),
		ones(1, n, a, h, w), optest.F32(lin, n, 4*a, h, w), ones(0.1, n, 3), ones(1, a, 4))
	if empty[0].Size() != 0 || empty[1].Size() != 0 {
		t.Errorf("TestEmpty: rois %v and probs %v, want none", empty[0].Dims(), empty[1].Dims())
	}
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// genBoxes is box_with_nms_limit_op_test.py's gen_multiple_boxes: count
// copies of a 10×10 box around each centre, scored alike, for each of k
// classes.
func genBoxes(centers [][2]float32, scores []float32, count, k int) (boxes, sc []float32) {
	for i, c := range centers {
		for range count {
			for range k {
				boxes = append(boxes, c[0]-5, c[1]-5, c[0]+5, c[1]+5)
				sc = append(sc, scores[i])
			}
		}
	}
	return boxes, sc
}

// TestBoxWithNMSLimitCaffe2Cases runs the cases of Caffe2's
// box_with_nms_limit_op_test.py: duplicate boxes around three centres are
// reduced to one per centre, by score, within the per-image limit, for
// every combination of the class-layout arguments.
func TestBoxWithNMSLimitCaffe2Cases(t *testing.T) {
	centers := [][2]float32{{0, 0}, {20, 20}, {50, 50}}
	run := func(name string, scores []float32, boxes []float32, k, boxCols int, args []*netdef.Argument, wantS []float32, wantB []float32, wantC []float32) {
		t.Helper()
		n := len(scores) / k
		out := optest.MustRunOp(t, op("BoxWithNMSLimit", "s b", "os ob oc", args...),
			blob.MustFromSlice(scores, n, k), blob.MustFromSlice(boxes, n, boxCols))
		check(t, name+" scores", out[0], blob.Float32, blob.MustFromSlice(wantS, len(wantS)), 1e-6)
		check(t, name+" boxes", out[1], blob.Float32, blob.MustFromSlice(wantB, len(wantB)/4, 4), 0)
		check(t, name+" classes", out[2], blob.Float32, blob.MustFromSlice(wantC, len(wantC)), 0)
	}
	base := []*netdef.Argument{af("score_thresh", 0.5), af("nms", 0.9)}

	b, s := genBoxes(centers, []float32{0.9, 0.8, 0.6}, 10, 2)
	gb, gs := genBoxes(centers, []float32{0.9, 0.8, 0.6}, 1, 1)
	run("simple", s, b, 2, 8, base, gs, gb, []float32{1, 1, 1})

	b, s = genBoxes(centers, []float32{0.7, 0.85, 0.6}, 10, 2)
	gb, gs = genBoxes([][2]float32{{20, 20}}, []float32{0.85}, 1, 1)
	run("score_thresh", s, b, 2, 8, []*netdef.Argument{af("score_thresh", 0.8), af("nms", 0.9)}, gs, gb, []float32{1})

	order := [][2]float32{{20, 20}, {0, 0}, {50, 50}}
	for det := 1; det <= 3; det++ {
		gb, gs = genBoxes(order[:det], []float32{0.85, 0.7, 0.6}[:det], 1, 1)
		run(fmt.Sprintf("detections_per_im %d", det), s, b, 2, 8, append(base, ai("detections_per_im", int64(det))), gs, gb, []float32{1, 1, 1}[:det])
	}

	for k := 2; k <= 5; k++ {
		for det := 1; det <= 3; det++ {
			for _, agnostic := range []bool{false, true} {
				for _, inBG := range []bool{false, true} {
					for _, outBG := range []bool{false, true} {
						b, s := genBoxes(centers, []float32{0.7, 0.85, 0.6}, 10, k)
						cols := 4 * k
						if !inBG {
							b, cols = keepColumns(b, cols, 4, cols), cols-4
						}
						if agnostic {
							b, cols = keepColumns(b, cols, 0, 4), 4
						}
						bg := 0
						if !inBG {
							bg = k - 1
						}
						for i := range len(s) / k {
							s[i*k+bg] = float32(i%7) / 7 // the unused background scores
						}
						var wb, ws, wc []float32
						for c := 1; c < k; c++ {
							g, gs := genBoxes(order[:det], []float32{0.85, 0.7, 0.6}[:det], 1, 1)
							wb, ws = append(wb, g...), append(ws, gs...)
							for range det {
								wc = append(wc, float32(c-map[bool]int{true: 0, false: 1}[outBG]))
							}
						}
						args := append(base, ai("detections_per_im", int64((k-1)*det)), netdef.ArgBool("cls_agnostic_bbox_reg", agnostic),
							netdef.ArgBool("input_boxes_include_bg_cls", inBG), netdef.ArgBool("output_classes_include_bg_cls", outBG))
						run(fmt.Sprintf("multiclass k=%d det=%d agnostic=%v in_bg=%v out_bg=%v", k, det, agnostic, inBG, outBG), s, b, k, cols, args, ws, wb, wc)
					}
				}
			}
		}
	}
}

// keepColumns keeps columns [from, to) of a row-major matrix with cols
// columns.
func keepColumns(v []float32, cols, from, to int) []float32 {
	var out []float32
	for i := 0; i < len(v); i += cols {
		out = append(out, v[i+from:i+to]...)
	}
	return out
}
