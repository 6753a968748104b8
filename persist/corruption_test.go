//go:build unix

package persist

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The corruption matrix: every kind of file in a store directory × five
// kinds of damage × several offsets, applied to copies of the fixture
// stores (closed and killed). Each case runs in a child process (this test
// binary re-executed) so that a crash shows as a crash. The child opens
// the damaged store and loads every checkpoint, repairs it and loads them
// again; no case may crash, hang, or lose a checkpoint silently (load it
// with other content, or miss it without an error), and Open must delete
// no committed data file. The test reports how many checkpoints Repair
// recovered.
//
// CI runs a subset; CAFFE2GO_CORRUPTION_MATRIX=full runs every file and
// more offsets.

const (
	matrixEnv      = "CAFFE2GO_CORRUPTION_MATRIX"
	matrixChildEnv = "CAFFE2GO_CORRUPTION_CHILD"
)

// A damage kind changes the file at path, at offset off of what it holds
// (its content: the preallocated zero tail of a log excluded).
type damageKind struct {
	name   string
	offset bool // whether the offset matters
	apply  func(path string, off, content int64) error
}

var damageKinds = []damageKind{
	{"truncate", true, func(path string, off, _ int64) error { return os.Truncate(path, off) }},
	{"flip", true, func(path string, off, _ int64) error { return patchFile(path, off, func(b []byte) { b[0] ^= 0x5a }, 1) }},
	{"zero", true, func(path string, off, _ int64) error { return patchFile(path, off, func(b []byte) { clear(b) }, 4096) }},
	{"delete", false, func(path string, _, _ int64) error { return os.Remove(path) }},
	{"append", false, func(path string, _, _ int64) error {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		garbage := make([]byte, 1000)
		r := rand.New(rand.NewPCG(7, 7))
		for i := range garbage {
			garbage[i] = byte(r.Uint32())
		}
		_, err = f.Write(garbage)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}},
}

// matrixCase is one damaged store.
type matrixCase struct {
	state, file, damage string
	off                 int64
}

func (c matrixCase) String() string {
	return fmt.Sprintf("%s/%s/%s@%d", c.state, c.file, c.damage, c.off)
}

// fileKind names the kind of a file of a store directory.
func fileKind(rel string) string {
	if strings.HasPrefix(rel, dataDirName+string(filepath.Separator)) {
		return "data file"
	}
	if k := badgerFileKind(rel); k != "" {
		return k
	}
	return rel
}

// matrixCases lists the cases: in full, every file and ten offsets; else
// one file of each kind per state and three offsets.
func matrixCases(t *testing.T, full bool) []matrixCase {
	var cases []matrixCase
	for _, state := range []string{"closed", "killed"} {
		root := fxDir(t, state)
		var files []string
		_ = filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				rel, _ := filepath.Rel(root, path)
				files = append(files, rel)
			}
			return nil
		})
		sort.Strings(files)
		seen := map[string]bool{}
		for _, rel := range files {
			kind := fileKind(rel)
			if !full && seen[kind] {
				continue
			}
			seen[kind] = true
			content := contentSize(filepath.Join(root, rel))
			offsets := []int64{0, content / 2, max(content-1, 0)}
			if full {
				offsets = []int64{0, 5, 19, 20, 64, content / 4, content / 3, content / 2, 3 * content / 4, max(content-40, 0), max(content-1, 0)}
			}
			offsets = slices.Compact(slices.Sorted(slices.Values(offsets)))
			for _, d := range damageKinds {
				if !d.offset {
					cases = append(cases, matrixCase{state, rel, d.name, 0})
					continue
				}
				for _, off := range offsets {
					cases = append(cases, matrixCase{state, rel, d.name, off})
				}
			}
		}
	}
	return cases
}

// matrixResult is what a child found.
type matrixResult struct {
	crash, silent  string // why, when it crashed or lost silently
	openOK         bool   // Open of the damaged store succeeded
	loaded, want   int    // checkpoints loaded bit for bit before repair, expected
	recovered      int    // checkpoints loaded bit for bit after repair
	netsLost       bool   // a net is missing after repair
	deletedOnOpen  []string
	repairErr      string
	reportedBefore int
}

func TestCorruptionMatrix(t *testing.T) {
	if os.Getenv(matrixChildEnv) != "" {
		t.Skip("in the child")
	}
	full := os.Getenv(matrixEnv) == "full"
	if testing.Short() && !full {
		t.Skip("-short")
	}
	cases := matrixCases(t, full)
	results := make([]matrixResult, len(cases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = runMatrixCase(t, c)
		}()
	}
	wg.Wait()

	var crashes, silent, openOK, recovered, want, loaded, netsLost, repairFailed int
	byKind := map[string][2]int{} // recovered, want
	for i, r := range results {
		c := cases[i]
		if r.crash != "" {
			crashes++
			t.Errorf("%v: crash: %s", c, r.crash)
			continue
		}
		if r.silent != "" {
			silent++
			t.Errorf("%v: silent loss: %s", c, r.silent)
		}
		if len(r.deletedOnOpen) > 0 {
			silent++
			t.Errorf("%v: Open deleted the data files %v", c, r.deletedOnOpen)
		}
		if r.repairErr != "" {
			repairFailed++
			t.Logf("%v: Repair: %s", c, r.repairErr)
		}
		if r.openOK {
			openOK++
		}
		if r.netsLost {
			netsLost++
		}
		recovered += r.recovered
		want += r.want
		loaded += r.loaded
		k := byKind[fileKind(c.file)]
		byKind[fileKind(c.file)] = [2]int{k[0] + r.recovered, k[1] + r.want}
	}
	var kinds []string
	for k, v := range byKind {
		kinds = append(kinds, fmt.Sprintf("%s %d/%d", k, v[0], v[1]))
	}
	sort.Strings(kinds)
	t.Logf("corruption matrix (full: %v): %d cases, %d crashes, %d silent losses; Open succeeded in %d; "+
		"checkpoints loaded before repair %d/%d, after Repair %d/%d (by damaged file: %s); Repair failed in %d; nets lost (they have no second copy) in %d",
		full, len(cases), crashes, silent, openOK, loaded, want, recovered, want, strings.Join(kinds, ", "), repairFailed, netsLost)
}

// runMatrixCase damages a copy of the fixture and runs the child on it.
func runMatrixCase(t *testing.T, c matrixCase) matrixResult {
	dir, err := os.MkdirTemp("", "persist-matrix-")
	if err != nil {
		return matrixResult{crash: err.Error()}
	}
	defer os.RemoveAll(dir)
	store := filepath.Join(dir, "store")
	if err := copyDir(fxDir(t, c.state), store); err != nil {
		return matrixResult{crash: err.Error()}
	}
	path := filepath.Join(store, c.file)
	for _, d := range damageKinds {
		if d.name == c.damage {
			if err := d.apply(path, c.off, contentSize(path)); err != nil {
				return matrixResult{crash: "damaging: " + err.Error()}
			}
		}
	}
	n := len(fxSaves)
	if c.state == "closed" {
		n = fxClosedSaves
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCorruptionChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), matrixChildEnv+"="+store, "CAFFE2GO_CORRUPTION_SAVES="+strconv.Itoa(n))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	r := matrixResult{want: len(fxExpected(n))}
	done := false
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 2)
		arg := ""
		if len(f) == 2 {
			arg = f[1]
		}
		switch f[0] {
		case "open-ok":
			r.openOK = true
		case "loaded":
			r.loaded, _ = strconv.Atoi(arg)
		case "reported":
			r.reportedBefore, _ = strconv.Atoi(arg)
		case "silent":
			r.silent += arg + "; "
		case "deleted":
			r.deletedOnOpen = append(r.deletedOnOpen, arg)
		case "repair-error":
			r.repairErr = arg
		case "recovered":
			r.recovered, _ = strconv.Atoi(arg)
		case "nets-lost":
			r.netsLost = true
		case "done":
			done = true
		}
	}
	if err != nil || !done {
		tail := out.String()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		r.crash = fmt.Sprintf("%v: %s", err, tail)
	}
	return r
}

// TestCorruptionChild is the child of TestCorruptionMatrix; it does
// nothing in a normal test run.
func TestCorruptionChild(t *testing.T) {
	dir := os.Getenv(matrixChildEnv)
	if dir == "" {
		t.Skip("helper process of TestCorruptionMatrix")
	}
	n, _ := strconv.Atoi(os.Getenv("CAFFE2GO_CORRUPTION_SAVES"))
	committed := func() map[string]bool {
		m := map[string]bool{}
		for _, name := range dataFileNames(dir) {
			if strings.HasSuffix(name, stateData) {
				m[name] = true
			}
		}
		return m
	}
	before := committed()
	if s, err := Open(dir); err == nil {
		fmt.Println("open-ok")
		s.Close()
	}
	for name := range before {
		if !committed()[name] {
			fmt.Println("deleted", name)
		}
	}
	ok, reported, err := fxCheck(dir, n, true)
	if err != nil {
		fmt.Println("silent", err)
	}
	fmt.Println("loaded", len(ok))
	fmt.Println("reported", len(reported))
	r, err := Repair(dir)
	if err != nil {
		fmt.Println("repair-error", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	var lost []int64
	if r != nil {
		lost = r.LostCheckpoints
	}
	ok, _, err = fxCheck(dir, n, false, lost...)
	if err != nil {
		fmt.Println("silent", "after Repair:", err)
	}
	fmt.Println("recovered", len(ok))
	if _, _, err := fxCheck(dir, n, true, lost...); err != nil && strings.Contains(err.Error(), "net ") {
		fmt.Println("nets-lost")
	}
	fmt.Println("done")
	os.Exit(0)
}
