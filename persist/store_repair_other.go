//go:build windows || plan9 || js || wasip1 || aix

package persist

// repairStoreDir does nothing on systems where this package cannot take
// badger's directory lock itself; see the Unix version.
func repairStoreDir(dir string) error { return nil }
