package norm

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// BenchmarkSpatialBNNHWCFewChannels is SpatialBN forward in training mode
// on NHWC images of few channels, where the parts' partial sums of the
// statistics (C of them per part, written for every row) would share
// cache lines unless each part's lie apart.
func BenchmarkSpatialBNNHWCFewChannels(b *testing.B) {
	for _, c := range []int{3, 8} {
		b.Run(fmt.Sprintf("C=%d", c), func(b *testing.B) {
			r := newRand(17)
			shape := []int{32, 64, 64, c}
			ws := optest.NewWorkspace()
			ws.Feed("X", randT(r, blob.Float32, -1, 2, shape...))
			for _, name := range []string{"s", "b", "rm", "rv"} {
				ws.Feed(name, randT(r, blob.Float32, 0.5, 1.5, c))
			}
			fwd := op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"Y", "rm", "rv", "sm", "siv"}, argStr("order", "NHWC"))
			o, err := operators.Create(fwd, ws, -1)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(4 * 32 * 64 * 64 * c))
			for b.Loop() {
				if err := o.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSpatialBNNHWCParts checks the NHWC statistics split over several
// parts, each summing into its own padded slot, against the mean and
// inverse standard deviation of each channel computed here in float64.
func TestSpatialBNNHWCParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, c := range []int{1, 3, 17} {
		r := newRand(uint64(c))
		shape := []int{8, 48, 64, c} // enough rows for 4 parts
		ws := optest.NewWorkspace()
		ws.Feed("X", randT(r, blob.Float32, -1, 2, shape...))
		for _, name := range []string{"s", "b", "rm", "rv"} {
			ws.Feed(name, randT(r, blob.Float32, 0.5, 1.5, c))
		}
		fwd := op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"Y", "rm", "rv", "sm", "siv"}, argStr("order", "NHWC"))
		o, err := operators.Create(fwd, ws, -1)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Run(); err != nil {
			t.Fatal(err)
		}
		x, _ := ws.Fetch("X")
		sm, _ := ws.Fetch("sm")
		siv, _ := ws.Fetch("siv")
		xs := blob.Data[float32](x)
		rows := len(xs) / c
		for ch := range c {
			var s, s2 float64
			for i := range rows {
				s += float64(xs[i*c+ch])
			}
			mean := s / float64(rows)
			for i := range rows {
				d := float64(xs[i*c+ch]) - mean
				s2 += d * d
			}
			rstd := 1 / math.Sqrt(s2/float64(rows)+1e-5)
			if got := float64(blob.Data[float32](sm)[ch]); math.Abs(got-mean) > 1e-5 {
				t.Errorf("C=%d channel %d: mean %v, want %v", c, ch, got, mean)
			}
			if got := float64(blob.Data[float32](siv)[ch]); math.Abs(got-rstd) > 1e-5*rstd {
				t.Errorf("C=%d channel %d: inverse std %v, want %v", c, ch, got, rstd)
			}
		}
	}
}
