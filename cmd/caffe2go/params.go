package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// madeWeights says what fillRandomWeights made.
type madeWeights struct {
	count     int  // parameters made
	usedWidth bool // some Conv or FC took its output channels from -width
}

// fillRandomWeights makes up the parameters of def: every external input
// that an operator reads before any operator writes it and that is not in
// ws yet (not fed, not made by the init net). It walks the operators in
// order, inferring the shapes each writes (operators.InferShapes), and
// gives each parameter the shape its operator needs for the shape of its
// data input (input 0): a Conv's filter [M, C/group, kernel…] and bias
// [M], an FC's weights [N, K] and bias [N], SpatialBN's per-channel
// statistics, a broadcast Add, Sub, Mul or Div's per-channel operand. A
// predict net does not record a Conv's or FC's output channels (M, N):
// width gives them, and with width 0 such a parameter is an error that
// says to pass -width or the parameter's shape. Weights (rank ≥ 2) are
// uniform in ±√(3/fan-in), as Caffe2's XavierFill makes them; vectors are
// uniform in [0.5, 1.5), positive for a batch norm's variance.
func fillRandomWeights(ws *workspace.Workspace, def *netdef.NetDef, width int, rng *rand.Rand) (madeWeights, error) {
	var made madeWeights
	external := map[string]bool{}
	for _, in := range def.GetExternalInput() {
		external[in] = true
	}
	shapes := map[string]operators.TensorShape{}
	writer := map[string]int{}
	lookup := func(name string) operators.TensorShape {
		if s, ok := shapes[name]; ok {
			return s
		}
		if b := ws.GetBlob(name); b != nil {
			if t := b.Tensor(); t != nil && t.Size() > 0 {
				return operators.ShapeOf(t)
			}
		}
		return operators.UnknownShape
	}
	for i, op := range def.GetOp() {
		in := make([]operators.TensorShape, len(op.GetInput()))
		for k, name := range op.GetInput() {
			in[k] = lookup(name)
			if _, written := writer[name]; !in[k].Unknown || !external[name] || written {
				continue
			}
			fail := func(format string, args ...any) error {
				return fmt.Errorf("-random-weights: %q (input %d of operator %d, %s): %s", name, k, i, op.GetType(), fmt.Sprintf(format, args...))
			}
			if k == 0 {
				return made, fail("it is the operator's data input, not a parameter: give its shape with -input %s=d0xd1x...[:dtype] or value_info.json, or its value with -init", name)
			}
			if x := op.GetInput()[0]; in[0].Unknown {
				why := "is not known"
				if w, ok := writer[x]; ok {
					why = fmt.Sprintf("shape inference cannot tell before the net runs (operator %d, %s, writes it)", w, def.GetOp()[w].GetType())
				}
				return made, fail("its shape follows from the operator's data input %q, whose shape %s; give it with -input %s=d0xd1x...", x, why, name)
			}
			dims, open, err := paramShape(op, k, in)
			if err != nil {
				return made, fail("%v; give it with -input %s=d0xd1x... or its value with -init", err, name)
			}
			if open >= 0 {
				if width <= 0 {
					return made, fail("the net does not record the %s's output channels: pass -width N to give every Conv and FC whose weights are made up N of them, or give this one with -input %s=%s", op.GetType(), name, dimsWithOpen(dims, open))
				}
				dims[open], made.usedWidth = width, true
			}
			t, err := randomParam(paramType(in[0].Type), dims, rng)
			if err != nil {
				return made, fail("%v", err)
			}
			if err := ws.FeedBlob(name, t); err != nil {
				return made, fail("%v", err)
			}
			in[k] = operators.ShapeOf(t)
			made.count++
		}
		out, err := operators.InferShapes(&netdef.NetDef{Op: []*netdef.OperatorDef{op}}, lookup)
		if err != nil {
			var opErr *operators.OpError
			if errors.As(err, &opErr) {
				opErr.Index = i
			}
			return made, fmt.Errorf("-random-weights, inferring the shapes: %w", err)
		}
		for _, name := range op.GetOutput() {
			shapes[name], writer[name] = out[name], i
		}
	}
	return made, nil
}

// paramShape returns the shape that input k (> 0) of op must have for the
// shape of its data input in[0], and the index of the dim that is the
// operator's output channels (-1 if none), which the net does not record.
func paramShape(op *netdef.OperatorDef, k int, in []operators.TensorShape) (dims []int, open int, err error) {
	x := in[0]
	switch typ := op.GetType(); typ {
	case "Conv", "Conv1D", "Conv2D", "Conv3D":
		if x.Rank() < 3 {
			return nil, -1, fmt.Errorf("its data input has shape %v, but a convolution needs N, C and spatial dimensions", x)
		}
		nhwc := strings.EqualFold(argString(op, "order", "NCHW"), "NHWC")
		c, err := channels(x, nhwc)
		if err != nil {
			return nil, -1, err
		}
		switch k {
		case 1:
			kernel, err := convKernel(op, x.Rank()-2)
			if err != nil {
				return nil, -1, err
			}
			perGroup := c / int(argInt(op, "group", 1))
			if nhwc {
				return append(append([]int{operators.AnyDim}, kernel...), perGroup), 0, nil
			}
			return append([]int{operators.AnyDim, perGroup}, kernel...), 0, nil
		case 2:
			if w := in[1]; w.Rank() > 0 && w.Dim(0) >= 0 {
				return []int{w.Dim(0)}, -1, nil
			}
			return []int{operators.AnyDim}, 0, nil
		}
		return nil, -1, fmt.Errorf("-random-weights makes inputs 1 and 2 (filter and bias) of %s only", typ)
	case "FC", "FCTransposed":
		transposed := typ == "FCTransposed"
		axis, ok := operators.CanonicalAxis(int(argInt(op, "axis", 1)), x.Rank())
		if !ok {
			return nil, -1, fmt.Errorf("axis %d is out of range for its data input of shape %v", argInt(op, "axis", 1), x)
		}
		inputs, ok := x.Size(axis, x.Rank())
		if !ok {
			return nil, -1, fmt.Errorf("its data input has shape %v, whose size from axis %d is not known", x, axis)
		}
		switch k {
		case 1:
			if transposed {
				return []int{inputs, operators.AnyDim}, 1, nil
			}
			return []int{operators.AnyDim, inputs}, 0, nil
		case 2:
			w := in[1]
			if axisW, ok := operators.CanonicalAxis(int(argInt(op, "axis_w", 1)), w.Rank()); ok {
				from, to := 0, axisW
				if transposed {
					from, to = axisW, w.Rank()
				}
				if n, ok := w.Size(from, to); ok {
					return []int{n}, -1, nil
				}
			}
			return []int{operators.AnyDim}, 0, nil
		}
		return nil, -1, fmt.Errorf("-random-weights makes inputs 1 and 2 (weights and bias) of %s only", typ)
	case "SpatialBN":
		c, err := channels(x, strings.EqualFold(argString(op, "order", "NCHW"), "NHWC"))
		if err != nil {
			return nil, -1, err
		}
		return []int{c}, -1, nil
	case "Add", "Sub", "Mul", "Div":
		if k != 1 {
			return nil, -1, fmt.Errorf("-random-weights makes input 1 of %s only", typ)
		}
		if argInt(op, "broadcast", 0) == 0 {
			if _, ok := x.Size(0, x.Rank()); !ok {
				return nil, -1, fmt.Errorf("its data input has shape %v, which is not fully known", x)
			}
			return append([]int{}, x.Dims...), -1, nil
		}
		axis, ok := operators.CanonicalAxis(int(argInt(op, "axis", -1)), x.Rank())
		if !ok || x.Dim(axis) < 0 {
			return nil, -1, fmt.Errorf("its data input has shape %v, whose dimension at axis %d is not known", x, argInt(op, "axis", -1))
		}
		return []int{x.Dim(axis)}, -1, nil
	}
	return nil, -1, errors.New("-random-weights makes the parameters of Conv, FC, FCTransposed, SpatialBN, Add, Sub, Mul and Div only")
}

// channels returns the channel count of an image tensor x, in NCHW or NHWC
// order.
func channels(x operators.TensorShape, nhwc bool) (int, error) {
	if x.Rank() < 2 {
		return 0, fmt.Errorf("its data input has shape %v, without a channel dimension", x)
	}
	c := x.Dim(1)
	if nhwc {
		c = x.Dim(x.Rank() - 1)
	}
	if c < 0 {
		return 0, fmt.Errorf("the channels of its data input, of shape %v, are not known", x)
	}
	return c, nil
}

// convKernel reads a convolution's kernel size for nsp spatial dimensions:
// the kernels list, or kernel for every dimension, or kernel_h and
// kernel_w.
func convKernel(op *netdef.OperatorDef, nsp int) ([]int, error) {
	if a := netdef.FindArg(op.GetArg(), "kernels"); a != nil {
		out := make([]int, len(a.GetInts()))
		for i, v := range a.GetInts() {
			out[i] = int(v)
		}
		return out, nil
	}
	if a := netdef.FindArg(op.GetArg(), "kernel"); a != nil {
		out := make([]int, nsp)
		for i := range out {
			out[i] = int(a.GetI())
		}
		return out, nil
	}
	h, w := netdef.FindArg(op.GetArg(), "kernel_h"), netdef.FindArg(op.GetArg(), "kernel_w")
	if h != nil && w != nil {
		return []int{int(h.GetI()), int(w.GetI())}, nil
	}
	return nil, errors.New("the operator has no kernel argument (kernel, kernels, or kernel_h and kernel_w)")
}

func argInt(op *netdef.OperatorDef, name string, def int64) int64 {
	if a := netdef.FindArg(op.GetArg(), name); a != nil && a.I != nil {
		return a.GetI()
	}
	return def
}

func argString(op *netdef.OperatorDef, name, def string) string {
	if a := netdef.FindArg(op.GetArg(), name); a != nil && a.S != nil {
		return string(a.S)
	}
	return def
}

// dimsWithOpen writes dims for -input with M for the open dimension:
// Mx3x3x3.
func dimsWithOpen(dims []int, open int) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.Itoa(d)
	}
	parts[open] = "M"
	return strings.Join(parts, "x")
}

// paramType is the element type of the parameters of an operator whose
// data input has type dt: dt when it is a floating-point type, else FLOAT.
func paramType(dt blob.DataType) blob.DataType {
	switch dt {
	case blob.Float16, blob.Float64:
		return dt
	}
	return blob.Float32
}

// randomParam makes a parameter of type dt and shape dims: a weight (rank
// ≥ 2) uniform in ±√(3/fan-in), the fan-in being its size over its first
// dimension, else uniform in [0.5, 1.5).
func randomParam(dt blob.DataType, dims []int, rng *rand.Rand) (*blob.Tensor, error) {
	t, err := blob.New(dt, dims...)
	if err != nil {
		return nil, err
	}
	lo, hi := 0.5, 1.5
	if len(dims) >= 2 && dims[0] > 0 && t.Size() > 0 {
		s := math.Sqrt(3 / float64(t.Size()/dims[0]))
		lo, hi = -s, s
	}
	fillUniform(t, lo, hi, rng)
	return t, nil
}
