//go:build !windows && !plan9 && !js && !wasip1 && !aix

package persist

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// repairStoreDir removes the empty value-log (.vlog) and memtable
// write-ahead-log (.mem) files that a process killed while badger was
// creating one (between creating the file and sizing it) leaves behind:
// badger refuses to open a directory holding one ("Open existing file: …
// Create a new file", "while opening memtables … Create a new file"). Such a
// file holds no data. The repair runs only while it holds the directory
// lock badger itself takes (flock on the directory), so it never touches the
// files of a store that another process has open; when the lock is taken it
// does nothing and badger.Open reports the lock.
func repairStoreDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil
		}
		return err
	}
	// Closing d releases the lock.
	entries, err := d.ReadDir(-1)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !(strings.HasSuffix(e.Name(), ".vlog") || strings.HasSuffix(e.Name(), ".mem")) {
			continue
		}
		if info, err := e.Info(); err == nil && info.Size() == 0 {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
