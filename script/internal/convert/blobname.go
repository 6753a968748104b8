package convert

import (
	"fmt"

	"go.starlark.net/starlark"
)

// A BlobNamer is a Starlark value that stands for a blob: core's
// BlobReference. Bindings that take a blob name take one, and so do the
// string fields of messages.
type BlobNamer interface {
	starlark.Value
	BlobName() string
}

// BlobName reads a blob name: a string, bytes or a BlobNamer.
func BlobName(v starlark.Value) (string, error) {
	switch x := v.(type) {
	case starlark.String:
		return string(x), nil
	case BlobNamer:
		return x.BlobName(), nil
	case starlark.Bytes:
		return string(x), nil
	}
	return "", fmt.Errorf("want a blob name (a string or a BlobReference), got %s", v.Type())
}

// BlobNames reads a list of blob names.
func BlobNames(v starlark.Value) ([]string, error) {
	iter, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("want a list of blob names, got %s", v.Type())
	}
	if _, isStr := v.(starlark.String); isStr {
		return nil, fmt.Errorf("want a list of blob names, got a string")
	}
	var out []string
	it := iter.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		s, err := BlobName(x)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
