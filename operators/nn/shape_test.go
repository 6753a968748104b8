package nn

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// TestFCShapeUnknownX infers FC and FCGradient with X unknown: a
// non-negative axis gives Y's rank, unless it is beyond any real rank, when
// nothing is known of Y (and nothing is allocated for it).
func TestFCShapeUnknownX(t *testing.T) {
	cases := []struct {
		typ  string
		axis int64
		want string // of Y, or of dX and dW for the gradient
	}{
		{"FC", 1, "[? 5]"},
		{"FC", 3, "[? ? ? 5]"},
		{"FC", 0, "[5]"},
		{"FC", -1, "unknown"},
		{"FC", 65, "unknown"},
		{"FC", 1 << 40, "unknown"},
		{"FC", 1 << 62, "unknown"},
		{"FCTransposed", 1 << 40, "unknown"},
		{"FCGradient", 1 << 40, "unknown [5 4]"},
		{"FCGradient", 2, "unknown [5 4]"},
	}
	lookup := func(name string) operators.TensorShape {
		if name == "W" {
			return operators.Shape(blob.Float32, 5, 4)
		}
		return operators.UnknownShape
	}
	for _, c := range cases {
		in, out := []string{"X", "W", "b"}, []string{"Y"}
		if c.typ == "FCGradient" {
			in, out = []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}
		}
		n := netdef.NewNet("fc_shape")
		n.Op(c.typ, in, out, argInt("axis", c.axis))
		shapes, err := operators.InferShapes(n.Proto(), lookup)
		if err != nil {
			t.Errorf("%s axis %d: %v", c.typ, c.axis, err)
			continue
		}
		got := shapes["Y"].String()
		if c.typ == "FCGradient" {
			got = shapes["dX"].String() + " " + shapes["dW"].String()
		}
		if got != c.want {
			t.Errorf("%s axis %d: %s, want %s", c.typ, c.axis, got, c.want)
		}
	}
}
