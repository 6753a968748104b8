package optim

import (
	"math"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestRowWiseSparseAdagrad checks the update against Caffe2's rule written
// out in float64: h[r] += mean(g²); p[r] += lr·g/(√h[r] + ε), rows named
// twice updated twice.
func TestRowWiseSparseAdagrad(t *testing.T) {
	p := []float64{0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8}
	h := []float64{0.5, 0.25, 1, 2}
	g := []float64{0.3, -0.1, 0.2, 0.4, -0.6, 0.05}
	idx := []int64{2, 0, 2}
	const lr, eps = -0.1, 1e-5
	wantP, wantH := widen(p), widen(h)
	gw := widen(g)
	for i, r := range idx {
		gi := gw[2*i : 2*i+2]
		wantH[r] += (gi[0]*gi[0] + gi[1]*gi[1]) / 2
		step := float64(float32(lr)) / (math.Sqrt(wantH[r]) + eps)
		wantP[2*r] += gi[0] * step
		wantP[2*r+1] += gi[1] * step
	}
	def := netdef.NewOperator("RowWiseSparseAdagrad", []string{"p", "h", "i", "g", "lr"}, []string{"p", "h"}, netdef.ArgFloat("epsilon", eps))
	w := optest.NewWorkspace()
	w.Feed("p", optest.F32(p, 4, 2))
	w.Feed("h", optest.F32(h, 4))
	w.Feed("i", blob.MustFromSlice(idx, 3))
	w.Feed("g", optest.F32(g, 3, 2))
	w.Feed("lr", optest.F32([]float64{lr}, 1))
	run(t, create(t, w, def))
	optest.CheckClose(t, "param", values(t, w, "p"), wantP, 1e-6)
	optest.CheckClose(t, "moment", values(t, w, "h"), wantH, 1e-6)

	w.Feed("h", optest.F32(h[:3], 3))
	if err := create(t, w, def).Run(); err == nil {
		t.Error("a moment of 3 elements for 4 rows: no error")
	}
}
