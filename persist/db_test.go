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

// TestCursorContract runs the same checks on every DB type: a new cursor
// is at the first record, Next walks to the end and stays invalid there,
// SeekToFirst rewinds, and closed cursors and DBs give errors.
func TestCursorContract(t *testing.T) {
	for _, typ := range dbTypesUnderTest {
		t.Run(typ, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db")
			recs := []miniRecord{{"k1", []byte("a")}, {"k2", []byte("bb")}, {"k3", []byte("ccc")}}
			writeAll(t, typ, path, ModeNew, recs...)
			db, err := OpenDB(typ, path, ModeRead)
			if err != nil {
				t.Fatal(err)
			}
			c, err := db.NewCursor()
			if err != nil {
				t.Fatal(err)
			}
			for pass := 0; pass < 2; pass++ {
				for i, r := range recs {
					if !c.Valid() || c.Key() != r.key || string(c.Value()) != string(r.value) {
						t.Fatalf("pass %d record %d: %q=%q, want %q", pass, i, c.Key(), c.Value(), r.key)
					}
					if err := c.Next(); err != nil {
						t.Fatal(err)
					}
				}
				if c.Valid() || c.Key() != "" || c.Value() != nil {
					t.Fatal("cursor valid past the end")
				}
				if err := c.Next(); err != nil || c.Valid() {
					t.Fatalf("Next past the end: %v", err)
				}
				if err := c.SeekToFirst(); err != nil {
					t.Fatal(err)
				}
			}
			c.Close()
			if err := c.Next(); err == nil {
				t.Error("Next on a closed cursor must fail")
			}
			if _, err := db.NewTransaction(); err == nil {
				t.Error("a transaction on a READ DB must fail")
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, err := db.NewCursor(); err == nil {
				t.Error("NewCursor on a closed DB must fail")
			}
		})
	}
}
