package tests

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// Hostile cases: an operator of any registered type with arguments of any
// value and type (huge, negative, zero, NaN, a list where a number is
// expected) and inputs of small, odd shapes and types, created in a fresh
// workspace (CreateNet, so shape inference runs) and run. Whatever the
// values, the operator must fail with an error or run: never take the
// process down, never hang, never panic. The hostile-argument probe draws
// them at random; FuzzNetDef draws them from the fuzzer's bytes.

// chooser draws the choices that make a hostile case.
type chooser interface {
	// intn returns a number in [0, n), n > 0.
	intn(n int) int
}

// randChooser draws from a seeded random stream.
type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// byteChooser draws from a fuzzer's bytes, one or two per choice; 0 when
// they run out, so that short inputs make simple cases.
type byteChooser struct{ data []byte }

func (c *byteChooser) intn(n int) int {
	if n <= 1 || len(c.data) == 0 {
		return 0
	}
	v := int(c.data[0])
	c.data = c.data[1:]
	if n > 256 && len(c.data) > 0 {
		v = v<<8 | int(c.data[0])
		c.data = c.data[1:]
	}
	return v % n
}

// pick returns one of vs.
func pick[T any](c chooser, vs ...T) T { return vs[c.intn(len(vs))] }

// Argument values: the small ones operators expect, and the ones that
// break naive code (huge, negative, NaN, infinite).
var (
	benignInts    = []int64{0, 1, 2, 3, -1, 1, 2, 4}
	hostileInts   = []int64{1 << 31, 1<<31 - 1, 1 << 32, 1 << 40, 1 << 62, math.MaxInt64, math.MinInt64, -1 << 40, -1 << 31, 1 << 20, 100000, -2, 7, 16}
	benignFloats  = []float32{0, 1, -1, 0.5, 2, 0.1, 3}
	hostileFloats = []float32{1e-30, 1e30, -1e30, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1 << 40, -1 << 40}
)

// hostileInt returns a benign or a hostile integer, evenly.
func hostileInt(c chooser) int64 {
	if c.intn(2) == 0 {
		return pick(c, benignInts...)
	}
	return pick(c, hostileInts...)
}

func hostileFloat(c chooser) float32 {
	if c.intn(2) == 0 {
		return pick(c, benignFloats...)
	}
	return pick(c, hostileFloats...)
}

var hostileStrings = []string{
	"", "NCHW", "NHWC", "x", "sum", "mean", "max", "minidb", "badgerdb", "reflect", "edge", "constant",
	"step", "fixed", "exp", "inv", "\x00", "../up", strings.Repeat("y", 300),
}

// extraArgNames are argument names operators read that no schema lists.
var extraArgNames = []string{
	"kernel", "kernel_h", "kernel_w", "stride", "stride_h", "stride_w", "dilation", "dilation_h", "dilation_w",
	"pads", "kernels", "strides", "dilations", "adjs", "adj", "pad_t", "pad_l", "pad_b", "pad_r",
	"dims", "axes", "shape", "extra_shape", "k", "axis", "to", "dtype", "value", "values", "noise_size",
	"is_test", "ratio", "order", "size", "tiles", "split", "num_reduce_dim", "top_k",
}

// argNames returns the arguments a case for typ draws from: the schema's,
// with their defaults, then every other name operators are known to read.
func argNames(typ string) (own []operators.ArgSpec, all []string) {
	seen := map[string]bool{}
	if s, ok := operators.SchemaOf(typ); ok {
		for _, a := range s.Args {
			if !seen[a.Name] {
				seen[a.Name] = true
				own = append(own, a)
				all = append(all, a.Name)
			}
		}
	}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			all = append(all, n)
		}
	}
	for _, t := range operators.RegisteredOperators() {
		if s, ok := operators.SchemaOf(t); ok {
			for _, a := range s.Args {
				add(a.Name)
			}
		}
	}
	for _, n := range extraArgNames {
		add(n)
	}
	return own, all
}

// Argument kinds.
const (
	argInt = iota
	argFloat
	argInts
	argFloats
	argString
	argStrings
	numArgKinds
)

// kindOf returns the argument kind of a schema default (argInt when it
// has none).
func kindOf(def any) int {
	switch def.(type) {
	case float32, float64:
		return argFloat
	case []int64, []int:
		return argInts
	case []float32:
		return argFloats
	case string:
		return argString
	case []string:
		return argStrings
	}
	return argInt
}

// hostileArg returns an argument named name, usually of kind (the type the
// operator expects), sometimes of another kind.
func hostileArg(c chooser, name string, kind int) *netdef.Argument {
	if c.intn(4) == 0 {
		kind = c.intn(numArgKinds)
	}
	switch kind {
	case argInt:
		return netdef.ArgInt(name, hostileInt(c))
	case argFloat:
		return netdef.ArgFloat(name, hostileFloat(c))
	case argInts:
		v := make([]int64, pick(c, 0, 1, 2, 2, 3, 4, 5, 40))
		for i := range v {
			v[i] = hostileInt(c)
		}
		return netdef.ArgInts(name, v...)
	case argFloats:
		v := make([]float32, pick(c, 0, 1, 2, 3, 4))
		for i := range v {
			v[i] = hostileFloat(c)
		}
		return netdef.ArgFloats(name, v...)
	case argString:
		return netdef.ArgString(name, pick(c, hostileStrings...))
	default:
		v := make([]string, pick(c, 0, 1, 2, 3))
		for i := range v {
			v[i] = pick(c, hostileStrings...)
		}
		return netdef.ArgStrings(name, v...)
	}
}

var hostileTypes = []blob.DataType{
	blob.Float32, blob.Float32, blob.Float32, blob.Float32, blob.Int32, blob.Int64, blob.Int64,
	blob.Float64, blob.Bool, blob.Uint8, blob.String, blob.Float16, blob.Int8, blob.Int16, blob.Uint16,
}

// hostileTensor returns a tensor of a drawn type and a small, odd shape:
// rank 0 to 5, dims 0 to 7, values that include negatives, NaN and huge
// integers (which some operators read as sizes or indices).
func hostileTensor(c chooser, shape []int) *blob.Tensor {
	dt := pick(c, hostileTypes...)
	x, err := blob.New(dt, shape...)
	if err != nil {
		panic(err) // the shapes drawn have at most 7^5 elements
	}
	ints := []int64{0, 1, 2, 3, 0, 1, -1, 5, 1 << 40, 1 << 31, -1 << 40}
	floats := []float64{0, 1, -1, 0.5, 2.5, -3, 1e30, math.NaN(), math.Inf(1), 1e-40}
	for i := range x.Size() {
		iv, fv := pick(c, ints...), pick(c, floats...)
		switch dt {
		case blob.Float32:
			blob.Data[float32](x)[i] = float32(fv)
		case blob.Float64:
			blob.Data[float64](x)[i] = fv
		case blob.Float16:
			blob.Data[blob.Half](x)[i] = blob.HalfFromFloat32(float32(fv))
		case blob.Int32:
			blob.Data[int32](x)[i] = int32(iv)
		case blob.Int64:
			blob.Data[int64](x)[i] = iv
		case blob.Int8:
			blob.Data[int8](x)[i] = int8(iv)
		case blob.Int16:
			blob.Data[int16](x)[i] = int16(iv)
		case blob.Uint8:
			blob.Data[uint8](x)[i] = uint8(iv)
		case blob.Uint16:
			blob.Data[uint16](x)[i] = uint16(iv)
		case blob.Bool:
			blob.Data[bool](x)[i] = iv&1 == 1
		case blob.String:
			blob.Data[string](x)[i] = pick(c, hostileStrings...)
		}
	}
	return x
}

// hostileShape returns a small shape, or now and then an empty one with
// huge dims beside its 0 ([1<<31, 0, 3]): no elements, but products of
// dims that size nothing a kernel may allocate.
func hostileShape(c chooser) []int {
	s := make([]int, pick(c, 0, 1, 1, 2, 2, 2, 3, 4, 4, 5))
	for i := range s {
		s[i] = pick(c, 0, 1, 1, 2, 2, 3, 3, 4, 5, 7)
	}
	if len(s) >= 2 && c.intn(12) == 0 {
		s[c.intn(len(s))] = pick(c, 1<<20, 1<<31, 1<<40)
		s[c.intn(len(s))] = 0
	}
	return s
}

// hostileCase is one operator with its inputs.
type hostileCase struct {
	op     *netdef.OperatorDef
	inputs map[string]*blob.Tensor // nil: the blob exists but holds nothing
}

// newHostileCase draws a case for an operator of type typ: a number of
// inputs and outputs its schema allows (and sometimes one it does not),
// outputs that may alias inputs or each other, and arguments from its
// schema and from the names other operators read. typ may be a registry
// key of an engine's implementation, "Type_ENGINE_<engine>"
// (operators.RegisteredOperators): the case then asks for that engine.
func newHostileCase(c chooser, typ string) hostileCase {
	typ, engine, _ := strings.Cut(typ, "_ENGINE_")
	minIn, maxIn, minOut, maxOut := 0, 3, 1, 3
	if s, ok := operators.SchemaOf(typ); ok {
		minIn, maxIn = s.MinInputs, min(s.MaxInputs, s.MinInputs+3)
		minOut, maxOut = s.MinOutputs, min(s.MaxOutputs, s.MinOutputs+3)
		if s.MaxInputs == operators.Unbounded {
			maxIn = s.MinInputs + 3
		}
		if s.MaxOutputs == operators.Unbounded {
			maxOut = s.MinOutputs + 3
		}
	}
	nIn := minIn + c.intn(max(maxIn-minIn, 0)+1)
	nOut := minOut + c.intn(max(maxOut-minOut, 0)+1)
	if c.intn(20) == 0 {
		nIn = c.intn(5)
	}
	hc := hostileCase{inputs: map[string]*blob.Tensor{}}
	shared := hostileShape(c) // most inputs share a shape, so that more cases get past the shape checks
	var ins, outs []string
	for i := range nIn {
		name := fmt.Sprintf("in%d", i)
		ins = append(ins, name)
		shape := shared
		if c.intn(3) == 0 {
			shape = hostileShape(c)
		}
		if c.intn(12) == 0 { // unknown to shape inference
			hc.inputs[name] = nil
			continue
		}
		hc.inputs[name] = hostileTensor(c, shape)
	}
	for i := range nOut {
		name := fmt.Sprintf("out%d", i)
		switch c.intn(8) {
		case 0: // in place
			if len(ins) > 0 {
				name = pick(c, ins...)
			}
		case 1: // two outputs in one blob
			if len(outs) > 0 {
				name = pick(c, outs...)
			}
		}
		outs = append(outs, name)
	}
	own, all := argNames(typ)
	var args []*netdef.Argument
	used := map[string]bool{}
	for _, a := range own {
		if c.intn(2) == 0 {
			args = append(args, hostileArg(c, a.Name, kindOf(a.Default)))
			used[a.Name] = true
		}
	}
	for range pick(c, 0, 0, 1, 2) {
		if n := pick(c, all...); !used[n] {
			args = append(args, hostileArg(c, n, argInt))
			used[n] = true
		}
	}
	hc.op = netdef.NewOperator(typ, ins, outs, args...)
	if engine != "" {
		hc.op.Engine = &engine
	}
	return hc
}

// String writes the operator and its inputs' types and shapes.
func (hc hostileCase) String() string {
	var sb strings.Builder
	sb.WriteString(prototext.MarshalOptions{}.Format(hc.op))
	for _, in := range hc.op.GetInput() {
		if x := hc.inputs[in]; x != nil {
			fmt.Fprintf(&sb, " %s=%v", in, x)
		} else {
			fmt.Fprintf(&sb, " %s=empty", in)
		}
	}
	return sb.String()
}

// hostileOutcome is how a case ended.
type hostileOutcome int

const (
	createFailed hostileOutcome = iota // CreateNet returned an error
	runFailed                          // RunNet returned an error
	ran                                // both succeeded
	recovered                          // an error that is a recovered panic: a bug
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"create error", "run error", "ran", "recovered panic"}

// run creates the case's net in a fresh workspace rooted at root and runs
// it twice (the second run reuses the outputs' storage). It then closes
// what the blobs hold that can be closed (DB readers), as a program that
// drops a workspace would, so that a probe running many cases in one
// process does not keep every DB open.
func (hc hostileCase) run(root string) (hostileOutcome, error) {
	ws := workspace.New(root)
	defer func() {
		for _, name := range ws.Blobs() {
			if c, ok := ws.GetBlob(name).Get().(io.Closer); ok {
				_ = c.Close()
			}
		}
	}()
	for name, x := range hc.inputs {
		if x == nil {
			ws.CreateBlob(name)
			continue
		}
		if err := ws.FeedBlob(name, x); err != nil {
			return createFailed, err
		}
	}
	net := netdef.NewNet("hostile")
	net.AddOp(hc.op)
	err := ws.CreateNet(net, false)
	outcome := createFailed
	if err == nil {
		outcome = runFailed
		err = ws.RunNet(net.Name(), 2)
	}
	switch {
	case err == nil:
		return ran, nil
	case isRecoveredPanic(err):
		return recovered, err
	}
	return outcome, err
}

// isRecoveredPanic reports whether err is a panic that the executor or
// shape inference turned into an error.
func isRecoveredPanic(err error) bool {
	s := err.Error()
	return strings.Contains(s, "panic: ") || strings.Contains(s, "shape inference failed for inputs")
}
