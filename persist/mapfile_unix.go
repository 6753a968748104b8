//go:build !windows && !plan9 && !js && !wasip1 && !aix

package persist

import (
	"os"

	"golang.org/x/sys/unix"
)

// mappedFile is a file mapped read-only: badger's logs are preallocated (a
// value log to 512 MiB, a memtable log to 32 MiB) and mostly holes after a
// process was killed, which a mapping reads without allocating them, and
// nextData skips.
type mappedFile struct {
	data []byte
	f    *os.File
}

// mapFile maps the file at path read-only; close unmaps it.
func mapFile(path string) (*mappedFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	m := &mappedFile{f: f}
	if st.Size() == 0 {
		return m, nil
	}
	if st.Size() != int64(int(st.Size())) {
		f.Close()
		return nil, &os.PathError{Op: "mmap", Path: path, Err: unix.EFBIG}
	}
	m.data, err = unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	return m, nil
}

// nextData returns the offset of the first byte at off or after that is
// not in a hole (len(data) when there is none), or off where the file
// system does not tell.
func (m *mappedFile) nextData(off int64) int64 {
	next, err := unix.Seek(int(m.f.Fd()), off, unix.SEEK_DATA)
	switch {
	case err == unix.ENXIO:
		return int64(len(m.data))
	case err != nil || next < off:
		return off
	}
	return min(next, int64(len(m.data)))
}

func (m *mappedFile) close() {
	if m.data != nil {
		_ = unix.Munmap(m.data)
	}
	m.f.Close()
}
