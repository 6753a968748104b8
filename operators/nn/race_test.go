//go:build race

package nn

// raceEnabled is true under the race detector, where sync.Pool drops items
// at random and allocation counts mean nothing.
const raceEnabled = true
