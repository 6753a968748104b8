package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
)

func TestParseInputSpec(t *testing.T) {
	for _, tc := range []struct {
		in      string
		name    string
		dims    []int
		dtype   blob.DataType
		errWant string
	}{
		{in: "data=1x3x224x224", name: "data", dims: []int{1, 3, 224, 224}, dtype: blob.Float32},
		{in: "data=2,8", name: "data", dims: []int{2, 8}, dtype: blob.Float32},
		{in: "gpu_0/data=1x3x8x8:uint8", name: "gpu_0/data", dims: []int{1, 3, 8, 8}, dtype: blob.Uint8},
		{in: "x=4:double", name: "x", dims: []int{4}, dtype: blob.Float64},
		{in: "x=4:float64", name: "x", dims: []int{4}, dtype: blob.Float64},
		{in: "x=4:FLOAT", name: "x", dims: []int{4}, dtype: blob.Float32},
		{in: "x=4:float32", name: "x", dims: []int{4}, dtype: blob.Float32},
		{in: "x=4:half", name: "x", dims: []int{4}, dtype: blob.Float16},
		{in: "x=4:float16", name: "x", dims: []int{4}, dtype: blob.Float16},
		{in: "x=0x4:int64", name: "x", dims: []int{0, 4}, dtype: blob.Int64},
		{in: "x=4:int32", name: "x", dims: []int{4}, dtype: blob.Int32},
		{in: "x=4:int16", name: "x", dims: []int{4}, dtype: blob.Int16},
		{in: "x=4:int8", name: "x", dims: []int{4}, dtype: blob.Int8},
		{in: "x=4:uint16", name: "x", dims: []int{4}, dtype: blob.Uint16},
		{in: "x=4:bool", name: "x", dims: []int{4}, dtype: blob.Bool},
		{in: "data", errWant: `"data": want name=d0xd1x...[:dtype], such as data=1x3x224x224:float`},
		{in: "=1x2", errWant: `"=1x2": want name=d0xd1x...[:dtype]`},
		{in: "data=", errWant: `"data=": no dimensions after data=`},
		{in: "data=:float", errWant: `"data=:float": no dimensions after data=`},
		{in: "data=1xax2", errWant: `"data=1xax2": dimension "a" is not a non-negative integer`},
		{in: "data=1x-2", errWant: `"data=1x-2": dimension "-2" is not a non-negative integer`},
		{in: "data=1xx2", errWant: `"data=1xx2": dimension "" is not a non-negative integer`},
		{in: "data=1x2:complex", errWant: `"data=1x2:complex": unknown data type "complex" (want ` + dataTypeNames + ")"},
		{in: "data=1x2:string", errWant: `"data=1x2:string": unknown data type "string"`},
	} {
		name, spec, err := parseInputSpec(tc.in)
		if tc.errWant != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errWant) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.errWant)
			}
			continue
		}
		if err != nil || name != tc.name || !slices.Equal(spec.dims, tc.dims) || spec.dtype != tc.dtype {
			t.Errorf("%q: %q %v %v, error %v; want %q %v %v", tc.in, name, spec.dims, spec.dtype, err, tc.name, tc.dims, tc.dtype)
		}
	}
}

func TestReadValueInfo(t *testing.T) {
	zoo, err := readValueInfo("../../testdata/caffe2-models/resnet50/value_info.json")
	if err != nil {
		t.Fatal(err)
	}
	if s := zoo["gpu_0/data"]; len(zoo) != 1 || s.dtype != blob.Float32 || !slices.Equal(s.dims, []int{1, 3, 224, 224}) {
		t.Errorf("resnet50's value_info.json: %v", zoo)
	}
	byName, err := readValueInfo(filepath.Join("testdata", "value_info_double.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s := byName["data"]; s.dtype != blob.Float64 || !slices.Equal(s.dims, []int{3, 8}) {
		t.Errorf("value_info_double.json: %v", byName)
	}
	_, err = readValueInfo(filepath.Join("testdata", "value_info_complex.json"))
	if want := `testdata/value_info_complex.json: "data": unknown data type "complex"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("value_info_complex.json: error %v, want %q", err, want)
	}
}
