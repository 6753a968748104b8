//go:build gloo && cgo

package gloo

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"runtime/cgo"
	"time"
	"unsafe"
)

// The callbacks through which shim.cc's GoStore reaches a Go Store, given
// as a cgo.Handle. Each returns nil or an error message allocated with
// malloc, which the C++ side frees.

func storeOf(h C.uintptr_t) Store { return cgo.Handle(h).Value().(Store) }

func cError(err error) *C.char {
	if err == nil {
		return nil
	}
	return C.CString(err.Error())
}

//export c2goStoreSet
func c2goStoreSet(h C.uintptr_t, key *C.char, keyLen C.int, val *C.char, valLen C.int) *C.char {
	return cError(storeOf(h).Set(C.GoStringN(key, keyLen), C.GoBytes(unsafe.Pointer(val), valLen)))
}

//export c2goStoreGet
func c2goStoreGet(h C.uintptr_t, key *C.char, keyLen C.int, timeoutMs C.int64_t, val **C.char, valLen *C.int) *C.char {
	v, err := storeOf(h).Get(C.GoStringN(key, keyLen), time.Duration(timeoutMs)*time.Millisecond)
	if err != nil {
		return cError(err)
	}
	*val = (*C.char)(C.CBytes(v))
	*valLen = C.int(len(v))
	return nil
}

//export c2goStoreWait
func c2goStoreWait(h C.uintptr_t, keys **C.char, keyLens *C.int, n C.int, timeoutMs C.int64_t) *C.char {
	ks := unsafe.Slice(keys, int(n))
	ls := unsafe.Slice(keyLens, int(n))
	names := make([]string, n)
	for i := range names {
		names[i] = C.GoStringN(ks[i], ls[i])
	}
	return cError(storeOf(h).Wait(names, time.Duration(timeoutMs)*time.Millisecond))
}
