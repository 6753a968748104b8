package tests

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// FuzzNetDef builds an operator of any registered type from the fuzzer's
// bytes (hostileCase: the type, the inputs' types, shapes and values, the
// outputs, and arguments of any value, not clamped) and runs it through
// CreateNet and RunNet under a 256 MiB memory budget. It may fail, but
// must not panic, hang or exhaust memory, and no error may be a recovered
// panic. Run the fuzzer under ulimit -v (as .ci/run does), so that an
// allocation the budget misses crashes the worker instead of the machine.
func FuzzNetDef(f *testing.F) {
	old := blob.SetMemoryBudget(256 << 20)
	f.Cleanup(func() { blob.SetMemoryBudget(old) })
	ops := operators.RegisteredOperators()
	for i := range ops {
		// One seed per operator type: the first byte chooses it.
		f.Add([]byte{byte(i), 1, 2, 3, 4, 5, 6, 7, 8})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &byteChooser{data: data}
		hc := newHostileCase(c, ops[c.intn(len(ops))])
		dir := t.TempDir()
		t.Chdir(dir) // relative DB paths in arguments land here
		if outcome, err := hc.run(dir); outcome == recovered {
			t.Fatalf("%v\n  case: %v", err, hc)
		}
	})
}
