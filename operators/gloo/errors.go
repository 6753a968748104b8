package gloo

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/caffe2go/caffe2go/blob"
)

// ErrBroken matches (errors.Is) the error of a collective on a common
// world that an earlier failure broke or DestroyCommonWorld closed: its
// connections are gone, and it must be created anew (every rank runs
// CreateCommonWorld again, through a fresh store or prefix).
var ErrBroken = errors.New("common world is broken")

// CollectiveError is the error of a collective (or rendezvous) that
// failed: the peer died, hung past the deadline, or never arrived.
type CollectiveError struct {
	Op         string // "allreduce", "broadcast", "allgather", "barrier", "rendezvous"
	Rank, Size int    // this process's rank and the world's size
	Cause      string // what Gloo or the store said
	// TimedOut says the deadline passed (a peer that hangs, or never
	// arrived).
	TimedOut bool
	// Earlier says the world was already broken by that earlier error;
	// this collective never started.
	Earlier bool
}

func (e *CollectiveError) Error() string {
	if e.Earlier {
		return fmt.Sprintf("gloo %s on rank %d of %d: the common world is broken by an earlier failure (%s); create it anew",
			e.Op, e.Rank, e.Size, e.Cause)
	}
	return fmt.Sprintf("gloo %s on rank %d of %d: %s", e.Op, e.Rank, e.Size, e.Cause)
}

// Is matches ErrTimeout for a collective that timed out and ErrBroken for
// one that found its world broken.
func (e *CollectiveError) Is(target error) bool {
	return (target == ErrTimeout && e.TimedOut) || (target == ErrBroken && e.Earlier)
}

// isTimeout reports whether a Gloo or store message says a deadline
// passed.
func isTimeout(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "timed out") || strings.Contains(m, "timeout")
}

// rawBytes returns the address and byte length of a host tensor's
// elements; ok is false for strings and device memory.
func rawBytes(t *blob.Tensor) (p unsafe.Pointer, n int, ok bool) {
	raw := t.Raw()
	if raw == nil {
		return nil, 0, false
	}
	v := reflect.ValueOf(raw)
	if v.Kind() != reflect.Slice || v.Type().Elem().Kind() == reflect.String {
		return nil, 0, false
	}
	if v.Len() == 0 {
		return nil, 0, true
	}
	return v.UnsafePointer(), v.Len() * int(v.Type().Elem().Size()), true
}
