//go:build !(gloo && cgo)

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "allreducebench: build with -tags gloo (and cgo, and libgloo-dev)")
	os.Exit(2)
}
