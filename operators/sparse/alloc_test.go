package sparse

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestSteadyStateAllocations: a run after the first allocates nothing on
// the embedding path (SparseLengthsSum), nor in BatchGather and Unique,
// which keep their index scratch.
func TestSteadyStateAllocations(t *testing.T) {
	table := blob.MustFromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 4, 2)
	for _, c := range []struct {
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{netdef.NewOperator("SparseLengthsSum", []string{"D", "I", "L"}, []string{"Y"}),
			[]*blob.Tensor{table, blob.MustFromSlice([]int64{3, 0, 1}, 3), blob.MustFromSlice([]int32{2, 1}, 2)}},
		{netdef.NewOperator("BatchGather", []string{"D", "I"}, []string{"Y"}),
			[]*blob.Tensor{table, blob.MustFromSlice([]int32{1, 0, 1}, 3)}},
		{netdef.NewOperator("Unique", []string{"I"}, []string{"U", "R"}),
			[]*blob.Tensor{blob.MustFromSlice([]int64{5, 2, 5, 9, 2}, 5)}},
	} {
		optest.AssertNoAllocs(t, c.def, c.inputs...)
	}
}
