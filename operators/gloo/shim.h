//go:build gloo && cgo

// The C interface of shim.cc, the part of the Gloo binding written in
// C++. Every function catches what Gloo throws: it returns NULL on
// success, or an error message allocated with malloc that the caller
// frees.
#ifndef CAFFE2GO_GLOO_SHIM_H
#define CAFFE2GO_GLOO_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c2g_world c2g_world;

// Element types of c2g_allreduce.
enum { C2G_FLOAT = 0, C2G_DOUBLE = 1, C2G_INT32 = 2, C2G_INT64 = 3 };

// c2g_world_new meets the other ranks through the Go store behind the
// cgo.Handle store and connects to each of them.
char* c2g_world_new(uintptr_t store, int rank, int size, int64_t timeout_ms,
                    const char* iface, const char* hostname, c2g_world** out);
// c2g_allreduce sums the n buffers of count elements here and on every
// other rank, and leaves the sum in all of them.
char* c2g_allreduce(c2g_world* w, void** bufs, int n, size_t count, int dtype,
                    uint32_t tag, int64_t timeout_ms);
// c2g_broadcast copies root's buffer of bytes bytes into every rank's.
char* c2g_broadcast(c2g_world* w, void* buf, size_t bytes, int root,
                    uint32_t tag, int64_t timeout_ms);
// c2g_allgather writes rank r's in (bytes bytes) at out + r·bytes on every
// rank.
char* c2g_allgather(c2g_world* w, void* in, size_t bytes, void* out,
                    uint32_t tag, int64_t timeout_ms);
char* c2g_barrier(c2g_world* w, uint32_t tag, int64_t timeout_ms);
// c2g_world_close closes the world's connections; its collectives fail
// after.
void c2g_world_close(c2g_world* w);
void c2g_world_free(c2g_world* w);

#ifdef __cplusplus
}
#endif

#endif
