package caffe2pb2

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// messageType is a callable that creates messages of one caffe2.proto type
// (caffe2_pb2.NetDef(name = "n")) and exposes its nested enum values
// (caffe2_pb2.TensorProto.FLOAT).
type messageType struct {
	proto func() proto.Message
	name  string
}

var _ starlark.Callable = messageType{}

// String describes the type: <message type NetDef>.
func (t messageType) String() string { return "<message type " + t.name + ">" }

// Type returns "message_type".
func (t messageType) Type() string { return "message_type" }

// Freeze does nothing: message types are immutable.
func (t messageType) Freeze() {}

// Truth reports true.
func (t messageType) Truth() starlark.Bool { return true }

// Hash hashes the type's name.
func (t messageType) Hash() (uint32, error) { return starlark.String(t.name).Hash() }

// Name returns the type's name, for Callable.
func (t messageType) Name() string { return t.name }

// CallInternal creates a message, setting the fields given as keywords.
func (t messageType) CallInternal(_ *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("%s: fields must be given as keywords", t.name)
	}
	m := NewMessage(t.proto())
	for _, kv := range kwargs {
		if err := m.SetField(string(kv[0].(starlark.String)), kv[1]); err != nil {
			return nil, fmt.Errorf("%s: %v", t.name, err)
		}
	}
	return m, nil
}

// Attr returns the values of the message's nested enums.
func (t messageType) Attr(name string) (starlark.Value, error) {
	enums := t.proto().ProtoReflect().Descriptor().Enums()
	for i := 0; i < enums.Len(); i++ {
		if v := enums.Get(i).Values().ByName(protoreflect.Name(name)); v != nil {
			return starlark.MakeInt(int(v.Number())), nil
		}
	}
	return nil, nil
}

// AttrNames lists the nested enum values.
func (t messageType) AttrNames() []string {
	var names []string
	enums := t.proto().ProtoReflect().Descriptor().Enums()
	for i := 0; i < enums.Len(); i++ {
		vals := enums.Get(i).Values()
		for j := 0; j < vals.Len(); j++ {
			names = append(names, string(vals.Get(j).Name()))
		}
	}
	sort.Strings(names)
	return names
}
