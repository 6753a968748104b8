package caffe

import (
	"fmt"
	"slices"
)

// tensor is a parameter blob's values and shape.
type tensor struct {
	shape []int
	data  []float32
}

// maxBlobElements bounds a blob's element count (Caffe's blobs are indexed
// by int).
const maxBlobElements = 1<<31 - 1

// blobTensor reads a BlobProto: its values (data, or double_data rounded to
// float32) and its shape (shape, or the legacy num, channels, height and
// width); legacy reports the latter.
func blobTensor(b *BlobProto) (t tensor, legacy bool, err error) {
	switch {
	case b.Shape != nil:
		for _, d := range b.Shape.Dim {
			if d < 0 || d > maxBlobElements {
				return t, false, fmt.Errorf("has dimension %d in shape %v", d, b.Shape.Dim)
			}
			t.shape = append(t.shape, int(d))
		}
	case b.Num != nil || b.Channels != nil || b.Height != nil || b.Width != nil:
		legacy = true
		for _, d := range []int32{b.GetNum(), b.GetChannels(), b.GetHeight(), b.GetWidth()} {
			if d < 0 {
				return t, true, fmt.Errorf("has a negative legacy dimension (num %d, channels %d, height %d, width %d)",
					b.GetNum(), b.GetChannels(), b.GetHeight(), b.GetWidth())
			}
			t.shape = append(t.shape, int(d))
		}
	}
	n := 1
	for _, d := range t.shape {
		if d != 0 && n > maxBlobElements/d {
			return t, legacy, fmt.Errorf("shape %s has too many elements", shapeString(t.shape))
		}
		n *= d
	}
	switch {
	case len(b.Data) > 0 && len(b.DoubleData) > 0:
		return t, legacy, fmt.Errorf("has both data and double_data")
	case len(b.DoubleData) > 0:
		t.data = make([]float32, len(b.DoubleData))
		for i, v := range b.DoubleData {
			t.data[i] = float32(v)
		}
	default:
		t.data = b.Data
	}
	if len(t.data) != n {
		return t, legacy, fmt.Errorf("has shape %s (%d elements) but holds %d values", shapeString(t.shape), n, len(t.data))
	}
	return t, legacy, nil
}

// fit reads trained blob i of the layer, which must have the shape want (-1
// for a dimension the converter does not know), compared as Caffe's
// Blob::ShapeEquals does: a blob with the legacy 4-D dimensions matches a
// shape of at most 4 dimensions padded in front with ones. The tensor
// returned has the wanted shape, its unknown dimensions taken from the blob.
func fit(blobs []*BlobProto, i int, what string, want ...int) (tensor, error) {
	if i >= len(blobs) {
		return tensor{}, fmt.Errorf("the weights have no blob %d (%s)", i, what)
	}
	t, legacy, err := blobTensor(blobs[i])
	if err != nil {
		return tensor{}, fmt.Errorf("blob %d (%s) %w", i, what, err)
	}
	got := t.shape
	mismatch := func() error {
		form := ""
		if legacy {
			form = " (num, channels, height, width)"
		}
		return fmt.Errorf("blob %d (%s) has shape %s%s, want %s", i, what, shapeString(t.shape), form, wantString(want))
	}
	if legacy {
		if len(want) > 4 {
			return tensor{}, mismatch()
		}
		got = got[4-len(want):]
		for _, d := range t.shape[:4-len(want)] {
			if d != 1 {
				return tensor{}, mismatch()
			}
		}
	}
	if len(got) != len(want) {
		return tensor{}, mismatch()
	}
	for j, d := range want {
		if d >= 0 && got[j] != d {
			return tensor{}, mismatch()
		}
	}
	t.shape = slices.Clone(got)
	return t, nil
}

// wantString formats a wanted shape, writing unknown dimensions as ?.
func wantString(s []int) string {
	out := "["
	for i, d := range s {
		if i > 0 {
			out += " "
		}
		if d < 0 {
			out += "?"
		} else {
			out += fmt.Sprint(d)
		}
	}
	return out + "]"
}
