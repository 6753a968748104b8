package optest

//go:generate /usr/bin/python3 testdata/gen_npy.py

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
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
		{"empty, zero last", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (6, 0), }", nil, false), blob.MustFromSlice([]float32{}, 6, 0)},
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
		{"object", "unsupported dtype", npyFile("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8), false)},
		{"string size", "bad string dtype", npyFile("{'descr': '|S99999', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8), false)},
		{"huge shape", "more elements than an npy file", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", make([]byte, 8), false)},
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

// TestReadNPYDtypes reads files NumPy wrote (testdata/gen_npy.py) in every
// dtype beyond the common ones and compares them with the values NumPy
// reads back from them (want.json).
func TestReadNPYDtypes(t *testing.T) {
	data, err := os.ReadFile("testdata/npy/want.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		Dtype  string
		Shape  []int
		Values any
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	types := map[string]blob.DataType{"<f2": blob.Float16, "|i1": blob.Int8, "<i2": blob.Int16, "<u2": blob.Uint16, "|S4": blob.String, "<U5": blob.String}
	for name, w := range want {
		got, err := ReadNPY(filepath.Join("testdata/npy", name+".npy"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got.DataType() != types[w.Dtype] || !reflect.DeepEqual(got.Shape(), w.Shape) {
			t.Errorf("%s: %v %v, want %s %v", name, got.DataType(), got.Shape(), w.Dtype, w.Shape)
			continue
		}
		var flat []string
		var walk func(v any)
		walk = func(v any) {
			if l, ok := v.([]any); ok {
				for _, e := range l {
					walk(e)
				}
				return
			}
			flat = append(flat, fmt.Sprint(v))
		}
		walk(w.Values)
		for i, wv := range flat {
			var gv string
			switch v := got.Raw().(type) {
			case []blob.Half:
				f, err := strconv.ParseFloat(wv, 64)
				if err != nil || float64(v[i].Float32()) != f {
					t.Errorf("%s[%d] = %v, want %s", name, i, v[i].Float32(), wv)
				}
				continue
			case []string:
				gv = v[i]
				if w.Dtype[0] == '|' {
					gv = hex.EncodeToString([]byte(v[i]))
				}
			default:
				gv = fmt.Sprint(reflect.ValueOf(v).Index(i).Interface())
			}
			if gv != wv {
				t.Errorf("%s[%d] = %q, want %q", name, i, gv, wv)
			}
		}
	}
}

func TestReadJSONTensor(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, doc string
		shape     []int
		want      []string
		frag      string
	}{
		{"matrix", `[["a", "b"], ["", "d"]]`, []int{2, 2}, []string{"a", "b", "", "d"}, ""},
		{"scalar", `"x"`, []int{}, []string{"x"}, ""},
		{"empty", `[]`, []int{0}, []string{}, ""},
		{"short row", `[["a"], ["b", "c"]]`, []int{2, 2}, nil, "dimension 1: want a list of 2"},
		{"number", `[1, 2]`, []int{2}, nil, "want a string"},
		{"not json", `[`, []int{1}, nil, "unexpected end"},
	} {
		path := filepath.Join(dir, c.name+".json")
		if err := os.WriteFile(path, []byte(c.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadJSONTensor(path, c.shape)
		if c.frag != "" {
			if err == nil || !strings.Contains(err.Error(), c.frag) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.frag)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got.Shape(), c.shape) || !reflect.DeepEqual(got.Raw(), c.want) {
			t.Errorf("%s: got %v %v, want %v %v", c.name, got.Shape(), got.Raw(), c.shape, c.want)
		}
	}
}
