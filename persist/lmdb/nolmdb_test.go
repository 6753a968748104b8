//go:build !lmdb || !cgo

package lmdb_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/persist"
	_ "github.com/caffe2go/caffe2go/persist/lmdb"
)

// TestUnavailable checks that a build without LMDB still knows the type,
// and that opening fails, names the path, says how to build with LMDB and
// creates nothing.
func TestUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	for _, mode := range []persist.Mode{persist.ModeRead, persist.ModeWrite, persist.ModeNew} {
		_, err := persist.OpenDB("lmdb", path, mode)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "-tags lmdb") {
			t.Errorf("open for %v: %v, want an error naming %s and the lmdb build tag", mode, err, path)
		}
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("opening created %s: %v", path, err)
	}
}
