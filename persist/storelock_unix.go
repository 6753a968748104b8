//go:build !windows && !plan9 && !js && !wasip1 && !aix

package persist

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockStoreDir takes the lock badger itself takes on a store directory (an
// exclusive flock on the directory), so that what Open and Repair do to
// the files before badger opens them never touches those of a store that
// another process has open. A taken lock is an error wrapping ErrLocked
// that names the holder. held is true on the systems where the lock is
// taken.
func lockStoreDir(dir string) (unlock func(), held bool, err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		d.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, lockedError(dir)
		}
		return nil, false, err
	}
	// Closing d releases the lock.
	return func() { d.Close() }, true, nil
}

// isLockError reports whether err is badger.Open's for a taken lock.
func isLockError(err error) bool { return errors.Is(err, unix.EWOULDBLOCK) }
