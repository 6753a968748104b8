package persist

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
)

// A fixture store for the damage tests: checkpoints of every storage path
// (records in badger's tree, records in its value log, payloads in data
// files, a re-saved id, a deleted id) and two nets, in two states: "closed"
// (closed cleanly: tables, a value log cut to size, no memtable logs) and
// "killed" (a process died with it open after more saves: tables, a
// memtable log, a preallocated value log). The content of each checkpoint
// is a function of its id and of how many times it was saved.

// fxSaves lists the saves in order; fxSaves[i] < 0 deletes checkpoint -id.
// The closed fixture has the first fxClosedSaves of them.
var fxSaves = []int64{1, 2, 3, 4, 5, 4, 9, -5, 6, 7, 8, 6}

const fxClosedSaves = 8

var fxNets = []string{"predict", "init"}

// fxContent returns the blobs of a save of checkpoint id, the version-th
// save of that id (from 1).
func fxContent(id int64, version int) (*stWS, []string) {
	r := rand.New(rand.NewPCG(uint64(id), uint64(version)))
	ws := newStWS()
	ws.set("iter", blob.MustFromSlice([]int64{id, int64(version)}))
	ws.set("w", stRandomTensor(r, blob.Float32, 10, 10))
	ws.set("b", []byte(fmt.Sprintf("checkpoint %d version %d", id, version)))
	names := []string{"iter", "w", "b"}
	switch id % 3 {
	case 1: // a payload in the data file
		ws.set("big", stRandomTensor(r, blob.Float64, 20_000))
		names = append(names, "big")
	case 2: // a record in badger's value log
		ws.set("s", stRandomTensor(r, blob.String, 4000))
		names = append(names, "s")
	}
	return ws, names
}

// fxExpected returns what the fixture's checkpoints hold after the first n
// saves: id → version.
func fxExpected(n int) map[int64]int {
	versions := map[int64]int{}
	live := map[int64]int{}
	for _, id := range fxSaves[:n] {
		if id < 0 {
			delete(live, -id)
			continue
		}
		versions[id]++
		live[id] = versions[id]
	}
	return live
}

// fxSave makes saves [from, to) of fxSaves in s.
func fxSave(s *Store, from, to int) error {
	versions := map[int64]int{}
	for i, id := range fxSaves[:to] {
		if id < 0 {
			if i >= from {
				if err := s.DeleteCheckpoint(-id); err != nil {
					return err
				}
			}
			continue
		}
		versions[id]++
		if i < from {
			continue
		}
		ws, names := fxContent(id, versions[id])
		if err := s.SaveCheckpoint(ws, id, names); err != nil {
			return err
		}
	}
	return nil
}

// fxPrefix names the fixture directories (then the process id).
const fxPrefix = "persist-fixture-"

var fxOnce struct {
	sync.Once
	root string
	err  error
}

// fxDir returns the directory of the fixture in state "closed" or
// "killed", built once per test process; copy it before changing it.
func fxDir(t testing.TB, state string) string {
	t.Helper()
	fxOnce.Do(func() {
		// Fuzzing workers are killed rather than let finish (and remove
		// their fixtures): fixtures are named by process id, and those of
		// dead processes removed.
		stale, _ := filepath.Glob(filepath.Join(os.TempDir(), fxPrefix+"*"))
		for _, dir := range stale {
			if pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), fxPrefix)); err == nil && !processAlive(pid) {
				os.RemoveAll(dir)
			}
		}
		fxOnce.root = filepath.Join(os.TempDir(), fxPrefix+strconv.Itoa(os.Getpid()))
		if fxOnce.err = os.RemoveAll(fxOnce.root); fxOnce.err == nil {
			fxOnce.err = fxBuild(fxOnce.root)
		}
	})
	if fxOnce.err != nil {
		t.Fatalf("building the fixture stores: %v", fxOnce.err)
	}
	return filepath.Join(fxOnce.root, state)
}

func fxBuild(root string) error {
	dir := filepath.Join(root, "work")
	s, err := Open(dir)
	if err != nil {
		return err
	}
	for i, name := range fxNets {
		if err := s.SaveNet(name, stNet(name, 3+i)); err != nil {
			return err
		}
	}
	if err := fxSave(s, 0, fxClosedSaves); err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	if err := copyDir(dir, filepath.Join(root, "closed")); err != nil {
		return err
	}
	if s, err = Open(dir); err != nil {
		return err
	}
	if err := fxSave(s, fxClosedSaves, len(fxSaves)); err != nil {
		return err
	}
	// A copy of the files of an open store is what a process killed at
	// that moment leaves: what badger wrote through its memory maps is in
	// the page cache, which the copy reads. (The removal of retired data
	// files, in the background, is let finish first.)
	s.removals.Wait()
	if err := copyDir(dir, filepath.Join(root, "killed")); err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// fxCheck opens the store in dir and loads every checkpoint the first n
// saves left (n = len(fxSaves) for the killed fixture), comparing them
// with what was saved. It returns the ids that loaded bit for bit, those
// whose error was reported (by Open or LoadCheckpoint), and an error for
// anything else: a checkpoint that loads with other content, one that is
// silently missing (but those in lost, which a repair reported lost),
// and with nets set a net that is silently missing or loads wrong.
func fxCheck(dir string, n int, nets bool, lost ...int64) (ok, reported []int64, err error) {
	want := fxExpected(n)
	ids := slices.Sorted(maps.Keys(want))
	s, err := Open(dir)
	if err != nil {
		return nil, ids, nil
	}
	defer s.Close()
	for _, id := range ids {
		out := newStWS()
		err := s.LoadCheckpoint(out, id)
		if errors.Is(err, ErrNotFound) && slices.Contains(lost, id) {
			reported = append(reported, id)
			continue
		}
		if errors.Is(err, ErrNotFound) {
			return nil, nil, fmt.Errorf("checkpoint %d is missing without an error: %v", id, err)
		}
		if err != nil {
			reported = append(reported, id)
			continue
		}
		wantWS, names := fxContent(id, want[id])
		for _, name := range names {
			if err := fxSameBlob(out.GetBlob(name), wantWS.GetBlob(name)); err != nil {
				return nil, nil, fmt.Errorf("checkpoint %d loads, but blob %q %v", id, name, err)
			}
		}
		ok = append(ok, id)
	}
	ms, err := s.Checkpoints()
	if err != nil {
		return nil, nil, err
	}
	for _, m := range ms {
		if _, ok := want[m.ID]; !ok {
			return nil, nil, fmt.Errorf("checkpoint %d, deleted or never saved, is listed", m.ID)
		}
	}
	for i, name := range fxNets {
		if !nets {
			break
		}
		got, err := s.LoadNet(name)
		if errors.Is(err, ErrNotFound) {
			return nil, nil, fmt.Errorf("net %q is missing without an error", name)
		}
		if err == nil && got.String() != stNet(name, 3+i).String() {
			return nil, nil, fmt.Errorf("net %q loads with other content", name)
		}
	}
	return ok, reported, nil
}

// fxSameBlob says how got differs from want, bit for bit.
func fxSameBlob(got, want *blob.Blob) error {
	if got == nil {
		return errors.New("is missing")
	}
	if wb, ok := want.Bytes(); ok {
		if gb, ok := got.Bytes(); !ok || !bytes.Equal(gb, wb) {
			return errors.New("differs")
		}
		return nil
	}
	gt, wt := got.Tensor(), want.Tensor()
	if gt == nil || gt.DataType() != wt.DataType() || !slices.Equal(gt.Shape(), wt.Shape()) {
		return fmt.Errorf("is %v, want %v", gt, wt)
	}
	if wt.DataType() == blob.String {
		if !slices.Equal(blob.Data[string](gt), blob.Data[string](wt)) {
			return errors.New("differs")
		}
		return nil
	}
	gb, _ := tensorBytes(gt)
	wb, _ := tensorBytes(wt)
	if !bytes.Equal(gb, wb) {
		return errors.New("differs")
	}
	return nil
}

// copyDir copies the regular files under src to dst, leaving holes for
// zero blocks (badger's preallocated logs are mostly holes).
func copyDir(src, dst string) error {
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		return copySparse(path, target, info.Size())
	})
}

func copySparse(src, dst string, size int64) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	for _, ext := range dataExtents(in, size) {
		for off := ext[0]; off < ext[1]; {
			n, err := in.ReadAt(buf[:min(int64(len(buf)), ext[1]-off)], off)
			if n > 0 && zeroRun(buf[:n]) < n {
				if _, err := out.WriteAt(buf[:n], off); err != nil {
					out.Close()
					return err
				}
			}
			off += int64(n)
			if err == io.EOF {
				break
			}
			if err != nil {
				out.Close()
				return err
			}
		}
	}
	if err := out.Truncate(size); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// contentSize returns the size of the file at path up to its last
// non-zero byte: badger's logs are preallocated.
func contentSize(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	exts := dataExtents(f, st.Size())
	buf := make([]byte, 64<<10)
	for i := len(exts) - 1; i >= 0; i-- {
		for end := exts[i][1]; end > exts[i][0]; {
			start := max(exts[i][0], end-int64(len(buf)))
			n, _ := f.ReadAt(buf[:end-start], start)
			for k := n - 1; k >= 0; k-- {
				if buf[k] != 0 {
					return start + int64(k) + 1
				}
			}
			end = start
		}
	}
	return 0
}

// patchFile changes up to n bytes of the file at off.
func patchFile(path string, off int64, change func([]byte), n int) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, n)
	got, _ := f.ReadAt(b, off)
	if got == 0 {
		return nil
	}
	change(b[:got])
	_, err = f.WriteAt(b[:got], off)
	return err
}

// dataFileNames lists the data files under dir, sorted.
func dataFileNames(dir string) []string {
	entries, _ := os.ReadDir(filepath.Join(dir, dataDirName))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// TestMain removes the fixture stores after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if fxOnce.root != "" {
		os.RemoveAll(fxOnce.root)
	}
	os.Exit(code)
}
