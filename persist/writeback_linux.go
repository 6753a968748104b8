package persist

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing n bytes of f from off to
// disk, without waiting (sync_file_range SYNC_FILE_RANGE_WRITE). It is only
// a hint for throughput: durability still comes from the fsync, so a
// failure is ignored.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
