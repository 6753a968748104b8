package operators

import (
	"fmt"
	"sync"

	"github.com/caffe2go/caffe2go/netdef"
)

// Unbounded is a MaxInputs or MaxOutputs value meaning "any number".
const Unbounded = -1

// ArgSpec documents one argument an operator reads.
type ArgSpec struct {
	Name    string
	Default any // nil when the argument is required or has no default
	Doc     string
}

// Schema describes an operator type: how many inputs and outputs it takes,
// which outputs may or must share a blob with an input, and its arguments.
// How an operator's output shapes follow from its inputs' is registered
// apart, with RegisterShapeFunc.
type Schema struct {
	Type       string
	MinInputs  int
	MaxInputs  int // Unbounded for any number
	MinOutputs int
	MaxOutputs int // Unbounded for any number
	// InputsCheck, when set, accepts or rejects an input count (for example
	// WeightedSum wants an even count).
	InputsCheck func(n int) bool
	// AllowInplace reports whether output out may be the same blob as input
	// in. Nil means no in-place use is allowed.
	AllowInplace func(in, out int) bool
	// EnforceInplace lists {input, output} pairs that must be the same blob.
	EnforceInplace [][2]int
	// CPUInputs and CPUOutputs list the inputs an operator reads, and the
	// outputs it writes, in Go memory whatever device it runs on, as
	// Caffe2's device inference functions place them: an iteration
	// counter, the source of CopyCPUToGPU, the result of CopyGPUToCPU.
	CPUInputs, CPUOutputs []int
	// InputsCanCrossDevices lets inputs live on any device (Caffe2's
	// InputsCanCrossDevices), for operators that move data between devices
	// themselves.
	InputsCanCrossDevices bool
	// DynamicOutputDevices says that the operator places its outputs at
	// run time, from its inputs (CopyOnDeviceLike); CheckDevices does not
	// follow them.
	DynamicOutputDevices bool
	Args                 []ArgSpec
	Doc                  string
}

var schemas struct {
	sync.RWMutex
	m map[string]*Schema
}

// RegisterSchema records s under s.Type. Registering a type twice is an
// error.
func RegisterSchema(s Schema) error {
	if s.Type == "" {
		return fmt.Errorf("operators: schema without a type")
	}
	schemas.Lock()
	defer schemas.Unlock()
	if schemas.m == nil {
		schemas.m = map[string]*Schema{}
	}
	if _, dup := schemas.m[s.Type]; dup {
		return fmt.Errorf("operators: schema for %s registered twice", s.Type)
	}
	schemas.m[s.Type] = &s
	return nil
}

// MustRegisterSchema is RegisterSchema for init functions; it panics on a
// duplicate, which is a programming error.
func MustRegisterSchema(s Schema) {
	if err := RegisterSchema(s); err != nil {
		panic(err)
	}
}

// SchemaOf returns the schema registered for typ.
func SchemaOf(typ string) (*Schema, bool) {
	schemas.RLock()
	defer schemas.RUnlock()
	s, ok := schemas.m[typ]
	return s, ok
}

// InplaceAny allows every input to share a blob with every output.
func InplaceAny(in, out int) bool { return true }

// InplacePairs returns an AllowInplace function accepting exactly the given
// {input, output} pairs.
func InplacePairs(pairs ...[2]int) func(in, out int) bool {
	return func(in, out int) bool {
		for _, p := range pairs {
			if p[0] == in && p[1] == out {
				return true
			}
		}
		return false
	}
}

// Verify checks op against the schema: input and output counts and the
// in-place rules. The error names the operator and what is wrong.
func (s *Schema) Verify(op *netdef.OperatorDef) error {
	nIn, nOut := len(op.GetInput()), len(op.GetOutput())
	if nIn < s.MinInputs || (s.MaxInputs != Unbounded && nIn > s.MaxInputs) {
		return fmt.Errorf("operator %s: takes %s inputs, got %d", s.Type, countRange(s.MinInputs, s.MaxInputs), nIn)
	}
	if s.InputsCheck != nil && !s.InputsCheck(nIn) {
		return fmt.Errorf("operator %s: %d inputs is not an allowed input count", s.Type, nIn)
	}
	if nOut < s.MinOutputs || (s.MaxOutputs != Unbounded && nOut > s.MaxOutputs) {
		return fmt.Errorf("operator %s: produces %s outputs, got %d", s.Type, countRange(s.MinOutputs, s.MaxOutputs), nOut)
	}
	enforced := func(i, o int) bool {
		for _, p := range s.EnforceInplace {
			if p[0] == i && p[1] == o {
				return true
			}
		}
		return false
	}
	for _, p := range s.EnforceInplace {
		if p[0] < nIn && p[1] < nOut && op.Input[p[0]] != op.Output[p[1]] {
			return fmt.Errorf("operator %s: output %d (%q) must be the same blob as input %d (%q)", s.Type, p[1], op.Output[p[1]], p[0], op.Input[p[0]])
		}
	}
	for i, in := range op.GetInput() {
		for o, out := range op.GetOutput() {
			if in != out || enforced(i, o) {
				continue
			}
			if s.AllowInplace == nil || !s.AllowInplace(i, o) {
				return fmt.Errorf("operator %s: input %d and output %d are both %q, which this operator does not allow in place", s.Type, i, o, in)
			}
		}
	}
	return nil
}

func countRange(lo, hi int) string {
	switch {
	case hi == Unbounded:
		return fmt.Sprintf("at least %d", lo)
	case lo == hi:
		return fmt.Sprintf("%d", lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}
