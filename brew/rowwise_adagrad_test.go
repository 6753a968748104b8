package brew_test

import (
	"math"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/workspace"
)

// TestRowWiseAdagrad builds Adagrad with RowWise over a table read through
// Gather and checks one step against Caffe2's row-wise rule written out:
// the table's moment has one element per row, and only the rows read move.
func TestRowWiseAdagrad(t *testing.T) {
	m := brew.NewModel("rowwise")
	m.CreateParam("w", []int64{4, 2}, brew.Init("ConstantFill"), brew.Weight)
	m.AddExternalInputs("indices")
	m.Op("Gather", []string{"w", "indices"}, []string{"rows"})
	m.Op("SumElements", []string{"rows"}, []string{"loss"})
	_, err := m.AddGradientOperators("loss")
	optNoErr(t, err)
	_, err = brew.BuildAdagrad(m, brew.AdagradOptions{BaseLR: 0.5, Epsilon: 1e-5, RowWise: true})
	optNoErr(t, err)

	ws := workspace.New("")
	defer ws.Close()
	optNoErr(t, ws.RunNetOnce(m.InitNet))
	optNoErr(t, ws.FeedBlob("w", blob.MustFromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 4, 2)))
	optNoErr(t, ws.FeedBlob("indices", blob.MustFromSlice([]int64{2, 0, 2}, 3)))
	optNoErr(t, ws.RunNetOnce(m.Net))
	h, err := ws.FetchBlob("w_avg_squared_sum")
	optNoErr(t, err)
	if d := h.Dims(); len(d) != 1 || d[0] != 4 {
		t.Fatalf("moment shape %v, want [4]", d)
	}
	// The gradient of each gathered row is (1, 1): row 2 is updated twice,
	// row 0 once; each update adds mean(g²) = 1 to the row's moment and
	// moves the row by −0.5/(√h + ε).
	want := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	hs := []float64{0, 0, 0, 0}
	for _, r := range []int{2, 0, 2} {
		hs[r]++
		step := 0.5 / (math.Sqrt(hs[r]) + 1e-5)
		want[2*r] -= step
		want[2*r+1] -= step
	}
	w, err := ws.FetchBlob("w")
	optNoErr(t, err)
	for i, v := range w.AsFloat64s() {
		if math.Abs(v-want[i]) > 1e-5 {
			t.Fatalf("w = %v, want %v", w.AsFloat64s(), want)
		}
	}
	for i, v := range h.AsFloat64s() {
		if v != hs[i] {
			t.Fatalf("moment = %v, want %v", h.AsFloat64s(), hs)
		}
	}
}
