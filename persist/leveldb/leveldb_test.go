package leveldb_test

import (
	"testing"

	"github.com/caffe2go/caffe2go/persist/dbtest"
	_ "github.com/caffe2go/caffe2go/persist/leveldb"
)

// TestContract runs persist's DB contract over "leveldb".
func TestContract(t *testing.T) { dbtest.TestDB(t, "leveldb") }
