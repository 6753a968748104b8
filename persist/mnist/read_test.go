package mnist_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/persist/mnist"
)

func TestRead(t *testing.T) {
	dir := filepath.Join("..", "..", "data", "mnist")
	images, labels, err := mnist.Read(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if got := images.Dims(); len(got) != 4 || got[0] != 10000 || got[1] != 1 || got[2] != 28 || got[3] != 28 {
		t.Fatalf("images %v, want [10000 1 28 28]", got)
	}
	l := blob.Data[int32](labels)
	// The first test labels are well known: 7 2 1 0 4 1 4 9 5 9.
	want := []int32{7, 2, 1, 0, 4, 1, 4, 9, 5, 9}
	for i, w := range want {
		if l[i] != w {
			t.Fatalf("labels start %v, want %v", l[:10], want)
		}
	}
	counts := make([]int, 10)
	for _, v := range l {
		counts[v]++
	}
	// Digit 1 is the most frequent in the test set (1,135 images).
	if counts[1] != 1135 {
		t.Fatalf("%d ones in the test labels, want 1135", counts[1])
	}
	if _, _, err := mnist.Read(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"), filepath.Join(dir, "t10k-labels-idx1-ubyte.gz")); err == nil || !strings.Contains(err.Error(), "magic number") {
		t.Fatalf("labels read as images: %v", err)
	}
	if _, _, err := mnist.Read(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), filepath.Join(dir, "train-labels-idx1-ubyte.gz")); err == nil || !strings.Contains(err.Error(), "60000 labels") {
		t.Fatalf("mismatched files: %v", err)
	}
}
