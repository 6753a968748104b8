package script

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/ndarray"
	"github.com/caffe2go/caffe2go/script/np"
)

// Net is the Starlark value of a net builder (Caffe2's core.Net). Besides
// its methods, every registered operator type is an attribute that adds an
// operator: net.Relu(["x"], ["y"]), net.FC(["x", "w", "b"], "y", axis = 1).
type Net struct {
	net    *netdef.Net
	frozen bool
}

// NewNet wraps a net builder.
func NewNet(n *netdef.Net) *Net { return &Net{net: n} }

// Builder returns the wrapped net builder.
func (n *Net) Builder() *netdef.Net { return n.net }

// Proto returns the net's live NetDef, so that a Net is a netdef.NetSource
// (and NetDef fields take a Net).
func (n *Net) Proto() *netdef.NetDef { return n.net.Proto() }

var _ starlark.HasAttrs = (*Net)(nil)

// String returns the net's name, as Caffe2's str(net) does.
func (n *Net) String() string { return n.net.Name() }

// Repr describes the net for the REPL.
func (n *Net) Repr() string {
	return fmt.Sprintf("<Net %q: %d ops>", n.net.Name(), len(n.net.Proto().GetOp()))
}

// Type returns "Net".
func (n *Net) Type() string { return "Net" }

// Freeze makes the net read-only.
func (n *Net) Freeze() { n.frozen = true }

// Truth reports true.
func (n *Net) Truth() starlark.Bool { return true }

// Hash hashes the net's identity.
func (n *Net) Hash() (uint32, error) { return starlark.String(n.net.Name()).Hash() }

func (n *Net) checkMutable(what string) error {
	if n.frozen {
		return fmt.Errorf("cannot %s frozen net %q", what, n.net.Name())
	}
	return nil
}

var netMethods = binding.NewMethodTable("Net",
	"Net(name_or_proto): a net builder, as Caffe2's core.Net.\n\n"+
		"Every registered operator type is a method that appends an operator:\n"+
		"  y = net.Relu([\"x\"], [\"y\"])            # one output: a BlobReference\n"+
		"  a, b = net.Split(\"x\", 2, axis = 0)     # an int n: n auto-named outputs\n"+
		"Inputs and outputs are names (the current name scope is prepended) or BlobReferences\n"+
		"(used as they are), or lists of them; outputs=None means one auto-named output.\n"+
		"Keywords become operator arguments, except name, control_input, device_option, arg,\n"+
		"engine and random_seed, which set those fields as core.CreateOperator does.",
	[]binding.Fn{
		{Name: "Name", Doc: "Name()\n\nReturns the net's (process-unique) name.", Body: netName},
		{Name: "Proto", Doc: "Proto()\n\nReturns the live NetDef: edits to it change the net.", Body: netProto},
		{Name: "AddExternalInput", Doc: "AddExternalInput(*inputs)\n\nDeclares external inputs; returns a BlobReference (or a list for several).", Body: netAddExternalInput},
		{Name: "AddExternalInputs", Doc: "AddExternalInputs(*inputs)\n\nThe same as AddExternalInput.", Body: netAddExternalInput},
		{Name: "AddExternalOutput", Doc: "AddExternalOutput(*outputs)\n\nDeclares external outputs; each must be produced by the net or be an external input.", Body: netAddExternalOutput},
		{Name: "AddExternalOutputs", Doc: "AddExternalOutputs(*outputs)\n\nThe same as AddExternalOutput.", Body: netAddExternalOutput},
		{Name: "NextName", Doc: "NextName(prefix=None, output_id=None)\n\nReturns an unused blob name: \"<net>/<prefix>\" (\":<id>\"), or \"<net>_blob_<k>\".", Body: netNextName},
		{Name: "NextBlob", Doc: "NextBlob(prefix='unnamed')\n\nReturns prefix, or prefix_auto_<i>, unused in the net, and reserves it.", Body: netNextBlob(false)},
		{Name: "NextScopedBlob", Doc: "NextScopedBlob(prefix='unnamed')\n\nNextBlob of the prefix in the current name scope.", Body: netNextBlob(true)},
		{Name: "BlobIsDefined", Doc: "BlobIsDefined(blob)\n\nReports whether an op produces the blob or it is an external input.", Body: netBlobPredicate(true)},
		{Name: "UsesBlob", Doc: "UsesBlob(blob)\n\nReports whether an op reads the blob or it is an external input.", Body: netBlobPredicate(false)},
		{Name: "UsedBlobNames", Doc: "UsedBlobNames()\n\nReturns every blob name the net mentions, sorted.", Body: netUsedBlobNames},
		{Name: "GetBlobRef", Doc: "GetBlobRef(blob_name)\n\nReturns a BlobReference to a blob the net defines (an error otherwise).", Body: netGetBlobRef},
		{Name: "AppendNet", Doc: "AppendNet(net)\n\nAppends copies of another net's ops and its external inputs and outputs; returns this net.", Body: netAppendNet},
		{Name: "Clone", Doc: "Clone(name, blob_remap=None, op_id_mask=None)\n\nReturns a copy of the net under a new name, with blobs renamed through blob_remap\nand only the ops listed in op_id_mask (all when None).", Body: netClone},
		{Name: "ClonePartial", Doc: "ClonePartial(name, inputs, outputs)\n\nReturns (net, output refs): a new net with only the ops that compute outputs from inputs\n(a dict old -> new name, a list of pairs, or a list of names).", Body: netClonePartial},
		{Name: "Const", Doc: "Const(array, blob_out=None, dtype=None)\n\nAdds a GivenTensor*Fill op that produces array; returns its output.", Body: netConst},
		{Name: "AddGradientOperators", Doc: "AddGradientOperators(ys, skip=0)\n\nAppends the backward pass for ys (a list of blobs, or a dict blob -> gradient or None)\nover the ops after the first skip; returns a dict blob name -> gradient\n(a BlobReference, or a GradientSlice for sparse gradients).", Body: netAddGradientOperators},
		{Name: "set_rand_seed", Doc: "set_rand_seed(seed=100, sequence_seed=True, seed_on_op_def=False)\n\nSets device_option.random_seed of every op: seed + i with sequence_seed, else seed;\nseed_on_op_def adds a hash of the op.", Body: netSetRandSeed},
		{Name: "RunAllOnGPU", Doc: "RunAllOnGPU(gpu_id=0, use_cudnn=False)\n\nSets the net's device option to CUDA gpu_id (and every op's engine to CUDNN with use_cudnn).", Body: netRunAllOnGPU},
	})

// Attr returns a method, the external_inputs / external_outputs lists, or
// an operator builder for a registered operator type.
func (n *Net) Attr(name string) (starlark.Value, error) {
	if m := netMethods.Bind(name, n); m != nil {
		return m, nil
	}
	switch name {
	case "external_inputs":
		return n.refList(n.net.ExternalInputs()), nil
	case "external_outputs":
		return n.refList(n.net.ExternalOutputs()), nil
	}
	if name == "" || name[0] < 'A' || name[0] > 'Z' {
		return nil, nil
	}
	if !isOperatorType(name) {
		return nil, unknownOperatorError(name)
	}
	return opBuilder(name, n), nil
}

// AttrNames lists the methods (operator types are not listed).
func (n *Net) AttrNames() []string {
	return append([]string{"external_inputs", "external_outputs"}, netMethods.Names()...)
}

func (n *Net) refList(names []string) *starlark.List {
	vals := make([]starlark.Value, len(names))
	for i, s := range names {
		vals[i] = &BlobReference{name: s, net: n}
	}
	return starlark.NewList(vals)
}

// isOperatorType reports whether typ is registered, plainly or with the
// CUDNN engine (Caffe2's test for net.<Op> attributes).
func isOperatorType(typ string) bool {
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

func editDistance(a, b string) int {
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
		}
		prev, cur = cur, prev
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
	if err := n.checkMutable("add an operator to"); err != nil {
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
			opt, err := deviceOptionArg(v)
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
			args, err := argumentList(v)
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
			arg, err := makeArgument(key, v)
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

func argumentList(v starlark.Value) ([]*netdef.Argument, error) {
	iter, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("arg must be a list of Arguments, got %s", v.Type())
	}
	var out []*netdef.Argument
	it := iter.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		m, ok := x.(*caffe2pb2.Message)
		a, isArg := (*netdef.Argument)(nil), false
		if ok {
			a, isArg = m.Proto().(*netdef.Argument)
		}
		if !isArg {
			return nil, fmt.Errorf("arg must be a list of Arguments, got a %s element", x.Type())
		}
		out = append(out, proto.Clone(a).(*netdef.Argument))
	}
	return out, nil
}

// makeArgument is Caffe2's utils.MakeArgument for a Starlark value.
func makeArgument(key string, v starlark.Value) (*netdef.Argument, error) {
	g, err := goArgValue(v)
	if err != nil {
		return nil, fmt.Errorf("Unknown argument type: key=%s value=%s, value type=%s", key, v, v.Type())
	}
	return netdef.MakeArgument(key, g)
}

func goArgValue(v starlark.Value) (any, error) {
	switch x := v.(type) {
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		i, ok := x.Int64()
		if !ok {
			return nil, fmt.Errorf("integer too large")
		}
		return i, nil
	case starlark.Float:
		return float64(x), nil
	case starlark.String:
		return string(x), nil
	case starlark.Bytes:
		return []byte(x), nil
	case *BlobReference:
		return x.name, nil
	case *Net:
		return proto.Clone(x.net.Proto()), nil
	case *caffe2pb2.Message:
		return proto.Clone(x.Proto()), nil
	case *np.Array:
		t := x.Tensor()
		switch ndarray.KindOf(t.DataType()) {
		case ndarray.KindFloat:
			if t.DataType() == blob.Float32 {
				return append([]float32{}, blob.Data[float32](t)...), nil
			}
			return append([]float64{}, ndarray.FloatsOf(t)...), nil
		case ndarray.KindString:
			return append([]string{}, blob.Data[string](t)...), nil
		case ndarray.KindBool:
			return append([]bool{}, blob.Data[bool](t)...), nil
		}
		return append([]int64{}, ndarray.IntsOf(t)...), nil
	case *starlark.List, starlark.Tuple:
		return goArgList(x.(starlark.Indexable))
	}
	return nil, fmt.Errorf("unsupported")
}

func goArgList(seq starlark.Indexable) (any, error) {
	n := seq.Len()
	all := func(pred func(starlark.Value) bool) bool {
		for i := 0; i < n; i++ {
			if !pred(seq.Index(i)) {
				return false
			}
		}
		return true
	}
	switch {
	case all(func(v starlark.Value) bool { _, ok := v.(starlark.Float); return ok }):
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(seq.Index(i).(starlark.Float))
		}
		return out, nil
	case all(func(v starlark.Value) bool { _, ok := convert.IntOf(v); return ok }):
		out := make([]int64, n)
		for i := range out {
			out[i], _ = convert.IntOf(seq.Index(i))
		}
		return out, nil
	case all(func(v starlark.Value) bool {
		_, s := v.(starlark.String)
		_, r := v.(*BlobReference)
		return s || r
	}):
		out := make([]string, n)
		for i := range out {
			if r, ok := seq.Index(i).(*BlobReference); ok {
				out[i] = r.name
			} else {
				out[i] = string(seq.Index(i).(starlark.String))
			}
		}
		return out, nil
	case all(func(v starlark.Value) bool { _, ok := v.(starlark.Bytes); return ok }):
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte(seq.Index(i).(starlark.Bytes))
		}
		return out, nil
	case all(func(v starlark.Value) bool { _, ok := netDefOf(v); return ok }):
		out := make([]*netdef.NetDef, n)
		for i := range out {
			d, _ := netDefOf(seq.Index(i))
			out[i] = proto.Clone(d).(*netdef.NetDef)
		}
		return out, nil
	case all(func(v starlark.Value) bool { _, ok := v.(*caffe2pb2.Message); return ok }):
		out := make([][]byte, n)
		for i := range out {
			b, err := netdef.Marshal(seq.Index(i).(*caffe2pb2.Message).Proto())
			if err != nil {
				return nil, err
			}
			out[i] = b
		}
		return out, nil
	}
	return nil, fmt.Errorf("mixed list")
}

// netDefOf returns the NetDef of a Net or of a NetDef message.
func netDefOf(v starlark.Value) (*netdef.NetDef, bool) {
	switch x := v.(type) {
	case *Net:
		return x.net.Proto(), true
	case *caffe2pb2.Message:
		d, ok := x.Proto().(*netdef.NetDef)
		return d, ok
	}
	return nil, false
}

// deviceOptionArg reads an optional DeviceOption argument (None gives nil).
func deviceOptionArg(v starlark.Value) (*netdef.DeviceOption, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	if m, ok := v.(*caffe2pb2.Message); ok {
		if d, ok := m.Proto().(*netdef.DeviceOption); ok {
			return devicescope.Clone(d), nil
		}
	}
	return nil, fmt.Errorf("device_option must be a DeviceOption, got %s", v.Type())
}

func netName(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return starlark.String(b.Receiver().(*Net).net.Name()), nil
}

func netProto(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	n := b.Receiver().(*Net)
	m := caffe2pb2.NewMessage(n.net.Proto())
	if n.frozen {
		m.Freeze()
	}
	return m, nil
}

func netAddExternalInput(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	n := b.Receiver().(*Net)
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("%s: unexpected keyword arguments", b.Name())
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: want at least one input", b.Name())
	}
	if err := n.checkMutable("change"); err != nil {
		return nil, err
	}
	names := make([]string, len(args))
	for i, a := range args {
		s, err := convert.BlobName(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		names[i] = s
	}
	if err := n.net.AddExternalInput(names...); err != nil {
		return nil, err
	}
	if len(names) == 1 {
		return &BlobReference{name: names[0], net: n}, nil
	}
	return n.refList(names), nil
}

func netAddExternalOutput(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	n := b.Receiver().(*Net)
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("%s: unexpected keyword arguments", b.Name())
	}
	if err := n.checkMutable("change"); err != nil {
		return nil, err
	}
	names := make([]string, len(args))
	for i, a := range args {
		s, err := convert.BlobName(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		names[i] = s
	}
	if err := n.net.AddExternalOutput(names...); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

func netNextName(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var prefix, id starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "prefix?", &prefix, "output_id?", &id); err != nil {
		return nil, err
	}
	p := ""
	if prefix != starlark.None {
		var err error
		if p, err = convert.BlobName(prefix); err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
	}
	n := b.Receiver().(*Net)
	if id == starlark.None {
		return starlark.String(n.net.NextName(p)), nil
	}
	i, err := starlark.AsInt32(id)
	if err != nil {
		return nil, fmt.Errorf("%s: output_id: %v", b.Name(), err)
	}
	return starlark.String(n.net.NextName(p, i)), nil
}

func netNextBlob(scoped bool) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var prefix starlark.Value = starlark.String("unnamed")
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "prefix?", &prefix); err != nil {
			return nil, err
		}
		p, err := convert.BlobName(prefix)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		if scoped {
			p = devicescope.Current().Scoped(p)
		}
		return starlark.String(b.Receiver().(*Net).net.NextBlob(p)), nil
	}
}

func netBlobPredicate(defined bool) binding.Func {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var v starlark.Value
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &v); err != nil {
			return nil, err
		}
		name, err := convert.BlobName(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		n := b.Receiver().(*Net).net
		if defined {
			return starlark.Bool(n.BlobIsDefined(name)), nil
		}
		return starlark.Bool(n.UsesBlob(name)), nil
	}
}

func netUsedBlobNames(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return convert.StringList(b.Receiver().(*Net).net.UsedBlobNames()), nil
}

func netGetBlobRef(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "blob_name", &v); err != nil {
		return nil, err
	}
	name, err := convert.BlobName(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	n := b.Receiver().(*Net)
	if !n.net.BlobIsDefined(name) {
		return nil, fmt.Errorf("%s: net %q does not define blob %q", b.Name(), n.net.Name(), name)
	}
	return &BlobReference{name: name, net: n}, nil
}

func netAppendNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var other starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "net", &other); err != nil {
		return nil, err
	}
	def, ok := netDefOf(other)
	if !ok {
		return nil, fmt.Errorf("%s: want a Net or a NetDef, got %s", b.Name(), other.Type())
	}
	n := b.Receiver().(*Net)
	if err := n.checkMutable("change"); err != nil {
		return nil, err
	}
	n.net.AppendNet(proto.Clone(def).(*netdef.NetDef))
	return n, nil
}

// stringMap reads a dict of blob names (str or BlobReference) to names.
func stringMap(v starlark.Value) (map[string]string, error) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("want a dict of blob names, got %s", v.Type())
	}
	out := map[string]string{}
	for _, kv := range d.Items() {
		k, err := convert.BlobName(kv[0])
		if err != nil {
			return nil, err
		}
		val, err := convert.BlobName(kv[1])
		if err != nil {
			return nil, err
		}
		out[k] = val
	}
	return out, nil
}

func netClone(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var remapV, maskV starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "blob_remap?", &remapV, "op_id_mask?", &maskV); err != nil {
		return nil, err
	}
	var remap map[string]string
	if remapV != starlark.None {
		var err error
		if remap, err = stringMap(remapV); err != nil {
			return nil, fmt.Errorf("%s: blob_remap: %v", b.Name(), err)
		}
	}
	var mask []int
	if maskV != starlark.None {
		s, err := ndarray.ShapeOf(maskV)
		if err != nil {
			return nil, fmt.Errorf("%s: op_id_mask must be a list of ints", b.Name())
		}
		mask = s
	}
	return &Net{net: b.Receiver().(*Net).net.Clone(name, remap, mask)}, nil
}

func netClonePartial(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var inputsV, outputsV starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "inputs", &inputsV, "outputs", &outputsV); err != nil {
		return nil, err
	}
	inputs := map[string]string{}
	switch x := inputsV.(type) {
	case *starlark.Dict:
		m, err := stringMap(x)
		if err != nil {
			return nil, fmt.Errorf("%s: inputs: %v", b.Name(), err)
		}
		inputs = m
	case starlark.Indexable:
		for i := 0; i < x.Len(); i++ {
			e := x.Index(i)
			if pair, ok := e.(starlark.Tuple); ok && len(pair) == 2 {
				k, err1 := convert.BlobName(pair[0])
				v, err2 := convert.BlobName(pair[1])
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("%s: inputs: pairs must hold blob names", b.Name())
				}
				inputs[k] = v
				continue
			}
			s, err := convert.BlobName(e)
			if err != nil {
				return nil, fmt.Errorf("%s: inputs: %v", b.Name(), err)
			}
			inputs[s] = s
		}
	default:
		return nil, fmt.Errorf("%s: inputs must be a dict or a list, got %s", b.Name(), inputsV.Type())
	}
	outputs, err := convert.BlobNames(outputsV)
	if err != nil {
		return nil, fmt.Errorf("%s: outputs: %v", b.Name(), err)
	}
	nn, outs, err := b.Receiver().(*Net).net.ClonePartial(name, inputs, outputs)
	if err != nil {
		return nil, err
	}
	res := &Net{net: nn}
	return starlark.Tuple{res, res.refList(outs)}, nil
}

func netConst(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var arr, out, d starlark.Value = nil, starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "array", &arr, "blob_out?", &out, "dtype?", &d); err != nil {
		return nil, err
	}
	n := b.Receiver().(*Net)
	if out == starlark.None {
		out = starlark.MakeInt(1)
	}
	if bv, ok := arr.(starlark.Bool); ok {
		return n.addOp("ConstantFill", starlark.NewList(nil), out, []starlark.Tuple{
			{starlark.String("dtype"), starlark.MakeInt(int(netdef.TensorProto_BOOL))},
			{starlark.String("value"), bv},
		})
	}
	dt, ok, err := ndarray.DTypeOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	t, err := ndarray.ToTensor(arr, dt, ok)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	typ := "GivenTensorFill"
	switch t.DataType() {
	case blob.Int32:
		typ = "GivenTensorIntFill"
	case blob.Int64:
		typ = "GivenTensorInt64Fill"
	case blob.String:
		typ = "GivenTensorStringFill"
	case blob.Bool:
		typ = "GivenTensorBoolFill"
	}
	flat := t.Clone()
	if err := flat.Reshape(flat.Size()); err != nil {
		return nil, err
	}
	values := ndarray.ToList(flat, 0, flat.Dims())
	if ndarray.KindOf(t.DataType()) == ndarray.KindFloat {
		// Caffe2 passes float arrays as float lists (floats field).
		l := values.(*starlark.List)
		for i := 0; i < l.Len(); i++ {
			f, _ := starlark.AsFloat(l.Index(i))
			_ = l.SetIndex(i, starlark.Float(f))
		}
	}
	return n.addOp(typ, starlark.NewList(nil), out, []starlark.Tuple{
		{starlark.String("shape"), starlark.NewList(ndarray.ShapeTuple(t.Dims()))},
		{starlark.String("values"), values},
	})
}

func netAddGradientOperators(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var ysV starlark.Value
	skip := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "ys", &ysV, "skip?", &skip); err != nil {
		return nil, err
	}
	n := b.Receiver().(*Net)
	if err := n.checkMutable("change"); err != nil {
		return nil, err
	}
	var ys []string
	given := map[string]operators.Gradient{}
	if d, ok := ysV.(*starlark.Dict); ok {
		for _, kv := range d.Items() {
			y, err := convert.BlobName(kv[0])
			if err != nil {
				return nil, fmt.Errorf("%s: %v", b.Name(), err)
			}
			ys = append(ys, y)
			switch g := kv[1].(type) {
			case starlark.NoneType:
			case *GradientSlice:
				given[y] = operators.Gradient{Indices: g.indices, Values: g.values}
			default:
				name, err := convert.BlobName(g)
				if err != nil {
					return nil, fmt.Errorf("%s: gradient of %q: %v", b.Name(), y, err)
				}
				given[y] = operators.Dense(name)
			}
		}
	} else if _, isName := ysV.(starlark.String); isName {
		ys = []string{string(ysV.(starlark.String))}
	} else if r, isRef := ysV.(*BlobReference); isRef {
		ys = []string{r.name}
	} else {
		var err error
		if ys, err = convert.BlobNames(ysV); err != nil {
			return nil, fmt.Errorf("%s: ys: %v", b.Name(), err)
		}
	}
	def := n.net.Proto()
	if skip < 0 || skip > len(def.Op) {
		return nil, fmt.Errorf("%s: skip %d out of range [0, %d]", b.Name(), skip, len(def.Op))
	}
	tmp := proto.Clone(def).(*netdef.NetDef)
	tmp.Op = tmp.Op[skip:]
	forward := len(tmp.Op)
	grads, err := operators.AddGradientOperators(tmp, ys, given)
	if err != nil {
		return nil, err
	}
	for _, op := range tmp.Op[forward:] {
		n.net.AddOp(op)
	}
	out := starlark.NewDict(len(grads))
	keys := make([]string, 0, len(grads))
	for k := range grads {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g := grads[k]
		var v starlark.Value
		if g.IsSparse() {
			v = &GradientSlice{indices: g.Indices, values: g.Values}
		} else {
			v = &BlobReference{name: g.Dense, net: n}
		}
		if err := out.SetKey(starlark.String(k), v); err != nil {
			return nil, err
		}
	}
	return &gradientMap{d: out}, nil
}

// gradientMap is the dict AddGradientOperators returns: blob name ->
// gradient. Like Caffe2's, it is indexed by a name or a BlobReference
// (grads["w"], grads[w]); otherwise it behaves as a read-only dict.
type gradientMap struct {
	d *starlark.Dict
}

var (
	_ starlark.IterableMapping = (*gradientMap)(nil)
	_ starlark.Sequence        = (*gradientMap)(nil)
	_ starlark.HasAttrs        = (*gradientMap)(nil)
)

func (g *gradientMap) String() string        { return g.d.String() }
func (g *gradientMap) Type() string          { return "dict" }
func (g *gradientMap) Freeze()               { g.d.Freeze() }
func (g *gradientMap) Truth() starlark.Bool  { return g.d.Truth() }
func (g *gradientMap) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: dict") }
func (g *gradientMap) Len() int              { return g.d.Len() }
func (g *gradientMap) Iterate() starlark.Iterator {
	return g.d.Iterate()
}
func (g *gradientMap) Items() []starlark.Tuple { return g.d.Items() }

// Get looks a gradient up by blob name or BlobReference.
func (g *gradientMap) Get(k starlark.Value) (starlark.Value, bool, error) {
	if r, ok := k.(*BlobReference); ok {
		k = starlark.String(r.name)
	}
	return g.d.Get(k)
}

// Attr returns the read-only dict methods (keys, values, items, get).
func (g *gradientMap) Attr(name string) (starlark.Value, error) {
	switch name {
	case "keys", "values", "items", "get":
		if name == "get" {
			return starlark.NewBuiltin("dict.get", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				var k, dflt starlark.Value = nil, starlark.None
				if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &k, &dflt); err != nil {
					return nil, err
				}
				v, found, err := g.Get(k)
				if err != nil || !found {
					return dflt, err
				}
				return v, nil
			}), nil
		}
		return g.d.Attr(name)
	}
	return nil, nil
}

// AttrNames lists keys, values, items and get.
func (g *gradientMap) AttrNames() []string { return []string{"get", "items", "keys", "values"} }

func netSetRandSeed(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	seed, sequence, onDef := 100, true, false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "seed?", &seed, "sequence_seed?", &sequence, "seed_on_op_def?", &onDef); err != nil {
		return nil, err
	}
	n := b.Receiver().(*Net)
	if err := n.checkMutable("change"); err != nil {
		return nil, err
	}
	for i, op := range n.net.Proto().GetOp() {
		s := uint32(seed)
		if sequence {
			s += uint32(i)
		}
		if onDef {
			h := fnv.New32a()
			text, _ := netdef.MarshalText(op)
			h.Write(text)
			s += h.Sum32()
		}
		if op.DeviceOption == nil {
			op.DeviceOption = &netdef.DeviceOption{}
		}
		op.DeviceOption.RandomSeed = proto.Uint32(s)
	}
	return starlark.None, nil
}

func netRunAllOnGPU(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	gpu, cudnn := 0, false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "gpu_id?", &gpu, "use_cudnn?", &cudnn); err != nil {
		return nil, err
	}
	n := b.Receiver().(*Net)
	if err := n.checkMutable("change"); err != nil {
		return nil, err
	}
	def := n.net.Proto()
	def.DeviceOption = netdef.NewDeviceOption(netdef.CUDA, int32(gpu))
	if cudnn {
		for _, op := range def.Op {
			op.Engine = proto.String("CUDNN")
		}
	}
	return starlark.None, nil
}

// BlobReference names a blob, optionally remembering the net that made it
// (Caffe2's core.BlobReference). Its string form is the name; ref + "_s"
// appends to the name; ref.<Op>(inputs, outputs) adds an op reading ref to
// its net.
type BlobReference struct {
	name string
	net  *Net
}

var (
	_ starlark.HasAttrs   = (*BlobReference)(nil)
	_ starlark.HasBinary  = (*BlobReference)(nil)
	_ starlark.Comparable = (*BlobReference)(nil)
)

// BlobName returns the blob name.
func (r *BlobReference) BlobName() string { return r.name }

// String returns the blob name.
func (r *BlobReference) String() string { return r.name }

// Repr describes the reference for the REPL.
func (r *BlobReference) Repr() string { return fmt.Sprintf("BlobReference(%q)", r.name) }

// Type returns "BlobReference".
func (r *BlobReference) Type() string { return "BlobReference" }

// Freeze does nothing: references are immutable.
func (r *BlobReference) Freeze() {}

// Truth reports true.
func (r *BlobReference) Truth() starlark.Bool { return true }

// Hash hashes the name.
func (r *BlobReference) Hash() (uint32, error) { return starlark.String(r.name).Hash() }

// CompareSameType compares names.
func (r *BlobReference) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return starlark.CompareDepth(op, starlark.String(r.name), starlark.String(y.(*BlobReference).name), depth)
}

// Binary implements ref + "suffix" and "prefix" + ref.
func (r *BlobReference) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	if op != syntax.PLUS {
		return nil, nil
	}
	s, err := convert.BlobName(y)
	if err != nil {
		return nil, nil
	}
	if side == starlark.Left {
		return &BlobReference{name: r.name + s, net: r.net}, nil
	}
	return &BlobReference{name: s + r.name, net: r.net}, nil
}

var blobRefMethods = binding.NewMethodTable("BlobReference",
	"BlobReference(name, net=None): a blob name, optionally with the net that produced it.\n\n"+
		"ref.<Op>(inputs=None, outputs=None, **kw) adds an op to ref's net with ref as its first input.",
	[]binding.Fn{
		{Name: "Net", Doc: "Net()\n\nReturns the net the reference came from, or None.", Body: refNet},
		{Name: "GetNameScope", Doc: "GetNameScope()\n\nReturns the name-scope part of the name (\"gpu_0/fc_w\" -> \"gpu_0/\").", Body: refNameScope},
		{Name: "GetUnscopedName", Doc: "GetUnscopedName()\n\nReturns the name without its name scope.", Body: refUnscoped},
	})

// Attr returns a method, or an op builder that reads the reference.
func (r *BlobReference) Attr(name string) (starlark.Value, error) {
	if m := blobRefMethods.Bind(name, r); m != nil {
		return m, nil
	}
	if name == "" || name[0] < 'A' || name[0] > 'Z' {
		return nil, nil
	}
	if r.net == nil {
		return nil, fmt.Errorf("You cannot use a blob reference that does not have a net source to create operators (%s). Create the operator from an explicit net object.", name)
	}
	if !isOperatorType(name) {
		return nil, unknownOperatorError(name)
	}
	typ := name
	return starlark.NewBuiltin("BlobReference."+typ, binding.Safe(func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var inputs starlark.Value = starlark.None
		if len(args) > 0 {
			inputs, args = args[0], args[1:]
		}
		var ins []starlark.Value
		switch x := inputs.(type) {
		case starlark.NoneType:
			ins = []starlark.Value{r}
		case starlark.String, *BlobReference:
			ins = []starlark.Value{r, x}
		case *starlark.List, starlark.Tuple:
			ins = append([]starlark.Value{r}, convert.IterValues(x.(starlark.Indexable))...)
		default:
			return nil, fmt.Errorf("%s: inputs must be a name, a BlobReference or a list, got %s", b.Name(), inputs.Type())
		}
		return starlark.Call(thread, opBuilder(typ, r.net), append(starlark.Tuple{starlark.NewList(ins)}, args...), kwargs)
	})), nil
}

// AttrNames lists the methods.
func (r *BlobReference) AttrNames() []string { return blobRefMethods.Names() }

func refNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	r := b.Receiver().(*BlobReference)
	if r.net == nil {
		return starlark.None, nil
	}
	return r.net, nil
}

func refNameScope(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return starlark.String(devicescope.NameScopeOf(b.Receiver().(*BlobReference).name)), nil
}

func refUnscoped(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	name := b.Receiver().(*BlobReference).name
	return starlark.String(name[len(devicescope.NameScopeOf(name)):]), nil
}

// GradientSlice is a sparse gradient: the names of its indices and values
// blobs (Caffe2's core.GradientSlice).
type GradientSlice struct {
	indices, values string
}

var _ starlark.HasAttrs = (*GradientSlice)(nil)

// String formats the slice as Caffe2's namedtuple prints.
func (g *GradientSlice) String() string {
	return fmt.Sprintf("GradientSlice(indices=%s, values=%s)", g.indices, g.values)
}

// Type returns "GradientSlice".
func (g *GradientSlice) Type() string { return "GradientSlice" }

// Freeze does nothing: slices are immutable.
func (g *GradientSlice) Freeze() {}

// Truth reports true.
func (g *GradientSlice) Truth() starlark.Bool { return true }

// Hash hashes both names.
func (g *GradientSlice) Hash() (uint32, error) {
	return starlark.String(g.indices + "\x00" + g.values).Hash()
}

// Attr returns indices or values as BlobReferences.
func (g *GradientSlice) Attr(name string) (starlark.Value, error) {
	switch name {
	case "indices":
		return &BlobReference{name: g.indices}, nil
	case "values":
		return &BlobReference{name: g.values}, nil
	}
	return nil, nil
}

// AttrNames lists indices and values.
func (g *GradientSlice) AttrNames() []string { return []string{"indices", "values"} }
