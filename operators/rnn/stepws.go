package rnn

import (
	"context"
	"fmt"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// stepWorkspace is a child workspace, Caffe2's Workspace(shared): its own
// blobs first, then every blob its parent sees. CreateBlob of a name the
// parent has returns the parent's blob, so a step net writes into the
// blobs of the net around it (a parameter's gradient) and keeps the rest
// (its activations) to itself.
type stepWorkspace struct {
	parent operators.Workspace
	blobs  map[string]*blob.Blob
	// fwd and bwd are the forward and backward step nets' operators,
	// created in this workspace at their first run.
	fwd, bwd []operators.Operator
}

func newStepWorkspace(parent operators.Workspace) *stepWorkspace {
	return &stepWorkspace{parent: parent, blobs: map[string]*blob.Blob{}}
}

// GetBlob implements operators.Workspace.
func (w *stepWorkspace) GetBlob(name string) *blob.Blob {
	if b, ok := w.blobs[name]; ok {
		return b
	}
	return w.parent.GetBlob(name)
}

// CreateBlob implements operators.Workspace.
func (w *stepWorkspace) CreateBlob(name string) *blob.Blob {
	if b := w.GetBlob(name); b != nil {
		return b
	}
	return w.local(name)
}

// RootFolder implements operators.Workspace.
func (w *stepWorkspace) RootFolder() string { return w.parent.RootFolder() }

// local returns the workspace's own blob of that name, creating it (and
// so shadowing a parent's blob of the name) when there is none.
func (w *stepWorkspace) local(name string) *blob.Blob {
	b, ok := w.blobs[name]
	if !ok {
		b = &blob.Blob{}
		w.blobs[name] = b
	}
	return b
}

// scratch is the value of RecurrentNetwork's last output (Caffe2's
// ScratchWorkspaces): the workspace of the blobs all timesteps share and
// one step workspace per timestep.
type scratch struct {
	shared *stepWorkspace
	steps  []*stepWorkspace
}

// stepCost is what shape-independent memory one step workspace is charged
// against the memory budget, so that a sequence length taken from a tensor
// with no elements ([2^40, 0, 8]) cannot ask for billions of them.
const stepCost = 1 << 10

// createStepNet creates net's operators in w, each on the device the
// RecurrentNetwork operator has unless it names its own.
func createStepNet(b *operators.Base, net *netdef.NetDef, w *stepWorkspace) ([]operators.Operator, error) {
	ops := make([]operators.Operator, len(net.GetOp()))
	for i, def := range net.GetOp() {
		if def.DeviceOption == nil && b.Def().DeviceOption != nil {
			def = proto.Clone(def).(*netdef.OperatorDef)
			def.DeviceOption = proto.Clone(b.Def().DeviceOption).(*netdef.DeviceOption)
		}
		op, err := operators.CreateWithThreads(def, w, i, b.ThreadBudget())
		if err != nil {
			return nil, fmt.Errorf("step net %q: %w", net.GetName(), err)
		}
		ops[i] = op
	}
	if err := operators.CheckDevices(ops); err != nil {
		return nil, fmt.Errorf("step net %q: %w", net.GetName(), err)
	}
	return ops, nil
}

// runStepNet runs ops in order at timestep t.
func runStepNet(ctx context.Context, net *netdef.NetDef, ops []operators.Operator, t int) error {
	for i, op := range ops {
		op.OpBase().SetContext(ctx)
		if err := operators.RunSafely(op); err != nil {
			d := op.OpBase().Def()
			return fmt.Errorf("step net %q at timestep %d: %w", net.GetName(), t,
				&operators.OpError{Index: i, Type: d.GetType(), Name: d.GetName(), Err: err})
		}
	}
	return nil
}

// link is one of Caffe2's links: at timestep t the internal blob of the
// step workspace is a view of rows [t+offset, t+offset+window) of the
// external tensor.
type link struct {
	internal, external string
	offset, window     int
}

// readLinks reads the link arguments named by prefix ("link" or
// "backward_link"); windows default to 1 and are only read when withWindow
// is set.
func readLinks(b *operators.Base, prefix string, withWindow bool) ([]link, error) {
	internal := b.ArgStrings(prefix+"_internal", nil)
	external := b.ArgStrings(prefix+"_external", nil)
	offset := b.ArgInts(prefix+"_offset", nil)
	var window []int64
	if withWindow {
		window = b.ArgInts(prefix+"_window", nil)
	}
	if window == nil {
		window = make([]int64, len(offset))
		for i := range window {
			window[i] = 1
		}
	}
	if len(internal) != len(offset) || len(external) != len(offset) || len(window) != len(offset) {
		return nil, b.Errorf("%s_internal, %s_external, %s_offset and %s_window have %d, %d, %d and %d entries: want one each per link",
			prefix, prefix, prefix, prefix, len(internal), len(external), len(offset), len(window))
	}
	links := make([]link, len(offset))
	for i := range links {
		if offset[i] < 0 || offset[i] > 1<<30 || window[i] < 0 || window[i] > 1<<30 {
			return nil, b.Errorf("%s %d (%q → %q) has offset %d and window %d: both must be in [0, 2^30]", prefix, i, internal[i], external[i], offset[i], window[i])
		}
		links[i] = link{internal[i], external[i], int(offset[i]), int(window[i])}
	}
	return links, nil
}

// apply makes l's internal blob in w a view of its external tensor's rows
// at timestep t and returns the view.
func (l link) apply(b *operators.Base, w *stepWorkspace, t int) ([]float32, error) {
	eb := w.GetBlob(l.external)
	if eb == nil {
		return nil, b.Errorf("link %q → %q: no blob %q: %w", l.internal, l.external, l.external, operators.ErrBlobNotFound)
	}
	ext := eb.Tensor()
	if ext == nil || ext.DataType() != blob.Float32 || ext.NumDims() < 1 || ext.Size() == 0 || !ext.OnHost() {
		return nil, b.Errorf("link %q → %q: %q must be a non-empty FLOAT tensor in Go memory, got %s", l.internal, l.external, l.external, describe(eb))
	}
	rows := ext.Dim(0)
	if t+l.offset+l.window > rows {
		return nil, b.Errorf("link %q → %q at timestep %d: rows [%d, %d) of %q, which has %d (shape %v)",
			l.internal, l.external, t, t+l.offset, t+l.offset+l.window, l.external, rows, ext.Dims())
	}
	row := ext.Size() / rows
	data := blob.Data[float32](ext)[(t+l.offset)*row : (t+l.offset+l.window)*row : (t+l.offset+l.window)*row]
	return data, shareRows(w.local(l.internal), ext, data, l.window)
}

// shareRows makes bl a view of data, rows rows of src: src's shape with
// rows as its first dim. A blob that is that view already is left as it
// is, so that a net run again on tensors that kept their storage makes no
// new views (and allocates nothing).
func shareRows(bl *blob.Blob, src *blob.Tensor, data []float32, rows int) error {
	if cur := bl.Tensor(); cur != nil && cur.DataType() == blob.Float32 && cur.NumDims() == src.NumDims() && cur.Dim(0) == rows {
		got := blob.Data[float32](cur)
		same := len(got) == len(data) && (len(data) == 0 || unsafe.SliceData(got) == unsafe.SliceData(data))
		for i := 1; same && i < src.NumDims(); i++ {
			same = cur.Dim(i) == src.Dim(i)
		}
		if same {
			return nil
		}
	}
	dims := src.Shape()
	dims[0] = rows
	view, err := blob.FromSlice(data, dims...)
	if err != nil {
		return err
	}
	bl.MutableTensor().ShareData(view)
	return nil
}

// checkView reports a written link whose internal blob no longer is the
// view apply made (the step net replaced its storage, by writing another
// type or shape), since what it wrote then never reached the external
// tensor.
func (l link) checkView(b *operators.Base, w *stepWorkspace, view []float32) error {
	t := w.local(l.internal).Tensor()
	var got []float32
	if t != nil {
		got = blob.Data[float32](t)
	}
	if len(got) != len(view) || (len(view) > 0 && unsafe.SliceData(got) != unsafe.SliceData(view)) {
		return b.Errorf("link %q → %q: the step net wrote %s into %q instead of FLOAT rows of shape like %q's",
			l.internal, l.external, describe(w.local(l.internal)), l.internal, l.external)
	}
	return nil
}

// describe names what a blob holds, for errors.
func describe(bl *blob.Blob) string {
	if t := bl.Tensor(); t != nil {
		return fmt.Sprintf("%v %v", t.DataType(), t.Dims())
	}
	return bl.TypeName()
}

// written returns the names the operators of net write.
func written(net *netdef.NetDef) map[string]bool {
	out := map[string]bool{}
	for _, op := range net.GetOp() {
		for _, o := range op.GetOutput() {
			out[o] = true
		}
	}
	return out
}

// stepNetArg reads a NetDef argument, given as a NetDef or, as Caffe2's
// Python writes it, in protobuf text format; ok is false when it is
// absent or empty.
func stepNetArg(b *operators.Base, name string) (net *netdef.NetDef, ok bool, err error) {
	a := netdef.FindArg(b.Def().GetArg(), name)
	switch {
	case a == nil:
		return nil, false, nil
	case a.N != nil:
		return proto.Clone(a.N).(*netdef.NetDef), true, nil
	case len(a.S) == 0:
		return nil, false, nil
	}
	net = &netdef.NetDef{}
	if err := netdef.UnmarshalText(a.S, net); err != nil {
		return nil, false, b.Errorf("argument %s is not a NetDef in text format: %w", name, err)
	}
	return net, true, nil
}

// timestepBlob sets w's own timestep blob to the int32 t.
func timestepBlob(b *operators.Base, w *stepWorkspace, name string, t int) error {
	ts := w.local(name).MutableTensor()
	if err := ts.Init(blob.Int32, 1); err != nil {
		return b.Errorf("timestep blob %q: %w", name, err)
	}
	blob.Data[int32](ts)[0] = int32(t)
	return nil
}
