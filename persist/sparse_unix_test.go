//go:build !windows && !plan9 && !js && !wasip1 && !aix

package persist

import (
	"os"

	"golang.org/x/sys/unix"
)

// dataExtents returns the [start, end) ranges of f (of size bytes) that are
// not holes.
func dataExtents(f *os.File, size int64) [][2]int64 {
	var out [][2]int64
	for off := int64(0); off < size; {
		start, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
		if err != nil {
			break
		}
		end, err := unix.Seek(int(f.Fd()), start, unix.SEEK_HOLE)
		if err != nil {
			end = size
		}
		out = append(out, [2]int64{start, end})
		off = end
	}
	return out
}

// processAlive reports whether the process pid exists.
func processAlive(pid int) bool { return unix.Kill(pid, 0) != unix.ESRCH }
