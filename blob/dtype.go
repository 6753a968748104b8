package blob

import (
	"fmt"
	"math"

	"github.com/caffe2go/caffe2go/netdef"
)

// DataType is a tensor element type. Its values are Caffe2's
// TensorProto.DataType numbers.
type DataType int32

// The element types a tensor can hold.
const (
	Undefined DataType = DataType(netdef.TensorProto_UNDEFINED)
	Float32   DataType = DataType(netdef.TensorProto_FLOAT)
	Int32     DataType = DataType(netdef.TensorProto_INT32)
	String    DataType = DataType(netdef.TensorProto_STRING)
	Bool      DataType = DataType(netdef.TensorProto_BOOL)
	Uint8     DataType = DataType(netdef.TensorProto_UINT8)
	Int8      DataType = DataType(netdef.TensorProto_INT8)
	Uint16    DataType = DataType(netdef.TensorProto_UINT16)
	Int16     DataType = DataType(netdef.TensorProto_INT16)
	Int64     DataType = DataType(netdef.TensorProto_INT64)
	Float16   DataType = DataType(netdef.TensorProto_FLOAT16)
	Float64   DataType = DataType(netdef.TensorProto_DOUBLE)
)

// Half is an IEEE 754 half-precision float, stored as its bit pattern.
type Half uint16

// Element is the set of Go types a tensor can hold.
type Element interface {
	float32 | float64 | Half | int8 | int16 | int32 | int64 | uint8 | uint16 | bool | string
}

// Number is the set of element types with arithmetic.
type Number interface {
	float32 | float64 | int8 | int16 | int32 | int64 | uint8 | uint16
}

// Float is the set of native floating-point element types.
type Float interface {
	float32 | float64
}

// String returns the Caffe2 name of the type ("FLOAT", "INT64", …).
func (d DataType) String() string {
	if s, ok := netdef.TensorProto_DataType_name[int32(d)]; ok {
		return s
	}
	return fmt.Sprintf("DataType(%d)", int32(d))
}

// Valid reports whether tensors of this type can be created.
func (d DataType) Valid() bool {
	switch d {
	case Float32, Float64, Float16, Int8, Int16, Int32, Int64, Uint8, Uint16, Bool, String:
		return true
	}
	return false
}

// ItemSize returns the size in bytes of one element (0 for String, whose
// elements vary).
func (d DataType) ItemSize() int {
	switch d {
	case Float64, Int64:
		return 8
	case Float32, Int32:
		return 4
	case Float16, Int16, Uint16:
		return 2
	case Int8, Uint8, Bool:
		return 1
	}
	return 0
}

// TypeOf returns the DataType of element type T.
func TypeOf[T Element]() DataType {
	var z T
	switch any(z).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case Half:
		return Float16
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case bool:
		return Bool
	case string:
		return String
	}
	return Undefined
}

func makeSlice(d DataType, n int) any {
	switch d {
	case Float32:
		return make([]float32, n)
	case Float64:
		return make([]float64, n)
	case Float16:
		return make([]Half, n)
	case Int8:
		return make([]int8, n)
	case Int16:
		return make([]int16, n)
	case Int32:
		return make([]int32, n)
	case Int64:
		return make([]int64, n)
	case Uint8:
		return make([]uint8, n)
	case Uint16:
		return make([]uint16, n)
	case Bool:
		return make([]bool, n)
	case String:
		return make([]string, n)
	}
	return nil
}

// HalfFromFloat32 rounds f to the nearest half-precision value (ties to even).
func HalfFromFloat32(f float32) Half {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if mant != 0 {
			return Half(sign | 0x7e00)
		}
		return Half(sign | 0x7c00)
	case exp-127+15 >= 0x1f: // overflow
		return Half(sign | 0x7c00)
	case exp-127+15 <= 0: // subnormal or zero
		if exp-127+15 < -10 {
			return Half(sign)
		}
		mant |= 0x800000
		shift := uint32(14 - (exp - 127 + 15))
		h := mant >> shift
		rem := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return Half(sign | uint16(h))
	}
	h := uint32(exp-127+15)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which is the correct rounding
	}
	return Half(sign | uint16(h))
}

// Float32 converts h to float32 exactly.
func (h Half) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: normalize.
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
