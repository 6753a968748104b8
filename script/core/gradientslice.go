package core

import (
	"fmt"

	"go.starlark.net/starlark"
)

// GradientSlice is a sparse gradient: the names of its indices and values
// blobs (Caffe2's core.GradientSlice).
type GradientSlice struct {
	indices, values string
}

var _ starlark.HasAttrs = (*GradientSlice)(nil)

// String formats the slice as Caffe2's namedtuple prints.
func (g *GradientSlice) String() string {
	return fmt.Sprintf("GradientSlice(indices=%s, values=%s)", g.indices, g.values)
}

// Type returns "GradientSlice".
func (g *GradientSlice) Type() string { return "GradientSlice" }

// Freeze does nothing: slices are immutable.
func (g *GradientSlice) Freeze() {}

// Truth reports true.
func (g *GradientSlice) Truth() starlark.Bool { return true }

// Hash hashes both names.
func (g *GradientSlice) Hash() (uint32, error) {
	return starlark.String(g.indices + "\x00" + g.values).Hash()
}

// Attr returns indices or values as BlobReferences.
func (g *GradientSlice) Attr(name string) (starlark.Value, error) {
	switch name {
	case "indices":
		return &BlobReference{name: g.indices}, nil
	case "values":
		return &BlobReference{name: g.values}, nil
	}
	return nil, nil
}

// AttrNames lists indices and values.
func (g *GradientSlice) AttrNames() []string { return []string{"indices", "values"} }
