package core

import (
	"fmt"
	"hash/fnv"

	"go.starlark.net/starlark"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/script/caffe2pb2"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/script/internal/ndarray"
	"github.com/caffe2go/caffe2go/script/internal/protoarg"
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

// CheckMutable returns an error when the net is frozen; what describes the
// change refused ("add an operator to").
func (n *Net) CheckMutable(what string) error {
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
		return n.Refs(n.net.ExternalInputs()), nil
	case "external_outputs":
		return n.Refs(n.net.ExternalOutputs()), nil
	}
	if name == "" || name[0] < 'A' || name[0] > 'Z' {
		return nil, nil
	}
	if !IsOperatorType(name) {
		return nil, unknownOperatorError(name)
	}
	return opBuilder(name, n), nil
}

// AttrNames lists the methods (operator types are not listed).
func (n *Net) AttrNames() []string {
	return append([]string{"external_inputs", "external_outputs"}, netMethods.Names()...)
}

// Refs returns references to the named blobs of the net, as a list.
func (n *Net) Refs(names []string) *starlark.List {
	vals := make([]starlark.Value, len(names))
	for i, s := range names {
		vals[i] = &BlobReference{name: s, net: n}
	}
	return starlark.NewList(vals)
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
	if err := n.CheckMutable("change"); err != nil {
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
	return n.Refs(names), nil
}

func netAddExternalOutput(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	n := b.Receiver().(*Net)
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("%s: unexpected keyword arguments", b.Name())
	}
	if err := n.CheckMutable("change"); err != nil {
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
	def, ok := protoarg.NetDef(other)
	if !ok {
		return nil, fmt.Errorf("%s: want a Net or a NetDef, got %s", b.Name(), other.Type())
	}
	n := b.Receiver().(*Net)
	if err := n.CheckMutable("change"); err != nil {
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
	return starlark.Tuple{res, res.Refs(outs)}, nil
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
	if err := n.CheckMutable("change"); err != nil {
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
	return Gradients(grads, n), nil
}

func netSetRandSeed(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	seed, sequence, onDef := 100, true, false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "seed?", &seed, "sequence_seed?", &sequence, "seed_on_op_def?", &onDef); err != nil {
		return nil, err
	}
	n := b.Receiver().(*Net)
	if err := n.CheckMutable("change"); err != nil {
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
	if err := n.CheckMutable("change"); err != nil {
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
