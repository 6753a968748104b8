package tensor

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// op builds an operator definition.
func op(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(typ, in, out, args...)
}

func f32(shape []int, v ...float32) *blob.Tensor { return blob.MustFromSlice(v, shape...) }
func f64(shape []int, v ...float64) *blob.Tensor { return blob.MustFromSlice(v, shape...) }
func i32(shape []int, v ...int32) *blob.Tensor   { return blob.MustFromSlice(v, shape...) }
func i64(shape []int, v ...int64) *blob.Tensor   { return blob.MustFromSlice(v, shape...) }

// shp is a shape literal; shp() is the scalar shape.
func shp(d ...int) []int {
	if d == nil {
		return []int{}
	}
	return d
}

// seq returns a float32 tensor holding 0, 1, 2, … in the given shape.
func seq(shape ...int) *blob.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	return blob.MustFromSlice(v, shape...)
}

// equalTensor reports how got differs from want (type, shape, elements), or "".
func equalTensor(got, want *blob.Tensor) string {
	if got == nil {
		return "no output tensor"
	}
	if got.DataType() != want.DataType() {
		return fmt.Sprintf("type %v, want %v", got.DataType(), want.DataType())
	}
	if !reflect.DeepEqual(got.Shape(), want.Shape()) {
		return fmt.Sprintf("shape %v, want %v", got.Shape(), want.Shape())
	}
	if !reflect.DeepEqual(got.Raw(), want.Raw()) {
		return fmt.Sprintf("elements %v, want %v", got.Raw(), want.Raw())
	}
	return ""
}

// ids converts element ids to a tensor of type dt: the number itself for
// numeric types, id%2 == 1 for booleans and the decimal text for strings.
func ids(dt blob.DataType, shape []int, id ...int) *blob.Tensor {
	switch dt {
	case blob.Float32:
		return blob.MustFromSlice(conv[float32](id), shape...)
	case blob.Float64:
		return blob.MustFromSlice(conv[float64](id), shape...)
	case blob.Int8:
		return blob.MustFromSlice(conv[int8](id), shape...)
	case blob.Int16:
		return blob.MustFromSlice(conv[int16](id), shape...)
	case blob.Int32:
		return blob.MustFromSlice(conv[int32](id), shape...)
	case blob.Int64:
		return blob.MustFromSlice(conv[int64](id), shape...)
	case blob.Uint8:
		return blob.MustFromSlice(conv[uint8](id), shape...)
	case blob.Uint16:
		return blob.MustFromSlice(conv[uint16](id), shape...)
	case blob.Float16:
		h := make([]blob.Half, len(id))
		for i, v := range id {
			h[i] = blob.HalfFromFloat32(float32(v))
		}
		return blob.MustFromSlice(h, shape...)
	case blob.Bool:
		b := make([]bool, len(id))
		for i, v := range id {
			b[i] = v%2 == 1
		}
		return blob.MustFromSlice(b, shape...)
	case blob.String:
		s := make([]string, len(id))
		for i, v := range id {
			s[i] = strconv.Itoa(v)
		}
		return blob.MustFromSlice(s, shape...)
	}
	panic("unsupported type " + dt.String())
}

func conv[T blob.Number](id []int) []T {
	out := make([]T, len(id))
	for i, v := range id {
		out[i] = T(v)
	}
	return out
}

func upto(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

var allTypes = []blob.DataType{
	blob.Float32, blob.Float64, blob.Float16, blob.Int8, blob.Int16, blob.Int32,
	blob.Int64, blob.Uint8, blob.Uint16, blob.Bool, blob.String,
}

// wantErr checks that err is non-nil and mentions every fragment.
func wantErr(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one mentioning %q", fragments)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
}

// gradDefs returns the gradient operators of def given dense gradients for
// the listed outputs.
func gradDefs(t *testing.T, def *netdef.OperatorDef, withGrad ...int) *operators.GradientDefs {
	t.Helper()
	gout := make([]operators.Gradient, len(def.Output))
	for _, o := range withGrad {
		gout[o] = operators.Dense(def.Output[o] + "_grad")
	}
	gd, err := operators.GetGradientDefs(def, gout)
	if err != nil {
		t.Fatalf("%s gradient: %v", def.GetType(), err)
	}
	return gd
}
