package persist_test

import (
	"testing"

	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/dbtest"

	// The DB types that persist's tests, the contract suite and the
	// Save/Load tests over persist.DBTypes(), run over.
	_ "github.com/caffe2go/caffe2go/persist/badgerdb"
	_ "github.com/caffe2go/caffe2go/persist/minidb"
)

// TestDBContract runs the contract suite over every registered DB type,
// aliases included.
func TestDBContract(t *testing.T) {
	types := persist.DBTypes()
	if len(types) == 0 {
		t.Fatal("no DB types registered")
	}
	for _, typ := range types {
		t.Run(typ, func(t *testing.T) { dbtest.TestDB(t, typ) })
	}
}
