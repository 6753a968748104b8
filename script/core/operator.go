package core

import (
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/protoarg"
)

// IsOperatorType reports whether typ is registered, plainly or with the
// CUDNN engine (Caffe2's test for net.<Op> attributes).
func IsOperatorType(typ string) bool {
	return operators.IsOperator(typ) || operators.IsOperatorWithEngine(typ, "CUDNN")
}

func unknownOperatorError(typ string) error {
	return fmt.Errorf("Method %s is not a registered operator. Did you mean: [%s]", typ, strings.Join(nearbyOperators(typ), ","))
}

// nearbyOperators returns the registered operator types within edit
// distance 3 of name, closest first.
func nearbyOperators(name string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, key := range operators.RegisteredOperators() {
		if strings.Contains(key, "_ENGINE_") {
			continue
		}
		if d := editDistance(strings.ToLower(key), strings.ToLower(name)); d <= 3 {
			cs = append(cs, cand{key, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.name)
	}
	return out
}

// editDistance is Caffe2's (caffe2/utils/string_utils.cc): Levenshtein's
// with a transposition of two neighbours counting as one edit.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// opBuilder returns the bound method net.<typ>(inputs, outputs=None, **kw).
func opBuilder(typ string, n *Net) *starlark.Builtin {
	return starlark.NewBuiltin("Net."+typ, binding.Safe(func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var inputs, outputs starlark.Value = starlark.NewList(nil), starlark.None
		var rest []starlark.Tuple
		for _, kv := range kwargs {
			switch string(kv[0].(starlark.String)) {
			case "inputs", "blob_in":
				inputs = kv[1]
			case "outputs", "blob_out":
				outputs = kv[1]
			default:
				rest = append(rest, kv)
			}
		}
		if len(args) > 2 {
			return nil, fmt.Errorf("%s: want at most 2 positional arguments (inputs, outputs), got %d", b.Name(), len(args))
		}
		if len(args) > 0 {
			inputs = args[0]
		}
		if len(args) > 1 {
			outputs = args[1]
		}
		return n.addOp(typ, inputs, outputs, rest)
	}))
}

// addOp is Caffe2's Net._CreateAndAddToSelf.
func (n *Net) addOp(typ string, inputs, outputs starlark.Value, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := n.CheckMutable("add an operator to"); err != nil {
		return nil, err
	}
	scope := devicescope.Current()
	ins, err := rectify(inputs, scope, "inputs")
	if err != nil {
		return nil, fmt.Errorf("%s: %v", typ, err)
	}
	var outs []string
	switch o := outputs.(type) {
	case starlark.NoneType:
		outs = []string{scope.Scoped(n.net.NextName(typ))}
	case starlark.Int:
		k, err := starlark.AsInt32(o)
		if err != nil || k < 0 {
			return nil, fmt.Errorf("%s: output count must be a non-negative int, got %s", typ, o)
		}
		for i := 0; i < k; i++ {
			outs = append(outs, scope.Scoped(n.net.NextName(typ, i)))
		}
	default:
		if outs, err = rectify(outputs, scope, "outputs"); err != nil {
			return nil, fmt.Errorf("%s: %v", typ, err)
		}
	}
	op, err := createOperator(typ, ins, outs, kwargs, scope)
	if err != nil {
		return nil, err
	}
	n.net.AddOp(op)
	switch len(outs) {
	case 0:
		return starlark.None, nil
	case 1:
		return &BlobReference{name: outs[0], net: n}, nil
	}
	refs := make(starlark.Tuple, len(outs))
	for i, o := range outs {
		refs[i] = &BlobReference{name: o, net: n}
	}
	return refs, nil
}

// rectify turns a blob argument into names: a string gets the name scope
// prepended, a BlobReference is taken as it is, a list or tuple element by
// element.
func rectify(v starlark.Value, scope devicescope.Scope, what string) ([]string, error) {
	switch x := v.(type) {
	case starlark.String:
		return []string{scope.Scoped(string(x))}, nil
	case *BlobReference:
		return []string{x.name}, nil
	case *starlark.List, starlark.Tuple:
		seq := x.(starlark.Indexable)
		out := make([]string, 0, seq.Len())
		for i := 0; i < seq.Len(); i++ {
			switch e := seq.Index(i).(type) {
			case starlark.String:
				out = append(out, scope.Scoped(string(e)))
			case *BlobReference:
				out = append(out, e.name)
			default:
				return nil, fmt.Errorf("%s must be names or BlobReferences, got a %s element", what, e.Type())
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s must be a name, a BlobReference or a list of them, got %s", what, v.Type())
}

// createOperator is Caffe2's core.CreateOperator for names already
// rectified: the special keywords set fields, the others become arguments
// in call order.
func createOperator(typ string, inputs, outputs []string, kwargs []starlark.Tuple, scope devicescope.Scope) (*netdef.OperatorDef, error) {
	op := netdef.NewOperator(typ, inputs, outputs)
	var device *netdef.DeviceOption
	deviceSet := false
	var seed *uint32
	for _, kv := range kwargs {
		key := string(kv[0].(starlark.String))
		v := kv[1]
		switch key {
		case "name":
			s, ok := starlark.AsString(v)
			if !ok {
				return nil, fmt.Errorf("%s: name must be a string, got %s", typ, v.Type())
			}
			op.Name = proto.String(s)
		case "control_input":
			if v == starlark.None {
				continue
			}
			names, err := rectify(v, scope, "control_input")
			if err != nil {
				return nil, fmt.Errorf("%s: %v", typ, err)
			}
			op.ControlInput = names
		case "device_option":
			opt, err := protoarg.DeviceOption(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", typ, err)
			}
			device, deviceSet = opt, opt != nil
		case "engine":
			if v == starlark.None {
				continue
			}
			s, ok := starlark.AsString(v)
			if !ok {
				return nil, fmt.Errorf("%s: engine must be a string, got %s", typ, v.Type())
			}
			op.Engine = proto.String(s)
		case "arg":
			if v == starlark.None {
				continue
			}
			args, err := protoarg.Arguments(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", typ, err)
			}
			op.Arg = append(args, op.Arg...)
		case "random_seed":
			i, ok := convert.IntOf(v)
			if !ok || i < 0 || i > 1<<32-1 {
				return nil, fmt.Errorf("%s: random_seed must be a non-negative int, got %s", typ, v)
			}
			s := uint32(i)
			seed = &s
		default:
			arg, err := protoarg.MakeArgument(key, v)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", typ, err)
			}
			op.Arg = append(op.Arg, arg)
		}
	}
	if !deviceSet {
		device = scope.Device()
	}
	if seed != nil {
		if device == nil {
			device = &netdef.DeviceOption{}
		}
		device.RandomSeed = seed
	}
	op.DeviceOption = device
	return op, nil
}
