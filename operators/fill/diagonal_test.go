package fill

import (
	"reflect"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestDiagonalFill checks DiagonalFill against numpy.fill_diagonal with
// wrap=True, which Caffe2's kernel matches: the value goes at flat
// positions 0, step, 2·step, … with step = cols + 1 for a matrix and
// 1 + d + d² + … for a cube of side d.
func TestDiagonalFill(t *testing.T) {
	diag := func(n, step int, v float32) []float32 {
		out := make([]float32, n)
		for i := 0; i < n; i += step {
			out[i] = v
		}
		return out
	}
	for _, c := range []struct {
		name  string
		shape []int64
		want  []float32
	}{
		{"wide", []int64{3, 5}, diag(15, 6, 2.5)},
		{"tall wraps", []int64{5, 3}, []float32{2.5, 0, 0, 0, 2.5, 0, 0, 0, 2.5, 0, 0, 0, 2.5, 0, 0}},
		{"cube", []int64{3, 3, 3}, diag(27, 13, 2.5)},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := run1(t, op("DiagonalFill", nil, netdef.ArgInts("shape", c.shape...), netdef.ArgFloat("value", 2.5)))
			if got := blob.Data[float32](y); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	// An integer value makes an INT64 tensor; the shape may come from an input.
	y := run1(t, op("DiagonalFill", []string{"X"}, netdef.ArgInt("value", 7)), blob.MustFromSlice(make([]float32, 4), 2, 2))
	if got := blob.Data[int64](y); !reflect.DeepEqual(got, []int64{7, 0, 0, 7}) {
		t.Errorf("INT64: got %v", got)
	}
	for _, c := range []struct {
		name  string
		shape []int64
	}{{"1-D", []int64{4}}, {"unequal", []int64{2, 2, 3}}} {
		if _, err := optest.RunOp(op("DiagonalFill", nil, netdef.ArgInts("shape", c.shape...))); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestDiagonalFillSteadyState(t *testing.T) {
	optest.AssertNoAllocs(t, op("DiagonalFill", nil, netdef.ArgInts("shape", 3, 3), netdef.ArgFloat("value", 1)))
}
