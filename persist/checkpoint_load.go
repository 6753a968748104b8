package persist

import (
	"errors"
	"fmt"

	"github.com/caffe2go/caffe2go/operators"
	"github.com/dgraph-io/badger/v4"
)

// LoadCheckpoint reads checkpoint id and stores its blobs in ws, creating
// the blobs that do not exist and replacing the content of those that do.
// Every record is checked first (decoding, agreement with the manifest, the
// CRC32C of each blob), and ws is changed only when all of them pass, so a
// damaged or missing checkpoint (errors wrapping ErrCorrupt or ErrNotFound)
// leaves ws as it was.
func (s *Store) LoadCheckpoint(ws operators.Workspace, id int64) (err error) {
	defer s.recoverCorrupt(&err, fmt.Sprintf("LoadCheckpoint %d", id))
	if ws == nil {
		return s.errorf("LoadCheckpoint %d: nil workspace", id)
	}
	done, err := s.use()
	if err != nil {
		return err
	}
	defer done()
	// Held until the data file is read: a save replacing this checkpoint,
	// or a delete, removes the file only after the load.
	s.fmu.RLock()
	defer s.fmu.RUnlock()
	var m *manifestWire
	var man Manifest
	var values []any
	err = s.db.View(func(txn *badger.Txn) error {
		var err error
		m, err = readManifest(txn, id)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				ids, _ := manifestIDs(txn)
				return fmt.Errorf("%w (saved checkpoints: %s)", err, idList(ids))
			}
			return err
		}
		values = make([]any, len(m.Blobs))
		man = m.manifest()
		for i, info := range man.Blobs {
			if info.InDataFile {
				continue
			}
			v, err := readBlob(txnGetter(txn), m, info)
			if err != nil {
				return fmt.Errorf("checkpoint %d: blob %q: %w", id, info.Name, err)
			}
			values[i] = v
		}
		return nil
	})
	if err == nil && m.DataBytes > 0 {
		if err = s.readDataFile(m, man.Blobs, values); err != nil {
			err = fmt.Errorf("checkpoint %d: %w", id, err)
		}
	}
	if err != nil {
		return s.errorf("%w", err)
	}
	for i, b := range m.Blobs {
		ws.CreateBlob(b.Name).Set(values[i])
	}
	return nil
}

// recordGetter returns the value of a record key, or an error wrapping
// badger.ErrKeyNotFound.
type recordGetter func(key string, fn func(v []byte) error) error

// txnGetter reads records in a badger transaction.
func txnGetter(txn *badger.Txn) recordGetter {
	return func(key string, fn func(v []byte) error) error {
		item, err := txn.Get([]byte(key))
		if err != nil {
			return err
		}
		return item.Value(fn)
	}
}

// errRecord marks the errors of a recordGetter's fn, which say the record
// is damaged, apart from those of reading it.
type errRecord struct{ error }

// readBlob reassembles one blob of a checkpoint from its records.
func readBlob(get recordGetter, m *manifestWire, info BlobInfo) (any, error) {
	a, err := newAssembler(info)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	for c := 0; c < info.Chunks; c++ {
		key := recordKey(m.ID, m.Gen, info.Name, c)
		err := get(key, func(v []byte) error {
			if err := a.add(c, v); err != nil {
				return errRecord{err}
			}
			return nil
		})
		var bad errRecord
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
			return nil, fmt.Errorf("record %q of chunk %d is missing: %w", key, c, ErrCorrupt)
		case errors.As(err, &bad):
			return nil, fmt.Errorf("%v: %w", bad.error, ErrCorrupt)
		case err != nil:
			return nil, fmt.Errorf("reading %q: %v", key, err)
		}
	}
	v, err := a.finish()
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	return v, nil
}
