package workspace

// The DB types of Caffe2's datasets, registered with persist for the Save,
// Load, CreateDB and TensorProtosDBInput operators of every workspace
// (badger and minidb are imported in persist.go). "lmdb" opens LMDB
// environments only in a build with the lmdb tag and cgo; elsewhere it
// fails, saying how to build with it.
import (
	_ "github.com/caffe2go/caffe2go/persist/leveldb"
	_ "github.com/caffe2go/caffe2go/persist/lmdb"
)
