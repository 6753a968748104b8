package persist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrReadOnly is wrapped by the errors of the methods that write, called
// on a Store that OpenReadOnly opened.
var ErrReadOnly = errors.New("store is open read-only")

// OpenReadOnly opens the store in dir for reading, whether or not another
// process has it open for writing (a trainer, while this one evaluates or
// exports): it takes no lock and changes nothing in dir. It reads a
// snapshot, the store as it was when OpenReadOnly was called: badger's
// index files are linked or copied into a temporary directory (removed by
// Close), while loads read the checkpoints' data files in dir, so that a
// checkpoint that the writer replaces or deletes afterwards fails to load
// with an error that says so; open the store again to see the writer's
// newer checkpoints. The files are verified as Open verifies them, and a
// damaged store is an error wrapping ErrCorrupt. The methods that write
// fail with an error wrapping ErrReadOnly.
func OpenReadOnly(dir string) (*Store, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("persist: OpenReadOnly: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("persist: OpenReadOnly: %s is not a directory", dir)
	}
	// A writer changes the files while the snapshot is taken: a file it
	// removes meanwhile makes the snapshot inconsistent, which shows as a
	// missing file, and the snapshot is taken again.
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var s *Store
		if s, err = openSnapshot(dir); err == nil || !retrySnapshot(err) {
			return s, err
		}
	}
	return nil, err
}

// retrySnapshot reports whether err, of openSnapshot, may come from a
// writer changing the files while the snapshot was taken.
func retrySnapshot(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrCorrupt) ||
		strings.Contains(err.Error(), "file does not exist for table")
}

// openSnapshot takes a snapshot of the badger files of the store in dir
// and opens it read-only. Tables and value logs are linked (tables never
// change, value logs are only appended to), memtable logs copied up to
// their last committed transaction (badger opens a log read-only only
// when nothing follows that), and MANIFEST copied last, so that every
// table it lists was there when the directory was listed.
func openSnapshot(dir string) (s *Store, err error) {
	fs, err := listStoreFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("persist: OpenReadOnly: store %q: listing its files: %w", dir, err)
	}
	if !fs.manifest {
		return nil, fmt.Errorf("persist: OpenReadOnly: %q holds no store (no badger MANIFEST): %w", dir, os.ErrNotExist)
	}
	snap, err := os.MkdirTemp("", "caffe2go-readonly-")
	if err != nil {
		return nil, fmt.Errorf("persist: OpenReadOnly: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(snap)
		}
	}()
	fail := func(err error) (*Store, error) {
		return nil, fmt.Errorf("persist: OpenReadOnly: store %q: taking a snapshot: %w", dir, err)
	}
	for _, path := range fs.tables {
		if err := linkOrCopy(path, filepath.Join(snap, filepath.Base(path))); err != nil {
			return fail(err)
		}
	}
	for _, path := range fs.vlogs {
		if err := linkOrCopy(path, filepath.Join(snap, filepath.Base(path))); err != nil {
			return fail(err)
		}
	}
	for _, path := range fs.mems {
		if err := copyCommitted(path, filepath.Join(snap, filepath.Base(path))); err != nil {
			return fail(err)
		}
	}
	for _, name := range []string{keyRegistryFileName, manifestFileName} {
		if err := copyFile(filepath.Join(dir, name), filepath.Join(snap, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fail(err)
		}
	}
	if err := verifyStoreFiles(snap); err != nil {
		return nil, fmt.Errorf("persist: OpenReadOnly: store %q is damaged: %w; `caffe2go store check %s` tells which checkpoints are intact", dir, err, dir)
	}
	db, err := openBadger(storeOptions(snap).WithReadOnly(true).WithBypassLockGuard(true))
	if err != nil {
		return nil, fmt.Errorf("persist: OpenReadOnly: store %q: %w", dir, err)
	}
	return &Store{path: dir, db: db, readOnly: true, snapshot: snap}, nil
}

// linkOrCopy makes dst a symbolic link to src, or a copy of it where links
// cannot be made.
func linkOrCopy(src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return err
	}
	if err := os.Symlink(src, dst); err == nil {
		return nil
	}
	return copyFile(src, dst)
}

// copyFile copies the file src to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyCommitted copies a memtable log up to the end of its last committed
// transaction.
func copyCommitted(src, dst string) error {
	return withMapped(src, func(m *mappedFile) error {
		if len(m.data) < logHeaderSize {
			return nil
		}
		if err := checkLogHeader(m.data); err != nil {
			return fmt.Errorf("%s: %v: %w", filepath.Base(src), err, ErrCorrupt)
		}
		sc := scanLog(m)
		return os.WriteFile(dst, m.data[:sc.stop], 0o644)
	})
}
