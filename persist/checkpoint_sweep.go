package persist

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/dgraph-io/badger/v4"
)

// keysUnder returns every key under prefix.
func (s *Store) keysUnder(prefix string) ([]string, error) {
	var keys []string
	err := s.db.View(func(txn *badger.Txn) error {
		return iterateKeys(txn, prefix, false, func(key string) (bool, error) {
			keys = append(keys, key)
			return true, nil
		})
	})
	return keys, err
}

// abandon undoes what a failed save wrote: its records and data file, and
// the renaming of the data file of the save it was to replace, unless its
// manifest did get committed (a failure after the commit). Errors are
// ignored: the next Open finishes the job.
func (s *Store) abandon(sv *save) {
	id, gen := sv.m.ID, sv.m.Gen
	committed := false
	_ = s.db.View(func(txn *badger.Txn) error {
		cur, err := readManifest(txn, id)
		committed = err == nil && cur.Gen == gen
		return nil
	})
	if committed {
		return
	}
	if keys, err := s.keysUnder(genPrefix(id, gen)); err == nil {
		_ = s.deleteKeys(keys)
	}
	if sv.df != nil {
		sv.df.remove()
	}
	if sv.retired {
		_ = s.renameDataFile(id, sv.retiredGen, stateDeleted, stateData, !sv.noSync)
	}
}

// tidy deletes the records and data files of checkpoint id that belong to
// a generation other than gen and reports whether there were records.
func (s *Store) tidy(id int64, gen uint64) (bool, error) {
	files, err := s.dataFiles()
	if err != nil {
		return false, err
	}
	old := slices.DeleteFunc(files[id], func(f dataFileRef) bool { return f.gen == gen })
	if err := s.removeDataFiles(old, true); err != nil {
		return false, err
	}
	keys, err := s.keysUnder(ckptIDPrefix(id))
	if err != nil {
		return false, err
	}
	var stale []string
	for _, k := range keys {
		_, rest, ok := parseCkptKey(k)
		if !ok || rest == "manifest" {
			continue
		}
		if g, ok := parseGen(rest); ok && g != gen {
			stale = append(stale, k)
		}
	}
	return len(stale) > 0, s.deleteKeys(stale)
}

// sweep removes the records and data files no intact manifest names: those
// of saves that never reached their manifest and of deletes that did not
// finish, and finishes the renames of data files that a killed process
// left undone (see the data files' states). Records and files under a
// manifest that does not decode are kept (they are evidence, and
// DeleteCheckpoint removes them). A committed data file (.data, of this
// build's format) that no manifest names means that badger lost the
// commit: sweep then changes nothing and returns an error wrapping
// ErrCorrupt.
func (s *Store) sweep() error {
	type rec struct {
		key string
		id  int64
		gen uint64
	}
	var recs []rec
	gens := map[int64]uint64{}
	keep := map[int64]bool{}
	err := s.db.View(func(txn *badger.Txn) error {
		return iterateKeys(txn, ckptPrefix, false, func(key string) (bool, error) {
			id, rest, ok := parseCkptKey(key)
			if !ok {
				return true, nil
			}
			if rest == "manifest" {
				m, err := readManifest(txn, id)
				if err != nil {
					keep[id] = true
				} else {
					gens[id] = m.Gen
				}
				return true, nil
			}
			if g, ok := parseGen(rest); ok {
				recs = append(recs, rec{key, id, g})
			}
			return true, nil
		})
	})
	if err != nil {
		return s.errorf("scanning checkpoints: %v", err)
	}
	files, err := s.dataFiles()
	if err != nil {
		return s.errorf("listing the data files: %v", err)
	}
	var renames, removes, lost []dataFileRef
	for id, refs := range files {
		if keep[id] {
			continue
		}
		g, named := gens[id]
		named = named && slices.ContainsFunc(refs, func(f dataFileRef) bool { return f.gen == g })
		settled := slices.Contains(refs, dataFileRef{id, g, stateData})
		for _, f := range refs {
			switch {
			case named && f.gen == g && f.state == stateData:
			case named && f.gen == g && !settled:
				renames, settled = append(renames, f), true
			case f.state == stateData && s.committedFile(f):
				lost = append(lost, f)
			default:
				removes = append(removes, f)
			}
		}
	}
	if len(lost) > 0 {
		names := make([]string, len(lost))
		for i, f := range lost {
			names[i] = fmt.Sprintf("%s (checkpoint %d)", f.name(), f.id)
		}
		slices.Sort(names)
		return fmt.Errorf("the data files %s hold committed saves, but badger has no manifest for them (badger lost the commits): %w", listOrNone(names), ErrCorrupt)
	}
	for _, f := range renames {
		if err := s.renameDataFile(f.id, f.gen, f.state, stateData, false); err != nil {
			return s.errorf("finishing an interrupted save or delete: %v", err)
		}
	}
	if len(renames) > 0 {
		if err := syncDir(filepath.Join(s.path, dataDirName)); err != nil {
			return s.errorf("syncing the data directory: %v", err)
		}
	}
	if err := s.removeDataFiles(removes, false); err != nil {
		return s.errorf("removing the data files of unfinished checkpoint saves and deletes: %v", err)
	}
	var orphans []string
	for _, r := range recs {
		if keep[r.id] {
			continue
		}
		if g, ok := gens[r.id]; !ok || g != r.gen {
			orphans = append(orphans, r.key)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	if err := s.deleteKeys(orphans); err != nil {
		return s.errorf("removing %d records of unfinished checkpoint saves: %v", len(orphans), err)
	}
	s.collectGarbage()
	return nil
}

// committedFile reports whether the .data file f is one of this build's
// format, which is named .data only once its manifest is committed; the
// data files of older builds were named so from the start. A header that
// reads as neither counts as this build's: the file is kept.
func (s *Store) committedFile(f dataFileRef) bool {
	h := make([]byte, dataHeaderSize)
	file, err := os.Open(filepath.Join(s.path, dataDirName, f.name()))
	if err != nil {
		return true
	}
	defer file.Close()
	if _, err := io.ReadFull(file, h); err != nil {
		return true
	}
	return string(h) != string(dataHeaderV(f.id, f.gen, 1))
}
