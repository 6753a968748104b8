package reduce

import (
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// naiveTopK sorts each lane along axis (value descending, index ascending)
// and keeps k, padding with 0 and −1; it also returns the flattened indices
// and the output shape.
func naiveTopK(x []float64, dims []int, axis, k int) (vals []float64, idx, flat []int64, out []int) {
	out = append([]int(nil), dims...)
	out[axis] = k
	vals = make([]float64, prod(out))
	idx = make([]int64, len(vals))
	flat = make([]int64, len(vals))
	type entry struct {
		v    float64
		i, f int
	}
	lanes := map[int][]entry{}
	for f, v := range x {
		ix := unravel(f, dims)
		i := ix[axis]
		ix[axis] = 0
		lane := ravel(ix, dims)
		lanes[lane] = append(lanes[lane], entry{v, i, f})
	}
	for p := range vals {
		ix := unravel(p, out)
		rank := ix[axis]
		ix[axis] = 0
		lane := lanes[ravel(ix, dims)]
		sort.SliceStable(lane, func(a, b int) bool {
			return lane[a].v > lane[b].v || (lane[a].v == lane[b].v && lane[a].i < lane[b].i)
		})
		if rank < len(lane) {
			vals[p], idx[p], flat[p] = lane[rank].v, int64(lane[rank].i), int64(lane[rank].f)
		} else {
			idx[p], flat[p] = -1, -1
		}
	}
	return vals, idx, flat, out
}

func TestTopK(t *testing.T) {
	dims := []int{3, 5, 4}
	x := distinct(60, 6)
	for i := 0; i < 60; i += 9 { // some ties
		x[i] = x[(i+4)%60]
	}
	for _, axis := range []int{-1, 0, 1, 2} {
		for _, k := range []int{1, 2, 3, 5, 7} {
			def := netdef.NewOperator("TopK", []string{"X"}, []string{"V", "I", "F"}, netdef.ArgInt("k", int64(k)), netdef.ArgInt("axis", int64(axis)))
			a := axis
			if a < 0 {
				a += len(dims)
			}
			wantV, wantI, wantF, wantDims := naiveTopK(optest.F32(x).AsFloat64s(), dims, a, k)
			for _, in := range []*blob.Tensor{optest.F32(x, dims...), blob.MustFromSlice(optest.F32(x).AsFloat64s(), dims...)} {
				out, err := optest.RunOp(def, in)
				if err != nil {
					t.Fatal(err)
				}
				what := def.String()
				checkDims(t, what, out[0].Dims(), wantDims)
				checkDims(t, what, out[1].Dims(), wantDims)
				checkDims(t, what, out[2].Dims(), []int{len(wantI)})
				if out[0].DataType() != in.DataType() || out[1].DataType() != blob.Int64 || out[2].DataType() != blob.Int64 {
					t.Fatalf("%s: output types %v %v %v", what, out[0].DataType(), out[1].DataType(), out[2].DataType())
				}
				optest.CheckClose(t, what+" values", out[0].AsFloat64s(), wantV, 0)
				gotI, gotF := blob.Data[int64](out[1]), blob.Data[int64](out[2])
				for p := range wantI {
					if gotI[p] != wantI[p] || gotF[p] != wantF[p] {
						t.Fatalf("%s: entry %d has index %d (flat %d), want %d (flat %d)", what, p, gotI[p], gotF[p], wantI[p], wantF[p])
					}
				}
			}
		}
	}
}

func TestTopKInt(t *testing.T) {
	def := netdef.NewOperator("TopK", []string{"X"}, []string{"V", "I"}, netdef.ArgInt("k", 2))
	out, err := optest.RunOp(def, blob.MustFromSlice([]int32{3, 9, 9, 1, -5, 0, 4, 4}, 2, 4))
	if err != nil {
		t.Fatal(err)
	}
	if v, i := blob.Data[int32](out[0]), blob.Data[int64](out[1]); v[0] != 9 || v[1] != 9 || i[0] != 1 || i[1] != 2 ||
		v[2] != 4 || v[3] != 4 || i[2] != 2 || i[3] != 3 {
		t.Errorf("TopK int32 = %v %v", v, i)
	}
}

func TestTopKGradients(t *testing.T) {
	x := optest.F32(distinct(60, 8), 3, 5, 4)
	var cases []gradientCase
	for _, axis := range []int64{-1, 1} {
		for _, k := range []int64{1, 3, 6} {
			cases = append(cases, gradientCase{
				name:   "TopK",
				def:    netdef.NewOperator("TopK", []string{"X"}, []string{"V", "I"}, netdef.ArgInt("k", k), netdef.ArgInt("axis", axis)),
				inputs: []*blob.Tensor{x},
			})
		}
	}
	runGradientChecks(t, cases)
}

func TestTopKErrors(t *testing.T) {
	x := optest.F32(distinct(6, 1), 2, 3)
	if _, err := optest.RunOp(netdef.NewOperator("TopK", []string{"X"}, []string{"V", "I"}), x); err == nil || !strings.Contains(err.Error(), `"k"`) {
		t.Errorf("missing k: error %v", err)
	}
	if _, err := optest.RunOp(netdef.NewOperator("TopK", []string{"X"}, []string{"V", "I"}, netdef.ArgInt("k", 1), netdef.ArgInt("axis", 2)), x); err == nil ||
		!strings.Contains(err.Error(), `"X"`) {
		t.Errorf("bad axis: error %v", err)
	}
	grad := netdef.NewOperator("TopKGradient", []string{"dV", "I", "X"}, []string{"dX"}, netdef.ArgInt("k", 1))
	for _, tc := range []struct {
		name   string
		inputs []*blob.Tensor
		want   string
	}{
		{"index range", []*blob.Tensor{optest.F32([]float64{1, 2}, 2, 1), blob.MustFromSlice([]int64{0, 3}, 2, 1), x}, `"I"`},
		{"rank", []*blob.Tensor{optest.F32([]float64{1, 2}, 2), blob.MustFromSlice([]int64{0, 1}, 2), x}, `"dV"`},
		{"other dims", []*blob.Tensor{optest.F32([]float64{1, 2, 3}, 3, 1), blob.MustFromSlice([]int64{0, 1, 2}, 3, 1), x}, `"dV"`},
		{"index count", []*blob.Tensor{optest.F32([]float64{1, 2}, 2, 1), blob.MustFromSlice([]int64{0}, 1, 1), x}, `"I"`},
	} {
		if _, err := optest.RunOp(grad, tc.inputs...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.want)
		}
	}
	out, err := optest.RunOp(grad, optest.F32([]float64{5, 6, 0}, 1, 3), blob.MustFromSlice([]int64{2, 0, -1}, 1, 3), optest.F32(distinct(3, 1), 1, 3))
	if err != nil {
		t.Fatal(err)
	}
	optest.CheckClose(t, "padded TopKGradient", out[0].AsFloat64s(), []float64{6, 0, 5}, 0)
}

// TestTopKHugeK: the heap is bounded by the axis, not by k, and outputs
// that k makes larger than the memory budget are an error naming k and
// the output.
func TestTopKHugeK(t *testing.T) {
	old := blob.SetMemoryBudget(64 << 20)
	defer blob.SetMemoryBudget(old)
	x := optest.F32([]float64{3, 1, 2, 5, 4, 6}, 2, 3)
	cases := []struct {
		k    int64
		want string // "": runs
	}{
		{1 << 20, ""}, // 4 MiB of values and 8 MiB of indices, mostly padding
		{1 << 31, `output 0 ("V") with k = 2147483648: blob: shape [2 2147483648] of FLOAT: needs 16.0 GiB, over the memory budget`},
		{1 << 62, `output 0 ("V") with k = 4611686018427387904: blob: shape [2 4611686018427387904] is too large`},
	}
	for _, c := range cases {
		out, err := optest.RunOp(netdef.NewOperator("TopK", []string{"X"}, []string{"V", "I"}, netdef.ArgInt("k", c.k)), x)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("k = %d: error %v, want one containing %q", c.k, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("k = %d: %v", c.k, err)
			continue
		}
		v, idx := blob.Data[float32](out[0]), blob.Data[int64](out[1])
		if len(v) != 2*int(c.k) || v[0] != 3 || v[1] != 2 || v[2] != 1 || v[3] != 0 || idx[2] != 1 || idx[3] != -1 ||
			v[c.k] != 6 || idx[c.k] != 2 || idx[c.k+3] != -1 {
			t.Errorf("k = %d: values %v… indices %v…", c.k, v[:4], idx[:4])
		}
	}

	// No elements along the other axes: empty outputs, and no scratch
	// for k entries (2^31 of them took 16 GiB).
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := optest.RunOp(netdef.NewOperator("TopK", []string{"X"}, []string{"V", "I"}, netdef.ArgInt("k", 1<<31)), optest.F32(nil, 0, 3))
	runtime.ReadMemStats(&after)
	if err != nil || out[0].Size() != 0 || !slices.Equal(out[1].Dims(), []int{0, 1 << 31}) {
		t.Errorf("k = 2^31 on [0 3]: %v, %v", out, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("k = 2^31 on [0 3] allocated %d bytes", n)
	}
	// The same, with 2^45 elements along the (empty) X's axis.
	x, err = blob.New(blob.Float32, 1, 0, 1<<45)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&before)
	out, err = optest.RunOp(netdef.NewOperator("TopK", []string{"X"}, []string{"V", "I"}, netdef.ArgInt("k", 1<<31)), x)
	runtime.ReadMemStats(&after)
	if err != nil || out[0].Size() != 0 || !slices.Equal(out[1].Dims(), []int{1, 0, 1 << 31}) {
		t.Errorf("k = 2^31 on [1 0 2^45]: %v, %v", out, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("k = 2^31 on [1 0 2^45] allocated %d bytes", n)
	}
}
