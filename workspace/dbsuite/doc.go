// Package dbsuite is the suite the key-value DB types (persist/leveldb,
// persist/lmdb) share beyond persist/dbtest's contract: the fixtures their
// reference C libraries wrote (records, MNIST in make_mnist_db's layout,
// Caffe Datums, read back bit for bit and through CreateDB and
// TensorProtosDBInput), Save and Load of every element type against
// minidb's records, and interop with the C libraries through Python.
//
// It runs operators through a workspace, so it sits on the workspace floor
// rather than beside dbtest. Each DB type's tests describe themselves with
// a Suite and call its methods from their own Test functions, run in the
// DB package's directory (fixtures in testdata/, made by
// testdata/fixtures.py, which also dumps a DB for the interop check).
package dbsuite
