//go:build !windows && !plan9 && !js && !wasip1 && !aix

package persist

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncDir fsyncs a directory, which makes the creation and removal of its
// entries durable. File systems that cannot sync a directory (EINVAL) make
// entries durable with their files.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return nil
}
