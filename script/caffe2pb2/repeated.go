package caffe2pb2

import (
	"fmt"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/caffe2go/caffe2go/script/internal/binding"
)

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

// Next yields the next element.
func (it *repeatedIter) Next(p *starlark.Value) bool {
	if it.i >= it.r.Len() {
		return false
	}
	*p = it.r.Index(it.i)
	it.i++
	return true
}

// Done does nothing: the iteration holds no resources.
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
