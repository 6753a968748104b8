//go:build cuda && cgo

package cuda

/*
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>

static CUresult c2g_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream s, void **args) {
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, args, NULL);
}

// c2g_args allocates an argument block of n 8-byte slots and the array of
// pointers to them that cuLaunchKernel takes.
static void **c2g_args(int n) {
	char *vals = calloc(n > 0 ? n : 1, 8);
	void **ptrs = calloc(n > 0 ? n : 1, sizeof(void *));
	if (vals == NULL || ptrs == NULL) { free(vals); free(ptrs); return NULL; }
	for (int i = 0; i < n; i++) ptrs[i] = vals + 8 * i;
	return ptrs;
}

static void c2g_free_args(void **ptrs) { if (ptrs != NULL) { free(ptrs[0]); free(ptrs); } }
static void c2g_set_u64(void **ptrs, int i, uint64_t v) { *(uint64_t *)ptrs[i] = v; }
static void c2g_set_u32(void **ptrs, int i, uint32_t v) { *(uint32_t *)ptrs[i] = v; }
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	"gorgonia.org/cu/nvrtc"

	"github.com/caffe2go/caffe2go/devicescope"
)

// Module is CUDA C compiled and loaded on one device.
type Module struct {
	mod  C.CUmodule
	name string
	dev  *Device
}

// Kernel is a __global__ function of a loaded module.
type Kernel struct {
	fn   C.CUfunction
	name string
	dev  *Device
}

// ptxCache holds compiled sources by cache key, for every device of the
// process.
var ptxCache compiled

type compiled struct {
	sync.Mutex
	m map[string]string
}

// set records ptx under key; the caller holds the lock.
func (c *compiled) set(key, ptx string) {
	if c.m == nil {
		c.m = map[string]string{}
	}
	c.m[key] = ptx
}

// Compile returns the PTX of a CUDA C source for the device's
// architecture: from memory or the on-disk cache when it was compiled
// before, else compiled with NVRTC (and cached). options are NVRTC's,
// besides the architecture.
func (d *Device) Compile(name, source string, options ...string) (string, error) {
	opts := append([]string{archOption(d.major, d.minor)}, options...)
	key := cacheKey(name, source, opts)
	ptxCache.Lock()
	defer ptxCache.Unlock()
	if ptx, ok := ptxCache.m[key]; ok {
		return ptx, nil
	}
	dir := cacheDir()
	if dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, key)); err == nil {
			ptxCache.set(key, string(b))
			return string(b), nil
		}
	}
	prog, err := nvrtc.CreateProgram(source, name+".cu")
	if err != nil {
		return "", fmt.Errorf("cuda: NVRTC program %s: %w", name, err)
	}
	defer prog.Destroy()
	if err := prog.Compile(opts...); err != nil {
		log, _ := prog.GetLog()
		return "", fmt.Errorf("cuda: compiling %s for compute capability %d.%d: %w\n%s", name, d.major, d.minor, err, log)
	}
	ptx, err := prog.GetPTX()
	if err != nil {
		return "", fmt.Errorf("cuda: PTX of %s: %w", name, err)
	}
	ptxCache.set(key, ptx)
	if dir != "" && os.MkdirAll(dir, 0o755) == nil {
		// The cache only saves time: a failed write is no error.
		tmp := filepath.Join(dir, key+".tmp")
		if os.WriteFile(tmp, []byte(ptx), 0o644) == nil {
			os.Rename(tmp, filepath.Join(dir, key))
		}
	}
	return ptx, nil
}

// cacheDir is where compiled kernels are kept between runs: the user cache
// directory's caffe2go/cuda, or "" when there is none.
func cacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "caffe2go", "cuda")
}

// LoadModule compiles source (see Compile) and loads it on the device.
func (d *Device) LoadModule(name, source string, options ...string) (*Module, error) {
	ptx, err := d.Compile(name, source, options...)
	if err != nil {
		return nil, err
	}
	m := &Module{name: name, dev: d}
	err = d.Exec(RunnerFunc(func() error {
		cs := C.CString(ptx)
		defer C.free(unsafe.Pointer(cs))
		return check("cuModuleLoadData", C.cuModuleLoadData(&m.mod, unsafe.Pointer(cs)))
	}))
	if err != nil {
		return nil, fmt.Errorf("cuda: loading %s on gpu_%d: %w", name, d.id, err)
	}
	return m, nil
}

// Kernel returns the module's __global__ function name (declared extern
// "C").
func (m *Module) Kernel(name string) (Kernel, error) {
	k := Kernel{name: name, dev: m.dev}
	err := m.dev.Exec(RunnerFunc(func() error {
		cs := C.CString(name)
		defer C.free(unsafe.Pointer(cs))
		return check("cuModuleGetFunction", C.cuModuleGetFunction(&k.fn, m.mod, cs))
	}))
	if err != nil {
		return Kernel{}, fmt.Errorf("cuda: kernel %s of %s: %w", name, m.name, err)
	}
	return k, nil
}

// Args is a kernel's argument block, in C memory so that a launch passes
// it without copying or allocating. Keep one per call site and set its
// slots before each Launch.
type Args struct {
	ptrs *unsafe.Pointer
	n    int
}

// NewArgs returns an argument block of n arguments (each at most 8
// bytes).
func NewArgs(n int) *Args {
	p := C.c2g_args(C.int(n))
	if p == nil {
		panic(errors.New("cuda: out of host memory for a kernel argument block"))
	}
	a := &Args{ptrs: p, n: n}
	runtime.AddCleanup(a, func(p *unsafe.Pointer) { C.c2g_free_args(p) }, p)
	return a
}

func (a *Args) slot(i int) {
	if i < 0 || i >= a.n {
		panic(fmt.Sprintf("cuda: argument %d of a block of %d", i, a.n))
	}
}

// Mem sets argument i to the address of m (a *Block) plus off bytes.
func (a *Args) Mem(i int, m devicescope.Memory, off int) {
	a.slot(i)
	b := m.(*Block)
	C.c2g_set_u64(a.ptrs, C.int(i), C.uint64_t(uintptr(b.ptr)+uintptr(off)))
}

// Int sets argument i to v as a C int.
func (a *Args) Int(i, v int) {
	a.slot(i)
	C.c2g_set_u32(a.ptrs, C.int(i), C.uint32_t(uint32(int32(v))))
}

// Int64 sets argument i to v as a C long long.
func (a *Args) Int64(i int, v int64) {
	a.slot(i)
	C.c2g_set_u64(a.ptrs, C.int(i), C.uint64_t(uint64(v)))
}

// Float sets argument i to v as a C float.
func (a *Args) Float(i int, v float32) {
	a.slot(i)
	C.c2g_set_u32(a.ptrs, C.int(i), C.uint32_t(math.Float32bits(v)))
}

// Double sets argument i to v as a C double.
func (a *Args) Double(i int, v float64) {
	a.slot(i)
	C.c2g_set_u64(a.ptrs, C.int(i), C.uint64_t(math.Float64bits(v)))
}

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z int }

// Launch queues k on its device's stream with the given grid, block and
// dynamic shared memory. It must run on the device's worker (inside a
// Runner).
func (k Kernel) Launch(grid, block Dim3, shared int, a *Args) error {
	d := k.dev
	r := C.c2g_launch(k.fn, C.uint(max(grid.X, 1)), C.uint(max(grid.Y, 1)), C.uint(max(grid.Z, 1)),
		C.uint(max(block.X, 1)), C.uint(max(block.Y, 1)), C.uint(max(block.Z, 1)), C.uint(shared), d.stream,
		a.ptrs)
	if err := check("cuLaunchKernel", r); err != nil {
		return fmt.Errorf("cuda: launching %s on gpu_%d (grid %v, block %v): %w", k.name, d.id, grid, block, err)
	}
	return nil
}
