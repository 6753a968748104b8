package netdef

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
)

// Net builds a NetDef, mirroring Caffe2's Python core.Net.
//
// Every Net has a process-unique name: NewNet("net") returns "net" the first
// time, then "net_1", "net_2", …, and NetFromProto and Clone uniquify the same
// way. Blob names are taken exactly as given (name scopes are applied by
// package devicescope).
//
// A Net is not safe for concurrent use. Proto returns the live NetDef, which
// may be edited directly: the Net rebuilds its lookup tables after each Proto
// call and whenever the number of ops or external inputs changed, so fetch
// the NetDef with Proto again before each round of edits.
type Net struct {
	def *NetDef

	// nextNameIndex is k of the next "<name>_blob_<k>" NextName returns.
	nextNameIndex int
	// registered holds the names NextBlob handed out.
	registered map[string]struct{}

	// Lookup tables over def. They are rebuilt when def was handed out by
	// Proto since they were built, or when its op or external-input counts
	// no longer match.
	opOutputs   map[string]struct{}
	extInputs   map[string]struct{}
	tablesOps   int
	tablesExt   int
	tablesValid bool
}

// NewNet returns an empty net whose name is name made process-unique.
func NewNet(name string) *Net {
	return newNet(&NetDef{}, name, 0)
}

// NetFromProto returns a net holding a deep copy of def, renamed to a
// process-unique version of def's name. NextName continues after the
// highest k of the "<name>_blob_<k>" blobs the copied ops use. A nil def is
// treated as an empty NetDef.
func NetFromProto(def *NetDef) *Net {
	var c *NetDef
	if def == nil {
		c = &NetDef{}
	} else {
		c = proto.Clone(def).(*NetDef)
	}
	return netFromOwnedProto(c)
}

// netFromOwnedProto is NetFromProto without the copy: the Net takes def.
func netFromOwnedProto(def *NetDef) *Net {
	base := def.GetName()
	prefix := base + "_blob_"
	next := 0
	note := func(s string) {
		rest, ok := strings.CutPrefix(s, prefix)
		if !ok {
			return
		}
		// Caffe2 reads the index that follows the prefix; read all of its
		// digits (Caffe2 reads only the first, which can collide).
		end := 0
		for end < len(rest) && end < 18 && '0' <= rest[end] && rest[end] <= '9' {
			end++
		}
		if k, err := strconv.Atoi(rest[:end]); err == nil && k+1 > next {
			next = k + 1
		}
	}
	for _, op := range def.GetOp() {
		for _, s := range op.GetInput() {
			note(s)
		}
		for _, s := range op.GetOutput() {
			note(s)
		}
	}
	return newNet(def, base, next)
}

func newNet(def *NetDef, name string, nextNameIndex int) *Net {
	def.Name = proto.String(netNames.unique(name))
	return &Net{def: def, nextNameIndex: nextNameIndex, registered: map[string]struct{}{}}
}

// Name returns the net's name.
func (n *Net) Name() string { return n.def.GetName() }

// Proto returns the live NetDef the net builds. Edits made to it before the
// net's next method call are seen by the net (see Net).
func (n *Net) Proto() *NetDef {
	n.tablesValid = false
	return n.def
}

// tables returns the lookup tables, rebuilding them if def may have changed.
func (n *Net) tables() (opOutputs, extInputs map[string]struct{}) {
	if !n.tablesValid || n.tablesOps != len(n.def.Op) || n.tablesExt != len(n.def.ExternalInput) {
		n.opOutputs = map[string]struct{}{}
		for _, op := range n.def.Op {
			for _, o := range op.GetOutput() {
				n.opOutputs[o] = struct{}{}
			}
		}
		n.extInputs = map[string]struct{}{}
		for _, in := range n.def.ExternalInput {
			n.extInputs[in] = struct{}{}
		}
		n.tablesValid = true
		n.syncCounts()
	}
	return n.opOutputs, n.extInputs
}

func (n *Net) syncCounts() {
	n.tablesOps, n.tablesExt = len(n.def.Op), len(n.def.ExternalInput)
}

// AddOp appends op to the net and returns it (the op itself, not a copy, so
// the caller may keep editing it). Every input of op that the net neither
// produces nor declares is first appended to the external inputs, as Caffe2
// does for ops created through a Net. A nil op is ignored.
func (n *Net) AddOp(op *OperatorDef) *OperatorDef {
	if op == nil {
		return nil
	}
	outs, ext := n.tables()
	for _, in := range op.GetInput() {
		_, produced := outs[in]
		_, declared := ext[in]
		if !produced && !declared {
			n.def.ExternalInput = append(n.def.ExternalInput, in)
			ext[in] = struct{}{}
		}
	}
	n.def.Op = append(n.def.Op, op)
	for _, o := range op.GetOutput() {
		outs[o] = struct{}{}
	}
	n.syncCounts()
	return op
}

// Op builds an operator with NewOperator and adds it with AddOp. Names are
// used as given: the name and device scopes live in package devicescope, a
// floor above this one, so brew's Model.Op is the call that applies them.
func (n *Net) Op(typ string, inputs, outputs []string, args ...*Argument) *OperatorDef {
	return n.AddOp(NewOperator(typ, inputs, outputs, args...))
}

// NextName returns a blob name for an automatically named output, following
// Caffe2's Net.NextName. With a prefix it is "<net>/<prefix>", or
// "<net>/<prefix>:<id>" when an id is given; while that blob is defined in
// the net, "_2", "_3", … is inserted after the prefix. Such names are not
// reserved: until an op produces the blob, the same name is returned again.
// Without a prefix it is "<net>_blob_<k>" with k counting up per net.
// Only the first id is used.
func (n *Net) NextName(prefix string, id ...int) string {
	if prefix == "" {
		name := n.Name() + "_blob_" + strconv.Itoa(n.nextNameIndex)
		n.nextNameIndex++
		return name
	}
	base := n.Name() + "/" + prefix
	suffix := ""
	if len(id) > 0 {
		suffix = ":" + strconv.Itoa(id[0])
	}
	name := base + suffix
	for i := 2; n.BlobIsDefined(name); i++ {
		name = base + "_" + strconv.Itoa(i) + suffix
	}
	return name
}

// NextBlob returns prefix, or prefix + "_auto_<i>" with the smallest i that
// works, such that the name is neither defined in the net nor returned by an
// earlier NextBlob call; the name is then reserved. An empty prefix means
// "unnamed", Caffe2's default.
func (n *Net) NextBlob(prefix string) string {
	if prefix == "" {
		prefix = "unnamed"
	}
	name := prefix
	for i := 0; ; i++ {
		if _, taken := n.registered[name]; !taken && !n.BlobIsDefined(name) {
			break
		}
		name = prefix + "_auto_" + strconv.Itoa(i)
	}
	n.registered[name] = struct{}{}
	return name
}

// AddExternalInput declares names as external inputs of the net. If any of
// them is already an external input (or is repeated in names), nothing is
// added and the error names the net and the blob.
func (n *Net) AddExternalInput(names ...string) error {
	_, ext := n.tables()
	seen := make(map[string]struct{}, len(names))
	for _, name := range names {
		_, declared := ext[name]
		_, repeated := seen[name]
		if declared || repeated {
			return fmt.Errorf("netdef: net %q already contains an input named %q", n.Name(), name)
		}
		seen[name] = struct{}{}
	}
	for _, name := range names {
		n.def.ExternalInput = append(n.def.ExternalInput, name)
		ext[name] = struct{}{}
	}
	n.syncCounts()
	return nil
}

// AddExternalOutput declares names as external outputs of the net. Each must
// be produced by an op of the net or be an external input; otherwise nothing
// is added and the error names the net and the blob.
func (n *Net) AddExternalOutput(names ...string) error {
	for _, name := range names {
		if !n.BlobIsDefined(name) {
			return fmt.Errorf("netdef: net %q cannot output blob %q: no op produces it and it is not an external input", n.Name(), name)
		}
	}
	n.def.ExternalOutput = append(n.def.ExternalOutput, names...)
	return nil
}

// BlobIsDefined reports whether an op of the net produces the blob or the
// net declares it as an external input.
func (n *Net) BlobIsDefined(name string) bool {
	outs, ext := n.tables()
	_, produced := outs[name]
	_, declared := ext[name]
	return produced || declared
}

// UsesBlob reports whether an op of the net reads the blob or the net
// declares it as an external input.
func (n *Net) UsesBlob(name string) bool {
	for _, op := range n.def.Op {
		if slices.Contains(op.GetInput(), name) {
			return true
		}
	}
	return slices.Contains(n.def.ExternalInput, name)
}

// UsedBlobNames returns, sorted and without duplicates, every blob the net
// mentions: op inputs and outputs and external inputs and outputs.
func (n *Net) UsedBlobNames() []string {
	set := map[string]struct{}{}
	for _, op := range n.def.Op {
		for _, s := range op.GetInput() {
			set[s] = struct{}{}
		}
		for _, s := range op.GetOutput() {
			set[s] = struct{}{}
		}
	}
	for _, s := range n.def.ExternalInput {
		set[s] = struct{}{}
	}
	for _, s := range n.def.ExternalOutput {
		set[s] = struct{}{}
	}
	names := make([]string, 0, len(set))
	for s := range set {
		names = append(names, s)
	}
	slices.Sort(names)
	return names
}

// ExternalInputs returns a copy of the net's external inputs, in order.
func (n *Net) ExternalInputs() []string { return slices.Clone(n.def.ExternalInput) }

// ExternalOutputs returns a copy of the net's external outputs, in order.
func (n *Net) ExternalOutputs() []string { return slices.Clone(n.def.ExternalOutput) }

// AppendNet appends copies of other's ops to the net. Each external input of
// other is added unless the net already declares or produces it; other's
// external outputs that the net does not already list are appended. It
// returns n. A nil other is ignored.
func (n *Net) AppendNet(other *NetDef) *Net {
	if other == nil {
		return n
	}
	outs, ext := n.tables()
	for _, in := range other.GetExternalInput() {
		_, declared := ext[in]
		_, produced := outs[in]
		if !declared && !produced {
			n.def.ExternalInput = append(n.def.ExternalInput, in)
			ext[in] = struct{}{}
		}
	}
	// Like Caffe2, compare with the outputs listed before the call only.
	listed := make(map[string]struct{}, len(n.def.ExternalOutput))
	for _, o := range n.def.ExternalOutput {
		listed[o] = struct{}{}
	}
	for _, o := range other.GetExternalOutput() {
		if _, ok := listed[o]; !ok {
			n.def.ExternalOutput = append(n.def.ExternalOutput, o)
		}
	}
	for _, op := range other.GetOp() {
		c := proto.Clone(op).(*OperatorDef)
		n.def.Op = append(n.def.Op, c)
		for _, o := range c.GetOutput() {
			outs[o] = struct{}{}
		}
	}
	n.syncCounts()
	return n
}

// Clone returns a copy of the net named name (made process-unique). Every op
// input, output and control input and every external input and output is
// renamed through blobRemap (names it does not map stay). opIDMask selects
// the ops to keep, in the given order; nil keeps all, and indices out of
// range are skipped.
//
// Ops that embed nets get them cloned with the same renaming, as Caffe2's
// default remap functions do: If and AsyncIf (arguments then_net and
// else_net, renamed "<subnet>_remapped"), While (loop_net, cond_net) and
// RecurrentNetwork and RecurrentNetworkGradient (every string-list argument,
// the timestep argument and the nets of *step_net arguments, renamed
// "cloned_sub_net").
func (n *Net) Clone(name string, blobRemap map[string]string, opIDMask []int) *Net {
	def := proto.Clone(n.def).(*NetDef)
	if opIDMask != nil {
		all := def.Op
		def.Op = make([]*OperatorDef, 0, len(opIDMask))
		taken := make([]bool, len(all))
		for _, id := range opIDMask {
			if id < 0 || id >= len(all) {
				continue
			}
			op := all[id]
			if taken[id] {
				op = proto.Clone(op).(*OperatorDef)
			}
			taken[id] = true
			def.Op = append(def.Op, op)
		}
	}
	def.Name = proto.String(name)
	remapNetDef(def, blobRemap)
	return netFromOwnedProto(def)
}

// remapNetDef renames the blobs of def in place (see Clone).
func remapNetDef(def *NetDef, remap map[string]string) {
	for _, op := range def.Op {
		remapList(op.Input, remap)
		remapList(op.Output, remap)
		remapList(op.ControlInput, remap)
		remapEmbeddedNets(op, remap)
	}
	remapList(def.ExternalInput, remap)
	remapList(def.ExternalOutput, remap)
}

func remapList(names []string, remap map[string]string) {
	for i, s := range names {
		if r, ok := remap[s]; ok {
			names[i] = r
		}
	}
}

// remapEmbeddedNets applies Caffe2's DEFAULT_REMAP_FUNCS to op.
func remapEmbeddedNets(op *OperatorDef, remap map[string]string) {
	switch op.GetType() {
	case "If", "AsyncIf":
		remapNetArgs(op, remap, "then_net", "else_net")
	case "While":
		remapNetArgs(op, remap, "loop_net", "cond_net")
	case "RecurrentNetwork", "RecurrentNetworkGradient":
		for _, arg := range op.Arg {
			switch {
			case len(arg.Strings) > 0:
				for i, s := range arg.Strings {
					if r, ok := remap[string(s)]; ok {
						arg.Strings[i] = []byte(r)
					}
				}
			case arg.GetName() == "timestep":
				if arg.S != nil {
					if r, ok := remap[string(arg.S)]; ok {
						arg.S = []byte(r)
					}
				}
			case strings.HasSuffix(arg.GetName(), "step_net") && arg.N != nil:
				arg.N = netFromOwnedProto(arg.N).Clone("cloned_sub_net", remap, nil).def
			}
		}
	}
}

func remapNetArgs(op *OperatorDef, remap map[string]string, names ...string) {
	for _, arg := range op.Arg {
		if arg.N != nil && slices.Contains(names, arg.GetName()) {
			sub := netFromOwnedProto(arg.N)
			arg.N = sub.Clone(sub.Name()+"_remapped", remap, nil).def
		}
	}
}
