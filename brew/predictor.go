package brew

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

// initOpMark is appended to the debug_info of the init operators in a
// complete net, so that ConstructInitTrainNetFromNet can split it again.
const initOpMark = "/param_init_net"

// CompleteNet returns one net holding the init net's operators followed by
// the net's, Caffe2's GetCompleteNet: it is named m.Name+"_complete_net"
// (made process-unique), each init operator has "/param_init_net"
// appended to its debug_info, and the net's type (executor) is kept.
func (m *Model) CompleteNet() *netdef.Net {
	n := m.InitNet.Clone(m.Name+"_complete_net", nil, nil)
	def := n.Proto()
	for _, op := range def.Op {
		op.DebugInfo = proto.String(op.GetDebugInfo() + initOpMark)
	}
	n.AppendNet(m.Net.Proto())
	if t := m.Net.Proto().Type; t != nil {
		n.Proto().Type = proto.String(*t)
	}
	return n
}

// ConstructInitTrainNetFromNet splits a net made by CompleteNet back into
// the model's InitNet (the operators whose debug_info ends in
// "/param_init_net", kept as they are) and Net (the others), Caffe2's
// ConstructInitTrainNetfromNet. The new nets are named
// "<net>/generated_param_init_net" and "<net>/generated_net", both take the
// complete net's type, and their external inputs and outputs are
// recomputed: inputs read before any operator writes them, in order of
// first use, and outputs written but never read afterwards, in order of
// production.
func (m *Model) ConstructInitTrainNetFromNet(net netdef.NetSource) {
	def := net.Proto()
	var initOps, trainOps []*netdef.OperatorDef
	for _, op := range def.GetOp() {
		if strings.HasSuffix(op.GetDebugInfo(), initOpMark) {
			initOps = append(initOps, op)
		} else {
			trainOps = append(trainOps, op)
		}
	}
	m.InitNet = netFromOps(def.GetName()+"/generated_param_init_net", def.Type, initOps)
	m.Net = netFromOps(def.GetName()+"/generated_net", def.Type, trainOps)
}

// netFromOps builds a net of copies of ops with recomputed external inputs
// and outputs (see ConstructInitTrainNetFromNet).
func netFromOps(name string, typ *string, ops []*netdef.OperatorDef) *netdef.Net {
	n := netdef.NewNet(name)
	def := n.Proto()
	if typ != nil {
		def.Type = proto.String(*typ)
	}
	produced := map[string]bool{}
	read := map[string]bool{}
	var outputs []string
	for _, op := range ops {
		op = proto.Clone(op).(*netdef.OperatorDef)
		for _, in := range op.Input {
			if produced[in] {
				read[in] = true
			} else if !slices.Contains(def.ExternalInput, in) {
				def.ExternalInput = append(def.ExternalInput, in)
			}
		}
		for _, out := range op.Output {
			if !produced[out] {
				produced[out] = true
				outputs = append(outputs, out)
			}
		}
		def.Op = append(def.Op, op)
	}
	for _, out := range outputs {
		if !read[out] {
			def.ExternalOutput = append(def.ExternalOutput, out)
		}
	}
	return n
}

// PredictorOptions are the optional arguments of ExtractPredictorNet.
type PredictorOptions struct {
	// Device, when set, is given to every operator of the predict net.
	Device *netdef.DeviceOption
	// Renames maps blob names to the names the predict net uses (for
	// example the data blob to "image").
	Renames map[string]string
	// DisabledInputs are blobs treated as unavailable: operators that read
	// them (and everything downstream) are left out.
	DisabledInputs []string
}

// ExtractPredictorNet takes a net built for training or testing and
// returns a net for prediction, Caffe2's model_helper.ExtractPredictorNet,
// together with the blobs to export with it (its external inputs other
// than the inputs: the parameters).
//
// The predict net, named def's name + "_predict" (made process-unique),
// holds copies of the operators from the first one that reads an input
// (StopGradient aside) to the last one that writes an output, keeping only
// those whose inputs are all available: the inputs, def's external inputs
// and what kept operators produce. Its external inputs are the inputs (in
// the given order) followed by the external inputs of def the kept
// operators read; its external outputs are the outputs followed by the
// external outputs of def they write. Renames then apply everywhere.
//
// It is an error if no operator reads an input or writes an output, or if
// a kept operator has is_test=0: that is a train net (Caffe2 catches the
// same mistake with SpatialBN and Dropout).
func ExtractPredictorNet(def *netdef.NetDef, inputs, outputs []string, o PredictorOptions) (*netdef.Net, []string, error) {
	ops := def.GetOp()
	first, last := -1, -1
	for i, op := range ops {
		if first < 0 && op.GetType() != "StopGradient" && slices.ContainsFunc(op.Input, func(b string) bool { return slices.Contains(inputs, b) }) {
			first = i
		}
		if slices.ContainsFunc(op.Output, func(b string) bool { return slices.Contains(outputs, b) }) {
			last = i
		}
	}
	if first < 0 {
		return nil, nil, fmt.Errorf("brew: ExtractPredictorNet: net %q: no operator reads the inputs %v", def.GetName(), inputs)
	}
	if last < 0 {
		return nil, nil, fmt.Errorf("brew: ExtractPredictorNet: net %q: no operator writes the outputs %v", def.GetName(), outputs)
	}
	origIn, origOut := def.GetExternalInput(), def.GetExternalOutput()
	known := map[string]bool{}
	for _, b := range append(slices.Clone(origIn), inputs...) {
		known[b] = true
	}
	for _, b := range o.DisabledInputs {
		delete(known, b)
	}
	extIn := slices.Clone(inputs)
	extOut := slices.Clone(outputs)
	addNew := func(list []string, b string) []string {
		if slices.Contains(list, b) {
			return list
		}
		return append(list, b)
	}
	var kept []*netdef.OperatorDef
	for i := first; i <= last; i++ {
		op := ops[i]
		if !slices.ContainsFunc(op.Input, func(b string) bool { return !known[b] }) {
			for _, a := range op.GetArg() {
				if a.GetName() == "is_test" && a.GetI() == 0 {
					return nil, nil, fmt.Errorf("brew: ExtractPredictorNet: net %q: operator %d (%s) has is_test=0: "+
						"did you try to extract a predictor from a train model instead of a test model?", def.GetName(), i, op.GetType())
				}
			}
			op = proto.Clone(op).(*netdef.OperatorDef)
			if o.Device != nil {
				d := op.DeviceOption
				if d == nil {
					d = &netdef.DeviceOption{}
					op.DeviceOption = d
				}
				d.DeviceType = proto.Int32(o.Device.GetDeviceType())
				d.DeviceId = proto.Int32(o.Device.GetDeviceId())
			}
			kept = append(kept, op)
			for _, b := range op.Output {
				known[b] = true
				if slices.Contains(origOut, b) {
					extOut = addNew(extOut, b)
				}
			}
			for _, b := range op.Input {
				if slices.Contains(origIn, b) {
					extIn = addNew(extIn, b)
				}
			}
		}
	}
	rename := func(list []string) {
		for i, b := range list {
			if r, ok := o.Renames[b]; ok {
				list[i] = r
			}
		}
	}
	for _, op := range kept {
		rename(op.Input)
		rename(op.Output)
	}
	rename(extIn)
	rename(extOut)
	renamedInputs := slices.Clone(inputs)
	rename(renamedInputs)
	var export []string
	for _, b := range extIn {
		if !slices.Contains(renamedInputs, b) {
			export = append(export, b)
		}
	}
	n := netdef.NewNet(def.GetName() + "_predict")
	pd := n.Proto()
	pd.Op = kept
	pd.ExternalInput = extIn
	pd.ExternalOutput = extOut
	return n, export, nil
}
