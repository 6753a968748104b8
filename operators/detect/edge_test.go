package detect

import (
	"math"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestEdgeInputs runs the operators on empty maps, empty RoI sets, NaN and
// infinite values and zero-element tensors with huge dims: each must
// return a result or an error, never panic.
func TestEdgeInputs(t *testing.T) {
	empty := func(dims ...int) *blob.Tensor {
		x, err := blob.New(blob.Float32, dims...)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	rows := func(cols int, v ...float32) *blob.Tensor { return blob.MustFromSlice(v, len(v)/cols, cols) }
	x := optest.F32([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 1, 2, 2, 2)
	r := rows(5, 0, 0, 0, 1, 1)
	for _, c := range []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
	}{
		{"RoIAlign 0×0 map", op("RoIAlign", "X R", "Y", ai("pooled_h", 2)), []*blob.Tensor{empty(1, 2, 0, 0), r}},
		{"RoIAlign huge channels", op("RoIAlign", "X R", "Y"), []*blob.Tensor{empty(1, 1<<40, 0, 1), r}},
		{"RoIAlign huge images", op("RoIAlign", "X R", "Y"), []*blob.Tensor{empty(1<<40, 2, 0, 3), r}},
		{"RoIAlign aligned backwards RoI", op("RoIAlign", "X R", "Y", netdef.ArgBool("aligned", true)), []*blob.Tensor{x, rows(5, 0, 2, 2, 0, 0)}},
		{"RoIAlign inf scale", op("RoIAlign", "X R", "Y", af("spatial_scale", 1e38), ai("sampling_ratio", 2)), []*blob.Tensor{x, rows(5, 0, 5, 5, 10, 10)}},
		{"RoIAlign NaN ratio RoI", op("RoIAlign", "X R", "Y", af("spatial_scale", 1e38), ai("sampling_ratio", 1)), []*blob.Tensor{x, rows(5, 0, -10, -10, 10, 10)}},
		{"RoIAlignGradient empty dY", op("RoIAlignGradient", "X R dY", "dX"), []*blob.Tensor{x, r, empty(0, 2, 1, 1)}},
		{"RoIPool 0×0 map", op("RoIPool", "X R", "Y A"), []*blob.Tensor{empty(1, 2, 0, 0), r}},
		{"RoIPool NaN map", op("RoIPool", "X R", "Y A"), []*blob.Tensor{optest.F32([]float64{math.NaN(), 1, 2, 3}, 1, 1, 2, 2), r}},
		{"RoIPoolGradient bad argmax", op("RoIPoolGradient", "X R A dY", "dX"), []*blob.Tensor{x, r, blob.MustFromSlice([]int32{9, -1}, 1, 2, 1, 1), optest.F32([]float64{1, 1}, 1, 2, 1, 1)}},
		{"IntegralImage empty", op("IntegralImage", "X", "Y"), []*blob.Tensor{empty(1<<40, 0, 3, 3)}},
		{"IntegralImage 0 rows", op("IntegralImage", "X", "Y"), []*blob.Tensor{empty(2, 2, 0, 3)}},
		{"BBoxTransform NaN deltas", op("BBoxTransform", "r d i", "b"), []*blob.Tensor{rows(4, 0, 0, 5, 5), rows(4, nan, inf, inf, -inf), rows(3, 10, 10, 1)}},
		{"BBoxTransform zero scale", op("BBoxTransform", "r d i", "b"), []*blob.Tensor{rows(4, 0, 0, 5, 5), rows(4, 0, 0, 0, 0), rows(3, 10, 10, 0)}},
		{"BBoxTransform no classes", op("BBoxTransform", "r d i", "b s"), []*blob.Tensor{rows(5, 0, 0, 0, 5, 5), empty(1, 0), rows(3, 10, 10, 1)}},
		{"BoxWithNMSLimit NaN", op("BoxWithNMSLimit", "s b", "os ob oc"), []*blob.Tensor{rows(2, nan, nan, 0.5, 0.9), rows(8, 0, 0, 1, 1, nan, 0, 1, 1, 0, 0, 1, 1, 0, 0, inf, 1)}},
		{"BoxWithNMSLimit soft NaN", op("BoxWithNMSLimit", "s b", "os ob oc", netdef.ArgBool("soft_nms_enabled", true)), []*blob.Tensor{rows(2, nan, nan, 0.5, 0.9), rows(8, 0, 0, 1, 1, nan, 0, 1, 1, 0, 0, 1, 1, 0, 0, inf, 1)}},
		{"BoxWithNMSLimit huge classes", op("BoxWithNMSLimit", "s b", "os ob oc"), []*blob.Tensor{empty(0, 1<<40), empty(0, 1<<42)}},
		{"BoxWithNMSLimit empty splits", op("BoxWithNMSLimit", "s b n", "os ob oc sp ok oks"), []*blob.Tensor{empty(0, 3), empty(0, 12), empty(0)}},
		{"BoxWithNMSLimit 5 outputs", op("BoxWithNMSLimit", "s b", "os ob oc sp ok"), []*blob.Tensor{empty(0, 3), empty(0, 12)}},
		{"GenerateProposals NaN", op("GenerateProposals", "s d i a", "r p"), []*blob.Tensor{optest.F32([]float64{math.NaN(), 1, 0.5, math.Inf(1)}, 1, 1, 2, 2), optest.F32(make([]float64, 16), 1, 4, 2, 2), rows(3, 10, 10, 1), rows(4, 0, 0, nan, 4)}},
		{"BoxWithNMSLimit rotated NaN", op("BoxWithNMSLimit", "s b", "os ob oc", netdef.ArgBool("rotated", true)), []*blob.Tensor{rows(2, 0, 0.9, 0, 0.8, 0, 0.7), rows(10, 0, 0, 0, 0, 0, nan, 1, 2, 2, 3, 0, 0, 0, 0, 0, 1, nan, 2, 2, 3, 0, 0, 0, 0, 0, 1, 1, inf, 2, nan)}},
		{"BoxWithNMSLimit rotated degenerate", op("BoxWithNMSLimit", "s b", "os ob oc", netdef.ArgBool("rotated", true), netdef.ArgBool("soft_nms_enabled", true)), []*blob.Tensor{rows(2, 0, 0.9, 0, 0.8, 0, 0.7), rows(10, 0, 0, 0, 0, 0, 1, 1, 0, 0, 3, 0, 0, 0, 0, 0, 1, 1, 0, 0, 3, 0, 0, 0, 0, 0, 1, 1, 1e-30, 1e30, 45)}},
		{"GenerateProposals empty", op("GenerateProposals", "s d i a", "r p"), []*blob.Tensor{empty(2, 1, 0, 3), empty(2, 4, 0, 3), rows(3, 10, 10, 1, 10, 10, 1), rows(4, 0, 0, 4, 4)}},
		{"DistributeFpnProposals NaN", op("DistributeFpnProposals", "r", "a b c d e"), []*blob.Tensor{rows(4, nan, 0, 1, 1, 0, 0, inf, inf)}},
	} {
		_, err := optest.RunOp(c.def, c.in...)
		if err != nil && strings.Contains(err.Error(), "panic") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
