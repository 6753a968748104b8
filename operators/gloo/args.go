package gloo

import (
	"fmt"
	"time"

	"github.com/caffe2go/caffe2go/operators"
)

// worldArgs are CreateCommonWorld's arguments.
type worldArgs struct {
	size, rank      int
	timeout         time.Duration
	iface, hostname string
}

// maxWorldSize bounds the size argument: Gloo opens a connection to every
// other rank.
const maxWorldSize = 1 << 16

// parseWorldArgs reads and checks CreateCommonWorld's arguments.
func parseWorldArgs(b *operators.Base) (worldArgs, error) {
	size, rank := b.ArgInt("size", 0), b.ArgInt("rank", 0)
	if size < 1 || size > maxWorldSize {
		return worldArgs{}, b.Errorf("size %d: want 1 ≤ size ≤ %d ranks", size, maxWorldSize)
	}
	if rank < 0 || rank >= size {
		return worldArgs{}, b.Errorf("rank %d: want 0 ≤ rank < size %d", rank, size)
	}
	if t := b.ArgString("transport", "tcp"); t != "tcp" {
		return worldArgs{}, b.Errorf("transport %q: only \"tcp\" is supported", t)
	}
	a := worldArgs{size: int(size), rank: int(rank), timeout: opTimeout(b, DefaultTimeout),
		iface: b.ArgString("interface", ""), hostname: b.ArgString("hostname", "")}
	if a.iface != "" && a.hostname != "" {
		return worldArgs{}, b.Errorf("give interface %q or hostname %q, not both", a.iface, a.hostname)
	}
	return a, nil
}

// String describes the arguments for errors and logs.
func (a worldArgs) String() string {
	return fmt.Sprintf("rank %d of %d, timeout %v", a.rank, a.size, a.timeout)
}
