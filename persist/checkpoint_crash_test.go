//go:build unix

package persist

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/dgraph-io/badger/v4"
)

// The crash test. The child process (this test binary re-executed with
// crashEnv set) saves checkpoints in a loop, overwriting and pruning now and
// then; the parent kills it with SIGKILL at random moments and then checks
// that every checkpoint in the store is complete and bit-exact.

const crashEnv = "CAFFE2GO_PERSIST_CRASH_DIR"

// crashBlobs is the content of checkpoint id as saved by the given version
// of its save: a deterministic function of both.
func crashBlobs(id int64, version int32) (*stWS, []string) {
	r := rand.New(rand.NewPCG(uint64(id), uint64(version)))
	ws := newStWS()
	ws.set("iter", blob.MustFromSlice([]int64{id}))
	ws.set("version", blob.MustFromSlice([]int32{version}))
	ws.set("w", stRandomTensor(r, blob.Float32, 100+int(id*7919%8000)))
	// With crashChunk, 80 + 80 + 32 KiB: two chunks above badger's value
	// threshold (kept in the value log), one below (kept in the tree).
	ws.set("big", stRandomTensor(r, blob.Float64, 24_000))
	ws.set("h", stRandomTensor(r, blob.Float16, 7, 11))
	ws.set("s", stRandomTensor(r, blob.String, 3))
	ws.set("z", stRandomTensor(r, blob.Int16, 0, 3))
	ws.set("b", []byte(fmt.Sprintf("checkpoint %d version %d", id, version)))
	return ws, crashNames
}

var crashNames = []string{"iter", "version", "w", "big", "h", "s", "z", "b"}

const crashChunk = 80 << 10

// crashVerifier checks checkpoints against what their saves wrote,
// remembering the expected content and which checkpoint generations it has
// already checked.
type crashVerifier struct {
	want    map[[2]int64]*stWS
	checked map[int64]uint64 // id → generation verified
}

func newCrashVerifier() *crashVerifier {
	return &crashVerifier{want: map[[2]int64]*stWS{}, checked: map[int64]uint64{}}
}

// verify loads checkpoint id and compares it bit for bit with what the save
// that wrote it (named by its "version" blob) saved. A generation verified
// before is skipped unless force is set.
func (v *crashVerifier) verify(s *Store, id int64, force bool) error {
	var gen uint64
	if err := s.db.View(func(txn *badger.Txn) error {
		m, err := readManifest(txn, id)
		if err == nil {
			gen = m.Gen
			if m.Iteration != id {
				err = fmt.Errorf("checkpoint %d: manifest iteration %d", id, m.Iteration)
			}
		}
		return err
	}); err != nil {
		return err
	}
	if g, ok := v.checked[id]; ok && g == gen && !force {
		return nil
	}
	out := newStWS()
	if err := s.LoadCheckpoint(out, id); err != nil {
		return err
	}
	vb := out.GetBlob("version")
	if vb == nil || vb.Tensor() == nil || vb.Tensor().Size() != 1 {
		return fmt.Errorf("checkpoint %d has no version blob", id)
	}
	version := blob.Data[int32](vb.Tensor())[0]
	key := [2]int64{id, int64(version)}
	want, ok := v.want[key]
	if !ok {
		want, _ = crashBlobs(id, version)
		v.want[key] = want
	}
	for _, name := range crashNames {
		got := out.GetBlob(name)
		if got == nil {
			return fmt.Errorf("checkpoint %d lacks %q", id, name)
		}
		if wb, ok := want.GetBlob(name).Bytes(); ok {
			if gb, _ := got.Bytes(); !bytes.Equal(gb, wb) {
				return fmt.Errorf("checkpoint %d: %q differs", id, name)
			}
			continue
		}
		gt, wt := got.Tensor(), want.GetBlob(name).Tensor()
		if gt == nil || gt.DataType() != wt.DataType() || !slices.Equal(gt.Shape(), wt.Shape()) {
			return fmt.Errorf("checkpoint %d: %q is %v, want %v", id, name, gt, wt)
		}
		if wt.DataType() == blob.String {
			if !slices.Equal(blob.Data[string](gt), blob.Data[string](wt)) {
				return fmt.Errorf("checkpoint %d: %q differs", id, name)
			}
			continue
		}
		g, _ := tensorBytes(gt)
		w, _ := tensorBytes(wt)
		if !bytes.Equal(g, w) {
			return fmt.Errorf("checkpoint %d: %q differs", id, name)
		}
	}
	v.checked[id] = gen
	return nil
}

// TestCheckpointCrashChild is the child of TestCheckpointCrash; it does
// nothing in a normal test run.
func TestCheckpointCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("helper process of TestCheckpointCrash")
	}
	s, err := Open(dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	next := int64(0)
	if id, ok, err := s.LatestCheckpoint(); err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	} else if ok {
		next = id + 1
	}
	fmt.Println("opened")
	deadline := time.Now().Add(30 * time.Second) // never outlive a dead parent for long
	for n := 0; time.Now().Before(deadline); n++ {
		id, version := next, int32(0)
		if n%5 == 4 && next > 0 {
			id, version = next-1, 1 // re-save the previous id with other content
		}
		s.stage = id%2 == 1
		ws, names := crashBlobs(id, version)
		if err := s.SaveCheckpoint(ws, id, names, ChunkBytes(crashChunk)); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Printf("saved %d %d\n", id, version)
		if id == next {
			next++
		}
		if n%4 == 3 {
			if err := s.KeepLast(4); err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
		}
	}
	os.Exit(0)
}

func TestCheckpointCrash(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	const (
		kills = 52
		// guard only stops a hung run; the kills take a few seconds.
		guard = 2 * time.Minute
	)
	dir := filepath.Join(t.TempDir(), "store")
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 1))
	start := time.Now()
	var killed, duringOpen, saves, verified int
	var childTime, checkTime time.Duration
	var maxSaved int64 = -1
	v := newCrashVerifier()
	for killed < kills {
		if time.Since(start) > guard {
			t.Fatalf("only %d kills in %v", killed, guard)
		}
		t0 := time.Now()
		cmd := exec.Command(os.Args[0], "-test.run=^TestCheckpointCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Mostly kill while saving; sometimes while opening (the sweep).
		var opened bool
		if r.IntN(5) > 0 {
			for l := range lines {
				if l == "opened" {
					opened = true
					break
				}
				if strings.HasPrefix(l, "error") {
					t.Fatalf("child: %s", l)
				}
			}
		}
		time.Sleep(time.Duration(r.IntN(60_000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		var tail []string
		for l := range lines {
			tail = append(tail, l)
		}
		err = cmd.Wait()
		if ws, ok := err.(*exec.ExitError); !ok || ws.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child was not killed by the signal: %v; output %q", err, tail)
		}
		killed++
		for _, l := range tail {
			switch {
			case l == "opened":
				opened = true
			case strings.HasPrefix(l, "error"):
				t.Fatalf("child: %s", l)
			case strings.HasPrefix(l, "saved "):
				saves++
				f := strings.Fields(l)
				if id, _ := strconv.ParseInt(f[1], 10, 64); id > maxSaved {
					maxSaved = id
				}
			}
		}
		if !opened {
			duringOpen++
		}
		t1 := time.Now()
		childTime += t1.Sub(t0)

		// The store opens; the latest checkpoint is at least the last one
		// reported saved and matches its save bit for bit; so does every
		// other checkpoint the store lists; nothing of unfinished saves is
		// left.
		s, err := Open(dir)
		if err != nil {
			t.Fatalf("kill %d (seed %d): reopening: %v", killed, seed, err)
		}
		latest, ok, err := s.LatestCheckpoint()
		if err != nil {
			t.Fatal(err)
		}
		if maxSaved >= 0 && (!ok || latest < maxSaved) {
			t.Fatalf("kill %d (seed %d): latest checkpoint %d (%v), but %d was reported saved", killed, seed, latest, ok, maxSaved)
		}
		if ok {
			if err := v.verify(s, latest, true); err != nil {
				t.Fatalf("kill %d (seed %d): latest: %v", killed, seed, err)
			}
			verified++
		}
		ms, err := s.Checkpoints()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if err := v.verify(s, m.ID, false); err != nil {
				t.Fatalf("kill %d (seed %d): %v", killed, seed, err)
			}
		}
		if err := checkNoOrphans(s); err != nil {
			t.Fatalf("kill %d (seed %d): %v", killed, seed, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		checkTime += time.Since(t1)
	}
	t.Logf("%d SIGKILLs (%d before the store was open) in %v (children %v, checks %v); %d saves completed, checkpoints up to %d; latest verified after %d kills",
		killed, duringOpen, time.Since(start).Round(time.Millisecond), childTime.Round(time.Millisecond), checkTime.Round(time.Millisecond), saves, maxSaved, verified)
	if saves < 20 {
		t.Fatalf("only %d saves completed across %d kills: the test did not exercise saving", saves, killed)
	}
}

// checkNoOrphans checks that every record under ckpt/ belongs to the
// generation its checkpoint's manifest names.
func checkNoOrphans(s *Store) error {
	keys, err := s.keysUnder(ckptPrefix)
	if err != nil {
		return err
	}
	gens := map[int64]uint64{}
	for _, k := range keys {
		if id, rest, ok := parseCkptKey(k); ok && rest == "manifest" {
			var m *manifestWire
			if err := s.db.View(func(txn *badger.Txn) (err error) { m, err = readManifest(txn, id); return err }); err != nil {
				return err
			}
			gens[id] = m.Gen
		}
	}
	for _, k := range keys {
		id, rest, ok := parseCkptKey(k)
		if !ok || rest == "manifest" {
			continue
		}
		if g, _ := parseGen(rest); gens[id] != g {
			return fmt.Errorf("orphan record %q", k)
		}
	}
	return nil
}
