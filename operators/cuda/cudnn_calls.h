/* Wrappers of the cuDNN calls the CUDA operators make, taking device
   pointers as integers (never Go pointers). */
#ifndef C2G_CUDNN_CALLS_H
#define C2G_CUDNN_CALLS_H
#include <stdint.h>
#include "cudnn_min.h"

// The cuDNN calls with device pointers as integers (never Go pointers) and
// alpha, beta as the element type wants them (float or double).
#define C2G_SCALARS \
	float af = (float)alpha, bf = (float)beta; \
	const void *a = dbl ? (const void *)&alpha : (const void *)&af; \
	const void *b = dbl ? (const void *)&beta : (const void *)&bf;

static inline cudnnStatus_t c2g_conv_fwd(cudnnHandle_t h, int dbl, double alpha, cudnnTensorDescriptor_t xd, uintptr_t x,
		cudnnFilterDescriptor_t wd, uintptr_t w, cudnnConvolutionDescriptor_t cd, int algo, uintptr_t ws, size_t wsn,
		double beta, cudnnTensorDescriptor_t yd, uintptr_t y) {
	C2G_SCALARS
	return cudnnConvolutionForward(h, a, xd, (const void *)x, wd, (const void *)w, cd, algo, (void *)ws, wsn, b, yd, (void *)y);
}
static inline cudnnStatus_t c2g_conv_bwd_filter(cudnnHandle_t h, int dbl, double alpha, cudnnTensorDescriptor_t xd, uintptr_t x,
		cudnnTensorDescriptor_t dyd, uintptr_t dy, cudnnConvolutionDescriptor_t cd, int algo, uintptr_t ws, size_t wsn,
		double beta, cudnnFilterDescriptor_t dwd, uintptr_t dw) {
	C2G_SCALARS
	return cudnnConvolutionBackwardFilter(h, a, xd, (const void *)x, dyd, (const void *)dy, cd, algo, (void *)ws, wsn, b, dwd, (void *)dw);
}
static inline cudnnStatus_t c2g_conv_bwd_data(cudnnHandle_t h, int dbl, double alpha, cudnnFilterDescriptor_t wd, uintptr_t w,
		cudnnTensorDescriptor_t dyd, uintptr_t dy, cudnnConvolutionDescriptor_t cd, int algo, uintptr_t ws, size_t wsn,
		double beta, cudnnTensorDescriptor_t dxd, uintptr_t dx) {
	C2G_SCALARS
	return cudnnConvolutionBackwardData(h, a, wd, (const void *)w, dyd, (const void *)dy, cd, algo, (void *)ws, wsn, b, dxd, (void *)dx);
}
static inline cudnnStatus_t c2g_conv_bwd_bias(cudnnHandle_t h, int dbl, double alpha, cudnnTensorDescriptor_t dyd, uintptr_t dy,
		double beta, cudnnTensorDescriptor_t dbd, uintptr_t db) {
	C2G_SCALARS
	return cudnnConvolutionBackwardBias(h, a, dyd, (const void *)dy, b, dbd, (void *)db);
}
static inline cudnnStatus_t c2g_add_tensor(cudnnHandle_t h, int dbl, double alpha, cudnnTensorDescriptor_t ad, uintptr_t A,
		double beta, cudnnTensorDescriptor_t cd, uintptr_t C) {
	C2G_SCALARS
	return cudnnAddTensor(h, a, ad, (const void *)A, b, cd, (void *)C);
}
static inline cudnnStatus_t c2g_pool_fwd(cudnnHandle_t h, cudnnPoolingDescriptor_t pd, int dbl, double alpha,
		cudnnTensorDescriptor_t xd, uintptr_t x, double beta, cudnnTensorDescriptor_t yd, uintptr_t y) {
	C2G_SCALARS
	return cudnnPoolingForward(h, pd, a, xd, (const void *)x, b, yd, (void *)y);
}
static inline cudnnStatus_t c2g_pool_bwd(cudnnHandle_t h, cudnnPoolingDescriptor_t pd, int dbl, double alpha,
		cudnnTensorDescriptor_t yd, uintptr_t y, cudnnTensorDescriptor_t dyd, uintptr_t dy,
		cudnnTensorDescriptor_t xd, uintptr_t x, double beta, cudnnTensorDescriptor_t dxd, uintptr_t dx) {
	C2G_SCALARS
	return cudnnPoolingBackward(h, pd, a, yd, (const void *)y, dyd, (const void *)dy, xd, (const void *)x, b, dxd, (void *)dx);
}
#endif
