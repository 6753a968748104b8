// Package persist keeps nets and blobs on disk: a Store (one embedded badger
// database per directory, no server) that holds NetDefs by name and
// crash-safe training checkpoints, and Caffe2's persistence operators (Save,
// Load, Checkpoint, DBExists, CreateDB, TensorProtosDBInput) over pluggable
// DB types (see OpenDB and RegisterDBType).
//
// # Packages
//
// The DB types, and what is built on DBs without being part of them, are
// subpackages; they import persist, never the reverse:
//
//   - persist/minidb registers the DB types "minidb" and "MiniDB", Caffe2's
//     minidb file format byte for byte, for interop with Caffe2.
//   - persist/badgerdb registers "badger" (DefaultDBType), a badger
//     directory with sorted keys and Seek.
//   - persist/leveldb registers "leveldb" (goleveldb, pure Go: the files of
//     the C++ LevelDB that Caffe and Caffe2 write).
//   - persist/lmdb registers "lmdb", the LMDB C library through cgo in
//     builds with -tags lmdb (Debian liblmdb-dev); without the tag opening
//     one fails and says how to build it.
//   - persist/dbtest is the contract every DB type meets, as a test suite
//     (dbtest.TestDB), run over every type DBTypes lists.
//   - persist/mnist reads the MNIST idx files and imports them into a
//     dataset DB for TensorProtosDBInput.
//
// A DB type registers itself when its package is imported, as an image
// format does with package image. Package workspace imports minidb,
// badgerdb, leveldb and lmdb, so users of workspace have them all; a program that uses persist's
// operators without workspace imports the ones it needs:
//
//	import _ "github.com/caffe2go/caffe2go/persist/minidb"
//
// # Store
//
// Open opens (creating when missing) the store in a directory, OpenInMemory
// one that lives in memory, OpenReadOnly a snapshot of a store that another
// process may have open for writing (one process writes a store at a
// time; a second Open fails with ErrLocked naming the first's pid). The workspace package opens one per workspace
// root folder (<root>/caffe2go.store) on first use, and one under the
// user's cache directory for workspaces created without a root folder (see
// workspace.Workspace.StoreDir).
//
// Nets: SaveNet, LoadNet, Nets and DeleteNet store NetDefs under names, so a
// net saved by one process loads in the next.
//
// Checkpoints: SaveCheckpoint saves a set of blobs of a workspace under a
// non-negative int64 id, LoadCheckpoint puts them back bit for bit (element
// type, shape, device and every bit of the data, for all eleven tensor
// element types, zero-size shapes, byte strings, and content with a
// registered blob serializer). LatestCheckpoint, Checkpoints, Checkpoint,
// DeleteCheckpoint and KeepLast manage them. Resuming training is loading
// the latest checkpoint of a run that saved its parameters, the optimizer's
// state (momentum and the like) and its iteration counter: those are just
// blobs to name.
//
// # Key layout
//
// Ids are written as 20 decimal digits so that byte order is numeric order;
// <gen> is 16 hex digits chosen at random for each save.
//
//	net/<name>                               sealed NetDef bytes (netdef.MarshalNetDef)
//	ckpt/<id>/manifest                       sealed msgpack manifest
//	ckpt/<id>/<gen>/blob/<name>#<chunk>      msgpack blob record, chunk 0, 1, …
//
// A sealed value is the msgpack map {v: format version, b: body, c: CRC32C
// of body}. A blob record is the msgpack map {v: version, k: kind (1 tensor,
// 2 byte string, 3 serialized BlobProto), n: blob name, t: Caffe2 DataType
// number, d: dims, dt/di: device type and id, c: chunk index, b/e: the
// chunk's element range (a byte range for non-tensors), x: the data as raw
// little-endian bytes (bools one byte each), s: the strings of a STRING
// tensor}. A blob whose payload exceeds the chunk size (DefaultChunkBytes,
// 4 MiB, unless ChunkBytes says otherwise; at most 512 KiB in an in-memory
// store) is split into several records; every record repeats the blob's
// name, type, dims and device.
//
// The manifest lists the checkpoint's id, iteration, time, generation, and
// per blob its name, kind, type, dims, device, payload size, chunk count and
// the CRC32C (Castagnoli) of its records concatenated in chunk order and of
// each record.
//
// In a store on disk, the payloads of 64 KiB and more (but STRING tensors')
// do not go into records: each save writes them, raw and little-endian,
// one after another at page-aligned offsets, into one data file,
// <store>/data/<id>-<generation>.data, with large sequential writes and one
// fsync before the manifest is committed, and a load reads them straight
// into the new tensors. The manifest then gives each payload's offset, and
// the CRC32C of the payload and of each piece of it (the chunk size). This
// reaches the disk's sequential bandwidth, which badger's value log fell
// well short of (BenchmarkCheckpointVsDisk). Every save on disk writes a
// data file, and the file ends with a trailer that holds a copy of the
// save's records and of its sealed manifest, so that a checkpoint whose
// data file is intact survives damage to badger's files (see Repair). The
// file is named <id>-<generation>.pending until the manifest is committed,
// and .deleted once a newer save or a delete retires it.
//
// # Crash safety
//
// The manifest is the commit point. A checkpoint of up to 256 MiB is written
// as one badger transaction, records first and manifest last; a bigger one,
// or one badger finds too big for a transaction (badger counts records of
// 64 KiB and more, which it keeps in its value log, as pointers, but the
// smaller ones in full, up to about 2.4 MiB), is staged: records in
// transactions of about 64 MiB, then the manifest. The
// records of every save go under a fresh generation, so re-saving an id
// never touches the records the current manifest names; the old
// generation's records are deleted only after the new manifest is
// committed. Deletion removes the manifest first. A process killed at any
// moment therefore leaves every checkpoint that had its manifest complete
// and loadable; Open removes the records and data files that no manifest
// names, and finishes the renaming of data files. Loading
// checks every record against the manifest and its checksum and changes the
// workspace only when all pass. Damage is reported as an error wrapping
// ErrCorrupt, naming the store, checkpoint, blob and chunk; the store stays
// usable.
//
// # Damage
//
// Open reads badger's files before badger opens them (badger crashes the
// process on some damaged files and silently drops data on others) and
// refuses a store with a damaged file, or with a committed data file that
// no manifest names (a commit badger lost), with an error wrapping
// ErrCorrupt that names the files; it changes nothing then. Check reports
// which checkpoints and nets of such a store are intact, and Repair
// salvages them into fresh badger files (caffe2go store check and repair):
// a checkpoint is recovered from what is intact in badger's files, or
// else from the trailer of its data file. Nets have no second copy.

package persist
