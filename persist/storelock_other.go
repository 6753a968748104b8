//go:build windows || plan9 || js || wasip1 || aix

package persist

import "strings"

// lockStoreDir takes no lock where this package cannot take badger's
// directory lock itself (held is false): Open then leaves the files as
// they are for badger.Open, which takes its lock, and Repair refuses.
func lockStoreDir(dir string) (unlock func(), held bool, err error) { return func() {}, false, nil }

// isLockError reports whether err is badger.Open's for a taken lock.
func isLockError(err error) bool {
	return strings.Contains(err.Error(), "Another process is using this Badger database")
}
