// Package lmdb is the persist DB type "lmdb" (Caffe2's caffe2/db/lmdb.cc):
// an LMDB environment directory (data.mdb and lock.mdb), read and written
// through the LMDB C library, so a DB written by Caffe2, Caffe or Python's
// lmdb module opens here and the other way round. It exports nothing:
// importing it registers the type with persist, the way image/png
// registers its format with image. Package workspace imports it, so users
// of workspace need not.
//
//	import _ "github.com/caffe2go/caffe2go/persist/lmdb"
//
// # Build
//
// The binding uses cgo and links the system's LMDB library, so it is built
// only with the lmdb build tag:
//
//	apt-get install liblmdb-dev   # Debian and Ubuntu
//	go build -tags lmdb ./...
//
// Without the tag (or without cgo) the type is still registered, and
// opening fails with an error that says how to build with LMDB.
//
// # Layout and behaviour
//
// Keys and values are stored as they are given in the unnamed database:
// Caffe2's Save writes serialized BlobProtos keyed by blob name (name#%k
// for chunks), its dataset tools serialized TensorProtos, and Caffe's
// convert_imageset and convert_mnist_data serialized caffe.Datum messages,
// all of which read back byte for byte. Keys are at most 511 bytes (LMDB's
// limit as Debian and Caffe2 build it); Put refuses longer ones. Each
// environment reserves 1 TiB of address space for its map, as Caffe2's
// does; the file grows only as records are written.
//
// Cursors are LMDB read transactions: each reads the snapshot taken when it
// was created, visits keys in byte order and can Seek. A key put again
// replaces its value. A transaction puts its records into one LMDB write
// transaction that Commit commits atomically; LMDB has one writer at a
// time, so NewTransaction fails while a transaction of another DB on the
// same directory is open. LMDB ties a write transaction to the thread that
// began it, so each environment runs its writes on one locked OS thread.
//
// The DBs opened on one directory in a process share one environment, as
// LMDB requires (its lock file's POSIX locks belong to the process); a
// directory already open for READ cannot be opened for writing until those
// DBs are closed. ModeRead opens the environment read-only; any number of
// readers, here or in other processes, may share it with one writer.
// ModeWrite and ModeNew create the directory when it is missing, and
// ModeNew empties an existing LMDB (Caffe2 refuses an existing directory);
// both refuse a non-empty directory that is not an LMDB.
//
// # Damaged files
//
// Opening fails, naming the data file, when it is empty, is not an LMDB
// file, or is shorter than the pages its meta page counts (LMDB itself would
// map the missing pages and the process would die of SIGBUS reading them),
// so a truncated DB is an error. LMDB keeps no checksums: a damaged byte in
// a record's value reads back as it is, and a record whose length or place
// runs off the file is an error naming the file and the key. A page whose
// structure is damaged can still crash the LMDB library itself (in a sweep
// of single-byte flips over the test fixtures, 4 of about 3,000); read
// untrusted LMDB files in a process of their own.
package lmdb
