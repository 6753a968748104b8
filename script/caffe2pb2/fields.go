package caffe2pb2

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/script/internal/convert"
)

// scalarToStarlark converts the value of a singular field (or of one
// element of a repeated one) to a Starlark value.
func scalarToStarlark(fd protoreflect.FieldDescriptor, v protoreflect.Value) starlark.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return starlark.Bool(v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return starlark.MakeInt64(v.Int())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return starlark.MakeUint64(v.Uint())
	case protoreflect.FloatKind:
		return convert.Float32Value(float32(v.Float()))
	case protoreflect.DoubleKind:
		return starlark.Float(v.Float())
	case protoreflect.StringKind:
		return starlark.String(v.String())
	case protoreflect.BytesKind:
		return starlark.Bytes(v.Bytes())
	case protoreflect.EnumKind:
		return starlark.MakeInt64(int64(v.Enum()))
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return &Message{msg: v.Message(), frozen: new(bool)}
	}
	return starlark.None
}

// toProtoValue converts a Starlark value to a value of field fd (of one
// element of a repeated field): numbers and bools to the field's kind,
// strings, bytes and blob references to strings and bytes, a message or a
// Net (for a NetDef field) to a copy of it.
func toProtoValue(fd protoreflect.FieldDescriptor, v starlark.Value) (protoreflect.Value, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		switch x := v.(type) {
		case starlark.Bool:
			return protoreflect.ValueOfBool(bool(x)), nil
		case starlark.Int:
			i, ok := x.Int64()
			return protoreflect.ValueOfBool(i != 0), boolErr(ok, v)
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if i, ok := convert.IntOf(v); ok && i >= math.MinInt32 && i <= math.MaxInt32 {
			return protoreflect.ValueOfInt32(int32(i)), nil
		}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if i, ok := convert.IntOf(v); ok {
			return protoreflect.ValueOfInt64(i), nil
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if i, ok := convert.IntOf(v); ok && i >= 0 && i <= math.MaxUint32 {
			return protoreflect.ValueOfUint32(uint32(i)), nil
		}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if i, ok := convert.IntOf(v); ok && i >= 0 {
			return protoreflect.ValueOfUint64(uint64(i)), nil
		}
	case protoreflect.EnumKind:
		if i, ok := convert.IntOf(v); ok && i >= math.MinInt32 && i <= math.MaxInt32 {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(i)), nil
		}
	case protoreflect.FloatKind:
		if f, ok := starlark.AsFloat(v); ok {
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
	case protoreflect.DoubleKind:
		if f, ok := starlark.AsFloat(v); ok {
			return protoreflect.ValueOfFloat64(f), nil
		}
	case protoreflect.StringKind:
		switch x := v.(type) {
		case starlark.String:
			return protoreflect.ValueOfString(string(x)), nil
		case starlark.Bytes:
			return protoreflect.ValueOfString(string(x)), nil
		case convert.BlobNamer:
			return protoreflect.ValueOfString(x.BlobName()), nil
		}
	case protoreflect.BytesKind:
		switch x := v.(type) {
		case starlark.String:
			return protoreflect.ValueOfBytes([]byte(x)), nil
		case starlark.Bytes:
			return protoreflect.ValueOfBytes([]byte(x)), nil
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		var src proto.Message
		switch x := v.(type) {
		case *Message:
			src = x.msg.Interface()
		case netdef.NetSource:
			src = x.Proto()
		}
		if src != nil && src.ProtoReflect().Descriptor() == fd.Message() {
			return protoreflect.ValueOfMessage(proto.Clone(src).ProtoReflect()), nil
		}
		return protoreflect.Value{}, fmt.Errorf("want a %s, got %s", fd.Message().FullName(), v.Type())
	}
	return protoreflect.Value{}, fmt.Errorf("cannot store %s %s in a %s field", v.Type(), v, fd.Kind())
}

// boolErr is the error of a bool field given an int that is too large.
func boolErr(ok bool, v starlark.Value) error {
	if ok {
		return nil
	}
	return fmt.Errorf("cannot store %s in a bool field", v)
}
