package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/persist" // also registers Save, Load, CreateDB, …
	_ "github.com/caffe2go/caffe2go/persist/badgerdb"
	_ "github.com/caffe2go/caffe2go/persist/minidb"
)

// StoreDirName is the directory, inside a workspace's root folder, that
// holds the workspace's persist.Store.
const StoreDirName = "caffe2go.store"

// StoreEnv is the environment variable that names the store directory of
// workspaces created without a root folder (see Workspace.StoreDir).
const StoreEnv = "CAFFE2GO_STORE"

// StoreDir returns the directory of the workspace's persist.Store, made
// absolute:
//
//   - <root>/caffe2go.store when the workspace was given a root folder
//     (New(dir), ResetWorkspace(dir), or a child of such a workspace);
//   - otherwise the directory $CAFFE2GO_STORE names, when it is set;
//   - otherwise caffe2go/store under the user's cache directory
//     (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux), so that a
//     program that does not choose leaves no store in the directory it
//     runs from.
func (w *Workspace) StoreDir() (string, error) {
	w.mu.RLock()
	root, given := w.root, !w.defaultRoot
	w.mu.RUnlock()
	var dir string
	switch env := os.Getenv(StoreEnv); {
	case given:
		dir = filepath.Join(root, StoreDirName)
	case env != "":
		dir = env
	default:
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("workspace: no root folder and no %s for the store, and no cache directory: %w", StoreEnv, err)
		}
		dir = filepath.Join(cache, "caffe2go", "store")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace: store directory %q: %w", dir, err)
	}
	return abs, nil
}

// Every workspace that has used persistence holds a reference to the store
// of its root folder; workspaces with the same root folder (a child and its
// parent, a workspace and its replacement) share one open store, because
// badger lets a directory be open only once.
var stores = struct {
	sync.Mutex
	byPath map[string]*storeRef
	byWS   map[*Workspace]*storeRef
}{byPath: map[string]*storeRef{}, byWS: map[*Workspace]*storeRef{}}

type storeRef struct {
	path  string
	store *persist.Store
	refs  int
}

// Store returns the workspace's store, in the directory StoreDir returns,
// opening it (and creating it when missing) on first use. Workspaces with
// the same store directory share one open store. It stays open until Close
// or ResetWorkspace.
func (w *Workspace) Store() (*persist.Store, error) {
	stores.Lock()
	defer stores.Unlock()
	if r, ok := stores.byWS[w]; ok {
		return r.store, nil
	}
	path, err := w.StoreDir()
	if err != nil {
		return nil, err
	}
	r, ok := stores.byPath[path]
	if !ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("workspace: creating the store's parent directory: %w", err)
		}
		s, err := persist.Open(path)
		if err != nil {
			return nil, fmt.Errorf("workspace: opening the store %s: %w", path, err)
		}
		r = &storeRef{path: path, store: s}
		stores.byPath[path] = r
	}
	r.refs++
	stores.byWS[w] = r
	return r.store, nil
}

// Close releases what the workspace holds outside memory: its use of the
// store of its root folder, which is closed when no other workspace uses
// it. The workspace's blobs and nets are untouched, and a later persistence
// call opens the store again. Closing a workspace that holds nothing is not
// an error. Saves are durable when they return, so a program that exits
// without closing loses nothing it saved.
func (w *Workspace) Close() error {
	stores.Lock()
	defer stores.Unlock()
	r, ok := stores.byWS[w]
	if !ok {
		return nil
	}
	delete(stores.byWS, w)
	r.refs--
	if r.refs > 0 {
		return nil
	}
	delete(stores.byPath, r.path)
	if err := r.store.Close(); err != nil {
		return fmt.Errorf("workspace: closing the store %s: %w", r.path, err)
	}
	return nil
}

// SaveNet stores the net's NetDef in the root folder's store under name (an
// empty name means the NetDef's own name), replacing a net saved under that
// name before, so that LoadNet in this or a later process returns it.
func (w *Workspace) SaveNet(name string, net netdef.NetSource) error {
	if net == nil {
		return fmt.Errorf("workspace: SaveNet %q: nil net", name)
	}
	def := net.Proto()
	if def == nil {
		return fmt.Errorf("workspace: SaveNet %q: the net has no NetDef", name)
	}
	if name == "" {
		name = def.GetName()
	}
	if name == "" {
		return errors.New("workspace: SaveNet: neither a name nor a NetDef name given")
	}
	s, err := w.Store()
	if err != nil {
		return err
	}
	return s.SaveNet(name, def)
}

// LoadNet returns the NetDef saved under name in the root folder's store.
// Create it with CreateNet to run it.
func (w *Workspace) LoadNet(name string) (*netdef.NetDef, error) {
	s, err := w.Store()
	if err != nil {
		return nil, err
	}
	return s.LoadNet(name)
}

// SavedNets returns the names of the nets saved in the root folder's store,
// sorted.
func (w *Workspace) SavedNets() ([]string, error) {
	s, err := w.Store()
	if err != nil {
		return nil, err
	}
	return s.Nets()
}

// SaveCheckpoint saves blobs of the workspace as checkpoint id in the root
// folder's store (see persist.Store.SaveCheckpoint: atomic, checksummed,
// synced to disk). A nil blobs list saves every local blob that holds a
// tensor. To resume training later, include the optimizer's state and the
// iteration counter along with the parameters.
func (w *Workspace) SaveCheckpoint(id int64, blobs []string, opts ...persist.CheckpointOption) error {
	s, err := w.Store()
	if err != nil {
		return err
	}
	if blobs == nil {
		for _, name := range w.LocalBlobs() {
			if b := w.GetBlob(name); b != nil && b.IsTensor() {
				blobs = append(blobs, name)
			}
		}
	}
	return s.SaveCheckpoint(w, id, blobs, opts...)
}

// LoadCheckpoint loads checkpoint id from the root folder's store into the
// workspace, creating or replacing its blobs. The checkpoint is verified
// first; when it is missing or damaged the workspace is left unchanged.
func (w *Workspace) LoadCheckpoint(id int64) error {
	s, err := w.Store()
	if err != nil {
		return err
	}
	return s.LoadCheckpoint(w, id)
}

// LatestCheckpoint returns the highest checkpoint id in the root folder's
// store; ok is false when there is none.
func (w *Workspace) LatestCheckpoint() (id int64, ok bool, err error) {
	s, err := w.Store()
	if err != nil {
		return 0, false, err
	}
	return s.LatestCheckpoint()
}

// Store returns the store of the current workspace's root folder.
func Store() (*persist.Store, error) { return Current().Store() }

// SaveNet saves a net in the current workspace's store.
func SaveNet(name string, net netdef.NetSource) error { return Current().SaveNet(name, net) }

// LoadNet loads a saved net from the current workspace's store.
func LoadNet(name string) (*netdef.NetDef, error) { return Current().LoadNet(name) }

// SavedNets lists the nets saved in the current workspace's store.
func SavedNets() ([]string, error) { return Current().SavedNets() }

// SaveCheckpoint saves blobs of the current workspace as checkpoint id
// (nil: every local tensor blob).
func SaveCheckpoint(id int64, blobs []string, opts ...persist.CheckpointOption) error {
	return Current().SaveCheckpoint(id, blobs, opts...)
}

// LoadCheckpoint loads checkpoint id into the current workspace.
func LoadCheckpoint(id int64) error { return Current().LoadCheckpoint(id) }

// LatestCheckpoint returns the highest checkpoint id in the current
// workspace's store.
func LatestCheckpoint() (int64, bool, error) { return Current().LatestCheckpoint() }
