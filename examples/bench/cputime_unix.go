//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time, user and system, that every thread of
// this process has used so far, or 0 where it cannot be read.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
