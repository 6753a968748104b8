package binding

import (
	"fmt"
	"runtime/debug"
	"sort"
	"sync"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Func is the Go body of a Starlark built-in function or method.
type Func = func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)

// Fn describes one built-in function of a module or one method of a type:
// its name, its documentation (first line: the call signature) and its body.
type Fn struct {
	Name string
	Doc  string
	Body Func
}

// registry holds the documentation of qualified names ("workspace.FeedBlob",
// "ndarray.reshape") and the method tables by type name. It is filled while
// the module packages initialize and read afterwards.
var registry = struct {
	sync.RWMutex
	docs   map[string]string
	tables map[string]*MethodTable
}{docs: map[string]string{}, tables: map[string]*MethodTable{}}

// SetDoc records the documentation of a qualified name.
func SetDoc(name, doc string) {
	registry.Lock()
	registry.docs[name] = doc
	registry.Unlock()
}

// DocOf returns the documentation of a qualified name.
func DocOf(name string) (string, bool) {
	registry.RLock()
	defer registry.RUnlock()
	d, ok := registry.docs[name]
	return d, ok
}

// Safe wraps a built-in body so that a Go panic inside it comes back to the
// script as an error instead of crashing the interpreter.
func Safe(body Func) Func {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
		defer func() {
			if r := recover(); r != nil {
				v, err = nil, fmt.Errorf("internal error in %s: %v\n%s", b.Name(), r, debug.Stack())
			}
		}()
		return body(thread, b, args, kwargs)
	}
}

// ModuleSpec describes a Starlark module: its name, documentation,
// functions and constant members.
type ModuleSpec struct {
	Name  string
	Doc   string
	Funcs []Fn
	// Values, when set, returns the constant members.
	Values func() starlark.StringDict
}

// NewModule records the documentation of the module and its functions and
// returns the module. Its functions hold no state, so that one module value
// serves every interpreter.
func NewModule(spec ModuleSpec) *starlarkstruct.Module {
	SetDoc(spec.Name, spec.Doc)
	members := starlark.StringDict{}
	for _, f := range spec.Funcs {
		SetDoc(spec.Name+"."+f.Name, f.Doc)
		members[f.Name] = starlark.NewBuiltin(spec.Name+"."+f.Name, Safe(f.Body))
	}
	if spec.Values != nil {
		for k, v := range spec.Values() {
			members[k] = v
		}
	}
	return &starlarkstruct.Module{Name: spec.Name, Members: members}
}

// MethodTable holds the methods of a Starlark type, bound on attribute
// lookup.
type MethodTable struct {
	typeName string
	byName   map[string]Fn
}

// NewMethodTable records the documentation of a type and its methods and
// returns the table of the methods, which MethodTableOf finds by typeName.
func NewMethodTable(typeName, doc string, methods []Fn) *MethodTable {
	t := &MethodTable{typeName: typeName, byName: map[string]Fn{}}
	SetDoc(typeName, doc)
	for _, m := range methods {
		t.byName[m.Name] = m
		SetDoc(typeName+"."+m.Name, m.Doc)
	}
	registry.Lock()
	registry.tables[typeName] = t
	registry.Unlock()
	return t
}

// MethodTableOf returns the method table of a type name.
func MethodTableOf(typeName string) (*MethodTable, bool) {
	registry.RLock()
	defer registry.RUnlock()
	t, ok := registry.tables[typeName]
	return t, ok
}

// MethodTables returns every method table, sorted by type name.
func MethodTables() []*MethodTable {
	registry.RLock()
	out := make([]*MethodTable, 0, len(registry.tables))
	for _, t := range registry.tables {
		out = append(out, t)
	}
	registry.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].typeName < out[j].typeName })
	return out
}

// TypeName returns the name of the type the methods belong to.
func (t *MethodTable) TypeName() string { return t.typeName }

// Bind returns the named method bound to recv, or nil when there is none.
func (t *MethodTable) Bind(name string, recv starlark.Value) starlark.Value {
	m, ok := t.byName[name]
	if !ok {
		return nil
	}
	return starlark.NewBuiltin(t.typeName+"."+name, Safe(m.Body)).BindReceiver(recv)
}

// Names returns the method names, sorted.
func (t *MethodTable) Names() []string {
	out := make([]string, 0, len(t.byName))
	for n := range t.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// NoArgs checks that a function or method got no arguments.
func NoArgs(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) error {
	return starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0)
}
