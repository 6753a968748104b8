package mnist

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// The idx magic numbers: 0x0000 0x08 (unsigned byte) and the number of
// dimensions.
const (
	idxImagesMagic = 0x00000803 // uint8, 3 dimensions: N × rows × cols
	idxLabelsMagic = 0x00000801 // uint8, 1 dimension: N
)

// maxMNISTImageBytes bounds rows × cols of an idx image file (MNIST has
// 28 × 28), so a corrupt header cannot ask for a huge buffer.
const maxMNISTImageBytes = 1 << 24

// eofText turns an end of file into a clear message.
func eofText(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the file ends early")
	}
	return err
}

// idxFile is an open idx file past its header.
type idxFile struct {
	f    *os.File
	gz   *gzip.Reader
	r    *bufio.Reader
	dims []uint32
}

// openIdx opens an idx file (gzip-compressed or not), checks its magic
// number and reads its ndim dimensions.
func openIdx(path string, magic uint32, ndim int) (*idxFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mnist: %w", err)
	}
	x := &idxFile{f: f, r: bufio.NewReader(f)}
	if head, err := x.r.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		if x.gz, err = gzip.NewReader(x.r); err != nil {
			f.Close()
			return nil, fmt.Errorf("mnist: %s: %w", path, err)
		}
		x.r = bufio.NewReader(x.gz)
	}
	hdr := make([]byte, 4*(1+ndim))
	if _, err := io.ReadFull(x.r, hdr[:4]); err != nil {
		x.Close()
		return nil, fmt.Errorf("mnist: %s: reading the idx header: %w", path, eofText(err))
	}
	if got := binary.BigEndian.Uint32(hdr); got != magic {
		x.Close()
		return nil, fmt.Errorf("mnist: %s: magic number 0x%08x, want 0x%08x", path, got, magic)
	}
	if _, err := io.ReadFull(x.r, hdr[4:]); err != nil {
		x.Close()
		return nil, fmt.Errorf("mnist: %s: reading the idx header: %w", path, eofText(err))
	}
	for i := range ndim {
		x.dims = append(x.dims, binary.BigEndian.Uint32(hdr[4*(i+1):]))
	}
	if x.dims[0] > 1<<30 {
		x.Close()
		return nil, fmt.Errorf("mnist: %s: implausible item count %d", path, x.dims[0])
	}
	return x, nil
}

// Close closes the file.
func (x *idxFile) Close() error {
	if x.gz != nil {
		x.gz.Close()
	}
	return x.f.Close()
}
