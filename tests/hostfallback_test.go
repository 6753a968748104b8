package tests

import (
	"github.com/caffe2go/caffe2go/devicescope/devicetest"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// hostOnly names the CPU operator types the test device does not fall
// back on.
var hostOnly = map[string]bool{"GivenTensorStringFill": true, "RecurrentNetwork": true, "RecurrentNetworkGradient": true}

// Every CPU operator is also registered for the test device through
// operators.HostFallback, so that the conformance suite runs each case
// there too: the fallback's copies to and from a device with memory of its
// own, its sharing of non-tensor inputs and its placement of outputs are
// checked against the CPU for every operator type, as a device that falls
// back on them would use them. GivenTensorStringFill is left out: strings
// cannot live in a device's memory; so are RecurrentNetwork and its
// gradient, whose step nets read and write blobs of the workspace that are
// none of the operator's inputs and outputs (the state tensors, the step
// nets' parameters' gradients), which the fallback cannot mirror.
func init() {
	for _, impl := range operators.Implementations("") {
		if impl.Device == netdef.CPU && impl.Engine == "" && !hostOnly[impl.Type] {
			operators.MustRegister(impl.Type, devicetest.Type, "", operators.HostFallback)
		}
	}
}
