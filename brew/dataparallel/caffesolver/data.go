package caffesolver

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/netdef/caffe"
	"github.com/caffe2go/caffe2go/persist"

	// The DB types of Caffe's data sets.
	_ "github.com/caffe2go/caffe2go/persist/leveldb"
	_ "github.com/caffe2go/caffe2go/persist/lmdb"
)

// DBType returns the persist DB type of a Caffe Data layer's backend:
// "leveldb" for LEVELDB (Caffe's default), "lmdb" for LMDB (which needs a
// build with the lmdb tag).
func DBType(b caffe.DataParameter_DB) string {
	if b == caffe.DataParameter_LMDB {
		return "lmdb"
	}
	return "leveldb"
}

// ReadDatumDB reads the Datum records of a Caffe data set (a LevelDB or
// LMDB database as convert_mnist_data or convert_imageset write it) in key
// order, as Caffe's Data layer reads them, and returns them as a dataset:
// "data" float32 [n, channels, height, width] (the bytes 0 to 255 or the
// float_data, unscaled: the net's transform_param scales them) and
// "label" int32 [n]. limit > 0 reads only the first limit records. Every
// record must have the first one's shape; errors name the DB and the
// record's key.
func ReadDatumDB(dbType, path string, limit int) (ds brew.Dataset, err error) {
	db, err := persist.OpenDB(dbType, path, persist.ModeRead)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("caffe data set %s: %w", path, cerr)
		}
	}()
	cur, err := db.NewCursor()
	if err != nil {
		return nil, fmt.Errorf("caffe data set %s: %w", path, err)
	}
	defer cur.Close()
	var shape []int
	var values []float32
	var labels []int32
	for ; cur.Valid() && (limit <= 0 || len(labels) < limit); err = cur.Next() {
		d, err := caffe.ParseDatum(cur.Value())
		if err != nil {
			return nil, fmt.Errorf("caffe data set %s: record %q: %w", path, cur.Key(), err)
		}
		v, err := caffe.DatumValues(d)
		if err != nil {
			return nil, fmt.Errorf("caffe data set %s: record %q: %w", path, cur.Key(), err)
		}
		s := []int{int(d.GetChannels()), int(d.GetHeight()), int(d.GetWidth())}
		if shape == nil {
			shape = s
		} else if !slices.Equal(s, shape) {
			return nil, fmt.Errorf("caffe data set %s: record %q has shape %v, the first record %v", path, cur.Key(), s, shape)
		}
		values = append(values, v...)
		labels = append(labels, d.GetLabel())
	}
	if err != nil {
		return nil, fmt.Errorf("caffe data set %s: %w", path, err)
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("caffe data set %s: no records", path)
	}
	data, err := blob.FromSlice(values, append([]int{len(labels)}, shape...)...)
	if err != nil {
		return nil, err
	}
	label, err := blob.FromSlice(labels, len(labels))
	if err != nil {
		return nil, err
	}
	return brew.Dataset{"data": data, "label": label}, nil
}

// feeder hands out a data set's examples in order, wrapping around at its
// end, as Caffe's Data layer reads its DB.
type feeder struct {
	data, label *blob.Tensor
	width       int // values per example
	n           int // examples
	pos         int // the next example
}

func newFeeder(ds brew.Dataset, phase string) (*feeder, error) {
	data, label := ds["data"], ds["label"]
	if data == nil || label == nil {
		return nil, fmt.Errorf("caffesolver: the %s data set needs \"data\" and \"label\" tensors", phase)
	}
	if data.DataType() != blob.Float32 || label.DataType() != blob.Int32 || len(data.Dims()) < 2 || len(label.Dims()) != 1 {
		return nil, fmt.Errorf("caffesolver: the %s data set needs float32 data [n, …] and int32 label [n], has %v %v and %v %v",
			phase, data.DataType(), data.Dims(), label.DataType(), label.Dims())
	}
	n := data.Dims()[0]
	if label.Dims()[0] != n || n == 0 {
		return nil, fmt.Errorf("caffesolver: the %s data set has %d examples of data and %d labels", phase, n, label.Dims()[0])
	}
	return &feeder{data: data, label: label, width: data.Size() / n, n: n}, nil
}

// batch returns examples pos+offset, pos+offset+stride, … (batch of them,
// wrapping around) as data [batch, …] and label [batch].
func (f *feeder) batch(batch, offset, stride int) (*blob.Tensor, *blob.Tensor, error) {
	src, srcLabel := blob.Data[float32](f.data), blob.Data[int32](f.label)
	data := make([]float32, batch*f.width)
	label := make([]int32, batch)
	for j := range batch {
		i := (f.pos + offset + j*stride) % f.n
		copy(data[j*f.width:(j+1)*f.width], src[i*f.width:(i+1)*f.width])
		label[j] = srcLabel[i]
	}
	d, err := blob.FromSlice(data, append([]int{batch}, f.data.Dims()[1:]...)...)
	if err != nil {
		return nil, nil, err
	}
	l, err := blob.FromSlice(label, batch)
	return d, l, err
}

// advance moves past k examples.
func (f *feeder) advance(k int) { f.pos = (f.pos + k) % f.n }

// WriteDatumDB writes a data set as Caffe's convert_mnist_data does: a new
// DB of type dbType at path holding one Datum per example, keyed %08d
// (the example's index), with channels, height and width from images
// [n, channels, height, width] (uint8, stored as the Datum's data bytes,
// or float32, stored as its float_data) and the label from labels (int32
// [n]). It returns the number of records.
func WriteDatumDB(dbType, path string, images, labels *blob.Tensor) (n int, err error) {
	dims := images.Dims()
	if len(dims) != 4 || labels.DataType() != blob.Int32 || len(labels.Dims()) != 1 || labels.Dims()[0] != dims[0] {
		return 0, fmt.Errorf("caffe data set %s: want images [n, channels, height, width] and int32 labels [n], have %v and %v %v", path, dims, labels.DataType(), labels.Dims())
	}
	n, width := dims[0], dims[1]*dims[2]*dims[3]
	var pixels []uint8
	var floats []float32
	switch images.DataType() {
	case blob.Uint8:
		pixels = blob.Data[uint8](images)
	case blob.Float32:
		floats = blob.Data[float32](images)
	default:
		return 0, fmt.Errorf("caffe data set %s: images of type %v (want uint8 or float32)", path, images.DataType())
	}
	db, err := persist.OpenDB(dbType, path, persist.ModeNew)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("caffe data set %s: %w", path, cerr)
		}
	}()
	txn, err := db.NewTransaction()
	if err != nil {
		return 0, fmt.Errorf("caffe data set %s: %w", path, err)
	}
	defer txn.Close()
	lab := blob.Data[int32](labels)
	for i := range n {
		d := &caffe.Datum{Channels: proto.Int32(int32(dims[1])), Height: proto.Int32(int32(dims[2])), Width: proto.Int32(int32(dims[3])),
			Label: proto.Int32(lab[i])}
		if pixels != nil {
			d.Data = pixels[i*width : (i+1)*width]
		} else {
			d.FloatData = floats[i*width : (i+1)*width]
		}
		v, err := proto.Marshal(d)
		if err != nil {
			return 0, fmt.Errorf("caffe data set %s: record %d: %w", path, i, err)
		}
		if err := txn.Put(fmt.Sprintf("%08d", i), v); err != nil {
			return 0, fmt.Errorf("caffe data set %s: record %d: %w", path, i, err)
		}
		if (i+1)%1000 == 0 {
			if err := txn.Commit(); err != nil {
				return 0, fmt.Errorf("caffe data set %s: %w", path, err)
			}
		}
	}
	if err := txn.Commit(); err != nil {
		return 0, fmt.Errorf("caffe data set %s: %w", path, err)
	}
	return n, nil
}
