package convpool

import (
	"context"
	"errors"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestConvStopsOnCancelledContext: a convolution whose run's context is
// done computes no image and returns the context's error; the gradient
// and the transposed convolution too.
func TestConvStopsOnCancelledContext(t *testing.T) {
	r := newRand(1)
	x := randTensor(r, blob.Float32, 8, 3, 16, 16)
	w := randTensor(r, blob.Float32, 4, 3, 3, 3)
	dy := randTensor(r, blob.Float32, 8, 4, 14, 14)
	cases := []struct {
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{netdef.NewOperator("Conv", []string{"x", "w"}, []string{"y"}, netdef.ArgInt("kernel", 3)), []*blob.Tensor{x, w}},
		{netdef.NewOperator("ConvGradient", []string{"x", "w", "dy"}, []string{"dw", "db", "dx"}, netdef.ArgInt("kernel", 3)), []*blob.Tensor{x, w, dy}},
		{netdef.NewOperator("ConvTranspose", []string{"dy", "wt"}, []string{"y"}, netdef.ArgInt("kernel", 3)), []*blob.Tensor{dy, randTensor(r, blob.Float32, 4, 3, 3, 3)}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range cases {
		t.Run(c.def.GetType(), func(t *testing.T) {
			ws := optest.NewWorkspace()
			for i, in := range c.inputs {
				ws.Feed(c.def.GetInput()[i], in)
			}
			op, err := operators.Create(c.def, ws, 0)
			if err != nil {
				t.Fatal(err)
			}
			op.OpBase().SetContext(ctx)
			if err := op.Run(); !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			out := ws.Tensor(c.def.GetOutput()[0])
			for i, v := range blob.Data[float32](out) {
				if v != 0 {
					t.Fatalf("output[%d] = %v: an image was computed after the cancellation", i, v)
				}
			}
			op.OpBase().SetContext(context.Background())
			if err := op.Run(); err != nil {
				t.Fatalf("a later run with a live context: %v", err)
			}
		})
	}
}
