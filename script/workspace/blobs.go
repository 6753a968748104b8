package workspace

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/script/internal/convert"
	"github.com/caffe2go/caffe2go/workspace"
)

// blobsView is workspace.blobs: a dict-like view of the current workspace.
type blobsView struct{}

var (
	_ starlark.Mapping   = blobsView{}
	_ starlark.HasSetKey = blobsView{}
	_ starlark.Iterable  = blobsView{}
	_ starlark.Sequence  = blobsView{}
)

// String names the current workspace.
func (blobsView) String() string {
	return fmt.Sprintf("<blobs of workspace %q>", workspace.CurrentWorkspace())
}

// Type returns "workspace.blobs".
func (blobsView) Type() string { return "workspace.blobs" }

// Freeze does nothing: the view holds no state.
func (blobsView) Freeze() {}

// Truth reports whether the current workspace has a blob.
func (blobsView) Truth() starlark.Bool { return len(workspace.Blobs()) > 0 }

// Hash fails: the view is unhashable, as a dict is.
func (blobsView) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: workspace.blobs") }

// Len returns the number of blobs.
func (blobsView) Len() int { return len(workspace.Blobs()) }

// Get implements workspace.blobs[name]: FetchBlob(name), or not found.
func (blobsView) Get(k starlark.Value) (starlark.Value, bool, error) {
	name, err := convert.BlobName(k)
	if err != nil {
		return nil, false, err
	}
	if !workspace.HasBlob(name) {
		return nil, false, nil
	}
	v, err := workspace.FetchValue(name)
	if err != nil {
		return nil, false, err
	}
	return fetchedValue(v), true, nil
}

// SetKey implements workspace.blobs[name] = value: FeedBlob(name, value).
func (blobsView) SetKey(k, v starlark.Value) error {
	name, err := convert.BlobName(k)
	if err != nil {
		return err
	}
	val, err := feedValue(v)
	if err != nil {
		return err
	}
	return workspace.FeedBlob(name, val)
}

// Iterate iterates over the blob names, sorted.
func (blobsView) Iterate() starlark.Iterator {
	names := workspace.Blobs()
	sort.Strings(names)
	return convert.StringList(names).Iterate()
}
