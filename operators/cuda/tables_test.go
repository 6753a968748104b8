package cuda_test

import (
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/cuda"
	_ "github.com/caffe2go/caffe2go/operators/std"
	_ "github.com/caffe2go/caffe2go/persist"
)

// TestElementwiseTableMatchesCPU checks the element-wise table against the
// CPU operators: each type exists with the table's input count, and each
// argument the kernel reads is one the schema documents.
func TestElementwiseTableMatchesCPU(t *testing.T) {
	for _, op := range cuda.Elementwise {
		if !slices.ContainsFunc(operators.Implementations(op.Type), func(i operators.Implementation) bool { return i.Device == netdef.CPU }) {
			t.Errorf("%s has no CPU implementation to match", op.Type)
			continue
		}
		s, ok := operators.SchemaOf(op.Type)
		if !ok {
			t.Errorf("%s has no schema", op.Type)
			continue
		}
		if s.MinInputs != op.Inputs || s.MaxInputs != op.Inputs {
			t.Errorf("%s takes %d to %d inputs on the CPU, the kernel %d", op.Type, s.MinInputs, s.MaxInputs, op.Inputs)
		}
		for _, a := range op.Args {
			if !slices.ContainsFunc(s.Args, func(spec operators.ArgSpec) bool { return spec.Name == a.Name }) {
				t.Errorf("%s: the kernel reads argument %q, which the schema does not document", op.Type, a.Name)
			}
		}
	}
}

// TestTables checks the tables of CUDA implementations against the CPU
// operators: every type named exists on the CPU, none is named twice, and
// no type is both implemented and host-only. (The conformance suite checks
// every CUDA registration against the CPU's on a GPU machine.)
func TestTables(t *testing.T) {
	seen := map[string]string{}
	for _, list := range []struct {
		name  string
		types []string
	}{{"element-wise", elementwiseTypes()}, {"host-only", cuda.HostOnly}} {
		for _, typ := range list.types {
			if prev, dup := seen[typ]; dup {
				t.Errorf("%s is both %s and %s", typ, prev, list.name)
			}
			seen[typ] = list.name
			if !slices.ContainsFunc(operators.Implementations(typ), func(i operators.Implementation) bool {
				return i.Device == netdef.CPU || i.Device == operators.AnyDevice
			}) {
				t.Errorf("%s (%s) has no CPU implementation", typ, list.name)
			}
		}
	}
}

func elementwiseTypes() []string {
	var out []string
	for _, op := range cuda.Elementwise {
		out = append(out, op.Type)
	}
	return out
}
