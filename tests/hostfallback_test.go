package tests

import (
	"github.com/caffe2go/caffe2go/devicescope/devicetest"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Every CPU operator is also registered for the test device through
// operators.HostFallback, so that the conformance suite runs each case
// there too: the fallback's copies to and from a device with memory of its
// own, its sharing of non-tensor inputs and its placement of outputs are
// checked against the CPU for every operator type, as a device that falls
// back on them would use them. GivenTensorStringFill is left out: strings
// cannot live in a device's memory.
func init() {
	for _, impl := range operators.Implementations("") {
		if impl.Device == netdef.CPU && impl.Engine == "" && impl.Type != "GivenTensorStringFill" {
			operators.MustRegister(impl.Type, devicetest.Type, "", operators.HostFallback)
		}
	}
}
