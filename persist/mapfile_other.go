//go:build windows || plan9 || js || wasip1 || aix

package persist

import "os"

// mappedFile is a file read into memory where this package does not map
// files.
type mappedFile struct{ data []byte }

// mapFile reads the file at path.
func mapFile(path string) (*mappedFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &mappedFile{data: data}, nil
}

// nextData returns off: holes are not skipped here.
func (m *mappedFile) nextData(off int64) int64 { return off }

func (m *mappedFile) close() {}
