// Package leveldb is the persist DB type "leveldb" (Caffe2's
// caffe2/db/leveldb.cc): a LevelDB directory, read and written with
// goleveldb (github.com/syndtr/goleveldb, pure Go), whose files are those
// of the C++ LevelDB library, so a DB written by Caffe2, Caffe or Python's
// plyvel opens here and the other way round. It exports nothing: importing
// it registers the type with persist, the way image/png registers its
// format with image. Package workspace imports it, so users of workspace
// need not.
//
//	import _ "github.com/caffe2go/caffe2go/persist/leveldb"
//
// Keys and values are stored as they are given: Caffe2's Save writes
// serialized BlobProtos keyed by blob name (name#%k for chunks), its
// dataset tools serialized TensorProtos, and Caffe's convert_imageset and
// convert_mnist_data serialized caffe.Datum messages, all of which read
// back byte for byte. Tables are written with Caffe2's block size (64 KiB)
// and Snappy compression, as the C++ library writes them by default.
//
// Cursors read a snapshot taken when they are created, visit keys in byte
// order and can Seek; a key put again replaces its value. A transaction
// is a LevelDB write batch, written atomically by Commit.
//
// ModeRead opens the directory read-only with a shared lock, so any number
// of readers in this process or others may share it; ModeWrite and ModeNew
// take LevelDB's exclusive lock. A DB with more than one log to replay (a
// writer closed during a memtable flush leaves one), which goleveldb cannot
// open read-only, is first opened for writing once, replaying its logs into
// a table as the C++ library does on every open. ModeNew empties an existing LevelDB (it
// deletes every record and compacts; Caffe2 refuses to open an existing one
// for NEW) and refuses a non-empty directory that is not a LevelDB. Opening
// checks every checksum and fails on a corrupt or truncated MANIFEST, log
// or table instead of dropping what it cannot read, with an error that
// names the directory and the file; cursors report damage found while
// reading in the same way. A log or MANIFEST cut exactly at the end of a
// record reads as the shorter file, as in the C++ library: LevelDB records
// no lengths that would tell.
package leveldb
