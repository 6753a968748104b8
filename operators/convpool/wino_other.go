//go:build !amd64 || purego || noasm

package convpool

// Without assembly (another architecture, or the purego or noasm build
// tag) the Winograd transforms run in Go.
const (
	hasWinoAVX    = false
	hasWinoAVX2   = false
	hasWinoAVX512 = false
)

func winoIn8S(e, o []float32, ld int, v []float32, vl int) { panic("convpool: no AVX kernel") }

func winoIn4x2S(e, o []float32, ld, off int, v []float32, vl int) { panic("convpool: no AVX kernel") }

func winoOut8S(m []float32, ml int, bias float32, y []float32, ld, off int) {
	panic("convpool: no AVX kernel")
}

func winoGrad8S(dy []float32, ld, off int, y []float32, yl int) { panic("convpool: no AVX kernel") }

func deinterleaveS(src, even, odd []float32) { panic("convpool: no AVX kernel") }

func winoIn16S(e, o []float32, ld int, v []float32, vl int) { panic("convpool: no AVX-512 kernel") }

func winoOut16S(m []float32, ml int, bias float32, y []float32, ld int) {
	panic("convpool: no AVX-512 kernel")
}

func winoGrad16S(dy []float32, ld int, y []float32, yl int) { panic("convpool: no AVX-512 kernel") }
