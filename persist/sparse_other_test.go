//go:build windows || plan9 || js || wasip1 || aix

package persist

import "os"

// dataExtents returns the whole file: holes are not looked for here.
func dataExtents(f *os.File, size int64) [][2]int64 { return [][2]int64{{0, size}} }

// processAlive reports true: other processes' fixtures are not told apart
// here, and are left.
func processAlive(pid int) bool { return true }
