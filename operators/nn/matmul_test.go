package nn

import (
	"fmt"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func TestMatMulForward(t *testing.T) {
	cases := []struct {
		name           string
		a, b           []int
		ar, ac, br, bc int // the stored matrices
		transA, transB bool
		args           []*netdef.Argument
		y              []int
	}{
		{name: "AB", a: []int{3, 4}, b: []int{4, 5}, ar: 3, ac: 4, br: 4, bc: 5, y: []int{3, 5}},
		{name: "A'B", a: []int{4, 3}, b: []int{4, 5}, ar: 4, ac: 3, br: 4, bc: 5, transA: true, y: []int{3, 5}},
		{name: "AB'", a: []int{3, 4}, b: []int{5, 4}, ar: 3, ac: 4, br: 5, bc: 4, transB: true, y: []int{3, 5}},
		{name: "A'B'", a: []int{4, 3}, b: []int{5, 4}, ar: 4, ac: 3, br: 5, bc: 4, transA: true, transB: true, y: []int{3, 5}},
		{name: "axis_a 2", a: []int{2, 3, 4}, b: []int{4, 5}, ar: 6, ac: 4, br: 4, bc: 5, args: []*netdef.Argument{argInt("axis_a", 2)}, y: []int{6, 5}},
		{name: "axis_a -1", a: []int{2, 3, 4}, b: []int{4, 5}, ar: 6, ac: 4, br: 4, bc: 5, args: []*netdef.Argument{argInt("axis_a", -1)}, y: []int{6, 5}},
		{name: "3-D A at axis 1", a: []int{3, 2, 2}, b: []int{4, 5}, ar: 3, ac: 4, br: 4, bc: 5, y: []int{3, 5}},
		{name: "axis_b 2", a: []int{3, 4}, b: []int{2, 2, 5}, ar: 3, ac: 4, br: 4, bc: 5, args: []*netdef.Argument{argInt("axis_b", 2)}, y: []int{3, 5}},
		{name: "A' axis_a 2", a: []int{2, 2, 3}, b: []int{4, 5}, ar: 4, ac: 3, br: 4, bc: 5, transA: true, args: []*netdef.Argument{argInt("axis_a", 2)}, y: []int{3, 5}},
		{name: "axis_b 0", a: []int{3, 1}, b: []int{5}, ar: 3, ac: 1, br: 1, bc: 5, args: []*netdef.Argument{argInt("axis_b", 0)}, y: []int{3, 5}},
		{name: "B' axis_b 0", a: []int{3, 5}, b: []int{5}, ar: 3, ac: 5, br: 1, bc: 5, transB: true, args: []*netdef.Argument{argInt("axis_b", 0)}, y: []int{3, 1}},
		{name: "empty", a: []int{0, 4}, b: []int{4, 5}, ar: 0, ac: 4, br: 4, bc: 5, y: []int{0, 5}},
	}
	for _, dt := range []blob.DataType{blob.Float32, blob.Float64} {
		for _, tc := range cases {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				r := newRand(21)
				a := rounded(dt, randVals(r, numel(tc.a), -1, 1))
				b := rounded(dt, randVals(r, numel(tc.b), -1, 1))
				want, _, _ := refMatMul(a, tc.ar, tc.ac, tc.transA, b, tc.br, tc.bc, tc.transB)
				args := append([]*netdef.Argument{argInt("trans_a", b2i(tc.transA)), argInt("trans_b", b2i(tc.transB))}, tc.args...)
				out := optest.MustRunOp(t, opDef("MatMul", []string{"A", "B"}, []string{"Y"}, args...), tensorOf(dt, a, tc.a...), tensorOf(dt, b, tc.b...))
				expectTensor(t, "Y", out[0], dt, tc.y, want, tolFor(dt))

				// A third input gives the output its shape.
				shape := []int{1, numel(tc.y), 1}
				out = optest.MustRunOp(t, opDef("MatMul", []string{"A", "B", "S"}, []string{"Y"}, args...),
					tensorOf(dt, a, tc.a...), tensorOf(dt, b, tc.b...), blob.MustFromSlice(make([]int32, numel(shape)), shape...))
				expectTensor(t, "Y (shaped)", out[0], dt, shape, want, tolFor(dt))
			})
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func TestMatMulErrors(t *testing.T) {
	cases := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{"K mismatch", opDef("MatMul", []string{"A", "B"}, []string{"Y"}), []*blob.Tensor{optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 8), 4, 2)}},
		{"K mismatch transposed", opDef("MatMul", []string{"A", "B"}, []string{"Y"}, argInt("trans_a", 1)), []*blob.Tensor{optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 6), 3, 2)}},
		{"axis_a", opDef("MatMul", []string{"A", "B"}, []string{"Y"}, argInt("axis_a", 2)), []*blob.Tensor{optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 6), 3, 2)}},
		{"axis_b", opDef("MatMul", []string{"A", "B"}, []string{"Y"}, argInt("axis_b", -3)), []*blob.Tensor{optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 6), 3, 2)}},
		{"shape input size", opDef("MatMul", []string{"A", "B", "S"}, []string{"Y"}), []*blob.Tensor{optest.F32(make([]float64, 6), 2, 3), optest.F32(make([]float64, 6), 3, 2), optest.F32(make([]float64, 3), 3)}},
		{"B type", opDef("MatMul", []string{"A", "B"}, []string{"Y"}), []*blob.Tensor{optest.F32(make([]float64, 6), 2, 3), tensorOf(blob.Float64, make([]float64, 6), 3, 2)}},
	}
	for _, tc := range cases {
		if _, err := optest.RunOp(tc.def, tc.inputs...); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

// refBatchMatMul follows numpy.matmul: 1-D operands are promoted to a row
// (A) or a column (B) vector and the promoted dimension is dropped from the
// result; batch dimensions broadcast. trans flags apply to operands of rank
// 2 or more.
func refBatchMatMul(a []float64, as []int, transA bool, b []float64, bs []int, transB bool) ([]float64, []int) {
	if len(as) == 1 && len(bs) == 1 {
		var s float64
		for i := range a {
			s += a[i] * b[i]
		}
		return []float64{s}, []int{1}
	}
	aVec, bVec := len(as) == 1, len(bs) == 1
	if aVec {
		as, transA = []int{1, as[0]}, false
	}
	if bVec {
		bs, transB = []int{bs[0], 1}, false
	}
	ar, ac := as[len(as)-2], as[len(as)-1]
	br, bc := bs[len(bs)-2], bs[len(bs)-1]
	nd := max(len(as), len(bs)) - 2
	pad := func(s []int) []int {
		out := make([]int, nd)
		for i := range out {
			out[i] = 1
		}
		copy(out[nd-len(s):], s)
		return out
	}
	ab, bb := pad(as[:len(as)-2]), pad(bs[:len(bs)-2])
	yb := make([]int, nd)
	for i := range yb {
		yb[i] = max(ab[i], bb[i])
		if ab[i] == 0 || bb[i] == 0 {
			yb[i] = 0
		}
	}
	batches := numel(yb)
	var y []float64
	var m, n int
	idx := make([]int, nd)
	for t := 0; t < batches; t++ {
		// Decompose t into a multi-index and map it into A and B.
		rem := t
		for d := nd - 1; d >= 0; d-- {
			idx[d] = rem % yb[d]
			rem /= yb[d]
		}
		ai, bi := 0, 0
		for d := 0; d < nd; d++ {
			ad, bd := idx[d], idx[d]
			if ab[d] == 1 {
				ad = 0
			}
			if bb[d] == 1 {
				bd = 0
			}
			ai = ai*ab[d] + ad
			bi = bi*bb[d] + bd
		}
		var c []float64
		c, m, n = refMatMul(a[ai*ar*ac:(ai+1)*ar*ac], ar, ac, transA, b[bi*br*bc:(bi+1)*br*bc], br, bc, transB)
		y = append(y, c...)
	}
	if batches == 0 {
		m, n = ar, bc
		if transA {
			m = ac
		}
		if transB {
			n = br
		}
	}
	shape := append([]int{}, yb...)
	if !aVec {
		shape = append(shape, m)
	}
	if !bVec {
		shape = append(shape, n)
	}
	return y, shape
}

func TestBatchMatMulForward(t *testing.T) {
	cases := []struct {
		a, b           []int
		transA, transB bool
		broadcast      bool
	}{
		{a: []int{2, 3, 4}, b: []int{2, 4, 5}},
		{a: []int{2, 4, 3}, b: []int{2, 4, 5}, transA: true},
		{a: []int{2, 3, 4}, b: []int{2, 5, 4}, transB: true},
		{a: []int{2, 4, 3}, b: []int{2, 5, 4}, transA: true, transB: true},
		{a: []int{3, 4}, b: []int{4, 5}},
		{a: []int{2, 3, 3, 4}, b: []int{2, 3, 4, 2}},
		{a: []int{0, 3, 4}, b: []int{0, 4, 5}},
		{a: []int{3, 4}, b: []int{2, 4, 5}, broadcast: true},
		{a: []int{2, 1, 3, 4}, b: []int{5, 4, 6}, broadcast: true},
		{a: []int{2, 1, 4, 3}, b: []int{5, 6, 4}, transA: true, transB: true, broadcast: true},
		{a: []int{1, 3, 4}, b: []int{2, 4, 5}, broadcast: true},
		{a: []int{2, 3, 4}, b: []int{1, 4, 5}, transB: false, broadcast: true},
		{a: []int{4}, b: []int{4}},
		{a: []int{4}, b: []int{4, 5}},
		{a: []int{4}, b: []int{2, 4, 5}},
		{a: []int{4}, b: []int{2, 5, 4}, transB: true},
		{a: []int{2, 3, 4}, b: []int{4}},
		{a: []int{2, 4, 3}, b: []int{4}, transA: true},
		{a: []int{3, 4}, b: []int{4}},
	}
	for _, dt := range []blob.DataType{blob.Float32, blob.Float64} {
		for _, tc := range cases {
			name := fmt.Sprintf("%v%v_tA%v_tB%v_bc%v/%v", tc.a, tc.b, tc.transA, tc.transB, tc.broadcast, dt)
			t.Run(name, func(t *testing.T) {
				r := newRand(31)
				a := rounded(dt, randVals(r, numel(tc.a), -1, 1))
				b := rounded(dt, randVals(r, numel(tc.b), -1, 1))
				want, shape := refBatchMatMul(a, tc.a, tc.transA, b, tc.b, tc.transB)
				def := opDef("BatchMatMul", []string{"A", "B"}, []string{"Y"},
					argInt("trans_a", b2i(tc.transA)), argInt("trans_b", b2i(tc.transB)), argInt("broadcast", b2i(tc.broadcast)))
				out := optest.MustRunOp(t, def, tensorOf(dt, a, tc.a...), tensorOf(dt, b, tc.b...))
				expectTensor(t, "Y", out[0], dt, shape, want, tolFor(dt))
			})
		}
	}
}

func TestBatchMatMulErrors(t *testing.T) {
	z := func(shape ...int) *blob.Tensor { return optest.F32(make([]float64, numel(shape)), shape...) }
	bmm := func(args ...*netdef.Argument) *netdef.OperatorDef {
		return opDef("BatchMatMul", []string{"A", "B"}, []string{"Y"}, args...)
	}
	cases := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{"batch dims differ", bmm(), []*blob.Tensor{z(2, 3, 4), z(3, 4, 5)}},
		{"ranks differ without broadcast", bmm(), []*blob.Tensor{z(3, 4), z(2, 4, 5)}},
		{"batch of 1 without broadcast", bmm(), []*blob.Tensor{z(1, 3, 4), z(2, 4, 5)}},
		{"not broadcastable", bmm(argInt("broadcast", 1)), []*blob.Tensor{z(2, 3, 4), z(3, 4, 5)}},
		{"K mismatch", bmm(), []*blob.Tensor{z(2, 3, 4), z(2, 3, 5)}},
		{"K mismatch transposed", bmm(argInt("trans_b", 1)), []*blob.Tensor{z(2, 3, 4), z(2, 4, 5)}},
		{"scalar input", bmm(), []*blob.Tensor{blob.Scalar(float32(1)), z(2, 4, 5)}},
		{"vector sizes", bmm(), []*blob.Tensor{z(3), z(4)}},
		{"vector times matrix", bmm(), []*blob.Tensor{z(3), z(4, 5)}},
		{"matrix times vector", bmm(), []*blob.Tensor{z(5, 4), z(5)}},
		{"transposed matrix times vector", bmm(argInt("trans_a", 1)), []*blob.Tensor{z(5, 4), z(4)}},
		{"vector times transposed matrix", bmm(argInt("trans_b", 1)), []*blob.Tensor{z(4), z(4, 5)}},
	}
	for _, tc := range cases {
		if _, err := optest.RunOp(tc.def, tc.inputs...); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}
