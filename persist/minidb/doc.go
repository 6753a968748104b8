// Package minidb is Caffe2's minidb file format (caffe2/core/db.cc,
// MiniDB) as the persist DB types "minidb" and "MiniDB", byte for byte. It
// exports nothing: importing it registers the types with persist, the way
// image/png registers its format with image. Package workspace imports it,
// so users of workspace need not.
//
//	import _ "github.com/caffe2go/caffe2go/persist/minidb"
//
// A minidb is one file: a flat sequence of records with no header, index
// or footer. Each record is
//
//	key_len   int32, little-endian
//	value_len int32, little-endian
//	key       key_len bytes
//	value     value_len bytes
//
// A short read of key_len ends the records (so an empty file has none);
// both lengths must be > 0 and a record cut off inside its value length,
// key or value is an error that names the file and the record's offset.
// Records come in the order they were put; keys may repeat. ModeWrite
// appends to the file, ModeNew truncates it. Only one cursor or
// transaction exists at a time, cursors need a DB open for reading, and
// they only go forward: Seek fails with persist.ErrSeekUnsupported.
package minidb
