package workspace

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// DefaultName is the name of the workspace that is current at start.
const DefaultName = "default"

var global = struct {
	sync.Mutex
	byName  map[string]*Workspace
	current string
}{byName: map[string]*Workspace{DefaultName: New("")}, current: DefaultName}

// Current returns the current workspace.
func Current() *Workspace {
	global.Lock()
	defer global.Unlock()
	return global.byName[global.current]
}

// CurrentWorkspace returns the current workspace's name.
func CurrentWorkspace() string {
	global.Lock()
	defer global.Unlock()
	return global.current
}

// Workspaces returns the registered workspace names, sorted.
func Workspaces() []string {
	global.Lock()
	defer global.Unlock()
	return sortedKeys(global.byName)
}

// SwitchWorkspace makes the named workspace current. A missing name is
// created (with the default root folder, see New) when create is true and is an error
// otherwise.
func SwitchWorkspace(name string, create bool) error {
	global.Lock()
	defer global.Unlock()
	if _, ok := global.byName[name]; !ok {
		if !create {
			return fmt.Errorf("workspace: no workspace named %q (pass create=true to create it)", name)
		}
		global.byName[name] = New("")
	}
	global.current = name
	return nil
}

// Register makes ws available under name (replacing a workspace registered
// under it) without making it current.
func Register(name string, ws *Workspace) {
	global.Lock()
	defer global.Unlock()
	global.byName[name] = ws
}

// CreateChildWorkspace registers, under childName, a new child of the
// workspace registered as parentName.
func CreateChildWorkspace(parentName, childName string) error {
	global.Lock()
	defer global.Unlock()
	p, ok := global.byName[parentName]
	if !ok {
		return fmt.Errorf("workspace: no workspace named %q", parentName)
	}
	if _, dup := global.byName[childName]; dup {
		return fmt.Errorf("workspace: a workspace named %q already exists", childName)
	}
	global.byName[childName] = p.NewChild()
	return nil
}

// ResetWorkspace replaces the current workspace with an empty one of the
// same name. With no argument the root folder is kept; a given folder
// becomes the new root and is created if missing. The replaced workspace is
// closed (see Workspace.Close).
func ResetWorkspace(rootFolder ...string) error {
	if len(rootFolder) > 1 {
		return fmt.Errorf("workspace: ResetWorkspace takes at most one root folder, got %d", len(rootFolder))
	}
	global.Lock()
	defer global.Unlock()
	old := global.byName[global.current]
	fresh := old.sibling()
	if len(rootFolder) == 1 && rootFolder[0] != "" {
		if err := os.MkdirAll(rootFolder[0], 0o755); err != nil {
			return fmt.Errorf("workspace: creating root folder: %w", err)
		}
		fresh = New(rootFolder[0])
	}
	global.byName[global.current] = fresh
	if err := old.Close(); err != nil {
		return fmt.Errorf("workspace: ResetWorkspace: %w", err)
	}
	return nil
}

// RootFolder returns the current workspace's root folder.
func RootFolder() string { return Current().RootFolder() }

// HasBlob reports whether the current workspace has the blob.
func HasBlob(name string) bool { return Current().HasBlob(name) }

// Blobs lists the current workspace's blobs (see Workspace.Blobs).
func Blobs() []string { return Current().Blobs() }

// CreateBlob creates an empty blob in the current workspace unless it exists.
func CreateBlob(name string) { Current().CreateBlob(name) }

// ResetBlob empties an existing blob of the current workspace.
func ResetBlob(name string) error { return Current().ResetBlob(name) }

// RemoveBlob deletes a local blob of the current workspace.
func RemoveBlob(name string) bool { return Current().RemoveBlob(name) }

// FeedBlob feeds a value into the current workspace (see Workspace.FeedBlob).
func FeedBlob(name string, value any, opts ...FeedOption) error {
	return Current().FeedBlob(name, value, opts...)
}

// FetchBlob fetches a copy of a tensor from the current workspace.
func FetchBlob(name string) (*blob.Tensor, error) { return Current().FetchBlob(name) }

// FetchBlobs fetches copies of several tensors from the current workspace.
func FetchBlobs(names []string) ([]*blob.Tensor, error) { return Current().FetchBlobs(names) }

// FetchValue fetches whatever a blob of the current workspace holds.
func FetchValue(name string) (any, error) { return Current().FetchValue(name) }

// FetchValues fetches several blobs of the current workspace with FetchValue.
func FetchValues(names []string) ([]any, error) { return Current().FetchValues(names) }

// FetchBytes fetches a byte-string blob of the current workspace.
func FetchBytes(name string) ([]byte, error) { return Current().FetchBytes(name) }

// BlobSizeBytes returns the byte size of a blob of the current workspace.
func BlobSizeBytes(name string) (int, error) { return Current().BlobSizeBytes(name) }

// SerializeBlob serializes a blob of the current workspace to BlobProto bytes.
func SerializeBlob(name string) ([]byte, error) { return Current().SerializeBlob(name) }

// DeserializeBlob fills a blob of the current workspace from BlobProto bytes.
func DeserializeBlob(name string, data []byte) error { return Current().DeserializeBlob(name, data) }

// CreateNet instantiates a net in the current workspace.
func CreateNet(src netdef.NetSource, overwrite bool) error {
	return Current().CreateNet(src, overwrite)
}

// InferShapes infers the shapes of the blobs a net writes, from the tensors
// of the current workspace, without running it.
func InferShapes(src netdef.NetSource) (map[string]operators.TensorShape, error) {
	return Current().InferShapes(src)
}

// RunNet runs a created net of the current workspace iters times.
func RunNet(name string, iters int) error { return Current().RunNet(name, iters) }

// RunNetContext runs a created net of the current workspace iters times
// unless ctx ends first (see Workspace.RunNetContext).
func RunNetContext(ctx context.Context, name string, iters int) error {
	return Current().RunNetContext(ctx, name, iters)
}

// RunNetOnce runs a net once in the current workspace without registering it.
func RunNetOnce(src netdef.NetSource) error { return Current().RunNetOnce(src) }

// RunOperatorOnce runs one operator once in the current workspace.
func RunOperatorOnce(def *netdef.OperatorDef) error { return Current().RunOperatorOnce(def) }

// RunOperatorsOnce runs operators once, in order, in the current workspace.
func RunOperatorsOnce(defs []*netdef.OperatorDef) error { return Current().RunOperatorsOnce(defs) }

// RunPlan runs a plan in the current workspace.
func RunPlan(src netdef.PlanSource) error { return Current().RunPlan(src) }

// RunPlanContext runs a plan in the current workspace until it ends or ctx
// does (see Workspace.RunPlanContext).
func RunPlanContext(ctx context.Context, src netdef.PlanSource) error {
	return Current().RunPlanContext(ctx, src)
}

// RunPlanInBackground starts a plan in the current workspace.
func RunPlanInBackground(src netdef.PlanSource) *PlanHandle {
	return Current().RunPlanInBackground(src)
}

// Nets lists the current workspace's nets, sorted.
func Nets() []string { return Current().Nets() }

// DeleteNet removes a net from the current workspace.
func DeleteNet(name string) bool { return Current().DeleteNet(name) }

// BenchmarkNet benchmarks a net of the current workspace (see
// Workspace.BenchmarkNet).
func BenchmarkNet(name string, warmup, runs int, perOp bool) ([]float64, error) {
	return Current().BenchmarkNet(name, warmup, runs, perOp)
}

// RegisteredOperators returns every registered operator key, sorted.
func RegisteredOperators() []string { return operators.RegisteredOperators() }

// NumCudaDevices returns the number of CUDA GPUs this build can use (0
// without the cuda build tag).
func NumCudaDevices() int { return devicescope.NumDevices(netdef.CUDA) }
