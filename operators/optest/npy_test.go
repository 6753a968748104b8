package optest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
)

// npyFile returns a version-1 (or, with v2, version-2) .npy file with the
// given header dictionary and data.
func npyFile(dict string, data []byte, v2 bool) []byte {
	header := []byte(dict + "\n")
	b := []byte("\x93NUMPY")
	if v2 {
		b = append(b, 2, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(header)))
	} else {
		b = append(b, 1, 0)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(header)))
	}
	return append(append(b, header...), data...)
}

func TestReadNPY(t *testing.T) {
	f32 := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0x3fc00000), 0xc0000000) // 1.5, -2
	i64 := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 7), uint64(1<<64-3))     // 7, -3
	for _, c := range []struct {
		name string
		file []byte
		want *blob.Tensor
	}{
		{"float32", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f32, false), blob.MustFromSlice([]float32{1.5, -2}, 2)},
		{"int64 2x1, version 2", npyFile("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 1), }", i64, true), blob.MustFromSlice([]int64{7, -3}, 2, 1)},
		{"bool scalar", npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (), }", []byte{1}, false), blob.Scalar(true)},
		{"empty", npyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (0, 3), }", nil, false), blob.MustFromSlice([]int32{}, 0, 3)},
	} {
		path := filepath.Join(t.TempDir(), "x.npy")
		if err := os.WriteFile(path, c.file, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadNPY(path)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.DataType() != c.want.DataType() || !reflect.DeepEqual(got.Shape(), c.want.Shape()) || !reflect.DeepEqual(got.Raw(), c.want.Raw()) {
			t.Errorf("%s: got %v %v %v, want %v %v %v", c.name, got.DataType(), got.Shape(), got.Raw(), c.want.DataType(), c.want.Shape(), c.want.Raw())
		}
	}
}

func TestReadNPYErrors(t *testing.T) {
	for _, c := range []struct {
		name, frag string
		file       []byte
	}{
		{"not npy", "not an npy file", []byte("PK\x03\x04 a zip file")},
		{"version", "npy version 9", append([]byte("\x93NUMPY\x09\x00"), 0, 0)},
		{"truncated header", "truncated", append([]byte("\x93NUMPY\x01\x00"), 200, 0)},
		{"fortran", "Fortran order", npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", make([]byte, 4), false)},
		{"dtype", "unsupported dtype", npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8), false)},
		{"short data", "data bytes", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", make([]byte, 12), false)},
		{"bad shape", "bad shape", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", nil, false)},
	} {
		path := filepath.Join(t.TempDir(), "x.npy")
		if err := os.WriteFile(path, c.file, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadNPY(path); err == nil || !strings.Contains(err.Error(), c.frag) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.frag)
		}
	}
	if _, err := ReadNPY(filepath.Join(t.TempDir(), "missing.npy")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v, want a not-exist error", err)
	}
}
