package persist

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDBRegistry(t *testing.T) {
	if got := DBTypes(); !slices.Equal(got, []string{"MiniDB", "badger", "minidb"}) {
		t.Errorf("DBTypes() = %q", got)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		typ, path string
		mode      Mode
		want      string
	}{
		{"Minidb", filepath.Join(dir, "x"), ModeNew, `unknown DB type "Minidb"`},
		{"BADGER", filepath.Join(dir, "x"), ModeNew, "known types: MiniDB, badger, minidb"},
		{"minidb", "", ModeNew, "empty path"},
		{"minidb", filepath.Join(dir, "x"), Mode(7), "invalid mode Mode(7)"},
	} {
		if _, err := OpenDB(tc.typ, tc.path, tc.mode); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenDB(%q, %q, %v): %v, want %q", tc.typ, tc.path, tc.mode, err, tc.want)
		}
	}
	unused := func(string, Mode) (DB, error) { return nil, errors.New("never opened") }
	for _, tc := range []struct {
		name string
		open OpenFunc
		want string
	}{
		{"", unused, "empty name"},
		{"nodb", nil, `DB type "nodb": nil open function`},
		{"minidb", unused, `DB type "minidb": already registered`},
	} {
		err := RegisterDBType(tc.name, tc.open)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RegisterDBType(%q): %v, want an error containing %q", tc.name, err, tc.want)
		}
		func() {
			defer func() {
				if r, ok := recover().(error); !ok || r.Error() != err.Error() {
					t.Errorf("MustRegisterDBType(%q) panicked with %v, want RegisterDBType's error %q", tc.name, r, err)
				}
			}()
			MustRegisterDBType(tc.name, tc.open)
		}()
	}
	if got := DBTypes(); !slices.Equal(got, []string{"MiniDB", "badger", "minidb"}) {
		t.Errorf("after failed registrations DBTypes() = %q", got)
	}
	for m, s := range map[Mode]string{ModeRead: "READ", ModeWrite: "WRITE", ModeNew: "NEW"} {
		if m.String() != s {
			t.Errorf("%d.String() = %q", int(m), m.String())
		}
	}
}

func TestDBExistsFunc(t *testing.T) {
	dir := t.TempDir()
	writeAll(t, "minidb", filepath.Join(dir, "m"), ModeNew, miniRecord{"k", []byte("v")})
	writeAll(t, "badger", filepath.Join(dir, "b"), ModeNew, miniRecord{"k", []byte("v")})
	for _, tc := range []struct {
		typ, name string
		want      bool
	}{
		{"minidb", "m", true}, {"MiniDB", "m", true}, {"badger", "b", true},
		{"minidb", "b", false}, {"badger", "m", false}, {"badger", "none", false}, {"nosuch", "m", false},
	} {
		if got := DBExists(tc.typ, filepath.Join(dir, tc.name)); got != tc.want {
			t.Errorf("DBExists(%s, %s) = %v", tc.typ, tc.name, got)
		}
	}
}
