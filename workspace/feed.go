package workspace

import (
	"fmt"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// FeedOption adjusts FeedBlob.
type FeedOption func(*feedConfig)

type feedConfig struct {
	device    *netdef.DeviceOption
	deviceSet bool
}

// OnDevice feeds onto the device opt names instead of the current device
// scope's.
func OnDevice(opt *netdef.DeviceOption) FeedOption {
	return func(c *feedConfig) { c.device, c.deviceSet = opt, true }
}

// FeedBlob stores a copy of value under name, creating the blob if needed
// and replacing whatever it held (content and type). value is a *blob.Tensor
// (stored with its exact type and shape), a []byte or string (stored as a
// byte-string blob), or any other value blob.FromValue takes: a Go scalar
// (a 0-d tensor; int becomes INT64), a typed slice such as []float32 (1-D),
// or a rectangular nested slice such as [][]float32 (2-D). The device is the OnDevice option's, else the current device
// scope's, else the CPU; a tensor fed onto a device with memory of its own
// (a GPU) is copied there.
func (w *Workspace) FeedBlob(name string, value any, opts ...FeedOption) error {
	cfg := feedConfig{}
	for _, o := range opts {
		o(&cfg)
	}
	if !cfg.deviceSet {
		cfg.device = devicescope.Current().Device()
	}
	var content any
	fresh := false // content is already a copy in Go memory
	switch v := value.(type) {
	case *blob.Tensor:
		if v == nil {
			return fmt.Errorf("workspace: feeding %q: nil tensor", name)
		}
		content = v // copied onto its device below
	case []byte:
		content = append([]byte{}, v...)
	case string:
		content = []byte(v)
	default:
		t, err := blob.FromValue(value)
		if err != nil {
			return fmt.Errorf("workspace: feeding %q: %w", name, err)
		}
		content, fresh = t, true
	}
	if t, ok := content.(*blob.Tensor); ok {
		var err error
		if cfg.device.Type() == netdef.CPU {
			if !fresh {
				content, err = t.ToHost()
			}
		} else if _, err = devicescope.Get(cfg.device); err == nil {
			content, err = t.CopyTo(cfg.device)
		}
		if err != nil {
			return fmt.Errorf("workspace: feeding %q: %w", name, err)
		}
	}
	w.CreateBlob(name).Set(content)
	return nil
}

// FetchBlob returns a copy of the tensor stored under name, in Go memory (a
// tensor on a GPU comes back to the host). A missing blob, or one that
// holds something other than a tensor, is an error naming it.
func (w *Workspace) FetchBlob(name string) (*blob.Tensor, error) {
	b := w.GetBlob(name)
	if b == nil {
		return nil, fmt.Errorf("workspace: %w: %q", ErrBlobNotFound, name)
	}
	t := b.Tensor()
	if t == nil {
		return nil, fmt.Errorf("workspace: blob %q holds %s, not a tensor (use FetchValue)", name, b.TypeName())
	}
	h, err := t.ToHost()
	if err != nil {
		return nil, fmt.Errorf("workspace: fetching %q: %w", name, err)
	}
	return h, nil
}

// FetchBlobs fetches each name in order.
func (w *Workspace) FetchBlobs(names []string) ([]*blob.Tensor, error) {
	out := make([]*blob.Tensor, len(names))
	for i, n := range names {
		t, err := w.FetchBlob(n)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// FetchValue returns a copy of whatever the blob holds, as Caffe2's
// FetchBlob does: a *blob.Tensor for a tensor, a []byte for a byte string,
// and otherwise the text "<name>, a C++ native class of type <type>.".
func (w *Workspace) FetchValue(name string) (any, error) {
	b := w.GetBlob(name)
	if b == nil {
		return nil, fmt.Errorf("workspace: %w: %q", ErrBlobNotFound, name)
	}
	switch v := b.Get().(type) {
	case *blob.Tensor:
		h, err := v.ToHost()
		if err != nil {
			return nil, fmt.Errorf("workspace: fetching %q: %w", name, err)
		}
		return h, nil
	case []byte:
		return append([]byte{}, v...), nil
	}
	return fmt.Sprintf("%s, a C++ native class of type %s.", name, b.TypeName()), nil
}

// FetchValues fetches each name in order with FetchValue.
func (w *Workspace) FetchValues(names []string) ([]any, error) {
	out := make([]any, len(names))
	for i, n := range names {
		v, err := w.FetchValue(n)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// FetchBytes returns a copy of a byte-string blob's content.
func (w *Workspace) FetchBytes(name string) ([]byte, error) {
	b := w.GetBlob(name)
	if b == nil {
		return nil, fmt.Errorf("workspace: %w: %q", ErrBlobNotFound, name)
	}
	s, ok := b.Bytes()
	if !ok {
		return nil, fmt.Errorf("workspace: blob %q holds %s, not a byte string", name, b.TypeName())
	}
	return append([]byte{}, s...), nil
}

// BlobSizeBytes returns the size of a tensor blob's elements in bytes
// (string elements count their lengths) or of a byte-string blob.
func (w *Workspace) BlobSizeBytes(name string) (int, error) {
	b := w.GetBlob(name)
	if b == nil {
		return 0, fmt.Errorf("workspace: %w: %q", ErrBlobNotFound, name)
	}
	switch v := b.Get().(type) {
	case *blob.Tensor:
		return v.NBytes(), nil
	case []byte:
		return len(v), nil
	}
	return 0, fmt.Errorf("workspace: blob %q holds %s, whose size is unknown", name, b.TypeName())
}

// SerializeBlob returns the blob as one Caffe2 BlobProto (not chunked).
func (w *Workspace) SerializeBlob(name string) ([]byte, error) {
	b := w.GetBlob(name)
	if b == nil {
		return nil, fmt.Errorf("workspace: %w: %q", ErrBlobNotFound, name)
	}
	return blob.SerializeBlob(name, b)
}

// DeserializeBlob creates the blob if needed and fills it from BlobProto
// bytes.
func (w *Workspace) DeserializeBlob(name string, data []byte) error {
	var tmp blob.Blob
	if _, err := blob.DeserializeBlob(data, &tmp); err != nil {
		return fmt.Errorf("workspace: deserializing into %q: %w", name, err)
	}
	w.CreateBlob(name).Set(tmp.Get())
	return nil
}
