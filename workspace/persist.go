package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

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
	// failed holds, by path, the stores found damaged: they are not opened
	// again (which reads every file) on every call, but after
	// StoreRetryDelay, or once a workspace with that store directory is
	// closed or reset.
	failed map[string]openFailure
}{byPath: map[string]*storeRef{}, byWS: map[*Workspace]*storeRef{}, failed: map[string]openFailure{}}

type storeRef struct {
	path  string
	store *persist.Store
	refs  int
	// calls counts the persistence calls of workspaces in progress on the
	// store; the last workspace's Close waits for them. closed is set
	// while that Close closes the store, and closed once it has.
	calls  sync.WaitGroup
	closed chan struct{}
}

// openFailure is a failed opening of a damaged store.
type openFailure struct {
	err error
	at  time.Time
}

// StoreRetryDelay is how long a workspace keeps reporting the damage it
// found in its store before opening it again: opening a store reads and
// checks all its files. Close or ResetWorkspace of a workspace with that
// store directory, or `caffe2go store repair` followed by one of them,
// makes the next call open it again at once.
const StoreRetryDelay = time.Minute

// Store returns the workspace's store, in the directory StoreDir returns,
// opening it (and creating it when missing) on first use. Workspaces with
// the same store directory share one open store. It stays open until Close
// or ResetWorkspace. A damaged store is an error wrapping persist.ErrCorrupt
// (see persist.Open), reported again without opening the store until
// StoreRetryDelay has passed; one that another process has open for
// writing is an error wrapping persist.ErrLocked (the workspace's reading
// methods then read it with persist.OpenReadOnly).
func (w *Workspace) Store() (*persist.Store, error) {
	r, err := w.storeRef(false)
	if err != nil {
		return nil, err
	}
	return r.store, nil
}

// storeRef returns the workspace's store reference, opening the store when
// needed; with call set it counts a persistence call in progress, which
// the caller ends with r.calls.Done.
func (w *Workspace) storeRef(call bool) (*storeRef, error) {
	stores.Lock()
	defer stores.Unlock()
	for {
		r, ok := stores.byWS[w]
		if !ok {
			path, err := w.StoreDir()
			if err != nil {
				return nil, err
			}
			if r, ok = stores.byPath[path]; ok && r.closed != nil {
				// The last workspace using it is closing it: wait, and
				// open it again.
				closed := r.closed
				stores.Unlock()
				<-closed
				stores.Lock()
				continue
			}
			if !ok {
				if r, err = openStore(path); err != nil {
					return nil, err
				}
			}
			r.refs++
			stores.byWS[w] = r
		}
		if call {
			r.calls.Add(1)
		}
		return r, nil
	}
}

// openStore opens the store in path; the caller holds stores' lock.
func openStore(path string) (*storeRef, error) {
	if f, ok := stores.failed[path]; ok && time.Since(f.at) < StoreRetryDelay {
		return nil, fmt.Errorf("workspace: the store %s was found damaged %v ago and is not opened again before %v have passed, or a workspace using it is closed or reset: %w",
			path, time.Since(f.at).Round(time.Second), StoreRetryDelay, f.err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("workspace: creating the store's parent directory: %w", err)
	}
	s, err := persist.Open(path)
	if err != nil {
		err = fmt.Errorf("workspace: opening the store %s: %w", path, err)
		if errors.Is(err, persist.ErrCorrupt) {
			stores.failed[path] = openFailure{err: err, at: time.Now()}
		}
		return nil, err
	}
	delete(stores.failed, path)
	r := &storeRef{path: path, store: s}
	stores.byPath[path] = r
	return r, nil
}

// withStore runs fn on the workspace's store as one persistence call, which
// Close waits for.
func (w *Workspace) withStore(fn func(s *persist.Store) error) error {
	r, err := w.storeRef(true)
	if err != nil {
		return err
	}
	defer r.calls.Done()
	return fn(r.store)
}

// readStore runs fn, which only reads, on the workspace's store, or, when
// another process has the store open for writing, on a read-only snapshot
// of it (persist.OpenReadOnly) taken for the call.
func (w *Workspace) readStore(fn func(s *persist.Store) error) error {
	err := w.withStore(fn)
	if !errors.Is(err, persist.ErrLocked) {
		return err
	}
	path, perr := w.StoreDir()
	if perr != nil {
		return err
	}
	s, rerr := persist.OpenReadOnly(path)
	if rerr != nil {
		return fmt.Errorf("%w; reading it read-only failed too: %v", err, rerr)
	}
	defer s.Close()
	return fn(s)
}

// Close releases what the workspace holds outside memory: its use of the
// store of its root folder, which is closed when no other workspace uses
// it, once the persistence calls in progress on it (on other goroutines)
// have finished. The workspace's blobs and nets are untouched, and a later
// persistence call opens the store again; so does one after a store was
// found damaged. Closing a workspace that holds nothing is not an error.
// Saves are durable when they return, so a program that exits without
// closing loses nothing it saved.
func (w *Workspace) Close() error {
	stores.Lock()
	if path, err := w.StoreDir(); err == nil {
		delete(stores.failed, path)
	}
	r, ok := stores.byWS[w]
	if !ok {
		stores.Unlock()
		return nil
	}
	delete(stores.byWS, w)
	r.refs--
	if r.refs > 0 {
		stores.Unlock()
		return nil
	}
	r.closed = make(chan struct{})
	stores.Unlock()

	r.calls.Wait()
	err := r.store.Close()
	stores.Lock()
	delete(stores.byPath, r.path)
	close(r.closed)
	stores.Unlock()
	if err != nil {
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
	return w.withStore(func(s *persist.Store) error { return s.SaveNet(name, def) })
}

// LoadNet returns the NetDef saved under name in the root folder's store.
// Create it with CreateNet to run it. Like the other methods that only
// read the store, it reads a read-only snapshot of it
// (persist.OpenReadOnly) when another process has it open for writing.
func (w *Workspace) LoadNet(name string) (def *netdef.NetDef, err error) {
	err = w.readStore(func(s *persist.Store) (err error) {
		def, err = s.LoadNet(name)
		return err
	})
	return def, err
}

// SavedNets returns the names of the nets saved in the root folder's store,
// sorted (read-only when another process writes the store; see LoadNet).
func (w *Workspace) SavedNets() (names []string, err error) {
	err = w.readStore(func(s *persist.Store) (err error) {
		names, err = s.Nets()
		return err
	})
	return names, err
}

// SaveCheckpoint saves blobs of the workspace as checkpoint id in the root
// folder's store (see persist.Store.SaveCheckpoint: atomic, checksummed,
// synced to disk). A nil blobs list saves every local blob that holds a
// tensor. To resume training later, include the optimizer's state and the
// iteration counter along with the parameters.
func (w *Workspace) SaveCheckpoint(id int64, blobs []string, opts ...persist.CheckpointOption) error {
	if blobs == nil {
		for _, name := range w.LocalBlobs() {
			if b := w.GetBlob(name); b != nil && b.IsTensor() {
				blobs = append(blobs, name)
			}
		}
	}
	return w.withStore(func(s *persist.Store) error { return s.SaveCheckpoint(w, id, blobs, opts...) })
}

// LoadCheckpoint loads checkpoint id from the root folder's store into the
// workspace, creating or replacing its blobs. The checkpoint is verified
// first; when it is missing or damaged the workspace is left unchanged.
// When another process has the store open for writing (a trainer, while
// this one evaluates), it loads from a read-only snapshot of the store.
func (w *Workspace) LoadCheckpoint(id int64) error {
	return w.readStore(func(s *persist.Store) error { return s.LoadCheckpoint(w, id) })
}

// LatestCheckpoint returns the highest checkpoint id in the root folder's
// store; ok is false when there is none (read-only when another process
// writes the store; see LoadCheckpoint).
func (w *Workspace) LatestCheckpoint() (id int64, ok bool, err error) {
	err = w.readStore(func(s *persist.Store) (err error) {
		id, ok, err = s.LatestCheckpoint()
		return err
	})
	return id, ok, err
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
