package persist

import (
	"fmt"
	"strconv"

	"github.com/dgraph-io/badger/v4"
)

// idList formats checkpoint ids for an error message.
func idList(ids []int64) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = strconv.FormatInt(id, 10)
	}
	return listOrNone(names)
}

// Checkpoint returns the manifest of checkpoint id, without reading its
// records. A missing checkpoint wraps ErrNotFound, a damaged manifest
// ErrCorrupt.
func (s *Store) Checkpoint(id int64) (_ Manifest, err error) {
	defer s.recoverCorrupt(&err, fmt.Sprintf("checkpoint %d", id))
	done, err := s.use()
	if err != nil {
		return Manifest{}, err
	}
	defer done()
	var m *manifestWire
	err = s.db.View(func(txn *badger.Txn) error {
		var err error
		m, err = readManifest(txn, id)
		return err
	})
	if err != nil {
		return Manifest{}, s.errorf("%w", err)
	}
	return m.manifest(), nil
}

// LatestCheckpoint returns the highest checkpoint id with an intact
// manifest; ok is false when there is none. Manifests are only ever written
// after all their records, so that checkpoint is complete; LoadCheckpoint
// verifies its records.
func (s *Store) LatestCheckpoint() (id int64, ok bool, err error) {
	defer s.recoverCorrupt(&err, "finding the latest checkpoint")
	done, err := s.use()
	if err != nil {
		return 0, false, err
	}
	defer done()
	err = s.db.View(func(txn *badger.Txn) error {
		return iterateKeys(txn, ckptPrefix, true, func(key string) (bool, error) {
			kid, rest, good := parseCkptKey(key)
			if !good || rest != "manifest" {
				return true, nil
			}
			if _, err := readManifest(txn, kid); err != nil {
				return true, nil // damaged: fall back to an older one
			}
			id, ok = kid, true
			return false, nil
		})
	})
	if err != nil {
		return 0, false, s.errorf("finding the latest checkpoint: %v", err)
	}
	return id, ok, nil
}

// Checkpoints returns the manifests of the saved checkpoints, by ascending
// id. Checkpoints whose manifest is damaged are left out (LoadCheckpoint
// and Checkpoint of their id report the damage).
func (s *Store) Checkpoints() (_ []Manifest, err error) {
	defer s.recoverCorrupt(&err, "listing checkpoints")
	done, err := s.use()
	if err != nil {
		return nil, err
	}
	defer done()
	var out []Manifest
	err = s.db.View(func(txn *badger.Txn) error {
		ids, err := manifestIDs(txn)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if m, err := readManifest(txn, id); err == nil {
				out = append(out, m.manifest())
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.errorf("listing checkpoints: %v", err)
	}
	return out, nil
}
