package persist

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fxStore copies the fixture in state to a fresh directory and returns it
// with the number of saves the state holds.
func fxStore(t *testing.T, state string) (string, int) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	if err := copyDir(fxDir(t, state), dir); err != nil {
		t.Fatal(err)
	}
	if state == "closed" {
		return dir, fxClosedSaves
	}
	return dir, len(fxSaves)
}

// fxDamage applies damage to the first file matching the glob pattern in
// dir.
func fxDamage(t *testing.T, dir, pattern string, damage func(path string) error) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(matches) == 0 {
		t.Fatalf("no %s in %s", pattern, dir)
	}
	if err := damage(matches[0]); err != nil {
		t.Fatal(err)
	}
}

func remove(path string) error { return os.Remove(path) }

func rewrite(f func([]byte) []byte) func(path string) error {
	return func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(path, f(b), 0o644)
	}
}

// countFiles returns the number of regular files under dir.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCheckHealthyStore(t *testing.T) {
	for _, state := range []string{"closed", "killed"} {
		dir, n := fxStore(t, state)
		r, err := Check(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(maps.Keys(fxExpected(n)))
		if !r.Healthy() || !slices.Equal(r.CheckpointIDs(), want) || !slices.Equal(r.Nets, []string{"init", "predict"}) {
			t.Errorf("%s store: Check reports\n%s\nwant healthy with checkpoints %v and both nets", state, r, want)
		}
		// Repair of a healthy store changes nothing.
		before := countFiles(t, dir)
		if r, err = Repair(dir); err != nil || r.Moved != "" {
			t.Fatalf("Repair of a healthy store: %v, moved to %q", err, r.Moved)
		}
		if after := countFiles(t, dir); after != before {
			t.Errorf("Repair of a healthy store: %d files before, %d after", before, after)
		}
	}
}

// TestRepair damages badger's files of the fixture stores so that Open
// refuses them, and checks that Repair salvages every checkpoint whose
// data is intact somewhere (the checkpoints' data files hold a copy of
// their records and manifest), that the repaired store opens and loads
// them bit for bit, and that nothing was deleted.
func TestRepair(t *testing.T) {
	tests := []struct {
		state, file string
		damage      func(string) error
		// lostNets: the nets are in the damaged file only (they have no
		// second copy).
		lostNets bool
	}{
		{state: "closed", file: "MANIFEST", damage: remove},
		{state: "closed", file: "MANIFEST", damage: rewrite(func(b []byte) []byte { return b[:10] })},
		{state: "closed", file: "*.sst", damage: remove, lostNets: true},
		{state: "closed", file: "*.sst", damage: rewrite(func(b []byte) []byte { b[len(b)/2] ^= 1; return b })},
		{state: "closed", file: "*.sst", damage: rewrite(func(b []byte) []byte { return b[:len(b)-1] }), lostNets: true},
		{state: "killed", file: "*.mem", damage: remove},
		{state: "killed", file: "*.mem", damage: rewrite(func(b []byte) []byte { clear(b[100:4000]); return b })},
		{state: "killed", file: "*.mem", damage: rewrite(func(b []byte) []byte { return b[:300] })},
		{state: "killed", file: "MANIFEST", damage: remove},
		{state: "killed", file: "000001.vlog", damage: rewrite(func(b []byte) []byte { b[0] ^= 1; return b })},
		{state: "killed", file: "KEYREGISTRY", damage: rewrite(func(b []byte) []byte { b[len(b)-1] ^= 1; return b })},
	}
	for _, tc := range tests {
		t.Run(tc.state+"/"+tc.file, func(t *testing.T) {
			dir, n := fxStore(t, tc.state)
			fxDamage(t, dir, tc.file, tc.damage)
			if s, err := Open(dir); err == nil {
				s.Close()
				t.Fatal("Open of the damaged store succeeded")
			} else if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
			check, err := Check(dir)
			if err != nil {
				t.Fatal(err)
			}
			if check.Healthy() || len(check.Damage) == 0 {
				t.Fatalf("Check of the damaged store:\n%s", check)
			}
			before := countFiles(t, dir)
			r, err := Repair(dir)
			if err != nil {
				t.Fatalf("Repair: %v\n%s", err, r)
			}
			want := slices.Sorted(maps.Keys(fxExpected(n)))
			if !slices.Equal(r.CheckpointIDs(), want) || !slices.Equal(r.CheckpointIDs(), check.CheckpointIDs()) {
				t.Fatalf("Repair recovered checkpoints %v (Check: %v), want %v\n%s", r.CheckpointIDs(), check.CheckpointIDs(), want, r)
			}
			if !strings.HasPrefix(filepath.Base(r.Moved), "damaged-") {
				t.Fatalf("Repair moved the old files to %q", r.Moved)
			}
			if moved := countFiles(t, r.Moved); moved == 0 || countFiles(t, dir) < before {
				t.Errorf("%d files before Repair, %d after (%d of them in %s)", before, countFiles(t, dir), moved, r.Moved)
			}
			if tc.lostNets != (len(r.Nets) == 0) {
				t.Errorf("Repair salvaged the nets %q", r.Nets)
			}
			ok, reported, err := fxCheck(dir, n, !tc.lostNets)
			if err != nil || len(reported) > 0 || !slices.Equal(ok, want) {
				t.Fatalf("after Repair: loaded %v, errors for %v, %v", ok, reported, err)
			}
			if after, err := Check(dir); err != nil || !after.Healthy() {
				t.Fatalf("Check after Repair: %v\n%s", err, after)
			}
		})
	}
}

// TestRepairInterrupted stops a repair after its badger files are built:
// Open refuses the store until a second Repair finishes the first.
func TestRepairInterrupted(t *testing.T) {
	dir, n := fxStore(t, "killed")
	fxDamage(t, dir, "MANIFEST", remove)
	r, err := prepareRepair(dir)
	if err != nil || r.Moved == "" {
		t.Fatalf("prepareRepair: %v, %+v", err, r)
	}
	if _, err := Open(dir); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), repairReadyName) {
		t.Fatalf("Open during a repair: %v", err)
	}
	if r, err = Repair(dir); err != nil {
		t.Fatalf("Repair finishing the interrupted one: %v\n%s", err, r)
	}
	want := slices.Sorted(maps.Keys(fxExpected(n)))
	if ok, reported, err := fxCheck(dir, n, true); err != nil || len(reported) > 0 || !slices.Equal(ok, want) {
		t.Fatalf("after Repair: loaded %v, errors for %v, %v", ok, reported, err)
	}
}

// TestRepairKeepsUncommittedRename checks that a checkpoint whose data file
// a killed save left named .pending after its commit is salvaged, the
// file renamed.
func TestRepairKeepsUncommittedRename(t *testing.T) {
	dir, n := fxStore(t, "closed")
	files, err := listDataFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := files[1][0]
	data := filepath.Join(dir, dataDirName)
	if err := os.Rename(filepath.Join(data, f.name()), filepath.Join(data, dataFileNameIn(1, f.gen, statePending))); err != nil {
		t.Fatal(err)
	}
	fxDamage(t, dir, "MANIFEST", remove)
	if _, err := Repair(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(data, f.name())); err != nil {
		t.Fatalf("the salvaged checkpoint's data file: %v", err)
	}
	want := slices.Sorted(maps.Keys(fxExpected(n)))
	if ok, reported, err := fxCheck(dir, n, true); err != nil || len(reported) > 0 || !slices.Equal(ok, want) {
		t.Fatalf("after Repair: loaded %v, errors for %v, %v", ok, reported, err)
	}
}

func TestRepairLockedStore(t *testing.T) {
	dir, _ := fxStore(t, "closed")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Repair(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("Repair of an open store: %v, want ErrLocked", err)
	}
}
