package persist

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// The operators Save, Load, Checkpoint (and Snapshot) and DBExists, after
// Caffe2's caffe2/operators/load_save_op.{h,cc}.

func init() {
	saveArgs := []operators.ArgSpec{
		{Name: "db_type", Default: DefaultDBType, Doc: "DB type: \"badger\", \"minidb\", \"leveldb\" or \"lmdb\" (Caffe2 requires it; here it defaults to badger)"},
		{Name: "absolute_path", Default: int64(0), Doc: "when 0, a relative db path resolves against the workspace root folder"},
		{Name: "strip_prefix", Default: "", Doc: "a blob name containing it is saved as what follows its first occurrence"},
		{Name: "blob_name_overrides", Doc: "names to save the inputs under, one per input (excludes strip_prefix)"},
		{Name: "chunk_size", Default: int64(blob.DefaultChunkSize), Doc: "elements per tensor chunk record; 0 = no chunking, -1 = the default"},
	}
	// Save, Checkpoint and Load serve every device: serialization copies
	// tensors from a device's memory, and Load deserializes onto the
	// operator's device (or each tensor's own with keep_device), as
	// Caffe2's CUDA registrations of them do.
	operators.MustRegisterAnyDevice(operators.Schema{
		Type: "Save", MinInputs: 1, MaxInputs: operators.Unbounded, MinOutputs: 0, MaxOutputs: 0,
		InputsCanCrossDevices: true,
		Args:                  append([]operators.ArgSpec{{Name: "db", Doc: "the DB to write (required); it is created or truncated"}}, saveArgs...),
		Doc: "Saves the input blobs into a DB: each tensor as one BlobProto record per chunk, keyed name#%k, " +
			"other blobs as one record keyed by name.",
	}, newSaveOp)
	operators.MustRegisterGradientForbidden("Save")

	for _, typ := range []string{"Checkpoint", "Snapshot"} {
		operators.MustRegisterAnyDevice(operators.Schema{
			Type: typ, MinInputs: 1, MaxInputs: operators.Unbounded, MinOutputs: 0, MaxOutputs: 0,
			InputsCanCrossDevices: true, CPUInputs: []int{0}, // the counter
			Args: append([]operators.ArgSpec{
				{Name: "db", Doc: "a printf pattern with one integer conversion, e.g. \"ckpt_%08d.db\" (required)"},
				{Name: "every", Default: int64(1), Doc: "save when iter % every == 0 (must be > 0)"},
			}, saveArgs...),
			Doc: "Input 0 is an int64 iteration counter; when it is a multiple of 'every', saves all inputs " +
				"(the counter included) like Save into the DB named by formatting the 'db' pattern with it.",
		}, newCheckpointOp)
		operators.MustRegisterGradientForbidden(typ)
	}

	operators.MustRegisterAnyDevice(operators.Schema{
		Type: "Load", MinInputs: 0, MaxInputs: operators.Unbounded, MinOutputs: 0, MaxOutputs: operators.Unbounded,
		DynamicOutputDevices: true, // keep_device places each tensor where it was saved
		Args: []operators.ArgSpec{
			{Name: "db", Doc: "the DB to read (without DBReader inputs)"},
			{Name: "dbs", Doc: "several DBs to read (wins over db)"},
			{Name: "db_type", Default: DefaultDBType, Doc: "DB type"},
			{Name: "absolute_path", Default: int64(0), Doc: "when 0, relative db paths resolve against the workspace root folder"},
			{Name: "add_prefix", Default: "", Doc: "prepended to every blob name taken from a key"},
			{Name: "strip_prefix", Default: "", Doc: "a key's blob name keeps what follows the first occurrence of it"},
			{Name: "source_blob_names", Doc: "the names in the DB of the outputs, one per output"},
			{Name: "load_all", Default: int64(0), Doc: "load every record into a blob named after it, creating it; the outputs are ignored"},
			{Name: "keep_device", Default: int64(0), Doc: "keep each tensor's stored device instead of the operator's"},
			{Name: "allow_incomplete", Default: int64(0), Doc: "do not fail when some outputs are not in the DBs"},
		},
		Doc: "Loads blobs from DBs written by Save (or from DBReader inputs), reassembling chunked tensors.",
	}, newLoadOp)
	operators.MustRegisterNoGradient("Load")

	operators.MustRegisterCPU(operators.Schema{
		Type: "DBExists", MinInputs: 0, MaxInputs: 0, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "db_name", Doc: "the DB path"},
			{Name: "db_type", Default: DefaultDBType, Doc: "DB type"},
			{Name: "absolute_path", Default: int64(0), Doc: "when 0, a relative path resolves against the workspace root folder"},
		},
		Doc: "Outputs a bool scalar: whether the DB can be opened for reading.",
	}, newDBExistsOp)
	operators.MustRegisterGradientForbidden("DBExists")
}

// resolvePath returns where the DB named db lives: db itself when it is
// absolute or absolute is set, else db under the workspace root folder.
func resolvePath(ws operators.Workspace, db string, absolute bool) string {
	if absolute || filepath.IsAbs(db) {
		return db
	}
	root := "."
	if ws != nil && ws.RootFolder() != "" {
		root = ws.RootFolder()
	}
	return filepath.Join(root, db)
}

// dbTypeArg reads db_type, which may not be given as "".
func dbTypeArg(b *operators.Base) (string, error) {
	t := b.ArgString("db_type", DefaultDBType)
	if t == "" {
		return "", b.Errorf("Must specify a db type.")
	}
	return t, nil
}

// saveSpec is what Save and Checkpoint read from their arguments: where and
// how to write, and the name each input is saved under.
type saveSpec struct {
	dbType    string
	absolute  bool
	names     []string
	chunkSize int
}

func newSaveSpec(b *operators.Base) (*saveSpec, error) {
	dbType, err := dbTypeArg(b)
	if err != nil {
		return nil, err
	}
	s := &saveSpec{dbType: dbType, absolute: b.ArgBool("absolute_path", false)}
	switch cs := b.ArgInt("chunk_size", blob.DefaultChunkSize); {
	case cs == 0:
		s.chunkSize = blob.NoChunking
	case cs == -1:
		s.chunkSize = blob.DefaultChunkSize
	case cs > 0 && cs <= 1<<40:
		s.chunkSize = int(cs)
	default:
		return nil, b.Errorf("invalid chunk_size %d: want > 0, 0 (no chunking) or -1 (the default)", cs)
	}
	strip := b.ArgString("strip_prefix", "")
	overrides := b.ArgStrings("blob_name_overrides", nil)
	inputs := b.Def().GetInput()
	switch {
	case len(overrides) > 0:
		if strip != "" {
			return nil, b.Errorf("strip_prefix and blob_name_overrides are mutually exclusive.")
		}
		if len(overrides) != len(inputs) {
			return nil, b.Errorf("Number of blobs and blob_name_overrides mismatch. (%d inputs, %d overrides)", len(inputs), len(overrides))
		}
		s.names = overrides
	default:
		s.names = make([]string, len(inputs))
		for i, name := range inputs {
			if _, after, found := strings.Cut(name, strip); strip != "" && found {
				name = after
			}
			s.names[i] = name
		}
	}
	seen := make(map[string]bool, len(s.names))
	for i, name := range s.names {
		if name == "" {
			return nil, b.Errorf("input %d (%q) would be saved under an empty name", i, inputs[i])
		}
		if strings.Contains(name, blob.ChunkSeparator) {
			return nil, b.Errorf("input %d (%q) would be saved under %q, which contains the chunk separator %q", i, inputs[i], name, blob.ChunkSeparator)
		}
		if seen[name] {
			return nil, b.Errorf("Duplicated input: %s", name)
		}
		seen[name] = true
	}
	return s, nil
}

// save writes the inputs of b into a new DB at path.
func (s *saveSpec) save(b *operators.Base, path string) error {
	db, err := OpenDB(s.dbType, path, ModeNew)
	if err != nil {
		return fmt.Errorf("Cannot open db for writing: %s: %w", path, err)
	}
	for i, name := range s.names {
		if err := saveBlobToDB(db, name, b.InputBlob(i), s.chunkSize); err != nil {
			db.Close()
			return fmt.Errorf("saving input %d (%q) to %s DB %s: %w", i, b.InputName(i), s.dbType, path, err)
		}
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("saving to %s DB %s: %w", s.dbType, path, err)
	}
	return nil
}

// marshalDeterministic marshals m deterministically (fields in number order).
func marshalDeterministic(m proto.Message) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// saveBlobToDB writes the records of one blob: a tensor as one BlobProto per
// chunk of chunkSize elements (keys name#%k), anything else as the one
// BlobProto its serializer makes (key name). Each record is put and
// committed in its own transaction, as Caffe2's Save does.
func saveBlobToDB(db DB, name string, b *blob.Blob, chunkSize int) error {
	if t := b.Tensor(); t != nil {
		chunks, err := blob.TensorChunksToProtos(name, t, chunkSize)
		if err != nil {
			return err
		}
		for k, tp := range chunks {
			data, err := marshalDeterministic(&netdef.BlobProto{Name: proto.String(name), Type: proto.String("Tensor"), Tensor: tp})
			if err != nil {
				return fmt.Errorf("blob %q: marshal chunk %d: %v", name, k, err)
			}
			chunks[k] = nil // let the chunk's copy of the data go
			if err := putDBRecord(db, blob.ChunkKey(name, k), data); err != nil {
				return err
			}
		}
		return nil
	}
	bp, err := blob.BlobToProto(name, b)
	if err != nil {
		return err
	}
	data, err := marshalDeterministic(bp)
	if err != nil {
		return fmt.Errorf("blob %q: marshal: %v", name, err)
	}
	return putDBRecord(db, name, data)
}

// putRecord writes one record in its own transaction.
func putDBRecord(db DB, key string, value []byte) error {
	txn, err := db.NewTransaction()
	if err != nil {
		return err
	}
	if err := txn.Put(key, value); err != nil {
		txn.Close()
		return err
	}
	if err := txn.Commit(); err != nil {
		txn.Close()
		return err
	}
	return txn.Close()
}

// saveOp is Save.
type saveOp struct {
	*operators.Base
	spec *saveSpec
	path string
}

func newSaveOp(b *operators.Base) (operators.Operator, error) {
	db := b.ArgString("db", "")
	if db == "" {
		return nil, b.Errorf("Must specify a db name.")
	}
	spec, err := newSaveSpec(b)
	if err != nil {
		return nil, err
	}
	return &saveOp{Base: b, spec: spec, path: resolvePath(b.Workspace(), db, spec.absolute)}, nil
}

// Run writes the inputs into a new DB.
func (o *saveOp) Run() error { return o.spec.save(o.Base, o.path) }

// checkpointOp is Checkpoint (and Snapshot): a Save every 'every'
// iterations into a DB named after the iteration.
type checkpointOp struct {
	*operators.Base
	spec    *saveSpec
	pattern string
	every   int64
}

func newCheckpointOp(b *operators.Base) (operators.Operator, error) {
	pattern := b.ArgString("db", "")
	if pattern == "" {
		return nil, b.Errorf("Must specify a checkpoint file pattern.")
	}
	if _, err := formatIterPattern(pattern, 0); err != nil {
		return nil, b.Errorf("%v", err)
	}
	every := b.ArgInt("every", 1)
	if every <= 0 {
		return nil, b.Errorf("Checkpoint interval should be positive, got every=%d.", every)
	}
	spec, err := newSaveSpec(b)
	if err != nil {
		return nil, err
	}
	return &checkpointOp{Base: b, spec: spec, pattern: pattern, every: every}, nil
}

// Run saves the inputs when the iteration is a multiple of every.
func (o *checkpointOp) Run() error {
	t, err := o.InputOf(0, blob.Int64)
	if err != nil {
		return o.Errorf("the iteration counter: %v", err)
	}
	if t.Size() < 1 {
		return o.Errorf("the iteration counter %q is empty (%v)", o.InputName(0), t)
	}
	iter := blob.Data[int64](t)[0]
	if iter%o.every != 0 {
		return nil
	}
	name, err := formatIterPattern(o.pattern, iter)
	if err != nil {
		return o.Errorf("%v", err)
	}
	if err := o.spec.save(o.Base, resolvePath(o.Workspace(), name, o.spec.absolute)); err != nil {
		return o.Errorf("checkpoint at iteration %d: %v", iter, err)
	}
	return nil
}

// formatIterPattern formats a C printf pattern with at most one integer
// conversion (%d, %i, %u, %x, %X or %o with flags, width, precision and
// length modifiers such as %08d or %lld) with iter; "%%" is a percent sign.
func formatIterPattern(pattern string, iter int64) (string, error) {
	var sb strings.Builder
	conversions := 0
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' {
			sb.WriteByte(c)
			continue
		}
		j := i + 1
		if j < len(pattern) && pattern[j] == '%' {
			sb.WriteByte('%')
			i = j
			continue
		}
		spec := []byte{'%'}
		for j < len(pattern) && strings.IndexByte("-+ #0", pattern[j]) >= 0 {
			spec = append(spec, pattern[j])
			j++
		}
		for j < len(pattern) && (pattern[j] >= '0' && pattern[j] <= '9' || pattern[j] == '.') {
			spec = append(spec, pattern[j])
			j++
		}
		for j < len(pattern) && strings.IndexByte("hljztq", pattern[j]) >= 0 {
			j++ // C length modifiers mean nothing for a Go int64
		}
		if j >= len(pattern) {
			return "", fmt.Errorf("db pattern %q ends inside a conversion", pattern)
		}
		switch verb := pattern[j]; verb {
		case 'd', 'i', 'u':
			spec = append(spec, 'd')
		case 'x', 'X', 'o':
			spec = append(spec, verb)
		default:
			return "", fmt.Errorf("db pattern %q: unsupported conversion %q (want one integer conversion such as %%08d)", pattern, pattern[i:j+1])
		}
		conversions++
		if conversions > 1 {
			return "", fmt.Errorf("db pattern %q has more than one conversion; it is formatted with the iteration only", pattern)
		}
		fmt.Fprintf(&sb, string(spec), iter)
		i = j
	}
	return sb.String(), nil
}

// loadOp is Load.
type loadOp struct {
	*operators.Base
	dbType          string
	paths           []string
	addPrefix       string
	stripPrefix     string
	loadAll         bool
	keepDevice      bool
	allowIncomplete bool
	outputIndex     map[string]int // DB blob name → output index
}

func newLoadOp(b *operators.Base) (operators.Operator, error) {
	o := &loadOp{
		Base:            b,
		addPrefix:       b.ArgString("add_prefix", ""),
		stripPrefix:     b.ArgString("strip_prefix", ""),
		loadAll:         b.ArgBool("load_all", false),
		keepDevice:      b.ArgBool("keep_device", false),
		allowIncomplete: b.ArgBool("allow_incomplete", false),
	}
	if b.NumInputs() == 0 {
		var err error
		if o.dbType, err = dbTypeArg(b); err != nil {
			return nil, err
		}
		absolute := b.ArgBool("absolute_path", false)
		names := b.ArgStrings("dbs", nil)
		if len(names) == 0 {
			db := b.ArgString("db", "")
			if db == "" {
				return nil, b.Errorf("Must specify a db name.")
			}
			names = []string{db}
		}
		seen := map[string]bool{}
		for _, n := range names {
			if n == "" {
				return nil, b.Errorf("Db name should not be empty.")
			}
			if seen[n] {
				return nil, b.Errorf("Duplicated db name: %s", n)
			}
			seen[n] = true
			o.paths = append(o.paths, resolvePath(b.Workspace(), n, absolute))
		}
	}
	sources := b.ArgStrings("source_blob_names", nil)
	if len(sources) > 0 {
		if len(sources) != b.NumOutputs() {
			return nil, b.Errorf("Number of output blobs and source_blob_names mismatch. (%d outputs, %d source_blob_names)", b.NumOutputs(), len(sources))
		}
		if o.stripPrefix != "" {
			return nil, b.Errorf("strip_prefix and source_blob_names are mutually exclusive.")
		}
		if o.loadAll {
			return nil, b.Errorf("cannot load_all_ while using source_blob_names.")
		}
	}
	if !o.loadAll {
		if len(sources) == 0 {
			sources = b.Def().GetOutput()
		}
		o.outputIndex = make(map[string]int, len(sources))
		for i, n := range sources {
			if _, dup := o.outputIndex[n]; dup {
				return nil, b.Errorf("Duplicated source blob name: %s", n)
			}
			o.outputIndex[n] = i
		}
	}
	return o, nil
}

// loadBlobState tracks what has been read of one blob (Caffe2's BlobState).
type loadBlobState struct {
	isTensor       bool
	total, current int64
	// tensors: the type and dims of the first chunk
	dtype netdef.TensorProto_DataType
	dims  []int64
	// non-tensor blobs split with content_num_chunks: the parts so far
	parts map[int32][]byte
	proto *netdef.BlobProto // the first part, for name and type
}

// loadRun is the state of one run of Load.
type loadRun struct {
	o      *loadOp
	states map[string]*loadBlobState
	dbOf   map[string]int // blob name → index of the DB it came from
	loaded int
}

// Run reads every DB (or DBReader input) and checks that each blob is
// complete and, without load_all or allow_incomplete, that every output
// was found.
func (o *loadOp) Run() error {
	r := &loadRun{o: o, states: map[string]*loadBlobState{}, dbOf: map[string]int{}}
	if o.NumInputs() > 0 {
		for i := range o.NumInputs() {
			reader, ok := o.InputBlob(i).Get().(*DBReader)
			if !ok {
				return o.Errorf("input %d (%q) holds %s, not a DBReader", i, o.InputName(i), o.InputBlob(i).TypeName())
			}
			if err := reader.withCursor(func(c Cursor) error {
				return r.extract(i, reader.String(), c)
			}); err != nil {
				return err
			}
		}
	} else {
		for i, path := range o.paths {
			if err := r.extractDB(i, path); err != nil {
				return err
			}
		}
	}
	names := make([]string, 0, len(r.states))
	for name := range r.states {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if s := r.states[name]; s.current != s.total {
			return o.Errorf("Data size mismatch for blob %s. Expected: %d Read: %d", name, s.total, s.current)
		}
	}
	if o.loadAll || r.loaded == o.NumOutputs() || o.allowIncomplete {
		return nil
	}
	var missing []string
	for i := range o.NumOutputs() {
		if _, ok := r.states[o.OutputName(i)]; !ok {
			missing = append(missing, o.OutputName(i))
		}
	}
	return o.Errorf("Expected to load %d blobs, got %d only. Failed to load blob: %s (from %s)",
		o.NumOutputs(), r.loaded, strings.Join(missing, ", "), r.sources())
}

// sources names the DBs or readers a run reads, for errors.
func (r *loadRun) sources() string {
	if len(r.o.paths) > 0 {
		return r.o.dbType + " DB " + strings.Join(r.o.paths, ", ")
	}
	return strings.Join(r.o.Def().GetInput(), ", ")
}

// extractDB reads the DB at path.
func (r *loadRun) extractDB(dbIndex int, path string) error {
	db, err := OpenDB(r.o.dbType, path, ModeRead)
	if err != nil {
		return r.o.Errorf("Cannot open db for reading: %s: %v", path, err)
	}
	defer db.Close()
	c, err := db.NewCursor()
	if err != nil {
		return r.o.Errorf("%v", err)
	}
	defer c.Close()
	return r.extract(dbIndex, r.o.dbType+" DB "+path, c)
}

// blobName maps a DB key to a blob name: the key up to the first "#%",
// then what follows strip_prefix (when found), then add_prefix in front.
func (o *loadOp) blobName(key string) string {
	name := blob.BlobNameFromKey(key)
	if _, after, found := strings.Cut(name, o.stripPrefix); o.stripPrefix != "" && found {
		name = after
	}
	return o.addPrefix + name
}

// extract reads the records of one DB from the cursor's position on.
func (r *loadRun) extract(dbIndex int, source string, c Cursor) error {
	o := r.o
	for c.Valid() {
		key := c.Key()
		name := o.blobName(key)
		var target *blob.Blob
		if o.loadAll {
			if name == "" {
				return o.Errorf("%s: key %q gives an empty blob name", source, key)
			}
		} else {
			idx, ok := o.outputIndex[name]
			if !ok {
				if err := c.Next(); err != nil {
					return o.Errorf("%v", err)
				}
				continue
			}
			target = o.OutputBlob(idx)
		}
		if prev, seen := r.dbOf[name]; seen && prev != dbIndex {
			return o.Errorf("Duplicate Key %s is found! (key %q of %s; the blob was also in DB %d)", name, key, source, prev)
		}
		r.dbOf[name] = dbIndex
		p := new(netdef.BlobProto)
		if err := proto.Unmarshal(c.Value(), p); err != nil {
			return o.Errorf("Couldn't parse Proto: key %q of %s: %v", key, source, err)
		}
		if !o.keepDevice && p.Tensor != nil {
			p.Tensor.DeviceDetail = o.deviceDetail()
		}
		if target == nil {
			target = o.Workspace().CreateBlob(name)
		}
		if err := r.process(target, p, name); err != nil {
			return o.Errorf("key %q of %s: %v", key, source, err)
		}
		if !o.loadAll && r.loaded == o.NumOutputs() {
			return nil
		}
		if err := c.Next(); err != nil {
			return o.Errorf("%v", err)
		}
	}
	return nil
}

// deviceDetail is the device a loaded tensor is placed on without
// keep_device: the operator's own.
func (o *loadOp) deviceDetail() *netdef.DeviceOption {
	d := o.Def().GetDeviceOption()
	return netdef.NewDeviceOption(d.Type(), d.GetDeviceId())
}

// process applies one record to its blob (Caffe2's ProcessBlob).
func (r *loadRun) process(b *blob.Blob, p *netdef.BlobProto, name string) error {
	st := r.states[name]
	if p.ContentNumChunks != nil {
		return r.processPart(b, p, name, st)
	}
	if p.Tensor == nil {
		if st != nil {
			return fmt.Errorf("Blob duplicated: %s", name)
		}
		b.Reset()
		if err := blob.BlobFromProto(p, b); err != nil {
			return err
		}
		r.states[name] = &loadBlobState{}
		r.loaded++
		return nil
	}
	tp := p.Tensor
	if st != nil {
		switch {
		case !st.isTensor:
			return fmt.Errorf("Must be tensor %s (an earlier record of it was not)", name)
		case st.current >= st.total:
			return fmt.Errorf("Found an extra part for an already filled tensor: %s", name)
		case tp.Segment == nil:
			return fmt.Errorf("Partial tensor must have a segment: %s", name)
		case tp.GetDataType() != st.dtype || !slices.Equal(tp.GetDims(), st.dims):
			return fmt.Errorf("chunk of tensor %s has type %v and dims %v, its first chunk %v and %v",
				name, tp.GetDataType(), tp.GetDims(), st.dtype, st.dims)
		}
	} else {
		b.Reset() // a fresh tensor, on the device of the first chunk
	}
	if err := blob.BlobFromProto(p, b); err != nil {
		return err
	}
	t := b.Tensor()
	part := int64(t.Size())
	if seg := tp.GetSegment(); seg != nil {
		part = seg.GetEnd() - seg.GetBegin()
	}
	if st == nil {
		st = &loadBlobState{isTensor: true, total: int64(t.Size()), dtype: tp.GetDataType(), dims: tp.GetDims()}
		r.states[name] = st
	}
	st.current += part
	if st.current > st.total {
		return fmt.Errorf("Tensor parts are bigger than target size for tensor: %s (%d elements read, %d expected)", name, st.current, st.total)
	}
	if st.current == st.total {
		r.loaded++
	}
	return nil
}

// processPart collects one part of a non-tensor blob split with
// content_num_chunks; the blob is deserialized from the joined content once
// every part is there.
func (r *loadRun) processPart(b *blob.Blob, p *netdef.BlobProto, name string, st *loadBlobState) error {
	if p.Tensor != nil {
		return fmt.Errorf("Proto with content_chunks can not store tensor: %s", name)
	}
	n, id := p.GetContentNumChunks(), p.GetContentChunkId()
	if st == nil {
		if n <= 0 {
			return fmt.Errorf("blob %s: content_num_chunks is %d, must be > 0", name, n)
		}
		b.Reset()
		st = &loadBlobState{total: int64(n), parts: map[int32][]byte{}, proto: p}
		r.states[name] = st
	} else if st.parts == nil {
		return fmt.Errorf("Blob duplicated: %s", name)
	} else if st.current >= st.total {
		return fmt.Errorf("Found an extra part for an already filled blob: %s", name)
	}
	if n != int32(st.total) {
		return fmt.Errorf("blob %s: part %d says content_num_chunks %d, an earlier part %d", name, id, n, st.total)
	}
	if id < 0 || int64(id) >= st.total {
		return fmt.Errorf("Chunk id has to be not less than 0 and less than content_num_chunks for key: %s (id %d, %d chunks)", name, id, st.total)
	}
	if _, dup := st.parts[id]; dup {
		return fmt.Errorf("Chunk with the same id has occurred twice for: %s (id %d)", name, id)
	}
	st.parts[id] = p.GetContent()
	st.current++
	if st.current < st.total {
		return nil
	}
	var content []byte
	for i := range int32(st.total) {
		content = append(content, st.parts[i]...)
	}
	whole := &netdef.BlobProto{Name: st.proto.Name, Type: st.proto.Type, Content: content}
	if err := blob.BlobFromProto(whole, b); err != nil {
		return err
	}
	r.loaded++
	return nil
}

// dbExistsOp is DBExists.
type dbExistsOp struct {
	*operators.Base
	dbType string
	path   string
}

func newDBExistsOp(b *operators.Base) (operators.Operator, error) {
	dbType, err := dbTypeArg(b)
	if err != nil {
		return nil, err
	}
	name := b.ArgString("db_name", "")
	if name == "" {
		return nil, b.Errorf("Must specify a db_name.")
	}
	return &dbExistsOp{Base: b, dbType: dbType, path: resolvePath(b.Workspace(), name, b.ArgBool("absolute_path", false))}, nil
}

// Run outputs whether the DB opens for reading.
func (o *dbExistsOp) Run() error {
	y := o.Output(0)
	if err := y.Init(blob.Bool); err != nil {
		return err
	}
	blob.Data[bool](y)[0] = DBExists(o.dbType, o.path)
	return nil
}
