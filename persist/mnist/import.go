package mnist

import (
	"fmt"
	"io"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/persist"
)

// Import converts the MNIST idx files imagesPath (magic 0x00000803:
// N images of rows × cols unsigned bytes) and labelsPath (magic 0x00000801:
// N unsigned-byte labels), each gzip-compressed or not, into a new dataset
// DB of type dbType at path, and returns the number of records.
//
// Record i has the key fmt.Sprintf("%08d", i) (so a badger DB visits the
// records in file order) and a serialized TensorProtos value of two
// protos, as Caffe2's make_mnist_db writes them with channel_first:
//
//	protos[0]  the image: data_type BYTE, dims [1, rows, cols], byte_data
//	           the rows × cols pixels in file order (row-major, 0 = white)
//	protos[1]  the label: data_type INT32, no dims (a scalar), int32_data
//	           [label]
//
// TensorProtosDBInput with batch_size B therefore outputs a UINT8 tensor
// [B, 1, rows, cols] (NCHW) and an INT32 tensor [B].
func Import(imagesPath, labelsPath, dbType, path string) (n int, err error) {
	images, err := openIdx(imagesPath, idxImagesMagic, 3)
	if err != nil {
		return 0, err
	}
	defer images.Close()
	labels, err := openIdx(labelsPath, idxLabelsMagic, 1)
	if err != nil {
		return 0, err
	}
	defer labels.Close()
	count, rows, cols := images.dims[0], images.dims[1], images.dims[2]
	if labels.dims[0] != count {
		return 0, fmt.Errorf("mnist: %s holds %d images but %s holds %d labels", imagesPath, count, labelsPath, labels.dims[0])
	}
	if rows == 0 || cols == 0 || uint64(rows)*uint64(cols) > maxMNISTImageBytes {
		return 0, fmt.Errorf("mnist: %s: unsupported image size %d × %d", imagesPath, rows, cols)
	}

	w, err := persist.NewTensorProtosWriter(dbType, path)
	if err != nil {
		return 0, fmt.Errorf("mnist: %w", err)
	}
	defer func() {
		if cerr := w.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("mnist: %w", cerr)
		}
	}()
	pixels := make([]byte, int(rows)*int(cols))
	var label [1]byte
	image := &netdef.TensorProto{
		Dims:     []int64{1, int64(rows), int64(cols)},
		DataType: netdef.TensorProto_BYTE.Enum(),
		ByteData: pixels,
	}
	labelProto := &netdef.TensorProto{DataType: netdef.TensorProto_INT32.Enum(), Int32Data: []int32{0}}
	msg := &netdef.TensorProtos{Protos: []*netdef.TensorProto{image, labelProto}}
	for i := range int(count) {
		if _, err := io.ReadFull(images.r, pixels); err != nil {
			return i, fmt.Errorf("mnist: %s: image %d of %d: %w", imagesPath, i, count, eofText(err))
		}
		if _, err := io.ReadFull(labels.r, label[:]); err != nil {
			return i, fmt.Errorf("mnist: %s: label %d of %d: %w", labelsPath, i, count, eofText(err))
		}
		labelProto.Int32Data[0] = int32(label[0])
		if err := w.PutProtos(fmt.Sprintf("%08d", i), msg); err != nil {
			return i, fmt.Errorf("mnist: %w", err)
		}
	}
	return int(count), nil
}
