package convargs

import (
	"strings"
	"testing"
)

// TestComputeSizeAndPad is a table of Caffe2's output-size rule, worked by
// hand: out, and the head and tail pads used.
func TestComputeSizeAndPad(t *testing.T) {
	for _, c := range []struct {
		name                                 string
		in, stride, kernel, dilation, legacy int
		padHead, padTail                     int
		out, head, tail                      int
		err                                  string
	}{
		{name: "explicit 3x3 pad 1", in: 7, stride: 1, kernel: 3, dilation: 1, padHead: 1, padTail: 1, out: 7, head: 1, tail: 1},
		{name: "explicit rounds down", in: 9, stride: 2, kernel: 3, dilation: 1, padHead: 1, padTail: 2, out: 5, head: 1, tail: 2},
		{name: "explicit dilation", in: 8, stride: 1, kernel: 3, dilation: 2, padHead: 2, padTail: 2, out: 8, head: 2, tail: 2},
		{name: "resnet conv1", in: 224, stride: 2, kernel: 7, dilation: 1, padHead: 3, padTail: 3, out: 112, head: 3, tail: 3},
		{name: "explicit too small", in: 2, stride: 1, kernel: 5, dilation: 1, padHead: 1, padTail: 1, err: "smaller than the dilated kernel"},
		{name: "VALID", in: 7, stride: 2, kernel: 3, dilation: 1, legacy: PadValid, padHead: 5, padTail: 5, out: 3},
		{name: "VALID truncates toward zero", in: 2, stride: 2, kernel: 3, dilation: 1, legacy: PadValid, out: 1},
		{name: "VALID empty", in: 1, stride: 1, kernel: 5, dilation: 1, legacy: PadValid, out: -3},
		{name: "SAME even", in: 7, stride: 2, kernel: 3, dilation: 1, legacy: PadSame, out: 4, head: 1, tail: 1},
		{name: "SAME odd pad goes to the tail", in: 8, stride: 2, kernel: 3, dilation: 1, legacy: PadSame, out: 4, head: 0, tail: 1},
		{name: "SAME negative need", in: 5, stride: 3, kernel: 1, dilation: 1, legacy: PadSame, out: 2, head: 0, tail: -1},
		{name: "SAME dilation", in: 5, stride: 1, kernel: 3, dilation: 2, legacy: PadSame, err: "dilation not supported"},
		{name: "Caffe pooling ceil", in: 112, stride: 2, kernel: 3, dilation: 1, legacy: PadCaffeLegacyPool, out: 56, head: 0, tail: 2},
		{name: "Caffe pooling exact", in: 111, stride: 2, kernel: 3, dilation: 1, legacy: PadCaffeLegacyPool, out: 55, head: 0, tail: 0},
		{name: "Caffe pooling pad 1 stride 1", in: 28, stride: 1, kernel: 3, dilation: 1, legacy: PadCaffeLegacyPool, padHead: 1, padTail: 7, out: 28, head: 1, tail: 1},
		{name: "Caffe pooling ceil with pad", in: 8, stride: 2, kernel: 3, dilation: 1, legacy: PadCaffeLegacyPool, padHead: 1, out: 5, head: 1, tail: 3},
		{name: "Caffe pooling last window clipped", in: 5, stride: 2, kernel: 2, dilation: 1, legacy: PadCaffeLegacyPool, padHead: 1, out: 3, head: 1, tail: 1},
		{name: "Caffe pooling negative pad", in: 5, stride: 2, kernel: 2, dilation: 1, legacy: PadCaffeLegacyPool, padHead: -1, err: "negative pad"},
	} {
		out, head, tail, err := ComputeSizeAndPad(c.in, c.stride, c.kernel, c.dilation, c.legacy, c.padHead, c.padTail)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || out != c.out || head != c.head || tail != c.tail {
			t.Errorf("%s: got out %d pads %d, %d (err %v), want out %d pads %d, %d", c.name, out, head, tail, err, c.out, c.head, c.tail)
		}
	}
}
