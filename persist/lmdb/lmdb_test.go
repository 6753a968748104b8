//go:build lmdb && cgo

package lmdb_test

import (
	"testing"

	"github.com/caffe2go/caffe2go/persist/dbtest"
	_ "github.com/caffe2go/caffe2go/persist/lmdb"
)

// TestContract runs persist's DB contract over "lmdb", with LMDB's
// longest key.
func TestContract(t *testing.T) { dbtest.TestDBLimits(t, "lmdb", dbtest.Limits{MaxKeyLen: 511}) }
