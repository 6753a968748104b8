package caffe2pb2

import (
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
)

// Message is a Starlark value wrapping a live protobuf message of
// caffe2.proto (a NetDef, OperatorDef, DeviceOption, …). Fields read and
// write as attributes with the proto's field names, as Caffe2's Python
// messages do: net.Proto().type = "dag", op.input[0], len(net.Proto().op).
// Repeated fields are live lists; a message field that is not set reads as
// an empty message that is attached to its parent on the first write.
// Printing a Message shows it in the protobuf text format.
type Message struct {
	msg    protoreflect.Message
	frozen *bool
	// attach, while non-nil, stores the message into its parent's unset
	// field; it runs before the first write.
	attach func()
}

// NewMessage wraps m. The Starlark value shares m: edits made by a script
// change m.
func NewMessage(m proto.Message) *Message {
	return &Message{msg: m.ProtoReflect(), frozen: new(bool)}
}

// Proto returns the wrapped message.
func (m *Message) Proto() proto.Message { return m.msg.Interface() }

var (
	_ starlark.HasSetField = (*Message)(nil)
	_ starlark.Comparable  = (*Message)(nil)
)

// String returns the message in the protobuf text format.
func (m *Message) String() string {
	b, err := netdef.MarshalText(m.msg.Interface())
	if err != nil {
		return fmt.Sprintf("<%s: %v>", m.Type(), err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// Type returns the message's type name, such as "caffe2.NetDef".
func (m *Message) Type() string { return string(m.msg.Descriptor().FullName()) }

// Truth reports true: messages are always truthy.
func (m *Message) Truth() starlark.Bool { return true }

// Freeze makes the message and every value read from it read-only.
func (m *Message) Freeze() { *m.frozen = true }

// Hash fails: messages are mutable, hence unhashable, as in Python.
func (m *Message) Hash() (uint32, error) {
	return 0, fmt.Errorf("unhashable type: %s", m.Type())
}

// CompareSameType compares two messages of the same type field by field
// (== and != only).
func (m *Message) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	o := y.(*Message)
	eq := proto.Equal(m.msg.Interface(), o.msg.Interface())
	switch op {
	case syntax.EQL:
		return eq, nil
	case syntax.NEQ:
		return !eq, nil
	}
	return false, fmt.Errorf("%s %s %s not implemented", m.Type(), op, o.Type())
}

func (m *Message) checkMutable() error {
	if *m.frozen {
		return fmt.Errorf("cannot modify frozen %s", m.Type())
	}
	if m.attach != nil {
		m.attach()
		m.attach = nil
	}
	return nil
}

var messageMethods = binding.NewMethodTable("Message",
	"A protobuf message of caffe2.proto. Fields are attributes; printing shows the text format.",
	[]binding.Fn{
		{Name: "CopyFrom", Doc: "CopyFrom(other)\n\nReplaces every field with a copy of other's (a message of the same type).", Body: msgCopyFrom},
		{Name: "SerializeToString", Doc: "SerializeToString()\n\nReturns the message in the binary wire format, as bytes.", Body: msgSerialize},
		{Name: "ParseFromString", Doc: "ParseFromString(data)\n\nReplaces the message with one decoded from the binary wire format.", Body: msgParse},
		{Name: "HasField", Doc: "HasField(name)\n\nReports whether a singular field is set.", Body: msgHasField},
		{Name: "ClearField", Doc: "ClearField(name)\n\nClears a field.", Body: msgClearField},
	})

// Attr returns a field's value or a method.
func (m *Message) Attr(name string) (starlark.Value, error) {
	if v := messageMethods.Bind(name, m); v != nil {
		return v, nil
	}
	fd := m.msg.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		return nil, starlark.NoSuchAttrError(fmt.Sprintf("%s has no field or method .%s", m.Type(), name))
	}
	return m.field(fd), nil
}

// AttrNames lists the field names and the methods.
func (m *Message) AttrNames() []string {
	var names []string
	fields := m.msg.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		names = append(names, string(fields.Get(i).Name()))
	}
	names = append(names, messageMethods.Names()...)
	sort.Strings(names)
	return names
}

func (m *Message) field(fd protoreflect.FieldDescriptor) starlark.Value {
	switch {
	case fd.IsList():
		return &RepeatedField{parent: m, fd: fd}
	case fd.IsMap():
		return starlark.None
	case fd.Message() != nil:
		if m.msg.Has(fd) {
			return &Message{msg: m.msg.Get(fd).Message(), frozen: m.frozen}
		}
		child := m.msg.NewField(fd).Message()
		c := &Message{msg: child, frozen: m.frozen}
		c.attach = func() {
			if m.attach != nil {
				m.attach()
				m.attach = nil
			}
			m.msg.Set(fd, protoreflect.ValueOfMessage(child))
		}
		return c
	}
	return scalarToStarlark(fd, m.msg.Get(fd))
}

// SetField assigns a field. A repeated field takes any iterable; a message
// field takes a message of its type (copied).
func (m *Message) SetField(name string, v starlark.Value) error {
	fd := m.msg.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		return starlark.NoSuchAttrError(fmt.Sprintf("%s has no field .%s", m.Type(), name))
	}
	if err := m.checkMutable(); err != nil {
		return err
	}
	if fd.IsList() {
		iter, ok := v.(starlark.Iterable)
		if !ok {
			return fmt.Errorf("%s.%s: want an iterable, got %s", m.Type(), name, v.Type())
		}
		var vals []protoreflect.Value
		it := iter.Iterate()
		defer it.Done()
		var x starlark.Value
		for it.Next(&x) {
			pv, err := toProtoValue(fd, x)
			if err != nil {
				return fmt.Errorf("%s.%s: %v", m.Type(), name, err)
			}
			vals = append(vals, pv)
		}
		l := m.msg.Mutable(fd).List()
		l.Truncate(0)
		for _, pv := range vals {
			l.Append(pv)
		}
		return nil
	}
	if v == starlark.None {
		m.msg.Clear(fd)
		return nil
	}
	pv, err := toProtoValue(fd, v)
	if err != nil {
		return fmt.Errorf("%s.%s: %v", m.Type(), name, err)
	}
	m.msg.Set(fd, pv)
	return nil
}

func msgCopyFrom(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	m := b.Receiver().(*Message)
	var other *Message
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &other); err != nil {
		return nil, err
	}
	if other.msg.Descriptor() != m.msg.Descriptor() {
		return nil, fmt.Errorf("%s: want a %s, got %s", b.Name(), m.Type(), other.Type())
	}
	if err := m.checkMutable(); err != nil {
		return nil, err
	}
	src := proto.Clone(other.msg.Interface())
	proto.Reset(m.msg.Interface())
	proto.Merge(m.msg.Interface(), src)
	return starlark.None, nil
}

func msgSerialize(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	m := b.Receiver().(*Message)
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	data, err := netdef.Marshal(m.msg.Interface())
	if err != nil {
		return nil, err
	}
	return starlark.Bytes(data), nil
}

func msgParse(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	m := b.Receiver().(*Message)
	var data starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &data); err != nil {
		return nil, err
	}
	raw, ok := convert.BytesOf(data)
	if !ok {
		return nil, fmt.Errorf("%s: want bytes, got %s", b.Name(), data.Type())
	}
	if err := m.checkMutable(); err != nil {
		return nil, err
	}
	fresh := m.msg.New().Interface()
	if err := proto.Unmarshal(raw, fresh); err != nil {
		return nil, fmt.Errorf("%s: cannot parse %s: %v", b.Name(), m.Type(), err)
	}
	proto.Reset(m.msg.Interface())
	proto.Merge(m.msg.Interface(), fresh)
	return starlark.None, nil
}

func msgFieldArg(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (*Message, protoreflect.FieldDescriptor, error) {
	m := b.Receiver().(*Message)
	var name string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &name); err != nil {
		return nil, nil, err
	}
	fd := m.msg.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		return nil, nil, fmt.Errorf("%s: %s has no field %q", b.Name(), m.Type(), name)
	}
	return m, fd, nil
}

func msgHasField(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	m, fd, err := msgFieldArg(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	if fd.IsList() {
		return nil, fmt.Errorf("%s: %q is a repeated field", b.Name(), fd.Name())
	}
	return starlark.Bool(m.msg.Has(fd)), nil
}

func msgClearField(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	m, fd, err := msgFieldArg(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	if err := m.checkMutable(); err != nil {
		return nil, err
	}
	m.msg.Clear(fd)
	return starlark.None, nil
}
