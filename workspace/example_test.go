package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// Feed a blob, create a net, run it and fetch the result, as with Caffe2's
// Python workspace module. A nested slice is fed as a tensor of its shape.
func Example() {
	if err := workspace.FeedBlob("x", [][]float32{{-1, 2}, {-3, 4}}); err != nil {
		fmt.Println(err)
		return
	}
	net := netdef.NewNet("relu_net")
	net.Op("Relu", []string{"x"}, []string{"y"})
	if err := workspace.CreateNet(net, false); err != nil {
		fmt.Println(err)
		return
	}
	if err := workspace.RunNet(net.Name(), 1); err != nil {
		fmt.Println(err)
		return
	}
	y, _ := workspace.FetchBlob("y")
	fmt.Println(y.Shape(), blob.Data[float32](y))
	// Output: [2 2] [0 2 0 4]
}

// A long run stops when its context ends: here a deadline ends a billion
// iterations; the error says so and the workspace stays usable.
func ExampleWorkspace_RunNetContext() {
	ws := workspace.New("")
	_ = ws.FeedBlob("x", []float32{1})
	net := netdef.NewNet("halve")
	net.Op("Scale", []string{"x"}, []string{"x"}, netdef.ArgFloat("scale", 0.5))
	if err := ws.CreateNet(net, false); err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := ws.RunNetContext(ctx, "halve", 1e9)
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	fmt.Println(ws.RunNet("halve", 1))
	// Output:
	// true
	// <nil>
}

// Workspaces can be held explicitly; a child sees its parent's blobs.
func ExampleWorkspace_NewChild() {
	parent := workspace.New("")
	_ = parent.FeedBlob("weights", []float32{0.5, 0.25})
	child := parent.NewChild()
	_ = child.FeedBlob("input", []float32{2, 4})
	fmt.Println(child.Blobs(), parent.Blobs())
	// Output: [input weights] [weights]
}

// RunPlan runs execution steps; here a net runs three times.
func ExampleWorkspace_RunPlan() {
	ws := workspace.New("")
	_ = ws.FeedBlob("x", []float32{1})
	net := netdef.NewNet("double")
	net.Op("Scale", []string{"x"}, []string{"x"}, netdef.ArgFloat("scale", 2))
	plan := netdef.NewPlan("plan")
	if err := plan.AddStep(netdef.NewExecutionStep("step", net.Proto()).SetIter(3)); err != nil {
		fmt.Println(err)
		return
	}
	if err := ws.RunPlan(plan.Proto()); err != nil {
		fmt.Println(err)
		return
	}
	x, _ := ws.FetchBlob("x")
	fmt.Println(blob.Data[float32](x))
	// Output: [8]
}
