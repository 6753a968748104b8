package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// verifyStoreFiles examines the badger files of the store in dir before
// badger opens them, and returns an error wrapping ErrCorrupt that names
// every damaged file when what badger would do with them is crash (badger
// opens its tables on goroutines of its own, and a damaged table panics
// there), leak (a failed badger.Open leaves goroutines and memtables
// behind) or drop data (badger deletes the tables its MANIFEST does not
// list, skips a table whose checksum fails, and truncates a log at its
// first damaged entry), or when data files are there without the metadata
// that says which of them are checkpoints. A store that passes opens
// without loss; what a process killed while writing leaves (an unfinished
// log entry, a table that was being written) passes.
//
// Every table is read in full and checked against its checksums, and every
// memtable log is replayed; the value-log files are checked as far as
// badger reads them on opening (the headers, and the last file's entries).
func verifyStoreFiles(dir string) error {
	problems, err := storeFileDamage(dir)
	if err != nil {
		return err
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %w", strings.Join(problems, "; "), ErrCorrupt)
}

// storeFileDamage returns what verifyStoreFiles finds wrong with the files
// of the store in dir, one line per file.
func storeFileDamage(dir string) ([]string, error) {
	fs, err := listStoreFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("listing the store's files: %v", err)
	}
	var problems []string
	for _, name := range fs.irregular {
		problems = append(problems, name+": not a regular file")
	}
	if _, err := os.Stat(filepath.Join(dir, repairReadyName)); err == nil {
		problems = append(problems, repairReadyName+": a repair was interrupted; run it again to finish it")
	}
	add := func(path string, format string, args ...any) {
		problems = append(problems, filepath.Base(path)+": "+fmt.Sprintf(format, args...))
	}
	mf, err := readBadgerManifest(dir, fs)
	if err != nil {
		add(manifestFileName, "%v", err)
	}
	if !fs.manifest {
		if n := len(fs.tables) + len(fs.mems) + len(fs.vlogs); n > 0 || hasDataFiles(dir) {
			add(manifestFileName, "missing, but the directory holds %d tables and logs and its data files (badger would start over and delete the tables)", n)
		}
	}
	if mf != nil {
		for id := range mf.Tables {
			if _, ok := fs.tables[id]; !ok {
				add(filepath.Base(tableFileName(id)), "listed in MANIFEST but missing")
			}
		}
	}
	// Tables: every one that MANIFEST lists is read in full; one it does not
	// list is the output of a compaction or memtable flush that was not
	// committed, whose entries are all in the files it was made from, or
	// else MANIFEST lost changes.
	var unlisted []uint64
	for _, id := range slices.Sorted(maps.Keys(fs.tables)) {
		if mf == nil {
			break
		}
		if _, listed := mf.Tables[id]; !listed {
			unlisted = append(unlisted, id)
			continue
		}
		if err := readTableFile(fs.tables[id], id); err != nil {
			add(fs.tables[id], "%v", err)
		}
	}
	// Logs.
	memKeys := map[string]bool{}
	for _, path := range fs.mems {
		err := withMapped(path, func(m *mappedFile) error {
			data := m.data
			if len(data) == 0 {
				return nil // removeEmptyLogs removes it
			}
			if err := checkLogHeader(data); err != nil {
				return err
			}
			sc := scanLog(m)
			if len(unlisted) > 0 {
				for _, e := range sc.entries {
					memKeys[string(e.key)] = true
				}
			}
			if sc.damage != "" {
				return errors.New(sc.damage)
			}
			return nil
		})
		if err != nil {
			add(path, "%v", err)
		}
	}
	for _, fid := range slices.Sorted(maps.Keys(fs.vlogs)) {
		path := fs.vlogs[fid]
		if err := checkVlog(path, fid == fs.maxVlog); err != nil {
			add(path, "%v", err)
		}
	}
	if mf != nil && len(unlisted) > 0 {
		if err := checkUnlistedTables(fs, mf, unlisted, memKeys); err != nil {
			problems = append(problems, err.Error())
		}
	}
	for _, name := range fs.other {
		if err := checkFixedFile(dir, name); err != nil {
			add(name, "%v", err)
		}
	}
	return problems, nil
}

// readBadgerManifest reads MANIFEST with badger's own reader; nil and no
// error when there is none. A change set cut off at the end (a process
// killed while appending it) is dropped, as badger does.
func readBadgerManifest(dir string, fs *storeFiles) (m *badger.Manifest, err error) {
	if !fs.manifest {
		return nil, nil
	}
	f, err := os.Open(filepath.Join(dir, manifestFileName))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("does not decode (%v)", firstLine(r))
		}
	}()
	mf, _, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions("").WithLogger(nil))
	if err != nil {
		return nil, err
	}
	return &mf, nil
}

// tableFileName is the name of table id (badger's table.IDToFilename).
func tableFileName(id uint64) string { return fmt.Sprintf("%06d.sst", id) }

// readTableFile reads a table file and verifies its checksums.
func readTableFile(path string, id uint64) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := verifyTable(data, id); err != nil {
		return fmt.Errorf("damaged table: %v", err)
	}
	return nil
}

// checkVlog checks a value-log file: its header, and for the last one,
// which badger replays and truncates on opening, its entries.
func checkVlog(path string, last bool) error {
	return withMapped(path, func(m *mappedFile) error {
		data := m.data
		if len(data) == 0 {
			return nil // removeEmptyLogs removes it
		}
		if err := checkLogHeader(data); err != nil || !last {
			return err
		}
		if sc := scanLog(m); sc.damage != "" {
			return errors.New(sc.damage)
		}
		return nil
	})
}

// checkUnlistedTables checks that every entry of the tables MANIFEST does
// not list is in a table it lists or in a memtable log (memKeys), so that
// badger deleting them loses nothing. A table that does not even open is
// one that was being written when its process died.
func checkUnlistedTables(fs *storeFiles, mf *badger.Manifest, unlisted []uint64, memKeys map[string]bool) error {
	have := memKeys
	for id := range mf.Tables {
		data, err := os.ReadFile(fs.tables[id])
		if err != nil {
			continue // reported already
		}
		entries, err := tableEntries(data, id)
		if err != nil {
			continue
		}
		for _, e := range entries {
			have[string(e.key)] = true
		}
	}
	for _, id := range unlisted {
		data, err := os.ReadFile(fs.tables[id])
		if err != nil {
			return fmt.Errorf("%s: %v", tableFileName(id), err)
		}
		if verifyTable(data, id) != nil {
			continue
		}
		entries, _ := tableEntries(data, id)
		missing := 0
		for _, e := range entries {
			if !have[string(e.key)] {
				missing++
			}
		}
		if missing > 0 {
			return fmt.Errorf("%s: not listed in MANIFEST, yet %d of its %d entries are in no other file (MANIFEST lost changes, and badger would delete the table)",
				tableFileName(id), missing, len(entries))
		}
	}
	return nil
}

// checkFixedFile checks KEYREGISTRY and DISCARD.
func checkFixedFile(dir, name string) error {
	switch name {
	case keyRegistryFileName:
		// An IV, "Hello Badger" (not encrypted: the store has no key),
		// and the data keys, each preceded by its length and CRC; badger
		// allocates a key's length before reading it, so the lengths are
		// checked first.
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		const head = 16 + len("Hello Badger")
		if len(b) < head || string(b[16:head]) != "Hello Badger" {
			return errors.New("not a key registry of a store without encryption")
		}
		for rest := b[head:]; len(rest) > 0; {
			if len(rest) < 8 || int64(binary.BigEndian.Uint32(rest)) > int64(len(rest)-8) {
				return fmt.Errorf("the data key at %d is cut off", len(b)-len(rest))
			}
			rest = rest[8+binary.BigEndian.Uint32(rest):]
		}
		kr, err := badger.OpenKeyRegistry(badger.KeyRegistryOptions{Dir: dir, ReadOnly: true})
		if err != nil {
			return err
		}
		return kr.Close()
	case discardFileName:
		// badger maps it as 1 MiB of 16-byte slots; it creates it when
		// missing or empty, and writes past the end of a shorter one.
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if st.Size() != 0 && st.Size() != discardFileSize {
			return fmt.Errorf("%d bytes, not %d", st.Size(), discardFileSize)
		}
	}
	return nil
}

// discardFileSize is the size of badger's DISCARD file.
const discardFileSize = 1 << 20

// hasDataFiles reports whether dir/data holds checkpoint data files.
func hasDataFiles(dir string) bool {
	entries, _ := os.ReadDir(filepath.Join(dir, dataDirName))
	for _, e := range entries {
		if _, _, _, ok := parseDataFileName(e.Name()); ok {
			return true
		}
	}
	return false
}
