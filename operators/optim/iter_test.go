package optim

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func iterValue(t *testing.T, w *optest.Workspace, name string) int64 {
	t.Helper()
	x := w.Tensor(name)
	if x == nil || x.DataType() != blob.Int64 || x.Size() != 1 {
		t.Fatalf("blob %q = %v, want an int64 [1] tensor", name, x)
	}
	return blob.Data[int64](x)[0]
}

func TestIterCounts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inputs []string
	}{
		{"no input", nil},
		{"in place", []string{"it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := optest.NewWorkspace()
			w.CreateBlob("it") // exists but holds nothing
			op := create(t, w, netdef.NewOperator("Iter", tc.inputs, []string{"it"}))
			for n := int64(1); n <= 2000; n++ {
				run(t, op)
				if n%500 == 0 {
					if got := iterValue(t, w, "it"); got != n {
						t.Fatalf("after %d runs the counter is %d", n, got)
					}
				}
			}
			if d := w.Tensor("it").Dims(); len(d) != 1 || d[0] != 1 {
				t.Errorf("counter shape %v, want [1]", d)
			}
		})
	}
}

func TestIterResumesFromExistingValue(t *testing.T) {
	w := optest.NewWorkspace()
	w.Feed("it", blob.MustFromSlice([]int64{41}))
	run(t, create(t, w, netdef.NewOperator("Iter", []string{"it"}, []string{"it"})))
	if got := iterValue(t, w, "it"); got != 42 {
		t.Errorf("counter = %d, want 42", got)
	}
}

func TestIterErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		feed *blob.Tensor
		want string
	}{
		{"float counter", blob.MustFromSlice([]float32{1}), "INT64"},
		{"two elements", blob.MustFromSlice([]int64{1, 2}), "one element"},
		{"negative", blob.MustFromSlice([]int64{-1}), "negative"},
		{"overflow", blob.MustFromSlice([]int64{math.MaxInt64}), "overflow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := optest.NewWorkspace()
			w.Feed("it", tc.feed)
			err := create(t, w, netdef.NewOperator("Iter", []string{"it"}, []string{"it"})).Run()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"it"`) {
				t.Errorf("error %v, want one naming \"it\" and saying %q", err, tc.want)
			}
		})
	}
}

func TestIterSchema(t *testing.T) {
	w := optest.NewWorkspace()
	w.Feed("a", blob.MustFromSlice([]int64{0}))
	if _, err := operators.Create(netdef.NewOperator("Iter", []string{"a"}, []string{"b"}), w, -1); err == nil {
		t.Error("Iter with a different output blob was accepted")
	}
	w.CreateBlob("m").Set(&Mutex{})
	if _, err := operators.Create(netdef.NewOperator("AtomicIter", []string{"m", "a"}, []string{"b"}), w, -1); err == nil {
		t.Error("AtomicIter with a different output blob was accepted")
	}
}

func TestCreateMutexAndAtomicIter(t *testing.T) {
	w := optest.NewWorkspace()
	run(t, create(t, w, netdef.NewOperator("CreateMutex", nil, []string{"mutex"})))
	if got := w.Blobs["mutex"].TypeName(); got != "std::unique_ptr<std::mutex>" {
		t.Errorf("mutex blob type %q", got)
	}
	w.Feed("it", blob.MustFromSlice([]int64{0}))
	const workers, runs = 8, 250
	ops := make([]operators.Operator, workers)
	for i := range ops {
		ops[i] = create(t, w, netdef.NewOperator("AtomicIter", []string{"mutex", "it"}, []string{"it"}))
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for _, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range runs {
				if err := op.Run(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := iterValue(t, w, "it"); got != workers*runs {
		t.Errorf("counter = %d after %d concurrent increments", got, workers*runs)
	}
}

func TestAtomicIterNeedsMutex(t *testing.T) {
	w := optest.NewWorkspace()
	w.Feed("m", blob.MustFromSlice([]float32{1}))
	w.Feed("it", blob.MustFromSlice([]int64{0}))
	err := create(t, w, netdef.NewOperator("AtomicIter", []string{"m", "it"}, []string{"it"})).Run()
	if err == nil || !strings.Contains(err.Error(), `"m"`) || !strings.Contains(err.Error(), "mutex") {
		t.Errorf("error %v, want one naming \"m\" and the missing mutex", err)
	}
}

func TestOptimGradientKinds(t *testing.T) {
	for _, tc := range []struct {
		def       *netdef.OperatorDef
		forbidden bool
	}{
		{netdef.NewOperator("Iter", []string{"it"}, []string{"it"}), false},
		{netdef.NewOperator("AtomicIter", []string{"m", "it"}, []string{"it"}), false},
		{netdef.NewOperator("LearningRate", []string{"it"}, []string{"lr"}), false},
		{netdef.NewOperator("CreateMutex", nil, []string{"m"}), true},
		{netdef.NewOperator("MomentumSGD", []string{"g", "m", "lr"}, []string{"g", "m"}), true},
		{netdef.NewOperator("MomentumSGDUpdate", []string{"g", "m", "lr", "p"}, []string{"g", "m", "p"}), true},
		{netdef.NewOperator("Adam", []string{"p", "m1", "m2", "g", "lr", "it"}, []string{"p", "m1", "m2"}), true},
		{netdef.NewOperator("Adagrad", []string{"p", "h", "g", "lr"}, []string{"p", "h"}), true},
	} {
		gd, err := operators.GetGradientDefs(tc.def, optest.DenseGradients(tc.def))
		switch {
		case tc.forbidden && err == nil:
			t.Errorf("%s: gradient allowed, want it forbidden", tc.def.GetType())
		case !tc.forbidden && err != nil:
			t.Errorf("%s: %v, want no gradient", tc.def.GetType(), err)
		case !tc.forbidden && len(gd.Ops) != 0:
			t.Errorf("%s: %d gradient ops, want none", tc.def.GetType(), len(gd.Ops))
		}
	}
}
