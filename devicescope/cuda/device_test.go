//go:build cuda && cgo

package cuda_test

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/devicescope/cuda"
	"github.com/caffe2go/caffe2go/netdef"
)

// logical is how many logical devices the tests lay over the machine's
// GPUs, so that peer copies between devices are exercised on one GPU.
const logical = 4

func TestMain(m *testing.M) {
	cuda.ShareGPUs(logical)
	os.Exit(m.Run())
}

func gpu(t *testing.T, id int) *cuda.Device {
	t.Helper()
	d, err := devicescope.Get(netdef.NewDeviceOption(netdef.CUDA, int32(id)))
	if err != nil {
		t.Fatal(err)
	}
	return d.(*cuda.Device)
}

func TestDevices(t *testing.T) {
	if n := devicescope.NumDevices(netdef.CUDA); n != logical {
		t.Fatalf("NumDevices(CUDA) = %d, want the %d logical devices", n, logical)
	}
	d := gpu(t, 0)
	major, minor := d.ComputeCapability()
	t.Logf("gpu_0: %s, compute capability %d.%d", d.Name(), major, minor)
	if d.Name() == "" || major < 3 {
		t.Errorf("gpu_0: name %q, compute capability %d.%d", d.Name(), major, minor)
	}
	if _, err := devicescope.Get(netdef.NewDeviceOption(netdef.CUDA, logical)); err == nil {
		t.Errorf("gpu_%d exists beyond the %d logical devices", logical, logical)
	}
}

// TestCopies moves tensors of every fixed-size type host → device → other
// device → host, whole and with offsets, and checks that new device
// tensors are zero-filled.
func TestCopies(t *testing.T) {
	for _, src := range []*blob.Tensor{
		blob.MustFromSlice([]float32{1, -2, 3.5, 1e30, -0}, 5),
		blob.MustFromSlice([]float64{1e-300, 2, 3}, 3),
		blob.MustFromSlice([]int64{-1, 1 << 40}, 2),
		blob.MustFromSlice([]int32{7, 8, 9, 10}, 2, 2),
		blob.MustFromSlice([]bool{true, false, true}, 3),
		blob.MustFromSlice([]blob.Half{blob.HalfFromFloat32(1.5)}, 1),
		blob.MustFromSlice([]uint8{255, 0, 17}, 3),
	} {
		t.Run(src.DataType().String(), func(t *testing.T) {
			on0, err := src.CopyTo(gpu(t, 0).Option())
			if err != nil {
				t.Fatal(err)
			}
			if on0.OnHost() {
				t.Fatal("a CUDA tensor lives in Go memory")
			}
			on3, err := on0.CopyTo(gpu(t, 3).Option())
			if err != nil {
				t.Fatal(err)
			}
			back, err := on3.ToHost()
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(back.Raw()) != fmt.Sprint(src.Raw()) || !slices.Equal(back.Dims(), src.Dims()) {
				t.Fatalf("round trip gave %v %v, want %v %v", back.Dims(), back.Raw(), src.Dims(), src.Raw())
			}
		})
	}
	z := &blob.Tensor{}
	z.SetDevice(gpu(t, 1).Option())
	if err := z.Init(blob.Float32, 1000); err != nil {
		t.Fatal(err)
	}
	h, err := z.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range blob.Data[float32](h) {
		if v != 0 {
			t.Fatalf("a new device tensor holds %v at %d", v, i)
		}
	}
}

// TestAllocatorCache checks that a block no tensor references goes back to
// the device's cache and serves the next request of its size class.
func TestAllocatorCache(t *testing.T) {
	d := gpu(t, 2)
	alloc := func() {
		if _, err := d.Allocate(3 << 20); err != nil {
			t.Fatal(err)
		}
	}
	alloc()
	// Cleanups run on their own goroutine after a collection.
	inUse, cached := d.MemoryStats()
	for i := 0; i < 50 && cached == 0; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		inUse, cached = d.MemoryStats()
	}
	if cached == 0 {
		t.Fatalf("after a collection the cache holds nothing (%d bytes in use)", inUse)
	}
	alloc()
	if _, after := d.MemoryStats(); after >= cached {
		t.Errorf("the second allocation did not come from the cache (%d then %d bytes cached)", cached, after)
	}
}

// TestKernel compiles CUDA C with NVRTC, loads and launches it, and
// checks the result.
func TestKernel(t *testing.T) {
	d := gpu(t, 0)
	m, err := d.LoadModule("test_saxpy", `extern "C" __global__ void saxpy(float a, const float* x, float* y, long long n) {
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + y[i];
}`)
	if err != nil {
		t.Fatal(err)
	}
	k, err := m.Kernel("saxpy")
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = float32(i), 1
	}
	x, _ := blob.MustFromSlice(xs).CopyTo(d.Option())
	y, _ := blob.MustFromSlice(ys).CopyTo(d.Option())
	a := cuda.NewArgs(4)
	a.Float(0, 2)
	a.Mem(1, x.Storage(), 0)
	a.Mem(2, y.Storage(), 0)
	a.Int64(3, n)
	if err := d.Exec(cuda.RunnerFunc(func() error {
		return k.Launch(cuda.Dim3{X: (n + 255) / 256}, cuda.Dim3{X: 256}, 0, a)
	})); err != nil {
		t.Fatal(err)
	}
	got, err := y.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range blob.Data[float32](got) {
		if v != 2*float32(i)+1 {
			t.Fatalf("y[%d] = %v, want %v", i, v, 2*float32(i)+1)
		}
	}
}
