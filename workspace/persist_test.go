package workspace_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/workspace"
	"google.golang.org/protobuf/proto"
)

func TestWorkspaceSaveLoadNet(t *testing.T) {
	ws := workspace.New(t.TempDir())
	defer ws.Close()
	predict := netdef.NewNet("persist_predict")
	predict.Op("Relu", []string{"x"}, []string{"y"})
	init := netdef.NewNet("persist_init")
	init.Op("ConstantFill", nil, []string{"x"}, netdef.ArgInts("shape", 2, 3), netdef.ArgFloat("value", -1))
	if err := ws.SaveNet("predict", predict); err != nil {
		t.Fatal(err)
	}
	if err := ws.SaveNet("", init); err != nil { // under the net's own name
		t.Fatal(err)
	}
	if err := ws.SaveNet("x", nil); err == nil {
		t.Error("SaveNet of a nil net succeeded")
	}
	names, err := ws.SavedNets()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{init.Name(), "predict"}; !slices.Equal(names, want) {
		t.Fatalf("SavedNets = %q, want %q", names, want)
	}
	got, err := ws.LoadNet("predict")
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, predict.Proto()) {
		t.Fatalf("LoadNet = %v, want %v", got, predict.Proto())
	}
	if _, err := ws.LoadNet("nope"); !errors.Is(err, persist.ErrNotFound) {
		t.Errorf("LoadNet(missing) = %v", err)
	}
	// The loaded nets run.
	initDef, err := ws.LoadNet(init.Name())
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.RunNetOnce(initDef); err != nil {
		t.Fatal(err)
	}
	if err := ws.RunNetOnce(got); err != nil {
		t.Fatal(err)
	}
	y, err := ws.FetchBlob("y")
	if err != nil || !slices.Equal(blob.Data[float32](y), make([]float32, 6)) {
		t.Fatalf("y = %v, %v", y, err)
	}
}

func TestWorkspaceCheckpoint(t *testing.T) {
	root := t.TempDir()
	ws := workspace.New(root)
	feeds := map[string]any{
		"f16":   blob.MustFromSlice([]blob.Half{0x3c00, 0x7e01, 0x8000}),
		"f32":   blob.MustFromSlice([]float32{float32(math.Inf(-1)), math.Float32frombits(0x7fc00123), 1.5}, 3, 1),
		"f64":   blob.MustFromSlice([]float64{math.Pi, -0.0}),
		"b":     blob.MustFromSlice([]bool{true, false, true}),
		"i8":    blob.MustFromSlice([]int8{-128, 127}),
		"i16":   blob.MustFromSlice([]int16{-32768, 1}),
		"i32":   blob.MustFromSlice([]int32{math.MinInt32}),
		"i64":   blob.MustFromSlice([]int64{math.MaxInt64}),
		"u8":    blob.MustFromSlice([]uint8{255}),
		"u16":   blob.MustFromSlice([]uint16{65535}),
		"str":   blob.MustFromSlice([]string{"abc", "", "\x00\x01"}),
		"empty": blob.MustFromSlice([]float32{}, 2, 0, 3),
		"bytes": []byte("not a tensor"),
	}
	for name, v := range feeds {
		if err := ws.FeedBlob(name, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := ws.LatestCheckpoint(); ok || err != nil {
		t.Fatalf("LatestCheckpoint of a new store: %v %v", ok, err)
	}
	if err := ws.SaveCheckpoint(1, nil); err != nil { // every local tensor blob
		t.Fatal(err)
	}
	if err := ws.SaveCheckpoint(2, []string{"bytes", "f32"}, persist.Iteration(200)); err != nil {
		t.Fatal(err)
	}
	s, err := ws.Store()
	if err != nil {
		t.Fatal(err)
	}
	if s.Path() != filepath.Join(root, workspace.StoreDirName) {
		t.Errorf("store at %q", s.Path())
	}
	m, err := s.Checkpoint(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Blobs) != len(feeds)-1 {
		t.Errorf("checkpoint 1 has %d blobs, want every tensor (%d)", len(m.Blobs), len(feeds)-1)
	}
	if m2, _ := s.Checkpoint(2); m2.Iteration != 200 {
		t.Errorf("checkpoint 2 iteration %d", m2.Iteration)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}

	// A fresh workspace on the same root folder gets everything back.
	ws2 := workspace.New(root)
	defer ws2.Close()
	id, ok, err := ws2.LatestCheckpoint()
	if err != nil || !ok || id != 2 {
		t.Fatalf("LatestCheckpoint = %d %v %v", id, ok, err)
	}
	if err := ws2.LoadCheckpoint(1); err != nil {
		t.Fatal(err)
	}
	if err := ws2.LoadCheckpoint(2); err != nil {
		t.Fatal(err)
	}
	for name, v := range feeds {
		if want, ok := v.([]byte); ok {
			got, err := ws2.FetchBytes(name)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: %q %v", name, got, err)
			}
			continue
		}
		want := v.(*blob.Tensor)
		got, err := ws2.FetchBlob(name)
		if err != nil {
			t.Fatal(err)
		}
		if got.DataType() != want.DataType() || !slices.Equal(got.Shape(), want.Shape()) || !persistSameBits(got, want) {
			t.Errorf("%s: got %v %v, want %v %v", name, got, got.Raw(), want, want.Raw())
		}
	}
	if err := ws2.LoadCheckpoint(9); !errors.Is(err, persist.ErrNotFound) {
		t.Errorf("LoadCheckpoint(9) = %v", err)
	}
}

// persistSameBits compares elements bit for bit (NaN payloads included).
func persistSameBits(a, b *blob.Tensor) bool {
	switch a.DataType() {
	case blob.Float16:
		return slices.Equal(blob.Data[blob.Half](a), blob.Data[blob.Half](b))
	case blob.String:
		return slices.Equal(blob.Data[string](a), blob.Data[string](b))
	case blob.Float32:
		x, y := blob.Data[float32](a), blob.Data[float32](b)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return len(x) == len(y)
	case blob.Float64:
		x, y := blob.Data[float64](a), blob.Data[float64](b)
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				return false
			}
		}
		return len(x) == len(y)
	}
	return slices.Equal(a.AsFloat64s(), b.AsFloat64s()) // exact for the integer types and bool
}

func TestWorkspaceStoreSharingAndClose(t *testing.T) {
	root := t.TempDir()
	a, b := workspace.New(root), workspace.New(root)
	sa, err := a.Store()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Store()
	if err != nil {
		t.Fatal(err)
	}
	if sa != sb {
		t.Fatal("two workspaces on one root folder opened two stores")
	}
	child := a.NewChild()
	if sc, err := child.Store(); err != nil || sc != sa {
		t.Fatalf("child store: %v %v", sc, err)
	}
	for _, w := range []*workspace.Workspace{a, child} {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sb.Nets(); err != nil {
		t.Fatalf("store closed while b still uses it: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := sb.Nets(); !errors.Is(err, persist.ErrClosed) {
		t.Fatalf("store still open after every workspace closed: %v", err)
	}
	// The directory is free again, and a closed workspace reopens on use.
	s, err := persist.Open(filepath.Join(root, workspace.StoreDirName))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SavedNets(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestResetWorkspaceClosesStore(t *testing.T) {
	prev := workspace.RootFolder()
	defer workspace.ResetWorkspace(prev)
	root := t.TempDir()
	if err := workspace.ResetWorkspace(root); err != nil {
		t.Fatal(err)
	}
	n := netdef.NewNet("persist_reset")
	n.Op("Relu", []string{"x"}, []string{"y"})
	if err := workspace.SaveNet("n", n); err != nil {
		t.Fatal(err)
	}
	if err := workspace.FeedBlob("w", blob.MustFromSlice([]float32{1, 2})); err != nil {
		t.Fatal(err)
	}
	if err := workspace.SaveCheckpoint(3, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, workspace.StoreDirName)
	if s, err := persist.Open(path); err == nil {
		s.Close()
		t.Fatal("the store is not open while the workspace uses it")
	}
	if err := workspace.ResetWorkspace(); err != nil {
		t.Fatal(err)
	}
	s, err := persist.Open(path) // free: ResetWorkspace closed it
	if err != nil {
		t.Fatalf("after ResetWorkspace: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The new workspace (same root) reopens the store on use.
	if names, err := workspace.SavedNets(); err != nil || !slices.Equal(names, []string{"n"}) {
		t.Fatalf("SavedNets = %q %v", names, err)
	}
	if _, err := workspace.LoadNet("n"); err != nil {
		t.Fatal(err)
	}
	if id, ok, err := workspace.LatestCheckpoint(); id != 3 || !ok || err != nil {
		t.Fatalf("LatestCheckpoint = %d %v %v", id, ok, err)
	}
	if err := workspace.LoadCheckpoint(3); err != nil {
		t.Fatal(err)
	}
	if st, err := workspace.Store(); err != nil || st.Path() != path {
		t.Fatalf("Store = %v %v", st, err)
	}
}

// persistTrainNet is a softmax regression step: FC, SoftmaxWithLoss, the
// backward pass, and MomentumSGDUpdate with a step learning rate that reads
// the iteration counter.
func persistTrainNet(t *testing.T) *netdef.Net {
	t.Helper()
	n := netdef.NewNet("persist_train")
	n.Op("FC", []string{"data", "w", "b"}, []string{"fc"})
	n.Op("SoftmaxWithLoss", []string{"fc", "label"}, []string{"softmax", "loss"})
	grads, err := operators.AddGradientOperators(n.Proto(), []string{"loss"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n.Op("Iter", []string{"iter"}, []string{"iter"})
	n.Op("LearningRate", []string{"iter"}, []string{"lr"}, netdef.ArgFloat("base_lr", 0.5),
		netdef.ArgString("policy", "step"), netdef.ArgInt("stepsize", 3), netdef.ArgFloat("gamma", 0.7))
	for _, p := range []string{"w", "b"} {
		g := grads[p].Dense
		n.Op("MomentumSGDUpdate", []string{g, p + "_momentum", "lr", p}, []string{g, p + "_momentum", p},
			netdef.ArgFloat("momentum", 0.9))
	}
	return n
}

func persistFeedModel(t *testing.T, ws *workspace.Workspace) {
	t.Helper()
	data := make([]float32, 8*4)
	for i := range data {
		data[i] = float32(math.Sin(float64(i)))
	}
	feeds := map[string]*blob.Tensor{
		"data":       blob.MustFromSlice(data, 8, 4),
		"label":      blob.MustFromSlice([]int32{0, 1, 2, 0, 1, 2, 0, 1}),
		"w":          blob.MustFromSlice([]float32{.1, -.2, .3, .05, -.1, .2, .0, .15, .25, -.3, .1, -.05}, 3, 4),
		"b":          blob.MustFromSlice([]float32{0, 0, 0}),
		"w_momentum": blob.MustFromSlice(make([]float32, 12), 3, 4),
		"b_momentum": blob.MustFromSlice(make([]float32, 3)),
		"iter":       blob.MustFromSlice([]int64{0}),
	}
	for name, v := range feeds {
		if err := ws.FeedBlob(name, v); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumeTrainingFromCheckpoint trains 10 iterations straight, and 5,
// checkpoint, then 5 more in a fresh workspace from the checkpoint; the
// parameters end up bit-identical, because the checkpoint holds the
// momentum buffers and the iteration counter the learning rate reads.
func TestResumeTrainingFromCheckpoint(t *testing.T) {
	root := t.TempDir()
	train := persistTrainNet(t)
	ws := workspace.New(root)
	persistFeedModel(t, ws)
	if err := ws.CreateNet(train, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.RunNet(train.Name(), 5); err != nil {
		t.Fatal(err)
	}
	state := []string{"w", "b", "w_momentum", "b_momentum", "iter", "data", "label"}
	if err := ws.SaveCheckpoint(5, state); err != nil {
		t.Fatal(err)
	}
	if err := ws.RunNet(train.Name(), 5); err != nil {
		t.Fatal(err)
	}
	straight, err := ws.FetchBlobs([]string{"w", "b", "iter"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}

	resumed := workspace.New(root)
	defer resumed.Close()
	id, ok, err := resumed.LatestCheckpoint()
	if err != nil || !ok {
		t.Fatalf("LatestCheckpoint: %v %v", ok, err)
	}
	if err := resumed.LoadCheckpoint(id); err != nil {
		t.Fatal(err)
	}
	if err := resumed.CreateNet(train, false); err != nil {
		t.Fatal(err)
	}
	if err := resumed.RunNet(train.Name(), 5); err != nil {
		t.Fatal(err)
	}
	got, err := resumed.FetchBlobs([]string{"w", "b", "iter"})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"w", "b", "iter"} {
		if !persistSameBits(got[i], straight[i]) {
			t.Errorf("%s after resuming: %v, straight through: %v", name, got[i].Raw(), straight[i].Raw())
		}
	}
	if blob.Data[int64](got[2])[0] != 10 {
		t.Errorf("iteration counter %v", got[2].Raw())
	}
}

// TestBuiltinDBTypes checks that a user of workspace, with no other
// import, has every built-in DB type for the Save and Load operators.
func TestBuiltinDBTypes(t *testing.T) {
	if got, want := persist.DBTypes(), []string{"MiniDB", "badger", "leveldb", "lmdb", "minidb"}; !slices.Equal(got, want) {
		t.Errorf("persist.DBTypes() = %q, want %q", got, want)
	}
	for _, typ := range []string{"minidb", "leveldb", persist.DefaultDBType} {
		t.Run(typ, func(t *testing.T) {
			ws := workspace.New(t.TempDir())
			defer ws.Close()
			if err := ws.FeedBlob("w", blob.MustFromSlice([]float32{1, 2}, 2)); err != nil {
				t.Fatal(err)
			}
			db := []*netdef.Argument{netdef.ArgString("db", "params"), netdef.ArgString("db_type", typ)}
			if err := ws.RunOperatorOnce(netdef.NewOperator("Save", []string{"w"}, nil, db...)); err != nil {
				t.Fatal(err)
			}
			fresh := workspace.New(ws.RootFolder())
			defer fresh.Close()
			if err := fresh.RunOperatorOnce(netdef.NewOperator("Load", nil, []string{"w"}, db...)); err != nil {
				t.Fatal(err)
			}
			if got, err := fresh.FetchBlob("w"); err != nil || !slices.Equal(blob.Data[float32](got), []float32{1, 2}) {
				t.Fatalf("loaded %v, %v", got, err)
			}
		})
	}
}

// TestStoreDir: a given root folder holds the store; without one the store
// goes where $CAFFE2GO_STORE says, else under the user's cache directory,
// never into the working directory; children follow their parent.
func TestStoreDir(t *testing.T) {
	root, env, cache := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	cases := []struct {
		name string
		ws   func() *workspace.Workspace
		env  string
		want string
	}{
		{"root given", func() *workspace.Workspace { return workspace.New(root) }, "", filepath.Join(root, workspace.StoreDirName)},
		{"root given beats env", func() *workspace.Workspace { return workspace.New(root) }, env, filepath.Join(root, workspace.StoreDirName)},
		{"env", func() *workspace.Workspace { return workspace.New("") }, env, env},
		{"default", func() *workspace.Workspace { return workspace.New("") }, "", filepath.Join(cache, "caffe2go", "store")},
		{"child of default", func() *workspace.Workspace { return workspace.New("").NewChild() }, env, env},
		{"child of given", func() *workspace.Workspace { return workspace.New(root).NewChild() }, env, filepath.Join(root, workspace.StoreDirName)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(workspace.StoreEnv, c.env)
			got, err := c.ws().StoreDir()
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("StoreDir() = %q, want %q", got, c.want)
			}
		})
	}
	t.Run("default store is created there", func(t *testing.T) {
		t.Setenv(workspace.StoreEnv, "")
		ws := workspace.New("")
		defer ws.Close()
		if err := ws.SaveNet("n", incNet("n")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(cache, "caffe2go", "store")); err != nil {
			t.Fatalf("no store under the cache directory: %v", err)
		}
		if _, err := os.Stat(workspace.StoreDirName); !os.IsNotExist(err) {
			t.Errorf("a store appeared in the working directory: %v", err)
		}
	})
}

// TestCloseWaitsForPersistenceCalls closes a workspace again and again
// while other goroutines save and load checkpoints through it: every call
// succeeds (Close waits for those in progress, and later ones open the
// store again), where calls used to fail with "store is closed".
func TestCloseWaitsForPersistenceCalls(t *testing.T) {
	ws := workspace.New(t.TempDir())
	defer ws.Close()
	if err := ws.FeedBlob("w", blob.MustFromSlice([]float32{1, 2, 3})); err != nil {
		t.Fatal(err)
	}
	// Goroutine g saves w as checkpoint g and loads checkpoint 10+g, which
	// holds its own blob v<g>.
	for g := range 4 {
		v := fmt.Sprintf("v%d", g)
		if err := ws.FeedBlob(v, blob.MustFromSlice([]int32{int32(g)})); err != nil {
			t.Fatal(err)
		}
		if err := ws.SaveCheckpoint(int64(10+g), []string{v}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				var err error
				if i%2 == 0 {
					err = ws.SaveCheckpoint(int64(g), []string{"w"})
				} else {
					err = ws.LoadCheckpoint(int64(10 + g))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for closing := true; closing; {
		select {
		case <-done:
			closing = false
		default:
			if err := ws.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(errs)
	for err := range errs {
		t.Errorf("a persistence call while the workspace was being closed: %v", err)
	}
}

// TestDamagedStoreIsNotReopenedOnEveryCall damages a workspace's store:
// the first call reports the damage and how to repair it; later calls
// report it again without opening the store (a repair made meanwhile is
// not seen) until the workspace is closed.
func TestDamagedStoreIsNotReopenedOnEveryCall(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, workspace.StoreDirName)
	ws := workspace.New(root)
	defer ws.Close()
	if err := ws.FeedBlob("w", blob.MustFromSlice(make([]float32, 20_000))); err != nil {
		t.Fatal(err)
	}
	if err := ws.SaveCheckpoint(1, []string{"w"}); err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "MANIFEST")); err != nil {
		t.Fatal(err)
	}
	_, _, err := ws.LatestCheckpoint()
	if !errors.Is(err, persist.ErrCorrupt) || !strings.Contains(err.Error(), "caffe2go store repair") {
		t.Fatalf("LatestCheckpoint on a damaged store: %v; want ErrCorrupt saying how to repair it", err)
	}
	if _, err := persist.Repair(dir); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := ws.LoadCheckpoint(1); !errors.Is(err, persist.ErrCorrupt) || !strings.Contains(err.Error(), "not opened again") {
			t.Fatalf("a later call: %v; want the damage reported again without opening the store", err)
		}
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ws.LoadCheckpoint(1); err != nil {
		t.Fatalf("after Close, the repaired store: %v", err)
	}
}

// TestReadingAStoreAnotherProcessWrites holds a workspace's store open the
// way another process would: the workspace reads it through read-only
// snapshots, and saving fails naming the holder.
func TestReadingAStoreAnotherProcessWrites(t *testing.T) {
	root := t.TempDir()
	writer, err := persist.Open(filepath.Join(root, workspace.StoreDirName))
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	src := workspace.New("")
	w := blob.MustFromSlice([]float32{1, 2, 3})
	if err := src.FeedBlob("w", w); err != nil {
		t.Fatal(err)
	}
	if err := writer.SaveCheckpoint(src, 7, []string{"w"}); err != nil {
		t.Fatal(err)
	}
	ws := workspace.New(root)
	defer ws.Close()
	if id, ok, err := ws.LatestCheckpoint(); err != nil || !ok || id != 7 {
		t.Fatalf("LatestCheckpoint of a store another process writes: %d %v %v", id, ok, err)
	}
	if err := ws.LoadCheckpoint(7); err != nil {
		t.Fatal(err)
	}
	if got := ws.GetBlob("w").Tensor(); !slices.Equal(blob.Data[float32](got), []float32{1, 2, 3}) {
		t.Fatalf("loaded %v", got)
	}
	if err := ws.SaveCheckpoint(8, []string{"w"}); !errors.Is(err, persist.ErrLocked) || !strings.Contains(err.Error(), "OpenReadOnly") {
		t.Fatalf("SaveCheckpoint to a store another process writes: %v; want ErrLocked", err)
	}
}
