//go:build !amd64 || purego || noasm

package vec

// Without assembly (another architecture, or the purego or noasm build
// tag) the kernels run in Go.
const (
	hasAVX    = false
	hasAVX2   = false
	hasAVX512 = false
)

func addS(dst, src []float32) { addGo(dst, src) }
func addD(dst, src []float64) { addGo(dst, src) }

func addScaledS(dst, src []float32, a float32) { panic("vec: no AVX kernel") }

func normalizeS(x, y []float32, m, a, b float32) { panic("vec: no AVX kernel") }

func normalizeGradS(dy, x, dx []float32, m, a, c, d float32) { panic("vec: no AVX kernel") }

func reluS(x, y []float32) { panic("vec: no AVX kernel") }

func reluGradS(y, dy, dx []float32) { panic("vec: no AVX kernel") }

func shiftedSumsS(x []float32, k float64, a, b *[4]float64) { panic("vec: no AVX kernel") }

func gradSumsS(dy, x []float32, m float64, a, b *[4]float64) { panic("vec: no AVX kernel") }

func sum4S(x []float32, acc *[4]float32) { panic("vec: no AVX kernel") }

func maxPairsS(r0, r1, y []float32) { panic("vec: no AVX kernel") }

func maxPairsGradS(x0, x1, y, dy, d0, d1 []float32) { panic("vec: no AVX kernel") }

func add512S(dst, src []float32) { addGo(dst, src) }
func add512D(dst, src []float64) { addGo(dst, src) }

func addScaled512S(dst, src []float32, a float32) { addScaledGo(dst, src, a) }

func relu512S(x, y []float32) { reluGo(x, y) }

func reluGrad512S(y, dy, dx []float32) { reluGradGo(y, dy, dx) }

func normalize512S(x, y []float32, m, a, b float32) { normalizeGo(x, y, m, a, b) }

func normalizeGrad512S(dy, x, dx []float32, m, a, c, d float32) {
	normalizeGradGo(dy, x, dx, m, a, c, d)
}

func maxPairs512S(r0, r1, y []float32) { maxPairsGo(r0, r1, y) }

func maxPairsGrad512S(x0, x1, y, dy, d0, d1 []float32) {
	maxPairsGradGo(x0, x1, y, dy, d0, d1)
}
