package blob

import (
	"bufio"
	"math"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// systemMemory returns the least of the physical memory, the cgroup memory
// limits that apply to this process, and the address space RLIMIT_AS
// leaves it; 0 when none is known.
func systemMemory() int64 {
	n := int64(math.MaxInt64)
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil && si.Totalram > 0 {
		n = min(n, clampInt64(uint64(si.Totalram)*uint64(max(si.Unit, 1))))
	}
	if l := cgroupLimit(); l > 0 {
		n = min(n, l)
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		n = min(n, max(clampInt64(rl.Cur)-mappedBytes(), 0))
	}
	if n == math.MaxInt64 {
		return 0
	}
	return n
}

func clampInt64(v uint64) int64 { return int64(min(v, math.MaxInt64)) }

// cgroupLimit returns the least memory limit set on this process's cgroup
// or a cgroup above it, v2 (memory.max) or v1 (memory.limit_in_bytes); 0
// when there is none.
func cgroupLimit() int64 {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	defer f.Close()
	var limit int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var root, file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			root, file = "/sys/fs/cgroup", "memory.max"
		case hasController(parts[1], "memory"):
			root, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		if l := limitAlong(root, parts[2], file); l > 0 && (limit == 0 || l < limit) {
			limit = l
		}
	}
	return limit
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// limitAlong returns the least limit in file in the cgroup dir (under
// root) and the cgroups above it, 0 when none is set. A cgroup namespace
// can make dir name a cgroup that is not under root, whose root then holds
// the process's own limit.
func limitAlong(root, dir, file string) int64 {
	var limit int64
	for d := path.Clean("/" + dir); ; d = path.Dir(d) {
		if l := readLimit(path.Join(root, d, file)); l > 0 && (limit == 0 || l < limit) {
			limit = l
		}
		if d == "/" {
			return limit
		}
	}
}

// readLimit reads a cgroup memory limit: 0 for "max", for v1's "no limit"
// (a value near MaxInt64) and for a file that cannot be read.
func readLimit(file string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v >= 1<<62 {
		return 0
	}
	return int64(v)
}

// mappedBytes returns the process's mapped address space (VmSize).
func mappedBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
