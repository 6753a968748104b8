package blob_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
)

func TestFromValue(t *testing.T) {
	cases := []struct {
		name  string
		in    any
		dtype blob.DataType
		shape []int
		data  any
	}{
		{"float32 scalar", float32(2.5), blob.Float32, []int{}, []float32{2.5}},
		{"float64 scalar", 0.5, blob.Float64, []int{}, []float64{0.5}},
		{"int is INT64", 7, blob.Int64, []int{}, []int64{7}},
		{"bool scalar", true, blob.Bool, []int{}, []bool{true}},
		{"string scalar", "a", blob.String, []int{}, []string{"a"}},
		{"half scalar", blob.Half(0x3c00), blob.Float16, []int{}, []blob.Half{0x3c00}},
		{"slice", []int32{1, 2, 3}, blob.Int32, []int{3}, []int32{1, 2, 3}},
		{"ints", []int{-1, 1 << 40}, blob.Int64, []int{2}, []int64{-1, 1 << 40}},
		{"2-D", [][]float32{{1, 2, 3}, {4, 5, 6}}, blob.Float32, []int{2, 3}, []float32{1, 2, 3, 4, 5, 6}},
		{"3-D ints", [][][]int{{{1}, {2}}, {{3}, {4}}}, blob.Int64, []int{2, 2, 1}, []int64{1, 2, 3, 4}},
		{"array", [2][2]uint8{{1, 2}, {3, 4}}, blob.Uint8, []int{2, 2}, []uint8{1, 2, 3, 4}},
		{"empty", []float32{}, blob.Float32, []int{0}, []float32{}},
		{"empty rows", [][]float32{{}, {}}, blob.Float32, []int{2, 0}, []float32{}},
		{"tensor", blob.MustFromSlice([]int16{1, 2, 3, 4}, 2, 2), blob.Int16, []int{2, 2}, []int16{1, 2, 3, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := blob.FromValue(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.DataType() != c.dtype || !reflect.DeepEqual(got.Shape(), c.shape) {
				t.Fatalf("got %v %v, want %v %v", got.DataType(), got.Shape(), c.dtype, c.shape)
			}
			if !reflect.DeepEqual(got.Raw(), c.data) {
				t.Errorf("data %v, want %v", got.Raw(), c.data)
			}
		})
	}
}

// TestFromValueCopies: the tensor does not alias the value it was made of.
func TestFromValueCopies(t *testing.T) {
	src := []float32{1, 2}
	tn, err := blob.FromValue(src)
	if err != nil {
		t.Fatal(err)
	}
	src[0] = 9
	if got := blob.Data[float32](tn)[0]; got != 1 {
		t.Fatalf("the tensor follows the slice: %v", got)
	}
}

func TestFromValueErrors(t *testing.T) {
	type celsius float32
	cases := []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, "nil"},
		{"nil tensor", (*blob.Tensor)(nil), "nil tensor"},
		{"ragged", [][]float32{{1, 2}, {3}}, "value[1] has length 1, the first of its level has 2"},
		{"ragged deep", [][][]int32{{{1}, {2}}, {{3}, {4, 5}}}, "value[1][1] has length 2"},
		{"uint64", []uint64{1}, "[]uint64"},
		{"map", map[string]float32{}, "map[string]float32"},
		{"any slice", []any{1, 2.0}, "[]interface {}"},
		{"named type", []celsius{1}, "celsius"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := blob.FromValue(c.in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, c.want)
			}
		})
	}
}
