package core

import (
	"fmt"
	"maps"
	"slices"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/operators"
)

// gradientMap is the dict AddGradientOperators returns: blob name ->
// gradient. Like Caffe2's, it is indexed by a name or a BlobReference
// (grads["w"], grads[w]); otherwise it behaves as a read-only dict.
type gradientMap struct {
	d *starlark.Dict
}

var (
	_ starlark.IterableMapping = (*gradientMap)(nil)
	_ starlark.Sequence        = (*gradientMap)(nil)
	_ starlark.HasAttrs        = (*gradientMap)(nil)
)

// Gradients returns the dict AddGradientOperators returns for grads: each
// blob's gradient as a BlobReference of net, or as a GradientSlice for a
// sparse one, in the order of the blob names.
func Gradients(grads map[string]operators.Gradient, net *Net) starlark.Value {
	d := starlark.NewDict(len(grads))
	for _, k := range slices.Sorted(maps.Keys(grads)) {
		g := grads[k]
		var v starlark.Value = &BlobReference{name: g.Dense, net: net}
		if g.IsSparse() {
			v = &GradientSlice{indices: g.Indices, values: g.Values}
		}
		// The keys are distinct strings, so SetKey cannot fail.
		_ = d.SetKey(starlark.String(k), v)
	}
	return &gradientMap{d: d}
}

// String formats the gradients as a dict.
func (g *gradientMap) String() string { return g.d.String() }

// Type returns "dict".
func (g *gradientMap) Type() string { return "dict" }

// Freeze freezes the dict.
func (g *gradientMap) Freeze() { g.d.Freeze() }

// Truth reports whether there is a gradient.
func (g *gradientMap) Truth() starlark.Bool { return g.d.Truth() }

// Hash fails: dicts are unhashable.
func (g *gradientMap) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: dict") }

// Len returns the number of gradients.
func (g *gradientMap) Len() int { return g.d.Len() }

// Iterate iterates over the blob names.
func (g *gradientMap) Iterate() starlark.Iterator {
	return g.d.Iterate()
}

// Items returns the (blob name, gradient) pairs.
func (g *gradientMap) Items() []starlark.Tuple { return g.d.Items() }

// Get looks a gradient up by blob name or BlobReference.
func (g *gradientMap) Get(k starlark.Value) (starlark.Value, bool, error) {
	if r, ok := k.(*BlobReference); ok {
		k = starlark.String(r.name)
	}
	return g.d.Get(k)
}

// Attr returns the read-only dict methods (keys, values, items, get).
func (g *gradientMap) Attr(name string) (starlark.Value, error) {
	switch name {
	case "keys", "values", "items", "get":
		if name == "get" {
			return starlark.NewBuiltin("dict.get", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				var k, dflt starlark.Value = nil, starlark.None
				if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &k, &dflt); err != nil {
					return nil, err
				}
				v, found, err := g.Get(k)
				if err != nil || !found {
					return dflt, err
				}
				return v, nil
			}), nil
		}
		return g.d.Attr(name)
	}
	return nil, nil
}

// AttrNames lists keys, values, items and get.
func (g *gradientMap) AttrNames() []string { return []string{"get", "items", "keys", "values"} }
