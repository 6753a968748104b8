package workspace

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	_ "github.com/caffe2go/caffe2go/operators/std" // the standard operator set
	"github.com/caffe2go/caffe2go/persist"
)

// Workspace holds named blobs and nets. It is safe for concurrent use,
// except that running a net while another goroutine feeds or resets the
// blobs that net uses is a data race on those blobs' contents.
type Workspace struct {
	mu   sync.RWMutex
	root string
	// defaultRoot: the root folder was not given (New("")), so the store
	// lives where StoreDir says rather than in the working directory.
	defaultRoot bool
	parent      *Workspace // shared parent: every lookup falls through to it
	blobs       map[string]*blob.Blob
	forwarded   map[string]forward
	nets        map[string]*Net
}

type forward struct {
	ws   *Workspace
	name string
}

var _ operators.Workspace = (*Workspace)(nil)

// Errors to test for with errors.Is; the errors the workspace returns wrap
// them and add the names involved.
var (
	// ErrBlobNotFound: a blob name that exists nowhere the workspace looks
	// (FetchBlob, ResetBlob, …, and an operator input at CreateNet). It is
	// operators.ErrBlobNotFound, so one test covers both.
	ErrBlobNotFound = operators.ErrBlobNotFound
	// ErrNetNotFound: RunNet and BenchmarkNet of a net that was not created.
	ErrNetNotFound = errors.New("can't find net")
	// ErrUnknownOperator: a net names an operator type with no
	// implementation on any device. It is operators.ErrUnknownOperator.
	ErrUnknownOperator = operators.ErrUnknownOperator
	// ErrCorrupt: damaged data in the store. It is persist.ErrCorrupt.
	ErrCorrupt = persist.ErrCorrupt
)

// New returns an empty workspace whose root folder is rootFolder ("" means
// "." for the files operators write, and the default store directory; see
// Workspace.StoreDir). The folder is not created.
func New(rootFolder string) *Workspace {
	w := &Workspace{root: rootFolder, blobs: map[string]*blob.Blob{}, forwarded: map[string]forward{}, nets: map[string]*Net{}}
	if rootFolder == "" {
		w.root, w.defaultRoot = ".", true
	}
	return w
}

// sibling returns an empty workspace with w's root folder, given or not.
func (w *Workspace) sibling() *Workspace {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.defaultRoot {
		return New("")
	}
	return New(w.root)
}

// NewChild returns a workspace that sees every blob of w: lookups that miss
// locally fall through to w, and CreateBlob of a name w has returns w's blob.
// The child has w's root folder.
func (w *Workspace) NewChild() *Workspace {
	c := w.sibling()
	c.parent = w
	return c
}

// NewForwarding returns a workspace that sees only the listed blobs of
// parent, each under a local name (local → parent name). Every parent name
// must exist.
func NewForwarding(parent *Workspace, mapping map[string]string) (*Workspace, error) {
	c := parent.sibling()
	if err := c.AddBlobMapping(parent, mapping, false); err != nil {
		return nil, err
	}
	return c, nil
}

// RootFolder returns the folder that relative paths of Save, Load and Print
// resolve against.
func (w *Workspace) RootFolder() string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.root
}

// AddBlobMapping forwards local names to blobs of parent (local → parent
// name), resolved on each access. Re-adding an identical mapping is fine; a
// different mapping for a name is an error, and so is a name that exists
// locally unless skipDefined is set (then that name is skipped).
func (w *Workspace) AddBlobMapping(parent *Workspace, mapping map[string]string, skipDefined bool) error {
	names := make([]string, 0, len(mapping))
	for local := range mapping {
		names = append(names, local)
	}
	sort.Strings(names)
	for _, local := range names {
		pname := mapping[local]
		if !parent.HasBlob(pname) {
			return fmt.Errorf("workspace: invalid parent workspace blob %q (forwarded as %q)", pname, local)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, local := range names {
		f := forward{parent, mapping[local]}
		if old, ok := w.forwarded[local]; ok {
			if old != f {
				return fmt.Errorf("workspace: redefinition of blob %q: already forwarded to %q", local, old.name)
			}
			continue
		}
		if _, ok := w.blobs[local]; ok {
			if skipDefined {
				continue
			}
			return fmt.Errorf("workspace: cannot forward %q: a local blob of that name exists", local)
		}
		w.forwarded[local] = f
	}
	return nil
}

// GetBlob returns the named blob, looking locally, then in forwarded blobs,
// then in the parent; nil when there is none. It implements
// operators.Workspace.
func (w *Workspace) GetBlob(name string) *blob.Blob {
	w.mu.RLock()
	if b, ok := w.blobs[name]; ok {
		w.mu.RUnlock()
		return b
	}
	f, fwd := w.forwarded[name]
	parent := w.parent
	w.mu.RUnlock()
	if fwd {
		return f.ws.GetBlob(f.name)
	}
	if parent != nil {
		return parent.GetBlob(name)
	}
	return nil
}

// HasBlob reports whether GetBlob finds the name.
func (w *Workspace) HasBlob(name string) bool { return w.GetBlob(name) != nil }

// CreateBlob returns the named blob if it exists anywhere GetBlob looks
// (so a child writes into its parent's blob), else a new empty local one.
func (w *Workspace) CreateBlob(name string) *blob.Blob {
	if b := w.GetBlob(name); b != nil {
		return b
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if b, ok := w.blobs[name]; ok { // created concurrently
		return b
	}
	b := &blob.Blob{}
	w.blobs[name] = b
	return b
}

// CreateLocalBlob returns the local blob of that name, creating it even
// when a parent has one (the local blob then shadows it).
func (w *Workspace) CreateLocalBlob(name string) *blob.Blob {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b, ok := w.blobs[name]; ok {
		return b
	}
	b := &blob.Blob{}
	w.blobs[name] = b
	return b
}

// ResetBlob empties an existing blob, keeping its name.
func (w *Workspace) ResetBlob(name string) error {
	b := w.GetBlob(name)
	if b == nil {
		return fmt.Errorf("workspace: %w: %q", ErrBlobNotFound, name)
	}
	b.Reset()
	return nil
}

// RemoveBlob deletes a local blob and reports whether there was one. Nets
// created before keep using the removed blob's content.
func (w *Workspace) RemoveBlob(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.blobs[name]; !ok {
		return false
	}
	delete(w.blobs, name)
	return true
}

// RenameBlob renames a local blob; the new name must not exist anywhere.
func (w *Workspace) RenameBlob(oldName, newName string) error {
	if w.HasBlob(newName) {
		return fmt.Errorf("workspace: cannot rename %q to %q: %q already exists", oldName, newName, newName)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.blobs[oldName]
	if !ok {
		return fmt.Errorf("workspace: cannot rename %q: no local blob of that name: %w", oldName, ErrBlobNotFound)
	}
	delete(w.blobs, oldName)
	w.blobs[newName] = b
	return nil
}

// LocalBlobs returns the names of the local blobs, sorted.
func (w *Workspace) LocalBlobs() []string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return sortedKeys(w.blobs)
}

// Blobs returns the local names, then the forwarded names, then the
// parent's blobs, each group sorted, as Caffe2 lists them.
func (w *Workspace) Blobs() []string {
	w.mu.RLock()
	out := sortedKeys(w.blobs)
	out = append(out, sortedKeys(w.forwarded)...)
	parent := w.parent
	w.mu.RUnlock()
	if parent != nil {
		out = append(out, parent.Blobs()...)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Nets returns the names of the created nets, sorted.
func (w *Workspace) Nets() []string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return sortedKeys(w.nets)
}

// GetNet returns the created net of that name, or nil.
func (w *Workspace) GetNet(name string) *Net {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.nets[name]
}

// DeleteNet removes a created net and reports whether there was one.
func (w *Workspace) DeleteNet(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.nets[name]; !ok {
		return false
	}
	delete(w.nets, name)
	return true
}

// CreateNet instantiates a net and registers it under its name. An existing
// net of that name is an error unless overwrite is set, in which case the
// new net replaces it once it is built and checked: a failed overwrite
// leaves the old net in place, a run of the old net in progress finishes
// on it, and runs of the old and the new net never overlap (they take
// turns, as runs of one net do). Every operator input must already exist in the
// workspace; every output is created. Shape inference then runs over the
// net from the shapes of the tensors in the workspace (parameters made by
// an init net, inputs already fed), so that layers whose dims cannot go
// together are reported here, naming the operator and the shapes, rather
// than at the first RunNet.
func (w *Workspace) CreateNet(src netdef.NetSource, overwrite bool) error {
	def := src.Proto()
	if def.GetName() == "" {
		return fmt.Errorf("workspace: error creating net: net definition should have a name (set NetDef.Name; model-zoo predict nets often have none)")
	}
	name := def.GetName()
	refuse := func() error {
		return fmt.Errorf("workspace: I respectfully refuse to overwrite an existing net of the same name %q, unless you explicitly specify overwrite=true", name)
	}
	if old := w.GetNet(name); old != nil {
		if !overwrite {
			return refuse()
		}
		// Building the new net reads the shapes of blobs the old one
		// writes: wait for its run in progress, and keep it from starting
		// another until the new net has replaced it.
		old.mu.Lock()
		defer old.mu.Unlock()
	}
	n, err := newNet(def, w)
	if err != nil {
		return fmt.Errorf("workspace: error creating net %q: %w", name, err)
	}
	if _, err := w.InferShapes(def); err != nil {
		return fmt.Errorf("workspace: error creating net %q: %w", name, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur, exists := w.nets[name]; exists {
		if !overwrite {
			return refuse()
		}
		n.mu = cur.mu
	}
	w.nets[name] = n
	return nil
}

// InferShapes infers the shapes of the blobs net writes (Caffe2's
// InferShapesAndTypes), starting from the tensors in the workspace: those
// with elements give their shapes, every other blob is unknown (an
// operator's output that has not been written yet is an empty tensor). It
// runs nothing and returns the first contradiction as an
// *operators.OpError naming the operator and the shapes.
func (w *Workspace) InferShapes(net netdef.NetSource) (map[string]operators.TensorShape, error) {
	return operators.InferShapes(net.Proto(), func(name string) operators.TensorShape {
		if b := w.GetBlob(name); b != nil {
			if t := b.Tensor(); t != nil && t.Size() > 0 {
				return operators.ShapeOf(t)
			}
		}
		return operators.UnknownShape
	})
}

// RunNet runs the created net of that name iters times (none for 0),
// stopping at the first error.
func (w *Workspace) RunNet(name string, iters int) error {
	return w.RunNetContext(context.Background(), name, iters)
}

// RunNetContext runs the created net of that name iters times, as RunNet
// does, unless ctx ends first: no operator starts once ctx is done, and
// the error wraps ctx.Err() (see Net.RunContext).
func (w *Workspace) RunNetContext(ctx context.Context, name string, iters int) error {
	n := w.GetNet(name)
	if n == nil {
		return fmt.Errorf("workspace: %w %q: create it first with CreateNet", ErrNetNotFound, name)
	}
	if iters < 0 {
		return fmt.Errorf("workspace: RunNet %q: negative iteration count %d", name, iters)
	}
	for i := 0; i < iters; i++ {
		if err := n.RunContext(ctx); err != nil {
			return err
		}
	}
	return nil
}

// RunNetOnce instantiates the net without registering it and runs it once.
// Blobs it creates stay in the workspace.
func (w *Workspace) RunNetOnce(src netdef.NetSource) error {
	n, err := newNet(src.Proto(), w)
	if err != nil {
		return fmt.Errorf("workspace: could not create net %q: %w", src.Proto().GetName(), err)
	}
	return n.Run()
}

// RunOperatorOnce instantiates one operator and runs it once.
func (w *Workspace) RunOperatorOnce(def *netdef.OperatorDef) error {
	op, err := operators.Create(def, w, -1)
	if err != nil {
		return err
	}
	if err := operators.CheckDevices([]operators.Operator{op}); err != nil {
		return err
	}
	if err := operators.RunSafely(op); err != nil {
		return &operators.OpError{Index: -1, Type: def.GetType(), Name: def.GetName(), Err: err}
	}
	return nil
}

// RunOperatorsOnce runs each operator once, in order, stopping at the first
// error.
func (w *Workspace) RunOperatorsOnce(defs []*netdef.OperatorDef) error {
	for _, d := range defs {
		if err := w.RunOperatorOnce(d); err != nil {
			return err
		}
	}
	return nil
}
