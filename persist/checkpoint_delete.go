package persist

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/dgraph-io/badger/v4"
)

// DeleteCheckpoint deletes checkpoint id: its manifest first, so that an
// interrupted delete leaves no half checkpoint, then its records. A missing
// id wraps ErrNotFound.
func (s *Store) DeleteCheckpoint(id int64) (err error) {
	defer s.recoverCorrupt(&err, fmt.Sprintf("DeleteCheckpoint %d", id))
	done, err := s.useWrite("DeleteCheckpoint")
	if err != nil {
		return err
	}
	defer done()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.deleteCheckpoint(id); err != nil {
		return err
	}
	s.collectGarbage()
	return nil
}

// deleteCheckpoint deletes one checkpoint; the caller holds wmu. Its data
// files are renamed to .deleted first (see the data files' states), and
// removed once the deletion of the manifest is synced: a power loss that
// undid an unsynced deletion would otherwise leave a checkpoint without its
// data.
func (s *Store) deleteCheckpoint(id int64) error {
	key := []byte(manifestKey(id))
	err := s.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(key)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		var ids []int64
		_ = s.db.View(func(txn *badger.Txn) error { ids, _ = manifestIDs(txn); return nil })
		return s.errorf("DeleteCheckpoint: checkpoint %d: %w (saved checkpoints: %s)", id, ErrNotFound, idList(ids))
	}
	if err != nil {
		return s.errorf("DeleteCheckpoint %d: %v", id, err)
	}
	files, err := s.dataFiles()
	if err != nil {
		return s.errorf("DeleteCheckpoint %d: listing the data files: %v", id, err)
	}
	var renamed []dataFileRef
	for i, f := range files[id] {
		if f.state != stateData {
			continue
		}
		if err := s.renameDataFile(id, f.gen, stateData, stateDeleted, false); err != nil {
			s.unretire(renamed)
			return s.errorf("DeleteCheckpoint %d: %v", id, err)
		}
		files[id][i].state = stateDeleted
		renamed = append(renamed, files[id][i])
	}
	if len(renamed) > 0 {
		if err := syncDir(filepath.Join(s.path, dataDirName)); err != nil {
			s.unretire(renamed)
			return s.errorf("DeleteCheckpoint %d: syncing the data directory: %v", id, err)
		}
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(key) }); err != nil {
		s.unretire(renamed)
		return s.errorf("DeleteCheckpoint %d: %v", id, err)
	}
	keys, err := s.keysUnder(ckptIDPrefix(id))
	if err == nil {
		err = s.deleteKeys(keys)
	}
	if err == nil {
		err = s.db.Sync()
	}
	if err == nil {
		err = s.removeDataFiles(files[id], true)
	}
	if err != nil {
		return s.errorf("DeleteCheckpoint %d: removing its records and data file (the checkpoint is gone; the next Open removes them): %v", id, err)
	}
	return nil
}

// unretire renames back the data files a failed delete renamed to
// .deleted (best effort: the next Open does it too, the manifest naming
// them).
func (s *Store) unretire(files []dataFileRef) {
	for _, f := range files {
		_ = s.renameDataFile(f.id, f.gen, stateDeleted, stateData, true)
	}
}

// KeepLast deletes old checkpoints, keeping the k with the highest ids
// among those with an intact manifest; every checkpoint with a lower id,
// damaged ones included, is deleted. With fewer than k intact checkpoints
// nothing is deleted; k = 0 deletes every checkpoint.
func (s *Store) KeepLast(k int) (err error) {
	defer s.recoverCorrupt(&err, "KeepLast")
	if k < 0 {
		return s.errorf("KeepLast: k = %d is negative", k)
	}
	done, err := s.useWrite("KeepLast")
	if err != nil {
		return err
	}
	defer done()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var ids []int64
	intact := map[int64]bool{}
	err = s.db.View(func(txn *badger.Txn) error {
		var err error
		if ids, err = manifestIDs(txn); err != nil {
			return err
		}
		for _, id := range ids {
			_, err := readManifest(txn, id)
			intact[id] = err == nil
		}
		return nil
	})
	if err != nil {
		return s.errorf("KeepLast: listing checkpoints: %v", err)
	}
	// Walk from the newest down; once k intact ones are kept, the rest go.
	slices.Reverse(ids)
	kept := 0
	var doomed []int64
	for _, id := range ids {
		if kept >= k {
			doomed = append(doomed, id)
		} else if intact[id] {
			kept++
		}
	}
	if kept < k {
		return nil
	}
	for _, id := range doomed {
		if err := s.deleteCheckpoint(id); err != nil {
			return err
		}
	}
	if len(doomed) > 0 {
		s.collectGarbage()
	}
	return nil
}
