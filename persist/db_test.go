package persist_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/dbtest"
)

func TestDBRegistry(t *testing.T) {
	if got := persist.DBTypes(); !slices.Equal(got, []string{"MiniDB", "badger", "minidb"}) {
		t.Errorf("DBTypes() = %q", got)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		typ, path string
		mode      persist.Mode
		want      string
	}{
		{"Minidb", filepath.Join(dir, "x"), persist.ModeNew, `unknown DB type "Minidb"`},
		{"BADGER", filepath.Join(dir, "x"), persist.ModeNew, "known types: MiniDB, badger, minidb (a DB type is registered by importing its package"},
		{"minidb", "", persist.ModeNew, "empty path"},
		{"minidb", filepath.Join(dir, "x"), persist.Mode(7), "invalid mode Mode(7)"},
	} {
		if _, err := persist.OpenDB(tc.typ, tc.path, tc.mode); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenDB(%q, %q, %v): %v, want %q", tc.typ, tc.path, tc.mode, err, tc.want)
		}
	}
	unused := func(string, persist.Mode) (persist.DB, error) { return nil, errors.New("never opened") }
	for _, tc := range []struct {
		name string
		open persist.OpenFunc
		want string
	}{
		{"", unused, "empty name"},
		{"nodb", nil, `DB type "nodb": nil open function`},
		{"minidb", unused, `DB type "minidb": already registered`},
	} {
		err := persist.RegisterDBType(tc.name, tc.open)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RegisterDBType(%q): %v, want an error containing %q", tc.name, err, tc.want)
		}
		func() {
			defer func() {
				if r, ok := recover().(error); !ok || r.Error() != err.Error() {
					t.Errorf("MustRegisterDBType(%q) panicked with %v, want RegisterDBType's error %q", tc.name, r, err)
				}
			}()
			persist.MustRegisterDBType(tc.name, tc.open)
		}()
	}
	if got := persist.DBTypes(); !slices.Equal(got, []string{"MiniDB", "badger", "minidb"}) {
		t.Errorf("after failed registrations DBTypes() = %q", got)
	}
	for m, s := range map[persist.Mode]string{persist.ModeRead: "READ", persist.ModeWrite: "WRITE", persist.ModeNew: "NEW"} {
		if m.String() != s {
			t.Errorf("%d.String() = %q", int(m), m.String())
		}
	}
}

func TestDBExistsFunc(t *testing.T) {
	dir := t.TempDir()
	dbtest.WriteAll(t, "minidb", filepath.Join(dir, "m"), persist.ModeNew, dbtest.Record{Key: "k", Value: []byte("v")})
	dbtest.WriteAll(t, "badger", filepath.Join(dir, "b"), persist.ModeNew, dbtest.Record{Key: "k", Value: []byte("v")})
	for _, tc := range []struct {
		typ, name string
		want      bool
	}{
		{"minidb", "m", true}, {"MiniDB", "m", true}, {"badger", "b", true},
		{"minidb", "b", false}, {"badger", "m", false}, {"badger", "none", false}, {"nosuch", "m", false},
	} {
		if got := persist.DBExists(tc.typ, filepath.Join(dir, tc.name)); got != tc.want {
			t.Errorf("DBExists(%s, %s) = %v", tc.typ, tc.name, got)
		}
	}
}
