package optim

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// steadyOps builds one instance of each optimizer operator over n-element
// float32 blobs, each already run once.
func steadyOps(t testing.TB, n int) map[string]operators.Operator {
	w := optest.NewWorkspace()
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 0.5
	}
	for _, name := range []string{"g", "m", "m2", "p"} {
		w.Feed(name, optest.F32(ones, n))
	}
	w.Feed("lr", optest.F32([]float64{-0.01}))
	w.Feed("it", blob.MustFromSlice([]int64{0}))
	rows := make([]int64, n)
	for i := range rows {
		rows[i] = int64(n - 1 - i)
	}
	w.Feed("rows", blob.MustFromSlice(rows))
	run(t, create(t, w, netdef.NewOperator("CreateMutex", nil, []string{"mutex"})))
	defs := map[string]*netdef.OperatorDef{
		"Iter":       netdef.NewOperator("Iter", []string{"it"}, []string{"it"}),
		"AtomicIter": netdef.NewOperator("AtomicIter", []string{"mutex", "it"}, []string{"it"}),
		"LearningRate": netdef.NewOperator("LearningRate", []string{"it"}, []string{"lr_out"},
			netdef.ArgFloat("base_lr", -0.1), netdef.ArgString("policy", "step"), netdef.ArgInt("stepsize", 10), netdef.ArgFloat("gamma", 0.9)),
		"MomentumSGD":        netdef.NewOperator("MomentumSGD", []string{"g", "m", "lr"}, []string{"g_out", "m"}, netdef.ArgFloat("momentum", 0.9)),
		"MomentumSGDUpdate":  netdef.NewOperator("MomentumSGDUpdate", []string{"g", "m", "lr", "p"}, []string{"g_adj", "m", "p"}, netdef.ArgFloat("momentum", 0.9), netdef.ArgInt("nesterov", 1)),
		"Adam":               netdef.NewOperator("Adam", []string{"p", "m", "m2", "g", "lr", "it"}, []string{"p", "m", "m2", "g_eff"}),
		"Adagrad":            netdef.NewOperator("Adagrad", []string{"p", "m2", "g", "lr"}, []string{"p", "m2"}),
		"RmsProp":            netdef.NewOperator("RmsProp", []string{"g", "m", "m2", "lr"}, []string{"g_rms", "m", "m2"}, netdef.ArgFloat("momentum", 0.5)),
		"Lars":               netdef.NewOperator("Lars", []string{"p", "g"}, []string{"lars"}),
		"ScatterWeightedSum": netdef.NewOperator("ScatterWeightedSum", []string{"p", "lr", "rows", "g", "lr"}, []string{"p"}),
		"SparseMomentumSGDUpdate": netdef.NewOperator("SparseMomentumSGDUpdate", []string{"g", "m", "lr", "p", "rows"}, []string{"g_sparse", "m", "p"},
			netdef.ArgFloat("momentum", 0.9)),
		"SparseAdagrad": netdef.NewOperator("SparseAdagrad", []string{"p", "m2", "rows", "g", "lr"}, []string{"p", "m2"}),
		"SparseAdam":    netdef.NewOperator("SparseAdam", []string{"p", "m", "m2", "rows", "g", "lr", "it"}, []string{"p", "m", "m2"}),
	}
	ops := map[string]operators.Operator{}
	for name, def := range defs {
		ops[name] = create(t, w, def)
		run(t, ops[name])
	}
	return ops
}

func TestOptimizersDoNotAllocate(t *testing.T) {
	for name, op := range steadyOps(t, 64) {
		t.Run(name, func(t *testing.T) { optest.AssertOpNoAllocs(t, op) })
	}
}

func benchOp(b *testing.B, name string) { optest.Benchmark(b, steadyOps(b, 1<<16)[name]) }

func BenchmarkMomentumSGDUpdate(b *testing.B) { benchOp(b, "MomentumSGDUpdate") }
func BenchmarkAdam(b *testing.B)              { benchOp(b, "Adam") }
func BenchmarkAdagrad(b *testing.B)           { benchOp(b, "Adagrad") }
func BenchmarkLearningRate(b *testing.B)      { benchOp(b, "LearningRate") }
func BenchmarkAtomicIter(b *testing.B)        { benchOp(b, "AtomicIter") }
func BenchmarkRmsProp(b *testing.B)           { benchOp(b, "RmsProp") }
func BenchmarkSparseAdagrad(b *testing.B)     { benchOp(b, "SparseAdagrad") }
