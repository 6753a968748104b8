package netdef

import (
	"fmt"
	"slices"
)

// VersionedBlob is a blob at one version of the SSA form: the number of
// writes to it before the point it is read or written.
type VersionedBlob struct {
	Name    string
	Version int
}

// SSAOp holds the versioned inputs and outputs of one operator, in the
// operator's order.
type SSAOp struct {
	Inputs  []VersionedBlob
	Outputs []VersionedBlob
}

// SSA returns the static single assignment form of def, as Caffe2's
// core.get_ssa computes it: one SSAOp per op, in order. Each input is read at
// the blob's current version; each output bumps the blob's version by one,
// so the first write of a blob gives version 1. Blobs never written, such as
// external inputs, are at version 0.
//
// undefined lists, sorted, the blobs read at version 0: those used before
// any op defines them (Caffe2's get_undefined_blobs).
func SSA(def *NetDef) (ops []SSAOp, undefined []string) {
	ops, _ = ssa(def)
	return ops, undefinedBlobs(ops)
}

// ssa is SSA that also returns the latest version of every blob it saw. Like
// Caffe2 it records a blob read before any write only when def declares no
// external inputs (or declares that blob).
func ssa(def *NetDef) ([]SSAOp, map[string]int) {
	versions := map[string]int{}
	ext := def.GetExternalInput()
	for _, in := range ext {
		versions[in] = 0
	}
	ops := make([]SSAOp, 0, len(def.GetOp()))
	for _, op := range def.GetOp() {
		var s SSAOp
		if ins := op.GetInput(); len(ins) > 0 {
			s.Inputs = make([]VersionedBlob, len(ins))
			for i, in := range ins {
				v, ok := versions[in]
				if !ok && len(ext) == 0 {
					versions[in] = 0
				}
				s.Inputs[i] = VersionedBlob{in, v}
			}
		}
		if outs := op.GetOutput(); len(outs) > 0 {
			for _, o := range outs {
				versions[o]++
			}
			s.Outputs = make([]VersionedBlob, len(outs))
			for i, o := range outs {
				s.Outputs[i] = VersionedBlob{o, versions[o]}
			}
		}
		ops = append(ops, s)
	}
	return ops, versions
}

func undefinedBlobs(ops []SSAOp) []string {
	set := map[string]struct{}{}
	for _, op := range ops {
		for _, in := range op.Inputs {
			if in.Version == 0 {
				set[in.Name] = struct{}{}
			}
		}
	}
	names := make([]string, 0, len(set))
	for s := range set {
		names = append(names, s)
	}
	slices.Sort(names)
	return names
}

// opIDsInPath returns, sorted, the indices of the ops needed to compute the
// latest versions of outputs when the latest versions of inputs are given
// (Caffe2's get_op_ids_in_path). Every name must be in versions.
func opIDsInPath(ops []SSAOp, versions map[string]int, inputs, outputs []string) []int {
	given := map[VersionedBlob]struct{}{}
	for _, in := range inputs {
		given[VersionedBlob{in, versions[in]}] = struct{}{}
	}
	producers := map[VersionedBlob]int{}
	for i, op := range ops {
		for _, o := range op.Outputs {
			producers[o] = i
		}
	}
	queue := make([]VersionedBlob, 0, len(outputs))
	for _, o := range outputs {
		queue = append(queue, VersionedBlob{o, versions[o]})
	}
	used := map[int]struct{}{}
	for len(queue) > 0 {
		b := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if _, ok := given[b]; ok {
			continue
		}
		id, ok := producers[b]
		if !ok {
			continue
		}
		if _, ok := used[id]; ok {
			continue
		}
		used[id] = struct{}{}
		queue = append(queue, ops[id].Inputs...)
	}
	ids := make([]int, 0, len(used))
	for id := range used {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// ClonePartial returns a new net, named name (made process-unique), holding
// only the ops needed to compute outputs from inputs, as Caffe2's
// Net.ClonePartial does. inputs maps blobs of this net to the names the new
// net reads them under (map a blob to itself to keep its name). In the new
// net the inputs are renamed as mapped, blobs read before any op defines them
// keep their names, and every other blob becomes name + "/" + blob. The new
// net's external inputs are the mapped inputs (sorted by original name) and
// then the blobs read before definition (sorted); its external outputs are
// the renamed outputs, which are also returned.
//
// It is an error if an output is not defined by the net, if an input is not
// a blob of the net, or if an op the outputs need also produces one of the
// inputs. Ops off the path from inputs to outputs (such as gradient ops) are
// left out.
func (n *Net) ClonePartial(name string, inputs map[string]string, outputs []string) (*Net, []string, error) {
	for _, o := range outputs {
		if !n.BlobIsDefined(o) {
			return nil, nil, fmt.Errorf("netdef: partial clone of net %q: output %q is not defined by the net", n.Name(), o)
		}
	}
	ops, versions := ssa(n.def)
	inputNames := make([]string, 0, len(inputs))
	for in := range inputs {
		inputNames = append(inputNames, in)
	}
	slices.Sort(inputNames)
	for _, in := range inputNames {
		if _, ok := versions[in]; !ok {
			return nil, nil, fmt.Errorf("netdef: partial clone of net %q: input %q is not a blob of the net", n.Name(), in)
		}
	}
	for _, o := range outputs {
		if _, ok := versions[o]; !ok {
			return nil, nil, fmt.Errorf("netdef: partial clone of net %q: output %q is not a blob of the net", n.Name(), o)
		}
	}
	used := opIDsInPath(ops, versions, inputNames, outputs)
	disallowed := opIDsInPath(ops, versions, nil, inputNames)
	for _, id := range used {
		if _, found := slices.BinarySearch(disallowed, id); found {
			op := n.def.Op[id]
			return nil, nil, fmt.Errorf("netdef: cannot partially clone net %q: op %d (%s) is needed for the outputs but also produces a given input",
				n.Name(), id, op.GetType())
		}
	}
	sub := make([]SSAOp, len(used))
	for i, id := range used {
		sub[i] = ops[id]
	}
	var undefined []string
	isUndefined := map[string]bool{}
	for _, b := range undefinedBlobs(sub) {
		if _, isInput := inputs[b]; !isInput {
			undefined = append(undefined, b)
			isUndefined[b] = true
		}
	}
	prefix := ""
	if name != "" {
		prefix = name + "/"
	}
	mapping := make(map[string]string, len(versions))
	for b := range versions {
		if to, isInput := inputs[b]; isInput {
			mapping[b] = to
		} else if isUndefined[b] {
			mapping[b] = b
		} else {
			mapping[b] = prefix + b
		}
	}
	clone := n.Clone(name, mapping, used)
	newIn := make([]string, 0, len(inputNames)+len(undefined))
	for _, in := range inputNames {
		newIn = append(newIn, mapping[in])
	}
	newIn = append(newIn, undefined...)
	newOut := make([]string, len(outputs))
	for i, o := range outputs {
		newOut[i] = mapping[o]
	}
	clone.def.ExternalInput = newIn
	clone.def.ExternalOutput = slices.Clone(newOut)
	clone.tablesValid = false
	return clone, newOut, nil
}
