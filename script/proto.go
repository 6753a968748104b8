package script

import (
	"fmt"
	"math"
	"sort"
	"strconv"
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
		case *BlobReference:
			return protoreflect.ValueOfString(x.name), nil
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
		case *Net:
			src = x.net.Proto()
		}
		if src != nil && src.ProtoReflect().Descriptor() == fd.Message() {
			return protoreflect.ValueOfMessage(proto.Clone(src).ProtoReflect()), nil
		}
		return protoreflect.Value{}, fmt.Errorf("want a %s, got %s", fd.Message().FullName(), v.Type())
	}
	return protoreflect.Value{}, fmt.Errorf("cannot store %s %s in a %s field", v.Type(), v, fd.Kind())
}

func boolErr(ok bool, v starlark.Value) error {
	if ok {
		return nil
	}
	return fmt.Errorf("cannot store %s in a bool field", v)
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

// RepeatedField is a live view of a repeated field of a Message: indexing,
// iteration, len, append and extend act on the message itself.
type RepeatedField struct {
	parent *Message
	fd     protoreflect.FieldDescriptor
}

var (
	_ starlark.Indexable   = (*RepeatedField)(nil)
	_ starlark.HasSetIndex = (*RepeatedField)(nil)
	_ starlark.Iterable    = (*RepeatedField)(nil)
	_ starlark.Comparable  = (*RepeatedField)(nil)
)

func (r *RepeatedField) list() protoreflect.List {
	if r.parent.msg.Has(r.fd) {
		return r.parent.msg.Get(r.fd).List()
	}
	return r.parent.msg.NewField(r.fd).List()
}

func (r *RepeatedField) mutableList() (protoreflect.List, error) {
	if err := r.parent.checkMutable(); err != nil {
		return nil, err
	}
	return r.parent.msg.Mutable(r.fd).List(), nil
}

// String formats the field like a list.
func (r *RepeatedField) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < r.Len(); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		v := r.Index(i)
		if s, ok := v.(starlark.String); ok {
			b.WriteString(strconv.Quote(string(s)))
		} else {
			b.WriteString(v.String())
		}
	}
	b.WriteByte(']')
	return b.String()
}

// Type returns "repeated <field type>".
func (r *RepeatedField) Type() string { return "repeated " + kindName(r.fd) }

func kindName(fd protoreflect.FieldDescriptor) string {
	if fd.Message() != nil {
		return string(fd.Message().FullName())
	}
	return fd.Kind().String()
}

// Freeze freezes the message the field belongs to.
func (r *RepeatedField) Freeze() { r.parent.Freeze() }

// Truth reports whether the field is non-empty.
func (r *RepeatedField) Truth() starlark.Bool { return r.Len() > 0 }

// Hash fails: repeated fields are mutable.
func (r *RepeatedField) Hash() (uint32, error) {
	return 0, fmt.Errorf("unhashable type: %s", r.Type())
}

// Len returns the number of elements.
func (r *RepeatedField) Len() int { return r.list().Len() }

// Index returns element i.
func (r *RepeatedField) Index(i int) starlark.Value {
	v := r.list().Get(i)
	if r.fd.Message() != nil {
		return &Message{msg: v.Message(), frozen: r.parent.frozen}
	}
	return scalarToStarlark(r.fd, v)
}

// SetIndex replaces element i.
func (r *RepeatedField) SetIndex(i int, v starlark.Value) error {
	pv, err := toProtoValue(r.fd, v)
	if err != nil {
		return err
	}
	l, err := r.mutableList()
	if err != nil {
		return err
	}
	l.Set(i, pv)
	return nil
}

// Iterate iterates over the elements.
func (r *RepeatedField) Iterate() starlark.Iterator { return &repeatedIter{r: r} }

type repeatedIter struct {
	r *RepeatedField
	i int
}

func (it *repeatedIter) Next(p *starlark.Value) bool {
	if it.i >= it.r.Len() {
		return false
	}
	*p = it.r.Index(it.i)
	it.i++
	return true
}

func (it *repeatedIter) Done() {}

// CompareSameType compares element by element (== and != only).
func (r *RepeatedField) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	a, b := starlark.NewList(nil), starlark.NewList(nil)
	for i := 0; i < r.Len(); i++ {
		_ = a.Append(r.Index(i))
	}
	o := y.(*RepeatedField)
	for i := 0; i < o.Len(); i++ {
		_ = b.Append(o.Index(i))
	}
	return starlark.CompareDepth(op, a, b, depth)
}

var repeatedMethods = binding.NewMethodTable("repeated",
	"A repeated field of a protobuf message: a live list.",
	[]binding.Fn{
		{Name: "append", Doc: "append(x)\n\nAppends x to the field.", Body: repeatedAppend},
		{Name: "extend", Doc: "extend(xs)\n\nAppends every element of the iterable xs.", Body: repeatedExtend},
	})

// Attr returns append or extend.
func (r *RepeatedField) Attr(name string) (starlark.Value, error) {
	return repeatedMethods.Bind(name, r), nil
}

// AttrNames lists the methods.
func (r *RepeatedField) AttrNames() []string { return repeatedMethods.Names() }

func repeatedAppend(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	r := b.Receiver().(*RepeatedField)
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x); err != nil {
		return nil, err
	}
	pv, err := toProtoValue(r.fd, x)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	l, err := r.mutableList()
	if err != nil {
		return nil, err
	}
	l.Append(pv)
	return starlark.None, nil
}

func repeatedExtend(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	r := b.Receiver().(*RepeatedField)
	var xs starlark.Iterable
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &xs); err != nil {
		return nil, err
	}
	var vals []protoreflect.Value
	it := xs.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		pv, err := toProtoValue(r.fd, x)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		vals = append(vals, pv)
	}
	l, err := r.mutableList()
	if err != nil {
		return nil, err
	}
	for _, pv := range vals {
		l.Append(pv)
	}
	return starlark.None, nil
}

// messageType is a callable that creates messages of one caffe2.proto type
// (caffe2_pb2.NetDef(name = "n")) and exposes its nested enum values
// (caffe2_pb2.TensorProto.FLOAT).
type messageType struct {
	proto func() proto.Message
	name  string
}

var _ starlark.Callable = messageType{}

func (t messageType) String() string        { return "<message type " + t.name + ">" }
func (t messageType) Type() string          { return "message_type" }
func (t messageType) Freeze()               {}
func (t messageType) Truth() starlark.Bool  { return true }
func (t messageType) Hash() (uint32, error) { return starlark.String(t.name).Hash() }
func (t messageType) Name() string          { return t.name }

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

var protoTypes = []messageType{
	{func() proto.Message { return &netdef.NetDef{} }, "NetDef"},
	{func() proto.Message { return &netdef.OperatorDef{} }, "OperatorDef"},
	{func() proto.Message { return &netdef.Argument{} }, "Argument"},
	{func() proto.Message { return &netdef.DeviceOption{} }, "DeviceOption"},
	{func() proto.Message { return &netdef.PlanDef{} }, "PlanDef"},
	{func() proto.Message { return &netdef.ExecutionStep{} }, "ExecutionStep"},
	{func() proto.Message { return &netdef.TensorProto{} }, "TensorProto"},
	{func() proto.Message { return &netdef.TensorProtos{} }, "TensorProtos"},
	{func() proto.Message { return &netdef.TensorShape{} }, "TensorShape"},
	{func() proto.Message { return &netdef.BlobProto{} }, "BlobProto"},
}

var caffe2pb2Module = binding.NewModule(binding.ModuleSpec{
	Name: "caffe2_pb2",
	Doc: "caffe2_pb2: the message types of caffe2.proto.\n\n" +
		"Each type is a constructor taking fields as keywords, e.g. caffe2_pb2.OperatorDef(type = \"Relu\", input = [\"x\"]);\n" +
		"nested enum values are its attributes (caffe2_pb2.TensorProto.FLOAT). CPU and CUDA are the device types.",
	Values: func() starlark.StringDict {
		d := starlark.StringDict{
			"CPU":  starlark.MakeInt(int(netdef.CPU)),
			"CUDA": starlark.MakeInt(int(netdef.CUDA)),
		}
		for _, t := range protoTypes {
			d[t.name] = t
		}
		return d
	},
})

func init() {
	for _, t := range protoTypes {
		binding.SetDoc("caffe2_pb2."+t.name, t.name+"(**fields)\n\nReturns a new caffe2."+t.name+" message with the given fields set.")
	}
}
