package persist

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/caffe2go/caffe2go/operators"
	"github.com/dgraph-io/badger/v4"
	"github.com/vmihailenco/msgpack/v5"
)

// CheckpointOption adjusts SaveCheckpoint.
type CheckpointOption func(*checkpointConfig)

type checkpointConfig struct {
	iteration    int64
	hasIteration bool
	chunkBytes   int
	noSync       bool
}

// Iteration records it as the checkpoint's training iteration (by default
// the iteration is the id).
func Iteration(it int64) CheckpointOption {
	return func(c *checkpointConfig) { c.iteration, c.hasIteration = it, true }
}

// ChunkBytes sets the payload size above which a blob is split into
// several records (DefaultChunkBytes when not given); it must be positive.
func ChunkBytes(n int) CheckpointOption {
	return func(c *checkpointConfig) { c.chunkBytes = n }
}

// NoSync skips the fsync that otherwise makes a checkpoint durable before
// SaveCheckpoint returns. The checkpoint is still atomic and survives the
// process being killed, but not necessarily a power loss or an OS crash.
func NoSync() CheckpointOption {
	return func(c *checkpointConfig) { c.noSync = true }
}

// Limits of the write paths (see SaveCheckpoint).
const (
	// singleTxnBytes is the largest payload written in one transaction.
	singleTxnBytes = 256 << 20
	// stagedTxnBytes is the payload per transaction of a staged write.
	stagedTxnBytes = 64 << 20
)

// errNeedStaging makes a single-transaction save start over staged.
var errNeedStaging = errors.New("checkpoint does not fit one transaction")

// SaveCheckpoint saves the named blobs of ws as checkpoint id (≥ 0),
// replacing a checkpoint of that id. Tensors of every element type keep
// their type, shape and device bit for bit; byte strings and content with a
// registered blob serializer are saved too. Each blob becomes one record,
// or several chunk records when its payload exceeds the chunk size, and
// then a manifest (id, iteration, time, and each blob's type, shape, size
// and CRC32C) is written last.
//
// Up to 256 MiB of payload, records and manifest are one badger
// transaction: the checkpoint appears whole or not at all. Bigger
// checkpoints, or ones badger finds too big for a transaction (see the
// package documentation), are staged: the records are committed in
// transactions of about 64 MiB under a fresh generation key, and the
// manifest, committed last, is what makes them a checkpoint. Either way a crash at any moment leaves the previous
// checkpoints (including an older save of the same id) intact, and the
// records of an unfinished save are removed at the next Open. Unless NoSync
// is given, the checkpoint is synced to disk before SaveCheckpoint returns.
//
// To resume training from a checkpoint, name everything the training loop
// reads: the parameters, the optimizer's state (momentum buffers, Adam
// moments, …) and the iteration counter blob (e.g. "iter" or
// "optimizer_iteration"); LoadCheckpoint puts them all back.
//
// The blobs must not be written by running nets while they are saved.
func (s *Store) SaveCheckpoint(ws operators.Workspace, id int64, blobs []string, opts ...CheckpointOption) (err error) {
	defer s.recoverCorrupt(&err, fmt.Sprintf("SaveCheckpoint %d", id))
	cfg := checkpointConfig{chunkBytes: DefaultChunkBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if id < 0 {
		return s.errorf("SaveCheckpoint: checkpoint id %d is negative", id)
	}
	if cfg.chunkBytes <= 0 {
		return s.errorf("SaveCheckpoint %d: chunk size %d must be positive", id, cfg.chunkBytes)
	}
	if ws == nil {
		return s.errorf("SaveCheckpoint %d: nil workspace", id)
	}
	if !cfg.hasIteration {
		cfg.iteration = id
	}
	if s.maxChunk > 0 && cfg.chunkBytes > s.maxChunk {
		cfg.chunkBytes = s.maxChunk
	}
	plans := make([]encodedBlob, len(blobs))
	seen := make(map[string]bool, len(blobs))
	m := &manifestWire{V: manifestVersion, ID: id, Iteration: cfg.iteration, Blobs: make([]blobInfoWire, len(blobs))}
	var recordBytes int64
	for i, name := range blobs {
		if name == "" {
			return s.errorf("SaveCheckpoint %d: blob name %d is empty", id, i)
		}
		if seen[name] {
			return s.errorf("SaveCheckpoint %d: blob %q is listed twice", id, name)
		}
		seen[name] = true
		b := ws.GetBlob(name)
		if b == nil {
			return s.errorf("SaveCheckpoint %d: the workspace has no blob %q", id, name)
		}
		p, err := planBlob(name, b, cfg.chunkBytes)
		if err != nil {
			return s.errorf("SaveCheckpoint %d: %v", id, err)
		}
		plans[i] = p
		m.Blobs[i] = infoWire(p.info)
		if inDataFile(&p, s.fileMin) {
			m.Blobs[i].InFile = true
		} else {
			recordBytes += p.info.Bytes
		}
	}

	done, err := s.useWrite("SaveCheckpoint")
	if err != nil {
		return err
	}
	defer done()
	s.wmu.Lock()
	defer s.wmu.Unlock()

	m.UnixNano, m.Gen = time.Now().UnixNano(), rand.Uint64()
	sv := &save{m: m, plans: plans, noSync: cfg.noSync}
	if s.fileMin > 0 {
		// Pieces hold whole elements of every type, so that a big-endian
		// host can swap them piece by piece.
		piece := max(8, cfg.chunkBytes&^7)
		if sv.df, err = s.createDataFile(m, plans, piece, cfg.noSync); err != nil {
			return s.errorf("SaveCheckpoint %d: %v", id, err)
		}
	}
	err = s.writeCheckpoint(sv, s.stage || recordBytes > singleTxnBytes)
	if errors.Is(err, errNeedStaging) {
		err = nil
		if sv.df != nil {
			err = sv.df.restartTrailer()
		}
		if err == nil {
			err = s.writeCheckpoint(sv, true)
		}
	}
	if err != nil {
		// Best effort: the next Open removes what is left.
		s.abandon(sv)
		return s.errorf("SaveCheckpoint %d: %v", id, err)
	}
	if !cfg.noSync {
		if err := s.db.Sync(); err != nil {
			return s.errorf("SaveCheckpoint %d: syncing: %v", id, err)
		}
	}
	if sv.df != nil {
		// Not synced: a rename that is lost is redone by the next Open.
		if err := s.renameDataFile(id, m.Gen, statePending, stateData, false); err != nil {
			return s.errorf("SaveCheckpoint %d: %v (the checkpoint is saved; the next Open renames the file)", id, err)
		}
	}
	// The records and data file of an older save of this id are garbage
	// now.
	removed, err := s.tidy(id, m.Gen)
	if err != nil {
		return s.errorf("SaveCheckpoint %d: removing the records of the previous save of this id: %v", id, err)
	}
	if removed {
		s.collectGarbage()
	}
	return nil
}

// save is a checkpoint save in progress.
type save struct {
	m      *manifestWire
	plans  []encodedBlob
	df     *dataFile // nil in memory
	noSync bool
	// retired is set when the data file of the save this one replaces was
	// renamed to .deleted; retiredGen is its generation.
	retired    bool
	retiredGen uint64
}

// writeCheckpoint writes the records of the blobs not in the data file and
// then the manifest, in one transaction or staged, filling in the records'
// checksums; the data file's trailer gets a copy of both. Before the
// manifest is committed, the data file is synced and the previous save's
// is renamed to .deleted (see the data files' states).
func (s *Store) writeCheckpoint(sv *save, staged bool) error {
	m := sv.m
	w := &ckptWriter{db: s.db, staged: staged, limit: s.stagedBytes}
	defer w.discard()
	for i, p := range sv.plans {
		if m.Blobs[i].InFile {
			continue
		}
		var crc uint32
		chunkCRCs := make([]uint32, p.info.Chunks)
		for c := 0; c < p.info.Chunks; c++ {
			v, err := p.next(c)
			if err != nil {
				return fmt.Errorf("encoding blob %q chunk %d: %v", p.info.Name, c, err)
			}
			crc = crc32.Update(crc, castagnoli, v)
			chunkCRCs[c] = crc32.Checksum(v, castagnoli)
			key := recordKey(m.ID, m.Gen, p.info.Name, c)
			if err := w.put(key, v); err != nil {
				return err
			}
			if sv.df != nil {
				if err := sv.df.addRecord(key, v); err != nil {
					return err
				}
			}
		}
		m.Blobs[i].CRC, m.Blobs[i].Chunk = crc, chunkCRCs
	}
	body, err := msgpack.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding the manifest: %v", err)
	}
	v, err := seal(body)
	if err != nil {
		return fmt.Errorf("encoding the manifest: %v", err)
	}
	if err := w.put(manifestKey(m.ID), v); err != nil {
		return err
	}
	if sv.df != nil {
		if err := sv.df.finish(v); err != nil {
			return err
		}
		if err := s.retire(sv); err != nil {
			return err
		}
		// The new file and the rename are durable before the manifest
		// is: a .data file no manifest names is taken for a commit that
		// badger lost.
		if !sv.noSync {
			if err := syncDir(sv.df.dir); err != nil {
				return fmt.Errorf("syncing the directory %s: %v", sv.df.dir, err)
			}
		}
	}
	return w.commit()
}

// retire renames the data file of the save that sv replaces, if it has
// one, to .deleted.
func (s *Store) retire(sv *save) error {
	var old *manifestWire
	_ = s.db.View(func(txn *badger.Txn) error {
		old, _ = readManifest(txn, sv.m.ID)
		return nil
	})
	if old == nil || old.DataBytes == 0 {
		return nil
	}
	path := filepath.Join(s.path, dataDirName, dataFileName(old.ID, old.Gen))
	if _, err := os.Stat(path); err != nil {
		return nil // missing already: the load of the old save fails anyway
	}
	if err := s.renameDataFile(old.ID, old.Gen, stateData, stateDeleted, false); err != nil {
		return err
	}
	sv.retired, sv.retiredGen = true, old.Gen
	return nil
}

// ckptWriter puts records into one transaction, or, when staged, into a
// sequence of transactions of bounded size.
type ckptWriter struct {
	db     *badger.DB
	staged bool
	limit  int64 // payload bytes per staged transaction
	txn    *badger.Txn
	n      int   // entries in txn
	bytes  int64 // value bytes in txn
}

func (w *ckptWriter) put(key string, v []byte) error {
	if w.txn != nil && w.staged && w.n > 0 && w.bytes+int64(len(v)) > w.limit {
		if err := w.commit(); err != nil {
			return err
		}
	}
	if w.txn == nil {
		w.txn = w.db.NewTransaction(true)
	}
	err := w.txn.Set([]byte(key), v)
	if errors.Is(err, badger.ErrTxnTooBig) {
		if !w.staged {
			return errNeedStaging
		}
		if w.n > 0 {
			if err := w.commit(); err != nil {
				return err
			}
			w.txn = w.db.NewTransaction(true)
			err = w.txn.Set([]byte(key), v)
		}
	}
	if err != nil {
		return fmt.Errorf("writing %q: %v", key, err)
	}
	w.n++
	w.bytes += int64(len(v))
	return nil
}

func (w *ckptWriter) commit() error {
	if w.txn == nil {
		return nil
	}
	err := w.txn.Commit()
	w.txn, w.n, w.bytes = nil, 0, 0
	if err != nil {
		return fmt.Errorf("committing: %v", err)
	}
	return nil
}

func (w *ckptWriter) discard() {
	if w.txn != nil {
		w.txn.Discard()
		w.txn = nil
	}
}
