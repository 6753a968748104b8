package mnist

import (
	"fmt"
	"io"

	"github.com/caffe2go/caffe2go/blob"
)

// Read reads the MNIST idx files imagesPath and labelsPath (each
// gzip-compressed or not) into memory: the images as a UINT8 tensor
// [N, 1, rows, cols] (NCHW, as Import's records) and the labels as an
// INT32 tensor [N].
func Read(imagesPath, labelsPath string) (images, labels *blob.Tensor, err error) {
	img, err := openIdx(imagesPath, idxImagesMagic, 3)
	if err != nil {
		return nil, nil, err
	}
	defer img.Close()
	lab, err := openIdx(labelsPath, idxLabelsMagic, 1)
	if err != nil {
		return nil, nil, err
	}
	defer lab.Close()
	count, rows, cols := int(img.dims[0]), img.dims[1], img.dims[2]
	if int(lab.dims[0]) != count {
		return nil, nil, fmt.Errorf("mnist: %s holds %d images but %s holds %d labels", imagesPath, count, labelsPath, lab.dims[0])
	}
	if rows == 0 || cols == 0 || uint64(rows)*uint64(cols) > maxMNISTImageBytes {
		return nil, nil, fmt.Errorf("mnist: %s: unsupported image size %d × %d", imagesPath, rows, cols)
	}
	if images, err = blob.New(blob.Uint8, count, 1, int(rows), int(cols)); err != nil {
		return nil, nil, fmt.Errorf("mnist: %s: %w", imagesPath, err)
	}
	if _, err := io.ReadFull(img.r, blob.Data[uint8](images)); err != nil {
		return nil, nil, fmt.Errorf("mnist: %s: %d images: %w", imagesPath, count, eofText(err))
	}
	raw := make([]byte, count)
	if _, err := io.ReadFull(lab.r, raw); err != nil {
		return nil, nil, fmt.Errorf("mnist: %s: %d labels: %w", labelsPath, count, eofText(err))
	}
	l := make([]int32, count)
	for i, v := range raw {
		l[i] = int32(v)
	}
	return images, blob.MustFromSlice(l, count), nil
}
