package blob

import (
	"fmt"
	"reflect"
)

// FromValue returns a new tensor holding a copy of a Go value, as numpy's
// array() makes one from Python values:
//
//   - a scalar of an element type (float32, int64, bool, Half, …) gives a 0-d
//     tensor of that type; int gives INT64 and uint8 UINT8;
//   - a slice of one gives a 1-D tensor, a slice of slices a 2-D tensor, and
//     so on (arrays too); the nesting must be rectangular, and a ragged one
//     is an error naming the first index whose length differs;
//   - a *Tensor gives a copy of it.
//
// Anything else (maps, structs, pointers, uint32, uint64, slices of any) is
// an error naming its Go type.
func FromValue(v any) (*Tensor, error) {
	if t, ok := v.(*Tensor); ok {
		if t == nil {
			return nil, fmt.Errorf("blob: nil tensor")
		}
		return t.CopyTo(t.Device())
	}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return nil, fmt.Errorf("blob: cannot make a tensor of nil")
	}
	var shape []int
	elem := rv.Type()
	for elem.Kind() == reflect.Slice || elem.Kind() == reflect.Array {
		elem = elem.Elem()
	}
	dtype, ok := valueTypes[elem]
	if !ok {
		return nil, fmt.Errorf("blob: cannot make a tensor of %T: its elements are %v, not one of float32, float64, Half, int, int8, int16, int32, int64, uint8, uint16, bool, string", v, elem)
	}
	for t, x := rv.Type(), rv; t.Kind() == reflect.Slice || t.Kind() == reflect.Array; t = t.Elem() {
		shape = append(shape, x.Len())
		if x.Len() > 0 {
			x = x.Index(0)
		}
	}
	if err := checkRectangular(rv, shape, "value"); err != nil {
		return nil, err
	}
	t, err := New(dtype, shape...)
	if err != nil {
		return nil, fmt.Errorf("blob: %T: %w", v, err)
	}
	flat := reflect.ValueOf(t.Raw())
	to := flat.Type().Elem()
	i := 0
	var fill func(x reflect.Value)
	fill = func(x reflect.Value) {
		if k := x.Kind(); k == reflect.Slice || k == reflect.Array {
			for j := range x.Len() {
				fill(x.Index(j))
			}
			return
		}
		flat.Index(i).Set(x.Convert(to))
		i++
	}
	fill(rv)
	return t, nil
}

// valueTypes maps the Go types FromValue accepts to their element types.
var valueTypes = map[reflect.Type]DataType{
	reflect.TypeFor[float32](): Float32,
	reflect.TypeFor[float64](): Float64,
	reflect.TypeFor[Half]():    Float16,
	reflect.TypeFor[int]():     Int64,
	reflect.TypeFor[int8]():    Int8,
	reflect.TypeFor[int16]():   Int16,
	reflect.TypeFor[int32]():   Int32,
	reflect.TypeFor[int64]():   Int64,
	reflect.TypeFor[uint8]():   Uint8,
	reflect.TypeFor[uint16]():  Uint16,
	reflect.TypeFor[bool]():    Bool,
	reflect.TypeFor[string]():  String,
}

// checkRectangular reports the first sub-slice of x whose length is not
// shape's.
func checkRectangular(x reflect.Value, shape []int, at string) error {
	if len(shape) == 0 {
		return nil
	}
	if x.Len() != shape[0] {
		return fmt.Errorf("blob: ragged nested slice: %s has length %d, the first of its level has %d", at, x.Len(), shape[0])
	}
	for j := range x.Len() {
		if err := checkRectangular(x.Index(j), shape[1:], fmt.Sprintf("%s[%d]", at, j)); err != nil {
			return err
		}
	}
	return nil
}
