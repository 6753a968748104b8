/* The NCCL calls the CUDA Allreduce engine makes, declared by hand from
   NCCL's public C API (no nccl.h is needed to build). */
#ifndef C2G_NCCL_MIN_H
#define C2G_NCCL_MIN_H
#include <stddef.h>
#include <stdint.h>

typedef struct ncclComm *ncclComm_t;
typedef int ncclResult_t;
typedef struct CUstream_st *ncclStream_t;
enum { ncclSuccess = 0, ncclInProgress = 7 };
enum { ncclSum = 0 };
enum { ncclInt32 = 2, ncclInt64 = 4, ncclFloat32 = 7, ncclFloat64 = 8 };

ncclResult_t ncclGetVersion(int *version);
const char *ncclGetErrorString(ncclResult_t result);
ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, int datatype, int op,
	ncclComm_t comm, ncclStream_t stream);

/* An in-place sum of a buffer given as a device address. */
static inline ncclResult_t c2g_nccl_allreduce(uintptr_t buf, size_t count, int datatype, ncclComm_t comm, void *stream) {
	return ncclAllReduce((const void *)buf, (void *)buf, count, datatype, ncclSum, comm, (ncclStream_t)stream);
}
#endif
