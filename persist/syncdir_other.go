//go:build windows || plan9 || js || wasip1 || aix

package persist

// syncDir does nothing where a directory cannot be opened for syncing; the
// file systems there make entries durable with their files.
func syncDir(dir string) error { return nil }
