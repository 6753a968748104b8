//go:build !linux

package blob

// systemMemory returns 0 outside Linux: the budget's default then starts
// from fallbackMemory.
func systemMemory() int64 { return 0 }
