package cuda

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// kindsOf parses a parameter list of the tables, T replaced by ct.
func kindsOf(t *testing.T, name, params, ct string) []paramKind {
	t.Helper()
	src := `extern "C" __global__ void ` + name + "(" + regexp.MustCompile(`\bT\b`).ReplaceAllString(params, ct) + ")"
	k, err := kernelParams(src)
	if err != nil {
		t.Fatal(err)
	}
	return k[name]
}

// TestKernelTables checks that Source declares every kernel the tables
// name, with the parameters the launches will pass.
func TestKernelTables(t *testing.T) {
	got, err := kernelParams(Source())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]paramKind{}
	for _, k := range kernels {
		for _, s := range k.Types {
			want[kernelName(k.Name, s)] = kindsOf(t, "k", k.Params, cTypes[s])
		}
	}
	for _, op := range elementwise {
		for _, s := range floats {
			kinds := slices.Repeat([]paramKind{pPtr}, op.Inputs+1)
			for range op.Args {
				kinds = append(kinds, pDouble)
			}
			want[ewKernel(op.Type, s)] = append(kinds, pInt64)
		}
	}
	for name, kinds := range want {
		if !slices.Equal(got[name], kinds) {
			t.Errorf("kernel %s has parameters %v, want %v", name, got[name], kinds)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("kernel %s is in the source but in no table", name)
		}
	}
}

// TestDeviceFunctionsDefined checks that every template the tables name is
// defined under kernels/.
func TestDeviceFunctionsDefined(t *testing.T) {
	src := Source()
	fns := map[string]bool{}
	for _, k := range kernels {
		fns[k.Fn] = true
	}
	for _, op := range elementwise {
		fns[op.Fn] = true
	}
	for fn := range fns {
		def := regexp.MustCompile(`template <typename T> __device__ (__forceinline__ )?[\w ]+\b` + fn + `\(`)
		if !def.MatchString(src) {
			t.Errorf("device function %s is not defined in kernels/*.cu", fn)
		}
	}
}

// clangPrelude declares for clang what NVRTC provides built in, so that
// Source compiles to PTX with clang alone (no CUDA toolkit).
const clangPrelude = `#include <__clang_cuda_builtin_vars.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __attribute__((always_inline)) inline
extern "C" __device__ double exp(double);
extern "C" __device__ double log(double);
extern "C" __device__ double sqrt(double);
extern "C" __device__ double tanh(double);
extern "C" __device__ double fabs(double);
`

// TestSourceCompiles compiles Source to PTX with clang, which needs no
// CUDA toolkit: a kernel that does not compile fails here, not on the GPU
// machine. It skips where clang is missing, unless CAFFE2GO_CLANG names
// the compiler (as CI does), which makes its absence a failure.
func TestSourceCompiles(t *testing.T) {
	clang := os.Getenv("CAFFE2GO_CLANG")
	if clang == "" {
		for _, c := range []string{"clang-16", "clang"} {
			if p, err := exec.LookPath(c); err == nil {
				clang = p
				break
			}
		}
	}
	if clang == "" {
		t.Skip("no clang to compile the CUDA source with (set CAFFE2GO_CLANG to require one)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "kernels.cu")
	if err := os.WriteFile(src, []byte(clangPrelude+Source()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(clang, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib",
		"--cuda-gpu-arch=sm_80", "-std=c++17", "-Wall", "-Werror", "-S", "-o", filepath.Join(dir, "kernels.ptx"), src).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", clang, err, out)
	}
	ptx, err := os.ReadFile(filepath.Join(dir, "kernels.ptx"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range mustParams(t) {
		if !strings.Contains(string(ptx), ".entry "+name+"(") {
			t.Errorf("kernel %s is missing from the PTX", name)
		}
	}
}

func mustParams(t *testing.T) map[string][]paramKind {
	t.Helper()
	k, err := kernelParams(Source())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestBlocks(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want int
	}{{0, 1}, {1, 1}, {256, 1}, {257, 2}, {256 << 16, 1 << 16}, {1 << 40, 1 << 16}} {
		if got := blocks(tc.n); got != tc.want {
			t.Errorf("blocks(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	if !strings.Contains(Source(), "#define C2G_THREADS 128") || rowThreads != 128 {
		t.Error("rowThreads and the kernels' C2G_THREADS disagree")
	}
}

// Kernel parameters, as a launch's argument block sets them (cuda.Args).
type paramKind int

const (
	pPtr    paramKind = iota // a device pointer (Args.Mem)
	pInt                     // int (Args.Int)
	pInt64                   // long long (Args.Int64)
	pFloat                   // float (Args.Float)
	pDouble                  // double (Args.Double)
)

var kernelDecl = regexp.MustCompile(`extern "C" __global__ void (\w+)\(([^)]*)\)`)

// kernelParams parses the extern "C" kernels of a source into their
// parameter kinds.
func kernelParams(src string) (map[string][]paramKind, error) {
	out := map[string][]paramKind{}
	for _, m := range kernelDecl.FindAllStringSubmatch(src, -1) {
		var kinds []paramKind
		for _, p := range strings.Split(m[2], ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			typ := p[:strings.LastIndexAny(p, " *")+1]
			typ = strings.TrimSpace(strings.TrimPrefix(typ, "const "))
			switch {
			case strings.HasSuffix(typ, "*"):
				kinds = append(kinds, pPtr)
			case typ == "int":
				kinds = append(kinds, pInt)
			case typ == "long long":
				kinds = append(kinds, pInt64)
			case typ == "float":
				kinds = append(kinds, pFloat)
			case typ == "double":
				kinds = append(kinds, pDouble)
			default:
				return nil, fmt.Errorf("kernel %s: parameter %q has a type launches do not pass", m[1], p)
			}
		}
		if _, dup := out[m[1]]; dup {
			return nil, fmt.Errorf("kernel %s is declared twice", m[1])
		}
		out[m[1]] = kinds
	}
	return out, nil
}
