// Package badgerdb is the persist DB type "badger" (persist.DefaultDBType,
// the default db_type of the Save, Load and CreateDB operators): a
// badger/v4 database directory. It exports nothing: importing it registers
// the type with persist, the way image/png registers its format with
// image. Package workspace imports it, so users of workspace need not.
//
//	import _ "github.com/caffe2go/caffe2go/persist/badgerdb"
//
// Cursors visit keys in byte order and can Seek; a key put again replaces
// its value. ModeRead opens the directory read-only, so any number of
// readers (in this process or others) may share it; ModeWrite and ModeNew
// take badger's exclusive lock. ModeNew empties an existing badger
// directory (it refuses a directory that holds other files). A
// transaction is a badger write batch, durable record by record rather
// than all or nothing, which is all Caffe2's DB transactions promise.
//
// This DB type is not the persist.Store, which keeps nets and checkpoints
// in a badger directory of its own layout.
package badgerdb
