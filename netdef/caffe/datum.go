package caffe

import (
	"fmt"

	"google.golang.org/protobuf/proto"
)

// ParseDatum decodes a Datum, the record of Caffe's data sets (the values
// of the LMDB and LevelDB databases that convert_mnist_data and
// convert_imageset write).
func ParseDatum(data []byte) (*Datum, error) {
	d := new(Datum)
	if err := proto.Unmarshal(data, d); err != nil {
		return nil, fmt.Errorf("caffe datum: %w", err)
	}
	return d, nil
}

// DatumValues returns a Datum's values in channel, height, width order,
// as Caffe's data layers read them: its data bytes (0 to 255) or, without
// them, its float_data. An encoded Datum (a compressed image) is
// ErrUnsupported; values that do not fill channels × height × width are
// an error.
func DatumValues(d *Datum) ([]float32, error) {
	if d.GetEncoded() {
		return nil, fmt.Errorf("caffe datum: an encoded (compressed image) datum is %w", ErrUnsupported)
	}
	c, h, w := d.GetChannels(), d.GetHeight(), d.GetWidth()
	if c <= 0 || h <= 0 || w <= 0 {
		return nil, fmt.Errorf("caffe datum: shape %d×%d×%d (channels × height × width) is not positive", c, h, w)
	}
	n := int64(c) * int64(h) * int64(w)
	var out []float32
	switch {
	case len(d.Data) > 0:
		out = make([]float32, len(d.Data))
		for i, b := range d.Data {
			out[i] = float32(b)
		}
	default:
		out = d.FloatData
	}
	if int64(len(out)) != n {
		return nil, fmt.Errorf("caffe datum: %d values for shape %d×%d×%d (%d)", len(out), c, h, w, n)
	}
	return out, nil
}
