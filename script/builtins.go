package script

import (
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// builtinFunc is the Go body of a Starlark built-in function or method.
type builtinFunc = func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)

// fn describes one built-in function of a module or one method of a type:
// its name, its documentation (first line: the call signature) and its body.
type fn struct {
	name string
	doc  string
	body builtinFunc
}

// docs maps qualified names ("workspace.FeedBlob", "ndarray.reshape") to
// their documentation. It is filled while the package initializes and read
// afterwards.
var docs = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

func setDoc(name, doc string) {
	docs.Lock()
	docs.m[name] = doc
	docs.Unlock()
}

func docOf(name string) (string, bool) {
	docs.RLock()
	defer docs.RUnlock()
	d, ok := docs.m[name]
	return d, ok
}

// safe wraps a built-in body so that a Go panic inside it comes back to the
// script as an error instead of crashing the interpreter.
func safe(body builtinFunc) builtinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
		defer func() {
			if r := recover(); r != nil {
				v, err = nil, fmt.Errorf("internal error in %s: %v\n%s", b.Name(), r, debug.Stack())
			}
		}()
		return body(thread, b, args, kwargs)
	}
}

// moduleSpec describes a Starlark module: its name, documentation,
// functions and constant members.
type moduleSpec struct {
	name   string
	doc    string
	funcs  []fn
	values func() starlark.StringDict
}

// register records the documentation of the module and its functions.
func (m *moduleSpec) register() *moduleSpec {
	setDoc(m.name, m.doc)
	for _, f := range m.funcs {
		setDoc(m.name+"."+f.name, f.doc)
	}
	return m
}

// build instantiates the module.
func (m *moduleSpec) build() *starlarkstruct.Module {
	members := starlark.StringDict{}
	for _, f := range m.funcs {
		members[f.name] = starlark.NewBuiltin(m.name+"."+f.name, safe(f.body))
	}
	if m.values != nil {
		for k, v := range m.values() {
			members[k] = v
		}
	}
	return &starlarkstruct.Module{Name: m.name, Members: members}
}

// methodTable holds the methods of a Starlark type, bound on attribute
// lookup.
type methodTable struct {
	typeName string
	byName   map[string]fn
}

func newMethodTable(typeName, doc string, methods []fn) *methodTable {
	t := &methodTable{typeName: typeName, byName: map[string]fn{}}
	setDoc(typeName, doc)
	for _, m := range methods {
		t.byName[m.name] = m
		setDoc(typeName+"."+m.name, m.doc)
	}
	return t
}

// bind returns the named method bound to recv, or nil when there is none.
func (t *methodTable) bind(name string, recv starlark.Value) starlark.Value {
	m, ok := t.byName[name]
	if !ok {
		return nil
	}
	return starlark.NewBuiltin(t.typeName+"."+name, safe(m.body)).BindReceiver(recv)
}

// names returns the method names, sorted.
func (t *methodTable) names() []string {
	out := make([]string, 0, len(t.byName))
	for n := range t.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
