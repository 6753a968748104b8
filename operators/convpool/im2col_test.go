package convpool

import (
	"fmt"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"testing"
)

// TestShiftMatchesRows checks the contiguous im2col and col2im of shiftable
// windows against the row-by-row ones.
func TestShiftMatchesRows(t *testing.T) {
	cases := []struct{ h, w, k, d, pt, pl, pb, pr int }{
		{32, 32, 3, 1, 1, 1, 1, 1},
		{8, 8, 3, 1, 1, 1, 1, 1},
		{5, 7, 5, 1, 2, 2, 2, 2},
		{6, 6, 3, 2, 2, 2, 2, 2},
		{6, 5, 3, 1, 0, 2, 1, 0},
		{4, 4, 3, 1, 3, 1, 0, 1},
		{3, 3, 1, 1, 0, 0, 0, 0},
		{2, 9, 5, 3, 6, 6, 6, 6},
	}
	r := newRand(7)
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%dx%d_k%d_d%d_pad%d%d%d%d", tc.h, tc.w, tc.k, tc.d, tc.pt, tc.pl, tc.pb, tc.pr), func(t *testing.T) {
			oh := tc.h + tc.pt + tc.pb - tc.d*(tc.k-1)
			ow := tc.w + tc.pl + tc.pr - tc.d*(tc.k-1)
			w := convargs.NewWindow([]int{tc.h, tc.w}, []int{oh, ow}, []int{tc.k, tc.k}, []int{1, 1}, []int{tc.d, tc.d}, []int{tc.pt, tc.pl}, []int{tc.pb, tc.pr})
			if !shiftable(&w) {
				t.Fatalf("window %+v is not shiftable", w)
			}
			const c = 3
			img := make([]float32, c*w.InSize)
			for i := range img {
				img[i] = float32(r.NormFloat64())
			}
			n := c * w.KSize * w.OutSize
			got, want := make([]float32, n), make([]float32, n)
			for i := range got {
				got[i] = 99 // every entry must be written
			}
			im2colShift(&w, c, img, got, w.OutSize)
			im2colRows(&w, c, img, want, w.OutSize)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("im2col: entry %d is %v, want %v", i, got[i], want[i])
				}
			}
			col := make([]float32, n)
			for i := range col {
				col[i] = float32(r.NormFloat64())
			}
			gotImg, wantImg := make([]float32, len(img)), make([]float32, len(img))
			col2imRows(&w, c, append([]float32(nil), col...), wantImg, w.OutSize)
			col2imShift(&w, c, col, gotImg, w.OutSize)
			for i := range gotImg {
				if d := gotImg[i] - wantImg[i]; d > 1e-5 || d < -1e-5 {
					t.Fatalf("col2im: entry %d is %v, want %v", i, gotImg[i], wantImg[i])
				}
			}
		})
	}
}
