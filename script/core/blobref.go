package core

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/script/internal/binding"
	"github.com/caffe2go/caffe2go/script/internal/convert"
)

// BlobReference names a blob, optionally remembering the net that made it
// (Caffe2's core.BlobReference). Its string form is the name; ref + "_s"
// appends to the name; ref.<Op>(inputs, outputs) adds an op reading ref to
// its net.
type BlobReference struct {
	name string
	net  *Net
}

// NewBlobReference returns a reference to the blob name of net (nil for
// none).
func NewBlobReference(name string, net *Net) *BlobReference {
	return &BlobReference{name: name, net: net}
}

var (
	_ starlark.HasAttrs   = (*BlobReference)(nil)
	_ starlark.HasBinary  = (*BlobReference)(nil)
	_ starlark.Comparable = (*BlobReference)(nil)
)

// BlobName returns the blob name.
func (r *BlobReference) BlobName() string { return r.name }

// String returns the blob name.
func (r *BlobReference) String() string { return r.name }

// Repr describes the reference for the REPL.
func (r *BlobReference) Repr() string { return fmt.Sprintf("BlobReference(%q)", r.name) }

// Type returns "BlobReference".
func (r *BlobReference) Type() string { return "BlobReference" }

// Freeze does nothing: references are immutable.
func (r *BlobReference) Freeze() {}

// Truth reports true.
func (r *BlobReference) Truth() starlark.Bool { return true }

// Hash hashes the name.
func (r *BlobReference) Hash() (uint32, error) { return starlark.String(r.name).Hash() }

// CompareSameType compares names.
func (r *BlobReference) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return starlark.CompareDepth(op, starlark.String(r.name), starlark.String(y.(*BlobReference).name), depth)
}

// Binary implements ref + "suffix" and "prefix" + ref.
func (r *BlobReference) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	if op != syntax.PLUS {
		return nil, nil
	}
	s, err := convert.BlobName(y)
	if err != nil {
		return nil, nil
	}
	if side == starlark.Left {
		return &BlobReference{name: r.name + s, net: r.net}, nil
	}
	return &BlobReference{name: s + r.name, net: r.net}, nil
}

var blobRefMethods = binding.NewMethodTable("BlobReference",
	"BlobReference(name, net=None): a blob name, optionally with the net that produced it.\n\n"+
		"ref.<Op>(inputs=None, outputs=None, **kw) adds an op to ref's net with ref as its first input.",
	[]binding.Fn{
		{Name: "Net", Doc: "Net()\n\nReturns the net the reference came from, or None.", Body: refNet},
		{Name: "GetNameScope", Doc: "GetNameScope()\n\nReturns the name-scope part of the name (\"gpu_0/fc_w\" -> \"gpu_0/\").", Body: refNameScope},
		{Name: "GetUnscopedName", Doc: "GetUnscopedName()\n\nReturns the name without its name scope.", Body: refUnscoped},
	})

// Attr returns a method, or an op builder that reads the reference.
func (r *BlobReference) Attr(name string) (starlark.Value, error) {
	if m := blobRefMethods.Bind(name, r); m != nil {
		return m, nil
	}
	if name == "" || name[0] < 'A' || name[0] > 'Z' {
		return nil, nil
	}
	if r.net == nil {
		return nil, fmt.Errorf("You cannot use a blob reference that does not have a net source to create operators (%s). Create the operator from an explicit net object.", name)
	}
	if !IsOperatorType(name) {
		return nil, unknownOperatorError(name)
	}
	typ := name
	return starlark.NewBuiltin("BlobReference."+typ, binding.Safe(func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var inputs starlark.Value = starlark.None
		if len(args) > 0 {
			inputs, args = args[0], args[1:]
		}
		var ins []starlark.Value
		switch x := inputs.(type) {
		case starlark.NoneType:
			ins = []starlark.Value{r}
		case starlark.String, *BlobReference:
			ins = []starlark.Value{r, x}
		case *starlark.List, starlark.Tuple:
			ins = append([]starlark.Value{r}, convert.IterValues(x.(starlark.Indexable))...)
		default:
			return nil, fmt.Errorf("%s: inputs must be a name, a BlobReference or a list, got %s", b.Name(), inputs.Type())
		}
		return starlark.Call(thread, opBuilder(typ, r.net), append(starlark.Tuple{starlark.NewList(ins)}, args...), kwargs)
	})), nil
}

// AttrNames lists the methods.
func (r *BlobReference) AttrNames() []string { return blobRefMethods.Names() }

func refNet(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	r := b.Receiver().(*BlobReference)
	if r.net == nil {
		return starlark.None, nil
	}
	return r.net, nil
}

func refNameScope(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	return starlark.String(devicescope.NameScopeOf(b.Receiver().(*BlobReference).name)), nil
}

func refUnscoped(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := binding.NoArgs(b, args, kwargs); err != nil {
		return nil, err
	}
	name := b.Receiver().(*BlobReference).name
	return starlark.String(name[len(devicescope.NameScopeOf(name)):]), nil
}
