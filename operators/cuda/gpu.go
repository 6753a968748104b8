//go:build cuda && cgo

package cuda

/*
#cgo LDFLAGS: -lcublas
#include <stdint.h>
#include <cublas_v2.h>

static cublasStatus_t c2g_blas_create(cublasHandle_t *h, void *stream) {
	cublasStatus_t s = cublasCreate(h);
	if (s != CUBLAS_STATUS_SUCCESS) return s;
	s = cublasSetStream(*h, (cudaStream_t)stream);
	if (s != CUBLAS_STATUS_SUCCESS) return s;
	return cublasSetPointerMode(*h, CUBLAS_POINTER_MODE_HOST);
}

// Row-major C = alpha·op(A)·op(B) + beta·C (m×n, inner k) as cuBLAS's
// column-major product Cᵀ = op(B)ᵀ·op(A)ᵀ.
static cublasStatus_t c2g_sgemm(cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha,
		uintptr_t a, int lda, uintptr_t b, int ldb, float beta, uintptr_t c, int ldc) {
	return cublasSgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
		&alpha, (const float *)b, ldb, (const float *)a, lda, &beta, (float *)c, ldc);
}
static cublasStatus_t c2g_dgemm(cublasHandle_t h, int ta, int tb, int m, int n, int k, double alpha,
		uintptr_t a, int lda, uintptr_t b, int ldb, double beta, uintptr_t c, int ldc) {
	return cublasDgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
		&alpha, (const double *)b, ldb, (const double *)a, lda, &beta, (double *)c, ldc);
}
static cublasStatus_t c2g_sgemm_batched(cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha,
		uintptr_t a, int lda, long long sa, uintptr_t b, int ldb, long long sb, float beta, uintptr_t c, int ldc, long long sc, int count) {
	return cublasSgemmStridedBatched(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
		&alpha, (const float *)b, ldb, sb, (const float *)a, lda, sa, &beta, (float *)c, ldc, sc, count);
}
static cublasStatus_t c2g_dgemm_batched(cublasHandle_t h, int ta, int tb, int m, int n, int k, double alpha,
		uintptr_t a, int lda, long long sa, uintptr_t b, int ldb, long long sb, double beta, uintptr_t c, int ldc, long long sc, int count) {
	return cublasDgemmStridedBatched(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
		&alpha, (const double *)b, ldb, sb, (const double *)a, lda, sa, &beta, (double *)c, ldc, sc, count);
}
*/
import "C"

import (
	"fmt"
	"sync"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope/cuda"
	"github.com/caffe2go/caffe2go/operators"
)

// gpu is what the operators of one device share: the compiled kernels
// and the library handles, all bound to the device's stream.
type gpu struct {
	dev  *cuda.Device
	mod  *cuda.Module
	blas C.cublasHandle_t
	dnn  *cudnn

	mu      sync.Mutex
	kernels map[string]cuda.Kernel
}

type gpuKey struct{}

// gpuOf returns device d's shared state, compiling and loading the
// kernels and creating the library handles on first use.
func gpuOf(d *cuda.Device) (*gpu, error) {
	v, err := d.Resource(gpuKey{}, func(d *cuda.Device) (any, error) {
		g := &gpu{dev: d, kernels: map[string]cuda.Kernel{}}
		var err error
		if g.mod, err = d.LoadModule("caffe2go_ops", Source(), "--fmad=false", "--std=c++17"); err != nil {
			return nil, err
		}
		if s := C.c2g_blas_create(&g.blas, d.Stream()); s != C.CUBLAS_STATUS_SUCCESS {
			return nil, fmt.Errorf("cuda: creating the cuBLAS handle of gpu_%d: cuBLAS status %d", d.Key().ID, int(s))
		}
		if g.dnn, err = newCudnn(d); err != nil {
			return nil, err
		}
		return g, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*gpu), nil
}

// kernel returns a compiled kernel by name.
func (g *gpu) kernel(name string) (cuda.Kernel, error) {
	g.mu.Lock()
	k, ok := g.kernels[name]
	g.mu.Unlock()
	if ok {
		return k, nil
	}
	k, err := g.mod.Kernel(name)
	if err != nil {
		return cuda.Kernel{}, err
	}
	g.mu.Lock()
	g.kernels[name] = k
	g.mu.Unlock()
	return k, nil
}

// typed holds a kernel in the float types an operator supports.
type typed struct{ f32, f64 cuda.Kernel }

// typedKernel resolves name_f32 and name_f64.
func (g *gpu) typedKernel(name string) (typed, error) {
	var t typed
	var err error
	if t.f32, err = g.kernel(kernelName(name, "f32")); err != nil {
		return t, err
	}
	t.f64, err = g.kernel(kernelName(name, "f64"))
	return t, err
}

// of returns the kernel for an element type.
func (t typed) of(dt blob.DataType) cuda.Kernel {
	if dt == blob.Float64 {
		return t.f64
	}
	return t.f32
}

// gemm computes the row-major product C = alpha·op(A)·op(B) + beta·C of
// float tensors' memory with cuBLAS, on the device's stream. It runs on
// the worker.
func (g *gpu) gemm(dt blob.DataType, transA, transB bool, m, n, k int, alpha float64, a *blob.Tensor, lda int,
	b *blob.Tensor, ldb int, beta float64, c *blob.Tensor, ldc int) error {
	if m == 0 || n == 0 {
		return nil
	}
	ta, tb := cBool(transA), cBool(transB)
	pa, pb, pc := ptr(a), ptr(b), ptr(c)
	var s C.cublasStatus_t
	if dt == blob.Float64 {
		s = C.c2g_dgemm(g.blas, ta, tb, C.int(m), C.int(n), C.int(k), C.double(alpha), pa, C.int(lda), pb, C.int(ldb), C.double(beta), pc, C.int(ldc))
	} else {
		s = C.c2g_sgemm(g.blas, ta, tb, C.int(m), C.int(n), C.int(k), C.float(alpha), pa, C.int(lda), pb, C.int(ldb), C.float(beta), pc, C.int(ldc))
	}
	if s != C.CUBLAS_STATUS_SUCCESS {
		return fmt.Errorf("cuBLAS gemm %d×%d×%d: status %d", m, n, k, int(s))
	}
	return nil
}

// gemmBatched is gemm over count products whose operands start sa, sb
// and sc elements apart.
func (g *gpu) gemmBatched(dt blob.DataType, transA, transB bool, m, n, k int, alpha float64, a *blob.Tensor, lda, sa int,
	b *blob.Tensor, ldb, sb int, beta float64, c *blob.Tensor, ldc, sc, count int) error {
	if m == 0 || n == 0 || count == 0 {
		return nil
	}
	ta, tb := cBool(transA), cBool(transB)
	pa, pb, pc := ptr(a), ptr(b), ptr(c)
	var s C.cublasStatus_t
	if dt == blob.Float64 {
		s = C.c2g_dgemm_batched(g.blas, ta, tb, C.int(m), C.int(n), C.int(k), C.double(alpha), pa, C.int(lda), C.longlong(sa),
			pb, C.int(ldb), C.longlong(sb), C.double(beta), pc, C.int(ldc), C.longlong(sc), C.int(count))
	} else {
		s = C.c2g_sgemm_batched(g.blas, ta, tb, C.int(m), C.int(n), C.int(k), C.float(alpha), pa, C.int(lda), C.longlong(sa),
			pb, C.int(ldb), C.longlong(sb), C.float(beta), pc, C.int(ldc), C.longlong(sc), C.int(count))
	}
	if s != C.CUBLAS_STATUS_SUCCESS {
		return fmt.Errorf("cuBLAS batched gemm %d×(%d×%d×%d): status %d", count, m, n, k, int(s))
	}
	return nil
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// ptr returns the device address of a GPU tensor's storage.
func ptr(t *blob.Tensor) C.uintptr_t { return C.uintptr_t(t.Storage().(*cuda.Block).Ptr()) }

// op is the base of the CUDA operators: the device state, and Run, which
// hands the concrete operator to the device's worker.
type op struct {
	*operators.Base
	g    *gpu
	self cuda.Runner
}

// newOp resolves b's device; self is the operator whose RunOnDevice Run
// calls.
func newOp(b *operators.Base) (op, error) {
	d, ok := b.Device().(*cuda.Device)
	if !ok {
		return op{}, fmt.Errorf("%T is not a CUDA device", b.Device())
	}
	g, err := gpuOf(d)
	if err != nil {
		return op{}, err
	}
	return op{Base: b, g: g}, nil
}

// Run implements operators.Operator.
func (o *op) Run() error { return o.g.dev.Exec(o.self) }

// gpuInput returns input i, which must be a GPU tensor of this device.
func (o *op) gpuInput(i int) (*blob.Tensor, error) {
	t, err := o.Input(i)
	if err != nil {
		return nil, err
	}
	if b, ok := t.Storage().(*cuda.Block); !ok || b.Device() != o.g.dev {
		if t.Size() == 0 && t.Storage() == nil {
			return t, nil
		}
		return nil, fmt.Errorf("input %d (%q) is not on %v: copy it there first", i, o.InputName(i), o.g.dev.Key())
	}
	return t, nil
}

// floatInput is gpuInput that also requires FLOAT or DOUBLE elements.
func (o *op) floatInput(i int) (*blob.Tensor, error) {
	t, err := o.gpuInput(i)
	if err != nil {
		return nil, err
	}
	if dt := t.DataType(); dt != blob.Float32 && dt != blob.Float64 {
		return nil, fmt.Errorf("input %d (%q) has type %v; the CUDA operator takes FLOAT or DOUBLE", i, o.InputName(i), dt)
	}
	return t, nil
}

// output gives output i the type and shape, on the device.
func (o *op) output(i int, dt blob.DataType, dims ...int) (*blob.Tensor, error) {
	y := o.Output(i)
	if err := y.Init(dt, dims...); err != nil {
		return nil, fmt.Errorf("output %d (%q): %w", i, o.OutputName(i), err)
	}
	return y, nil
}

// launch1D launches k over n elements with a, doing nothing for n = 0.
func launch1D(k cuda.Kernel, n int64, a *cuda.Args) error {
	if n == 0 {
		return nil
	}
	return k.Launch(cuda.Dim3{X: blocks(n)}, cuda.Dim3{X: threadsPerBlock}, 0, a)
}
