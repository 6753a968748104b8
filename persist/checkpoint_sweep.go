package persist

import (
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

// abandon deletes what a failed save (m's generation of checkpoint m.ID)
// wrote: its records and data file, unless its manifest did get committed
// (a failure after the commit). Errors are ignored: the next Open removes
// what is left.
func (s *Store) abandon(m *manifestWire) {
	id, gen := m.ID, m.Gen
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
	if m.DataBytes > 0 {
		_ = s.removeDataFiles(id, []uint64{gen}, true)
	}
}

// tidy deletes the records and data files of checkpoint id that belong to
// a generation other than gen and reports whether there were records.
func (s *Store) tidy(id int64, gen uint64) (bool, error) {
	files, err := s.dataFiles()
	if err != nil {
		return false, err
	}
	old := slices.DeleteFunc(files[id], func(g uint64) bool { return g == gen })
	if err := s.removeDataFiles(id, old, true); err != nil {
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
// finish. Records and files under a manifest that does not decode are kept
// (they are evidence, and DeleteCheckpoint removes them).
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
	for id, fileGens := range files {
		if keep[id] {
			continue
		}
		if g, ok := gens[id]; ok {
			fileGens = slices.DeleteFunc(fileGens, func(gen uint64) bool { return gen == g })
		}
		if err := s.removeDataFiles(id, fileGens, false); err != nil {
			return s.errorf("removing the data files of unfinished checkpoint saves: %v", err)
		}
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
