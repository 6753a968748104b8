package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"
)

// stWS is a minimal operators.Workspace.
type stWS struct {
	mu    sync.Mutex
	blobs map[string]*blob.Blob
}

func newStWS() *stWS { return &stWS{blobs: map[string]*blob.Blob{}} }

func (w *stWS) GetBlob(name string) *blob.Blob {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.blobs[name]
}

func (w *stWS) CreateBlob(name string) *blob.Blob {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.blobs[name]
	if !ok {
		b = &blob.Blob{}
		w.blobs[name] = b
	}
	return b
}

func (w *stWS) RootFolder() string { return "." }

func (w *stWS) set(name string, v any) { w.CreateBlob(name).Set(v) }

// openStStore opens a store in a fresh directory and closes it at the end
// of the test.
func openStStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func stNet(name string, nops int) *netdef.NetDef {
	n := netdef.NewNet(name)
	for i := 0; i < nops; i++ {
		n.Op("Relu", []string{fmt.Sprintf("x%d", i)}, []string{fmt.Sprintf("x%d", i+1)})
	}
	def := n.Proto()
	def.Name = proto.String(name) // NewNet uniquifies names; keep them as given
	return def
}

func TestNetsRoundTrip(t *testing.T) {
	for _, mode := range []string{"disk", "memory"} {
		t.Run(mode, func(t *testing.T) {
			var s *Store
			if mode == "disk" {
				s = openStStore(t)
			} else {
				var err error
				if s, err = OpenInMemory(); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
			}
			nets := map[string]*netdef.NetDef{
				"predict": stNet("predict_net", 3),
				"init":    stNet("init_net", 1),
				"a/b#c":   stNet("", 0),
				"üñí":     stNet("unicode", 2),
			}
			for name, def := range nets {
				if err := s.SaveNet(name, def); err != nil {
					t.Fatal(err)
				}
			}
			names, err := s.Nets()
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"a/b#c", "init", "predict", "üñí"}; fmt.Sprint(names) != fmt.Sprint(want) {
				t.Fatalf("Nets() = %q, want %q", names, want)
			}
			for name, def := range nets {
				got, err := s.LoadNet(name)
				if err != nil {
					t.Fatal(err)
				}
				if !proto.Equal(got, def) {
					t.Errorf("LoadNet(%q) = %v, want %v", name, got, def)
				}
			}
			// Replacing keeps one entry.
			if err := s.SaveNet("predict", stNet("v2", 5)); err != nil {
				t.Fatal(err)
			}
			got, err := s.LoadNet("predict")
			if err != nil || got.GetName() != "v2" || len(got.Op) != 5 {
				t.Fatalf("after replacing: %v, %v", got, err)
			}
			if err := s.DeleteNet("init"); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteNet("init"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("second DeleteNet: %v, want ErrNotFound", err)
			}
			names, _ = s.Nets()
			if len(names) != 3 {
				t.Fatalf("after delete: %q", names)
			}
		})
	}
}

func TestNetErrors(t *testing.T) {
	s := openStStore(t)
	if err := s.SaveNet("", stNet("x", 1)); err == nil {
		t.Error("SaveNet with an empty name succeeded")
	}
	if err := s.SaveNet("x", nil); err == nil {
		t.Error("SaveNet of a nil NetDef succeeded")
	}
	if err := s.SaveNet("good", stNet("good", 2)); err != nil {
		t.Fatal(err)
	}
	_, err := s.LoadNet("nope")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "good") ||
		!strings.Contains(err.Error(), s.Path()) {
		t.Errorf("LoadNet(missing) = %v; want ErrNotFound naming the store, the net and the saved nets", err)
	}
	// Damage the stored value in several ways.
	good := stReadRaw(t, s, netPrefix+"good")
	damaged := map[string][]byte{
		"flipped":   stFlipByte(good, len(good)-8),
		"truncated": good[:len(good)/2],
		"garbage":   []byte("not msgpack at all"),
		"empty":     {},
	}
	for name, v := range damaged {
		stWriteRaw(t, s, netPrefix+name, v)
		_, err := s.LoadNet(name)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) {
			t.Errorf("LoadNet(%s) = %v, want ErrCorrupt naming the net", name, err)
		}
	}
	// The store is still usable.
	if def, err := s.LoadNet("good"); err != nil || def.GetName() != "good" {
		t.Errorf("LoadNet(good) after damage elsewhere = %v, %v", def, err)
	}
	if err := s.SaveNet("after", stNet("after", 1)); err != nil {
		t.Error(err)
	}
}

func TestStoreReopenAndLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "store")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveNet("n", stNet("n", 2)); err != nil {
		t.Fatal(err)
	}
	// A second Open of the same directory fails while the first is open.
	if s2, err := Open(dir); err == nil {
		s2.Close()
		t.Fatal("second Open of an open store succeeded")
	} else if !strings.Contains(err.Error(), dir) {
		t.Errorf("error %v does not name the directory", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Nets(); !errors.Is(err, ErrClosed) {
		t.Errorf("Nets on a closed store: %v, want ErrClosed", err)
	}
	if err := s.SaveCheckpoint(newStWS(), 1, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("SaveCheckpoint on a closed store: %v, want ErrClosed", err)
	}
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if def, err := s.LoadNet("n"); err != nil || len(def.Op) != 2 {
		t.Fatalf("after reopening: %v, %v", def, err)
	}
	if _, err := Open(""); err == nil {
		t.Error("Open(\"\") succeeded")
	}
}

func TestStoreConcurrent(t *testing.T) {
	s := openStStore(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			ws := newStWS()
			for i := 0; i < 10; i++ {
				id := int64(g*100 + i)
				ws.set("w", blob.MustFromSlice([]float32{float32(id), 1, 2}))
				if err := s.SaveCheckpoint(ws, id, []string{"w"}, NoSync()); err != nil {
					errs <- err
					return
				}
				if err := s.SaveNet(fmt.Sprintf("net%d", g), stNet("n", i)); err != nil {
					errs <- err
					return
				}
				out := newStWS()
				if err := s.LoadCheckpoint(out, id); err != nil {
					errs <- err
					return
				}
				if got := blob.Data[float32](out.GetBlob("w").Tensor())[0]; got != float32(id) {
					errs <- fmt.Errorf("checkpoint %d holds %v", id, got)
					return
				}
				if _, _, err := s.LatestCheckpoint(); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ms, err := s.Checkpoints()
	if err != nil || len(ms) != 80 {
		t.Fatalf("Checkpoints: %d, %v", len(ms), err)
	}
}

// stReadRaw and stWriteRaw reach under the store's API to damage values.
func stReadRaw(t *testing.T, s *Store, key string) []byte {
	t.Helper()
	var v []byte
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(key))
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		t.Fatalf("reading %q: %v", key, err)
	}
	return v
}

func stWriteRaw(t *testing.T, s *Store, key string, v []byte) {
	t.Helper()
	err := s.db.Update(func(txn *badger.Txn) error {
		if v == nil {
			return txn.Delete([]byte(key))
		}
		return txn.Set([]byte(key), v)
	})
	if err != nil {
		t.Fatalf("writing %q: %v", key, err)
	}
}

func stFlipByte(v []byte, i int) []byte {
	out := append([]byte{}, v...)
	out[i] ^= 0x40
	return out
}

// TestOpenAfterKillDuringFileCreation reproduces what a process killed
// while badger creates a log file leaves: an empty .vlog or .mem file, which
// badger alone refuses to open ("Open existing file: …: Create a new
// file"), and after a failed open leaves goroutines running on the
// directory, so the test does not try that.
func TestOpenAfterKillDuringFileCreation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ws := newStWS()
	ws.set("w", blob.MustFromSlice([]float32{1, 2, 3}))
	if err := s.SaveCheckpoint(ws, 1, []string{"w"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"999999.vlog", "999999.mem"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := newStWS()
	if err := s.LoadCheckpoint(out, 1); err != nil {
		t.Fatal(err)
	}
	stSameTensor(t, "w", out.GetBlob("w").Tensor(), ws.GetBlob("w").Tensor())
}
