package blob

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// MemoryBudgetEnv is the environment variable that sets the memory budget
// when SetMemoryBudget has not: a number of bytes, optionally followed by
// KiB, MiB, GiB or TiB ("512MiB", "6GiB"), or a percentage of the memory
// the process may use ("25%"). It is read once, at the first allocation
// the budget checks.
const MemoryBudgetEnv = "CAFFE2GO_MEMORY_BUDGET"

// ErrOverBudget is wrapped by the error of every allocation the memory
// budget refuses (errors.Is(err, blob.ErrOverBudget)).
var ErrOverBudget = errors.New("over the memory budget")

// defaultBudgetPercent is the share of the memory the process may use that
// the budget is by default.
const defaultBudgetPercent = 50

// heapCheckBytes is the smallest allocation for which CheckAllocation
// reads the heap's size: below it, only the budget itself bounds a request.
const heapCheckBytes = 1 << 20

// fallbackMemory is what the budget takes for the memory the process may
// use where the system says nothing about it.
const fallbackMemory = 8 << 30

var budget struct {
	set atomic.Int64 // bytes set by SetMemoryBudget; 0: the default

	once   sync.Once
	def    int64 // the default: from MemoryBudgetEnv, or a share of the machine's memory
	defErr error // MemoryBudgetEnv holds something that is not a size
}

// MemoryBudget returns the memory budget in bytes: what SetMemoryBudget
// set, else what CAFFE2GO_MEMORY_BUDGET says, else half of the memory the
// process may use (see AvailableMemory). The error says that
// CAFFE2GO_MEMORY_BUDGET holds something that is not a size; every
// allocation the budget checks then fails with it, until SetMemoryBudget
// sets a budget.
func MemoryBudget() (int64, error) {
	if n := budget.set.Load(); n > 0 {
		return n, nil
	}
	budget.once.Do(func() {
		avail := AvailableMemory()
		budget.def = avail / 100 * defaultBudgetPercent
		if v, ok := os.LookupEnv(MemoryBudgetEnv); ok && v != "" {
			n, err := parseBudget(v, avail)
			if err != nil {
				budget.defErr = err
				return
			}
			budget.def = n
		}
	})
	return budget.def, budget.defErr
}

// SetMemoryBudget sets the memory budget to n bytes and returns the budget
// it replaces (0 when that was the default); n ≤ 0 restores the default
// (see MemoryBudget).
func SetMemoryBudget(n int64) (previous int64) {
	return budget.set.Swap(max(n, 0))
}

// parseBudget reads a MemoryBudgetEnv value: bytes with an optional binary
// unit, or a percentage of avail.
func parseBudget(v string, avail int64) (int64, error) {
	bad := fmt.Errorf("blob: %s=%q is not a memory size: want bytes, optionally followed by KiB, MiB, GiB or TiB, or a percentage such as 25%%",
		MemoryBudgetEnv, v)
	s := strings.TrimSpace(v)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(f > 0 && f <= 100) {
			return 0, bad
		}
		return int64(float64(avail) * f / 100), nil
	}
	unit := int64(1)
	for i, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if rest, ok := strings.CutSuffix(s, u); ok {
			s, unit = strings.TrimSpace(rest), 1<<(10*(i+1))
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/unit {
		return 0, bad
	}
	return n * unit, nil
}

// AvailableMemory returns the memory this process may use, in bytes: the
// least of the physical memory, the memory limit of its cgroup (v2
// memory.max or v1 memory.limit_in_bytes, of its own cgroup and those
// above it), the address space its RLIMIT_AS leaves (ulimit -v, less what
// is mapped already) and the Go runtime's soft memory limit (GOMEMLIMIT,
// debug.SetMemoryLimit) when one is set. Where the system says nothing
// about memory (systems other than Linux) it is 8 GiB.
func AvailableMemory() int64 {
	n := systemMemory()
	if n <= 0 {
		n = fallbackMemory
	}
	if l := debug.SetMemoryLimit(-1); l > 0 && l < n {
		n = l
	}
	return n
}

// CheckAllocation reports whether an allocation of n bytes fits the memory
// budget, so that sizes taken from input (tensor shapes from protos,
// arguments, shape inference) are errors instead of a fatal out-of-memory.
// It refuses a request larger than the budget, and one of at least 1 MiB
// that would take the Go heap's objects past the budget even after a
// garbage collection. The error wraps ErrOverBudget and says how many
// bytes were asked for, how many were in use and the budget; callers add
// what the memory was for (a blob, an operator and its argument).
//
// The budget is a guard, not an account: allocations it does not check,
// and checks racing each other, are not counted until they are on the
// heap.
func CheckAllocation(n int64) error {
	b, err := MemoryBudget()
	if err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("cannot allocate %d bytes", n)
	}
	if n > b {
		return overBudget(float64(n), 0, b)
	}
	if n < heapCheckBytes {
		return nil
	}
	if used := heapObjects(); used <= b-n {
		return nil
	}
	runtime.GC()
	if used := heapObjects(); used > b-n {
		return overBudget(float64(n), used, b)
	}
	return nil
}

// overBudget returns the error of a request for need bytes, with used
// bytes on the heap (0: not counted), refused by the budget b.
func overBudget(need float64, used, b int64) error {
	inUse := ""
	if used > 0 {
		inUse = " with " + formatBytes(float64(used)) + " in use"
	}
	return fmt.Errorf("needs %s%s, %w of %s (blob.SetMemoryBudget or %s sets it)",
		formatBytes(need), inUse, ErrOverBudget, formatBytes(float64(b)), MemoryBudgetEnv)
}

// CheckElements is CheckAllocation for count elements of type dtype
// (strings counted at their 16-byte header).
func CheckElements(dtype DataType, count int) error {
	size := int64(dtype.ItemSize())
	if size == 0 {
		size = int64(unsafe.Sizeof(""))
	}
	if count < 0 {
		return fmt.Errorf("cannot allocate %d elements of %v", count, dtype)
	}
	if int64(count) > math.MaxInt64/size {
		b, err := MemoryBudget()
		if err != nil {
			return err
		}
		return overBudget(float64(count)*float64(size), 0, b)
	}
	return CheckAllocation(int64(count) * size)
}

// heapObjectsMetric is the bytes of the heap's objects, live or not yet
// swept.
const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

var heapSample = sync.Pool{New: func() any {
	return &[]metrics.Sample{{Name: heapObjectsMetric}}
}}

// heapObjects returns the bytes of the heap's objects.
func heapObjects() int64 {
	s := heapSample.Get().(*[]metrics.Sample)
	defer heapSample.Put(s)
	metrics.Read(*s)
	return int64((*s)[0].Value.Uint64())
}

// formatBytes writes n bytes in binary units, as "1.5 GiB", "512 B".
func formatBytes(n float64) string {
	const units = "KMGTPEZY"
	if n < 1024 {
		return strconv.FormatFloat(n, 'f', 0, 64) + " B"
	}
	f, i := n/1024, 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[i:i+1] + "iB"
}
