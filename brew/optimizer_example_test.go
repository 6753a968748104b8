package brew_test

import (
	"fmt"
	"log"
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/workspace"
)

// ExampleBuildSGD trains a linear model y = w·x + b on four examples of
// label = 2·x₀ − x₁ with momentum SGD and shows the update operators that
// BuildSGD adds to the train net.
func ExampleBuildSGD() {
	brew.ResetOptimizerInstanceCount() // for the names below; see its doc
	m := brew.NewModel("linreg")
	w := m.CreateParam("w", []int64{1, 2}, brew.Init("ConstantFill"), brew.Weight)
	b := m.CreateParam("b", []int64{1}, brew.Init("ConstantFill"), brew.Bias)
	if err := m.Err(); err != nil {
		log.Fatal(err)
	}
	m.Net.Op("FC", []string{"x", w, b}, []string{"y"})
	m.Net.Op("SquaredL2Distance", []string{"y", "label"}, []string{"dist"})
	m.Net.Op("AveragedLoss", []string{"dist"}, []string{"loss"})
	if _, err := m.AddGradientOperators("loss"); err != nil {
		log.Fatal(err)
	}
	n := len(m.Net.Proto().GetOp())
	if _, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.1, Momentum: 0.9}); err != nil {
		log.Fatal(err)
	}
	for _, op := range m.Net.Proto().GetOp()[n:] {
		fmt.Println(op.GetType(), op.GetInput(), "->", op.GetOutput())
	}

	ws := workspace.New("")
	feeds := map[string]*blob.Tensor{
		"x":     blob.MustFromSlice([]float32{1, 0, 0, 1, 1, 1, 2, 1}, 4, 2),
		"label": blob.MustFromSlice([]float32{2, -1, 1, 3}, 4, 1),
	}
	for name, t := range feeds {
		if err := ws.FeedBlob(name, t); err != nil {
			log.Fatal(err)
		}
	}
	if err := ws.RunNetOnce(m.InitNet); err != nil {
		log.Fatal(err)
	}
	if err := ws.CreateNet(m.Net, false); err != nil {
		log.Fatal(err)
	}
	if err := ws.RunNet(m.Net.Name(), 300); err != nil {
		log.Fatal(err)
	}
	for _, p := range []string{w, b} {
		t, err := ws.FetchBlob(p)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s = %v\n", p, optRounded(t.AsFloat64s()))
	}
	// Output:
	// AtomicIter [iteration_mutex optimizer_iteration] -> [optimizer_iteration]
	// LearningRate [optimizer_iteration] -> [SgdOptimizer_0_lr_cpu]
	// MomentumSGDUpdate [w_grad w_momentum SgdOptimizer_0_lr_cpu w] -> [w_grad w_momentum w]
	// MomentumSGDUpdate [b_grad b_momentum SgdOptimizer_0_lr_cpu b] -> [b_grad b_momentum b]
	// w = [2 -1]
	// b = [0]
}

// optRounded rounds to two decimals (and turns −0 into 0).
func optRounded(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Round(x*100)/100 + 0
	}
	return out
}
