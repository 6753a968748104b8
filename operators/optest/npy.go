package optest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
)

// npySizes are the element sizes of the dtypes ReadNPY reads (0 for the
// others, which it rejects).
var npySizes = map[string]int{"<f4": 4, "<f8": 8, "<i4": 4, "<i8": 8, "|b1": 1, "|u1": 1}

var (
	npyDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	npyOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// ReadNPY reads a little-endian NumPy .npy file (format 1.x, 2.x or 3.x, C
// order) of dtype float32, float64, int32, int64, bool or uint8 into a
// tensor, such as the inputs and outputs of Caffe2's serialized operator
// tests. An error from reading the file is returned as is.
func ReadNPY(path string) (*blob.Tensor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) < 10 || !bytes.Equal(data[:6], []byte("\x93NUMPY")) {
		return nil, fmt.Errorf("%s: not an npy file", path)
	}
	var hlen, off int
	switch data[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(data[8:10])), 10
	case 2, 3:
		if len(data) < 12 {
			return nil, fmt.Errorf("%s: truncated npy header", path)
		}
		hlen, off = int(binary.LittleEndian.Uint32(data[8:12])), 12
	default:
		return nil, fmt.Errorf("%s: npy version %d", path, data[6])
	}
	if hlen > len(data)-off {
		return nil, fmt.Errorf("%s: truncated npy header", path)
	}
	header := string(data[off : off+hlen])
	body := data[off+hlen:]
	descr := npyDescr.FindStringSubmatch(header)
	order := npyOrder.FindStringSubmatch(header)
	shapeM := npyShape.FindStringSubmatch(header)
	if descr == nil || order == nil || shapeM == nil {
		return nil, fmt.Errorf("%s: bad header %q", path, header)
	}
	if order[1] == "True" {
		return nil, fmt.Errorf("%s: Fortran order is not supported", path)
	}
	shape := []int{}
	for _, f := range strings.Split(shapeM[1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%s: bad shape %q", path, shapeM[1])
		}
		shape = append(shape, d)
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	if size := npySizes[descr[1]]; len(body) < n*size {
		return nil, fmt.Errorf("%s: %d data bytes for %d elements of %s", path, len(body), n, descr[1])
	}
	le := binary.LittleEndian
	switch descr[1] {
	case "<f4":
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(le.Uint32(body[4*i:]))
		}
		return blob.FromSlice(v, shape...)
	case "<f8":
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Float64frombits(le.Uint64(body[8*i:]))
		}
		return blob.FromSlice(v, shape...)
	case "<i4":
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(le.Uint32(body[4*i:]))
		}
		return blob.FromSlice(v, shape...)
	case "<i8":
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(le.Uint64(body[8*i:]))
		}
		return blob.FromSlice(v, shape...)
	case "|b1":
		v := make([]bool, n)
		for i := range v {
			v[i] = body[i] != 0
		}
		return blob.FromSlice(v, shape...)
	case "|u1":
		return blob.FromSlice(append([]uint8{}, body[:n]...), shape...)
	}
	return nil, fmt.Errorf("%s: unsupported dtype %q", path, descr[1])
}
