package optest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
)

// npySizes are the element sizes of the fixed-size dtypes ReadNPY reads;
// byte strings (|S<n>) and Unicode strings (<U<n>) are sized by their n.
var npySizes = map[string]int{
	"<f2": 2, "<f4": 4, "<f8": 8,
	"|i1": 1, "<i2": 2, "<i4": 4, "<i8": 8,
	"|u1": 1, "<u2": 2, "|b1": 1,
}

var (
	npyDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	npyOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
	npyStr   = regexp.MustCompile(`^(\|S|<U)([0-9]+)$`)
)

// ReadNPY reads a little-endian NumPy .npy file (format 1.x, 2.x or 3.x, C
// order) into a tensor, such as the inputs and outputs of Caffe2's
// serialized operator tests. It reads the dtypes float16 (as blob.Half),
// float32, float64, int8, int16, int32, int64, uint8, uint16 and bool, and
// byte (|S<n>) and Unicode (<U<n>) strings as a STRING tensor with their
// trailing NULs removed. Object arrays (|O) are pickled Python objects:
// Caffe2's string and object tensors come as JSON files instead (see
// ReadJSONTensor). An error from reading the file is returned as is.
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
	size, strLen := npySizes[descr[1]], 0
	if m := npyStr.FindStringSubmatch(descr[1]); m != nil {
		n, err := strconv.Atoi(m[2])
		if err != nil || n > len(body) {
			return nil, fmt.Errorf("%s: bad string dtype %q", path, descr[1])
		}
		strLen, size = n, n
		if m[1] == "<U" {
			size = 4 * n
		}
	}
	if size == 0 {
		return nil, fmt.Errorf("%s: unsupported dtype %q", path, descr[1])
	}
	n := 1
	for _, d := range shape {
		if d > 0 && n > math.MaxInt32/d {
			return nil, fmt.Errorf("%s: shape %v holds more elements than an npy file here may (2^31)", path, shape)
		}
		n *= d
	}
	if n > len(body)/size {
		return nil, fmt.Errorf("%s: %d data bytes for %d elements of %s", path, len(body), n, descr[1])
	}
	if strLen > 0 {
		return npyStrings(body, n, size, descr[1][0] == '<', shape)
	}
	le := binary.LittleEndian
	switch descr[1] {
	case "<f2":
		v := make([]blob.Half, n)
		for i := range v {
			v[i] = blob.Half(le.Uint16(body[2*i:]))
		}
		return blob.FromSlice(v, shape...)
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
	case "|i1":
		v := make([]int8, n)
		for i := range v {
			v[i] = int8(body[i])
		}
		return blob.FromSlice(v, shape...)
	case "<i2":
		v := make([]int16, n)
		for i := range v {
			v[i] = int16(le.Uint16(body[2*i:]))
		}
		return blob.FromSlice(v, shape...)
	case "<u2":
		v := make([]uint16, n)
		for i := range v {
			v[i] = le.Uint16(body[2*i:])
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

// npyStrings decodes n fixed-size string elements of size bytes each:
// UTF-32LE code points when unicode, bytes otherwise; trailing NULs are
// padding, as NumPy writes them.
func npyStrings(body []byte, n, size int, unicode bool, shape []int) (*blob.Tensor, error) {
	v := make([]string, n)
	for i := range v {
		e := body[i*size : (i+1)*size]
		if !unicode {
			v[i] = string(bytes.TrimRight(e, "\x00"))
			continue
		}
		var sb strings.Builder
		for j := 0; j+4 <= len(e); j += 4 {
			r := rune(binary.LittleEndian.Uint32(e[j:]))
			if r == 0 {
				break
			}
			sb.WriteRune(r)
		}
		v[i] = sb.String()
	}
	return blob.FromSlice(v, shape...)
}

// ReadJSONTensor reads a string tensor of the given shape from a JSON file
// holding NumPy's tolist() of it: nested arrays of strings, as Caffe2's
// serialized tests' string and object tensors are kept (input_K.json,
// output_K.json). The nesting must match shape.
func ReadJSONTensor(path string, shape []int) (*blob.Tensor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var flat []string
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		if depth == len(shape) {
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("element %v is a %T, want a string", v, v)
			}
			flat = append(flat, s)
			return nil
		}
		list, ok := v.([]any)
		if !ok || len(list) != shape[depth] {
			return fmt.Errorf("dimension %d: want a list of %d, got %v", depth, shape[depth], v)
		}
		for _, e := range list {
			if err := walk(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(doc, 0); err != nil {
		return nil, fmt.Errorf("%s: shape %v: %v", path, shape, err)
	}
	if flat == nil {
		flat = []string{}
	}
	return blob.FromSlice(flat, shape...)
}
