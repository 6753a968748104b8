//go:build !amd64 || purego || noasm

package vec

// Without assembly (another architecture, or the purego or noasm build
// tag) Add runs in Go.
const hasAVX = false

func addS(dst, src []float32) { addGo(dst, src) }
func addD(dst, src []float64) { addGo(dst, src) }
