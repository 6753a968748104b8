package persist

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
)

// TestOpenReadOnlyWhileWriting reads a store that a writer has open: the
// reader sees the store as it was when opened, loads bit for bit, refuses
// to write, and says so when the writer has since replaced a checkpoint.
func TestOpenReadOnlyWhileWriting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	w, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := fxSave(w, 0, fxClosedSaves); err != nil {
		t.Fatal(err)
	}
	if err := w.SaveNet("predict", stNet("predict", 3)); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap := r.snapshot
	want := slices.Sorted(maps.Keys(fxExpected(fxClosedSaves)))
	if ms, err := r.Checkpoints(); err != nil || !slices.Equal(manifestIDsOf(ms), want) {
		t.Fatalf("read-only Checkpoints = %v, %v; want %v", manifestIDsOf(ms), err, want)
	}
	for _, id := range want {
		if err := fxLoad(r, id, fxExpected(fxClosedSaves)[id]); err != nil {
			t.Fatal(err)
		}
	}
	if def, err := r.LoadNet("predict"); err != nil || len(def.Op) != 3 {
		t.Fatalf("read-only LoadNet: %v, %v", def, err)
	}
	for name, err := range map[string]error{
		"SaveCheckpoint":   r.SaveCheckpoint(newStWS(), 1, nil),
		"DeleteCheckpoint": r.DeleteCheckpoint(1),
		"KeepLast":         r.KeepLast(1),
		"SaveNet":          r.SaveNet("x", stNet("x", 1)),
		"DeleteNet":        r.DeleteNet("predict"),
	} {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only store: %v, want ErrReadOnly", name, err)
		}
	}
	if s2, err := Open(dir); err == nil {
		s2.Close()
		t.Fatal("a second Open of a store open for writing succeeded")
	} else if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "another Store of this process") || !strings.Contains(err.Error(), "OpenReadOnly") {
		t.Errorf("second Open: %v; want ErrLocked naming this process and OpenReadOnly", err)
	}

	// The writer replaces checkpoint 1 (its data file goes) and adds 20.
	ws, names := fxContent(1, 7)
	if err := w.SaveCheckpoint(ws, 1, names); err != nil {
		t.Fatal(err)
	}
	ws, names = fxContent(20, 1)
	if err := w.SaveCheckpoint(ws, 20, names); err != nil {
		t.Fatal(err)
	}
	w.removals.Wait()
	if err := r.LoadCheckpoint(newStWS(), 1); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "open it again") {
		t.Errorf("read-only load of a checkpoint the writer replaced: %v", err)
	}
	if err := fxLoad(r, 2, fxExpected(fxClosedSaves)[2]); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snap); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the snapshot %s after Close: %v", snap, err)
	}
	r, err = OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := fxLoad(r, 1, 7); err != nil {
		t.Fatal(err)
	}
	if err := fxLoad(r, 20, 1); err != nil {
		t.Fatal(err)
	}
}

// TestOpenReadOnlyDuringSaves opens and reads a store again and again while
// a writer saves, replaces and prunes checkpoints: every read-only open
// succeeds, and every load either matches a save bit for bit or says the
// checkpoint is gone.
func TestOpenReadOnlyDuringSaves(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	w, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	done := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(done)
		for i := range 40 {
			id := int64(i % 7)
			ws, names := fxContent(id, i)
			if err := w.SaveCheckpoint(ws, id, names); err != nil {
				t.Error(err)
				return
			}
			if i%5 == 4 {
				if err := w.KeepLast(3); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	reads := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		r, err := OpenReadOnly(dir)
		if err != nil {
			t.Fatalf("OpenReadOnly during saves: %v", err)
		}
		ms, err := r.Checkpoints()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			out := newStWS()
			err := r.LoadCheckpoint(out, m.ID)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				t.Fatalf("read-only load of checkpoint %d during saves: %v", m.ID, err)
			}
			version := int(blob.Data[int64](out.GetBlob("iter").Tensor())[1])
			if err := fxLoad(r, m.ID, version); err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
			reads++
		}
		r.Close()
	}
	wg.Wait()
	if reads == 0 {
		t.Fatal("no checkpoint was read while the writer saved")
	}
	t.Logf("%d checkpoints read during 40 saves", reads)
}

// TestLockedByAnotherProcess holds a store open in a child process: Open
// fails with ErrLocked naming the child's pid, and OpenReadOnly reads the
// store.
func TestLockedByAnotherProcess(t *testing.T) {
	if dir := os.Getenv("CAFFE2GO_PERSIST_HOLD"); dir != "" {
		s, err := Open(dir)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("open")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
		s.Close()
		os.Exit(0)
	}
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fxSave(s, 0, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockedByAnotherProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CAFFE2GO_PERSIST_HOLD="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "open\n" {
		t.Fatalf("child: %q", line)
	}
	_, err = Open(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("Open of a store another process holds: %v; want ErrLocked naming pid %d", err, cmd.Process.Pid)
	}
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for id, version := range fxExpected(3) {
		if err := fxLoad(r, id, version); err != nil {
			t.Fatal(err)
		}
	}
}

// manifestIDsOf returns the ids of ms.
func manifestIDsOf(ms []Manifest) []int64 {
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}

// fxLoad loads checkpoint id from s and compares it with the version-th
// save of fxContent.
func fxLoad(s *Store, id int64, version int) error {
	out := newStWS()
	if err := s.LoadCheckpoint(out, id); err != nil {
		return err
	}
	want, names := fxContent(id, version)
	for _, name := range names {
		if err := fxSameBlob(out.GetBlob(name), want.GetBlob(name)); err != nil {
			return fmt.Errorf("checkpoint %d: blob %q %v", id, name, err)
		}
	}
	return nil
}
