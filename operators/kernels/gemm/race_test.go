//go:build race

package gemm

// raceEnabled is true under the race detector, where sync.Pool drops items
// at random and allocation counts mean nothing.
const raceEnabled = true
