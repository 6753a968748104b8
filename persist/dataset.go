package persist

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Datasets: DBReader, the CreateDB and TensorProtosDBInput operators, and
// the TensorProtos writer (the roles LMDB/LevelDB and their readers play in
// Caffe and Caffe2).

func init() {
	blob.MustRegisterBlobSerializer(dbReaderTypeName, dbReaderSerializer{})

	operators.MustRegisterCPU(operators.Schema{
		Type: "CreateDB", MinInputs: 0, MaxInputs: 0, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "db", Default: "", Doc: "the DB path"},
			{Name: "db_type", Default: DefaultDBType, Doc: "DB type (Caffe2's default is leveldb; here badger)"},
			{Name: "absolute_path", Default: int64(0), Doc: "when 0, a relative db path resolves against the workspace root folder"},
			{Name: "num_shards", Default: int64(1), Doc: "split the records into this many shards"},
			{Name: "shard_id", Default: int64(0), Doc: "read record shard_id, shard_id + num_shards, … (0 ≤ shard_id < num_shards)"},
			{Name: "shuffle", Default: int64(0), Doc: "read the shard's records in a new random order every epoch (needs a DB type that can seek: badger, leveldb or lmdb)"},
			{Name: "seed", Doc: "seed of the shuffle (default: from the device option's random_seed, else random)"},
		},
		Doc: "Opens a DB for reading and outputs a DBReader over it: a cursor that wraps around at the end.",
	}, newCreateDBOp)
	operators.MustRegisterNoGradient("CreateDB")

	operators.MustRegisterCPU(operators.Schema{
		Type: "TensorProtosDBInput", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: operators.Unbounded,
		Args: []operators.ArgSpec{
			{Name: "batch_size", Default: int64(0), Doc: "records per batch; 0 = one record, without a batch dimension"},
		},
		Doc: "Reads batch_size records from the DBReader input. Each value is a serialized TensorProtos with one " +
			"proto per output; output i stacks the i-th protos of the records along a new first dimension.",
	}, newTensorProtosDBInputOp)
	operators.MustRegisterNoGradient("TensorProtosDBInput")
}

// dbReaderTypeName is the blob type name of a DBReader.
const dbReaderTypeName = "DBReader"

// DBReaderOptions configures a DBReader.
type DBReaderOptions struct {
	// NumShards splits the records into shards (0 means 1): shard s holds
	// records s, s + NumShards, s + 2·NumShards, … in DB order, so readers
	// with the same NumShards and different ShardIDs read disjoint records.
	NumShards int
	// ShardID is the shard this reader reads, 0 ≤ ShardID < NumShards.
	ShardID int
	// Shuffle reads the shard's records in a new random order every epoch
	// (a pass over the shard). It needs a DB type whose cursor can seek
	// (badger) and keeps the shard's keys in memory.
	Shuffle bool
	// Seed seeds the shuffle: epoch e uses the permutation drawn from
	// (Seed, e), so a reader with the same seed repeats the same orders.
	Seed uint64
}

// DBReader reads the records of a DB in a loop: at the end it wraps around
// to the first record of its shard. It is what a CreateDB blob holds (blob
// type "DBReader"), and it is safe for concurrent use: operators reading the
// same reader get disjoint records.
type DBReader struct {
	mu     sync.Mutex
	dbType string
	source string
	opts   DBReaderOptions
	db     DB
	cursor Cursor
	value  []byte // the last record's value

	// with Shuffle
	keys  []string // the shard's keys, in DB order
	order []string // this epoch's order
	pos   int      // next index into order
	epoch uint64
}

// NewDBReader opens the DB of type dbType at source for reading.
func NewDBReader(dbType, source string, opts DBReaderOptions) (*DBReader, error) {
	r := &DBReader{}
	if err := r.open(dbType, source, opts); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(r, (*DBReader).Close)
	return r, nil
}

// open opens the DB and positions the reader at its shard's first record.
// r.mu is held or r is not shared yet.
func (r *DBReader) open(dbType, source string, opts DBReaderOptions) error {
	if opts.NumShards == 0 {
		opts.NumShards = 1
	}
	if opts.NumShards < 0 || opts.ShardID < 0 || opts.ShardID >= opts.NumShards {
		return fmt.Errorf("DBReader %s: invalid shard %d of %d (want 0 ≤ shard_id < num_shards)", source, opts.ShardID, opts.NumShards)
	}
	db, err := OpenDB(dbType, source, ModeRead)
	if err != nil {
		return err
	}
	c, err := db.NewCursor()
	if err != nil {
		db.Close()
		return err
	}
	r.dbType, r.source, r.opts, r.db, r.cursor = dbType, source, opts, db, c
	r.keys, r.order, r.pos, r.epoch = nil, nil, 0, 0
	if opts.Shuffle {
		err = r.collectKeys()
	} else {
		err = r.moveToBeginning()
	}
	if err != nil {
		r.closeLocked()
		return err
	}
	return nil
}

// collectKeys reads the keys of the shard and draws epoch 0's order.
func (r *DBReader) collectKeys() error {
	if !r.cursor.SupportsSeek() {
		return fmt.Errorf("%s: shuffle needs a DB type whose cursor can seek; %s cannot", r, r.dbType)
	}
	var err error
	for i := 0; err == nil && r.cursor.Valid(); i++ {
		if i%r.opts.NumShards == r.opts.ShardID {
			r.keys = append(r.keys, r.cursor.Key())
		}
		err = r.cursor.Next()
	}
	if err != nil {
		return err
	}
	if len(r.keys) == 0 {
		return fmt.Errorf("%s: the DB has no records for this shard", r)
	}
	r.order = slices.Clone(r.keys)
	r.shuffle()
	return nil
}

// shuffle draws this epoch's order.
func (r *DBReader) shuffle() {
	copy(r.order, r.keys)
	rng := rand.New(rand.NewPCG(r.opts.Seed, r.epoch))
	rng.Shuffle(len(r.order), func(i, j int) { r.order[i], r.order[j] = r.order[j], r.order[i] })
	r.pos = 0
}

// moveToBeginning puts the cursor on the shard's first record (Caffe2's
// DBReader::MoveToBeginning).
func (r *DBReader) moveToBeginning() error {
	if err := r.cursor.SeekToFirst(); err != nil {
		return err
	}
	for s := 0; s < r.opts.ShardID; s++ {
		if err := r.cursor.Next(); err != nil {
			return err
		}
		if !r.cursor.Valid() {
			return fmt.Errorf("%s: Db has fewer rows than shard id: %d records, shard_id %d", r, s+1, r.opts.ShardID)
		}
	}
	return nil
}

// String describes the reader: DB type, path and shard.
func (r *DBReader) String() string {
	s := fmt.Sprintf("DBReader(%s DB %s", r.dbType, r.source)
	if r.opts.NumShards > 1 {
		s += fmt.Sprintf(", shard %d of %d", r.opts.ShardID, r.opts.NumShards)
	}
	if r.opts.Shuffle {
		s += ", shuffled"
	}
	return s + ")"
}

// BlobTypeName returns "DBReader", the blob type name Caffe2 gives it.
func (r *DBReader) BlobTypeName() string { return dbReaderTypeName }

// DBType returns the type of the DB being read.
func (r *DBReader) DBType() string { return r.dbType }

// Source returns the path of the DB being read.
func (r *DBReader) Source() string { return r.source }

// Read returns the next record of the reader's shard (a copy the caller
// owns), wrapping around to the shard's first record after its last.
func (r *DBReader) Read() (key string, value []byte, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key, v, err := r.next()
	if err != nil {
		return "", nil, err
	}
	return key, slices.Clone(v), nil
}

// next returns the next record; the value is r.value, valid until the next
// call. r.mu is held.
func (r *DBReader) next() (string, []byte, error) {
	if r.cursor == nil {
		return "", nil, fmt.Errorf("%s: the reader is closed", r)
	}
	if r.opts.Shuffle {
		key := r.order[r.pos]
		if err := r.cursor.Seek(key); err != nil {
			return "", nil, err
		}
		if !r.cursor.Valid() || r.cursor.Key() != key {
			return "", nil, fmt.Errorf("%s: record %q is no longer in the DB", r, key)
		}
		r.value = append(r.value[:0], r.cursor.Value()...)
		if r.pos++; r.pos == len(r.order) {
			r.epoch++
			r.shuffle()
		}
		return key, r.value, nil
	}
	if !r.cursor.Valid() {
		return "", nil, fmt.Errorf("%s: the DB has no records", r)
	}
	key := r.cursor.Key()
	r.value = append(r.value[:0], r.cursor.Value()...)
	for range r.opts.NumShards {
		if err := r.cursor.Next(); err != nil {
			return "", nil, err
		}
		if !r.cursor.Valid() {
			if err := r.moveToBeginning(); err != nil {
				return "", nil, err
			}
			break
		}
	}
	return key, r.value, nil
}

// withCursor calls fn with the reader's cursor at the DB's first record
// (shards aside) and then puts the reader back at its shard's beginning;
// Load reads DBReader inputs this way.
func (r *DBReader) withCursor(fn func(Cursor) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cursor == nil {
		return fmt.Errorf("%s: the reader is closed", r)
	}
	if err := r.cursor.SeekToFirst(); err != nil {
		return err
	}
	err := fn(r.cursor)
	if r.opts.Shuffle {
		r.epoch, r.pos = 0, 0
		r.shuffle()
		return err
	}
	if merr := r.moveToBeginning(); err == nil {
		err = merr
	}
	return err
}

// Close closes the DB. Reading afterwards is an error.
func (r *DBReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closeLocked()
}

func (r *DBReader) closeLocked() error {
	if r.cursor == nil {
		return nil
	}
	r.cursor.Close()
	r.cursor = nil
	return r.db.Close()
}

// reopen replaces what r reads by a freshly opened DB (CreateDB run again
// on a blob that holds a reader).
func (r *DBReader) reopen(dbType, source string, opts DBReaderOptions) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.closeLocked(); err != nil {
		return err
	}
	return r.open(dbType, source, opts)
}

// dbReaderSerializer writes a DBReader as Caffe2 does: a BlobProto of type
// "DBReader" whose content is a DBReaderProto{name, source, db_type, key},
// key being the next record's when the cursor can seek. Deserializing
// reopens the DB (unsharded, unshuffled) and seeks to key.
type dbReaderSerializer struct{}

// Serialize implements blob.BlobSerializer.
func (dbReaderSerializer) Serialize(name string, value any) (*netdef.BlobProto, error) {
	r, ok := value.(*DBReader)
	if !ok || r == nil {
		return nil, fmt.Errorf("blob %q: not a DBReader", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &netdef.DBReaderProto{Name: proto.String(name), Source: proto.String(r.source), DbType: proto.String(r.dbType)}
	if r.cursor != nil && r.cursor.SupportsSeek() {
		switch {
		case r.opts.Shuffle:
			p.Key = proto.String(r.order[r.pos])
		case r.cursor.Valid():
			p.Key = proto.String(r.cursor.Key())
		}
	}
	content, err := marshalDeterministic(p)
	if err != nil {
		return nil, fmt.Errorf("blob %q: marshal DBReaderProto: %v", name, err)
	}
	return &netdef.BlobProto{Content: content}, nil
}

// Deserialize implements blob.BlobSerializer.
func (dbReaderSerializer) Deserialize(p *netdef.BlobProto, b *blob.Blob) error {
	var rp netdef.DBReaderProto
	if err := proto.Unmarshal(p.GetContent(), &rp); err != nil {
		return fmt.Errorf("blob %q: Cannot parse content into a DBReaderProto: %v", p.GetName(), err)
	}
	r, err := NewDBReader(rp.GetDbType(), rp.GetSource(), DBReaderOptions{})
	if err != nil {
		return fmt.Errorf("blob %q: %v", p.GetName(), err)
	}
	if rp.Key != nil {
		if !r.cursor.SupportsSeek() {
			r.Close()
			return fmt.Errorf("blob %q: %s: cannot seek to the saved position %q", p.GetName(), r, rp.GetKey())
		}
		if err := r.cursor.Seek(rp.GetKey()); err != nil {
			r.Close()
			return fmt.Errorf("blob %q: %v", p.GetName(), err)
		}
		if !r.cursor.Valid() {
			if err := r.moveToBeginning(); err != nil {
				r.Close()
				return fmt.Errorf("blob %q: %v", p.GetName(), err)
			}
		}
	}
	if old, ok := b.Get().(*DBReader); ok && old != r {
		old.Close()
	}
	b.Set(r)
	return nil
}

// createDBOp is CreateDB.
type createDBOp struct {
	*operators.Base
	dbType string
	path   string
	opts   DBReaderOptions
}

func newCreateDBOp(b *operators.Base) (operators.Operator, error) {
	dbType, err := dbTypeArg(b)
	if err != nil {
		return nil, err
	}
	db := b.ArgString("db", "")
	if db == "" {
		return nil, b.Errorf("Must specify a db name.")
	}
	n, id := b.ArgInt("num_shards", 1), b.ArgInt("shard_id", 0)
	if n < 1 || n > 1<<30 || id < 0 || id >= n {
		return nil, b.Errorf("invalid sharding num_shards=%d shard_id=%d (want num_shards ≥ 1, 0 ≤ shard_id < num_shards)", n, id)
	}
	opts := DBReaderOptions{NumShards: int(n), ShardID: int(id), Shuffle: b.ArgBool("shuffle", false)}
	if opts.Shuffle {
		if b.HasArg("seed") {
			opts.Seed = uint64(b.ArgInt("seed", 0))
		} else {
			opts.Seed = b.Rand().Uint64()
		}
	}
	return &createDBOp{Base: b, dbType: dbType, path: resolvePath(b.Workspace(), db, b.ArgBool("absolute_path", false)), opts: opts}, nil
}

// Run opens the reader, reopening the one the output holds if any.
func (o *createDBOp) Run() error {
	out := o.OutputBlob(0)
	if r, ok := out.Get().(*DBReader); ok {
		if err := r.reopen(o.dbType, o.path, o.opts); err != nil {
			return o.Errorf("%v", err)
		}
		return nil
	}
	r, err := NewDBReader(o.dbType, o.path, o.opts)
	if err != nil {
		return o.Errorf("%v", err)
	}
	out.Set(r)
	return nil
}

// tensorProtosDBInputOp is TensorProtosDBInput. It reads synchronously (no
// prefetch thread) and keeps its outputs' storage from run to run.
type tensorProtosDBInputOp struct {
	*operators.Base
	batchSize int
	msg       netdef.TensorProtos
	scratch   []*blob.Tensor // per output: the current record's tensor
	itemDims  [][]int        // per output: the batch's first record's dims
	shape     []int          // scratch for an output shape
}

func newTensorProtosDBInputOp(b *operators.Base) (operators.Operator, error) {
	bs := b.ArgInt("batch_size", 0)
	if bs < 0 || bs > 1<<30 {
		return nil, b.Errorf("invalid batch_size %d", bs)
	}
	o := &tensorProtosDBInputOp{Base: b, batchSize: int(bs)}
	o.scratch = make([]*blob.Tensor, b.NumOutputs())
	for i := range o.scratch {
		o.scratch[i], _ = blob.New(blob.Float32, 0)
	}
	o.itemDims = make([][]int, b.NumOutputs())
	return o, nil
}

// Run reads one batch while holding the reader, so that operators
// sharing a reader get disjoint records.
func (o *tensorProtosDBInputOp) Run() error {
	r, ok := o.InputBlob(0).Get().(*DBReader)
	if !ok {
		return o.Errorf("input 0 (%q) holds %s, not a DBReader (create it with CreateDB)", o.InputName(0), o.InputBlob(0).TypeName())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	items := max(o.batchSize, 1)
	for item := range items {
		key, value, err := r.next()
		if err != nil {
			return o.Errorf("%v", err)
		}
		if err := proto.Unmarshal(value, &o.msg); err != nil {
			return o.Errorf("%s: record %q is not a serialized TensorProtos: %v", r, key, err)
		}
		if len(o.msg.Protos) != o.NumOutputs() {
			return o.Errorf("%s: record %q holds %d TensorProtos, the operator has %d outputs", r, key, len(o.msg.Protos), o.NumOutputs())
		}
		for i, p := range o.msg.Protos {
			p.DeviceDetail = nil
			if o.batchSize == 0 {
				if _, _, err := blob.ApplyTensorChunk(o.Output(i), p); err != nil {
					return o.Errorf("%s: record %q, proto %d: %v", r, key, i, err)
				}
				continue
			}
			if err := o.addItem(i, item, p); err != nil {
				return o.Errorf("%s: record %q, proto %d: %v", r, key, i, err)
			}
		}
	}
	return nil
}

// addItem writes record item's proto p into batch slot item of output i.
func (o *tensorProtosDBInputOp) addItem(i, item int, p *netdef.TensorProto) error {
	src := o.scratch[i]
	if _, _, err := blob.ApplyTensorChunk(src, p); err != nil {
		return err
	}
	out := o.Output(i)
	if item == 0 {
		o.itemDims[i] = append(o.itemDims[i][:0], src.Dims()...)
		o.shape = append(append(o.shape[:0], o.batchSize), src.Dims()...)
		if err := out.Init(src.DataType(), o.shape...); err != nil {
			return err
		}
	} else if src.DataType() != out.DataType() || !slices.Equal(src.Dims(), o.itemDims[i]) {
		return fmt.Errorf("a %v tensor of dims %v, but the batch's first record has a %v tensor of dims %v",
			src.DataType(), src.Dims(), out.DataType(), o.itemDims[i])
	}
	copyItem(out, src, item)
	return nil
}

// copyItem copies src into slot item of dst, whose first dimension
// indexes items of src's size and type.
func copyItem(dst, src *blob.Tensor, item int) {
	switch src.DataType() {
	case blob.Float32:
		copyItemAt(blob.Data[float32](dst), blob.Data[float32](src), item)
	case blob.Float64:
		copyItemAt(blob.Data[float64](dst), blob.Data[float64](src), item)
	case blob.Float16:
		copyItemAt(blob.Data[blob.Half](dst), blob.Data[blob.Half](src), item)
	case blob.Int8:
		copyItemAt(blob.Data[int8](dst), blob.Data[int8](src), item)
	case blob.Int16:
		copyItemAt(blob.Data[int16](dst), blob.Data[int16](src), item)
	case blob.Int32:
		copyItemAt(blob.Data[int32](dst), blob.Data[int32](src), item)
	case blob.Int64:
		copyItemAt(blob.Data[int64](dst), blob.Data[int64](src), item)
	case blob.Uint8:
		copyItemAt(blob.Data[uint8](dst), blob.Data[uint8](src), item)
	case blob.Uint16:
		copyItemAt(blob.Data[uint16](dst), blob.Data[uint16](src), item)
	case blob.Bool:
		copyItemAt(blob.Data[bool](dst), blob.Data[bool](src), item)
	case blob.String:
		copyItemAt(blob.Data[string](dst), blob.Data[string](src), item)
	}
}

func copyItemAt[T blob.Element](dst, src []T, item int) { copy(dst[item*len(src):], src) }

// writerCommitEvery is how many records a TensorProtosWriter puts per
// transaction.
const writerCommitEvery = 1024

// TensorProtosWriter writes a dataset DB: records whose values are
// serialized TensorProtos, the format TensorProtosDBInput reads. A badger
// DB visits keys in byte order, so keys that should be read in writing
// order must sort that way (mnist.Import uses zero-padded numbers).
type TensorProtosWriter struct {
	dbType, path string
	db           DB
	txn          Transaction
	pending      int
	n            int
	msg          netdef.TensorProtos
}

// NewTensorProtosWriter creates (or empties) the DB of type dbType at path
// for writing.
func NewTensorProtosWriter(dbType, path string) (*TensorProtosWriter, error) {
	db, err := OpenDB(dbType, path, ModeNew)
	if err != nil {
		return nil, err
	}
	return &TensorProtosWriter{dbType: dbType, path: path, db: db}, nil
}

// Put writes one record under key: one TensorProto per tensor, in order
// (the whole tensor, without name or segment). A UINT8 tensor is written
// as Caffe2's image DBs write pixels, data_type BYTE with the elements in
// byte_data (one byte each instead of a varint); it reads back as UINT8.
// Other types use blob.TensorToProto's fields.
func (w *TensorProtosWriter) Put(key string, tensors ...*blob.Tensor) error {
	w.msg.Protos = w.msg.Protos[:0]
	for i, t := range tensors {
		p, err := blob.TensorToProto(fmt.Sprintf("%s[%d]", key, i), t)
		if err != nil {
			return fmt.Errorf("%s DB %s: record %q: %v", w.dbType, w.path, key, err)
		}
		p.Name, p.Segment = nil, nil
		if t.DataType() == blob.Uint8 {
			p.DataType = netdef.TensorProto_BYTE.Enum()
			p.Int32Data = nil
			p.ByteData = slices.Clone(blob.Data[uint8](t))
		}
		w.msg.Protos = append(w.msg.Protos, p)
	}
	return w.PutProtos(key, &w.msg)
}

// PutProtos writes one record under key whose value is protos, serialized.
func (w *TensorProtosWriter) PutProtos(key string, protos *netdef.TensorProtos) error {
	if w.db == nil {
		return fmt.Errorf("%s DB %s: record %q: the writer is closed", w.dbType, w.path, key)
	}
	data, err := marshalDeterministic(protos)
	if err != nil {
		return fmt.Errorf("%s DB %s: record %q: marshal TensorProtos: %v", w.dbType, w.path, key, err)
	}
	if w.txn == nil {
		if w.txn, err = w.db.NewTransaction(); err != nil {
			return err
		}
	}
	if err := w.txn.Put(key, data); err != nil {
		return err
	}
	w.n++
	if w.pending++; w.pending == writerCommitEvery {
		w.pending = 0
		if err := w.txn.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// Len returns the number of records written.
func (w *TensorProtosWriter) Len() int { return w.n }

// Close commits the last records and closes the DB.
func (w *TensorProtosWriter) Close() error {
	if w.db == nil {
		return nil
	}
	var err error
	if w.txn != nil {
		err = w.txn.Close()
		w.txn = nil
	}
	if cerr := w.db.Close(); err == nil {
		err = cerr
	}
	w.db = nil
	return err
}

// WriteTensorProtosDB creates the dataset DB of type dbType at path and
// calls records with a put function that writes one record (see
// TensorProtosWriter.Put). It returns the number of records written; an
// error from records or put stops the writing and is returned.
func WriteTensorProtosDB(dbType, path string, records func(put func(key string, tensors ...*blob.Tensor) error) error) (int, error) {
	w, err := NewTensorProtosWriter(dbType, path)
	if err != nil {
		return 0, err
	}
	if err := records(w.Put); err != nil {
		w.Close()
		return w.Len(), err
	}
	return w.Len(), w.Close()
}
