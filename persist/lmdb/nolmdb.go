//go:build !lmdb || !cgo

package lmdb

import (
	"fmt"

	"github.com/caffe2go/caffe2go/persist"
)

func init() {
	persist.MustRegisterDBType("lmdb", openUnavailable)
}

// openUnavailable is the "lmdb" DB type of a build without LMDB: every
// open fails, saying how to build with it.
func openUnavailable(path string, mode persist.Mode) (persist.DB, error) {
	return nil, fmt.Errorf("lmdb: Cannot open db: %s (mode %v): this program was built without LMDB: build it with cgo and -tags lmdb, with the LMDB C library installed (Debian: apt-get install liblmdb-dev)", path, mode)
}
