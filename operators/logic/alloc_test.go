package logic

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestSteadyStateAllocs checks that a second run allocates nothing.
func TestSteadyStateAllocs(t *testing.T) {
	a := blob.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := blob.MustFromSlice([]float32{2, 2, 2}, 3)
	c := blob.MustFromSlice([]bool{true, false, true, false, true, false}, 2, 3)
	for _, x := range []struct {
		def *netdef.OperatorDef
		in  []*blob.Tensor
	}{
		{netdef.NewOperator("LT", []string{"a", "b"}, []string{"c"}), []*blob.Tensor{a, b}},
		{netdef.NewOperator("EQ", []string{"a", "b"}, []string{"c"}, netdef.ArgInt("broadcast", 1)), []*blob.Tensor{a, b}},
		{netdef.NewOperator("Xor", []string{"a", "b"}, []string{"c"}), []*blob.Tensor{c, c}},
		{netdef.NewOperator("Not", []string{"a"}, []string{"c"}), []*blob.Tensor{c}},
		{netdef.NewOperator("Where", []string{"c", "x", "y"}, []string{"z"}), []*blob.Tensor{c, a, a}},
		{netdef.NewOperator("IsNaN", []string{"x"}, []string{"y"}), []*blob.Tensor{a}},
		{netdef.NewOperator("NanCheck", []string{"x"}, []string{"y"}), []*blob.Tensor{a}},
		{netdef.NewOperator("ReplaceNaN", []string{"x"}, []string{"y"}), []*blob.Tensor{a}},
	} {
		t.Run(x.def.GetType(), func(t *testing.T) { optest.AssertNoAllocs(t, x.def, x.in...) })
	}
}
