package blob

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

// withBudget sets the memory budget to n bytes for the rest of the test.
func withBudget(t *testing.T, n int64) {
	old := SetMemoryBudget(n)
	t.Cleanup(func() { SetMemoryBudget(old) })
}

func TestParseBudget(t *testing.T) {
	const avail = 8 << 30
	cases := []struct {
		in   string
		want int64 // 0: an error
	}{
		{"1000", 1000},
		{"512MiB", 512 << 20},
		{" 6 GiB ", 6 << 30},
		{"3KiB", 3 << 10},
		{"2TiB", 2 << 40},
		{"25%", 2 << 30},
		{"100%", avail},
		{"0.5 %", avail / 200},
		{"0", 0},
		{"-5", 0},
		{"12GB", 0},
		{"lots", 0},
		{"0%", 0},
		{"150%", 0},
		{"9999999TiB", 0},
	}
	for _, c := range cases {
		got, err := parseBudget(c.in, avail)
		switch {
		case c.want == 0 && err == nil:
			t.Errorf("parseBudget(%q) = %d, want an error", c.in, got)
		case c.want == 0 && !strings.Contains(err.Error(), MemoryBudgetEnv+"="+strconv.Quote(c.in)):
			t.Errorf("parseBudget(%q): error %q does not name the variable and its value", c.in, err)
		case c.want != 0 && (err != nil || got != c.want):
			t.Errorf("parseBudget(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestSetMemoryBudget(t *testing.T) {
	def, err := MemoryBudget()
	if err != nil {
		t.Fatal(err)
	}
	if avail := AvailableMemory(); os.Getenv(MemoryBudgetEnv) == "" && def != avail/100*defaultBudgetPercent {
		t.Errorf("default budget %d, want %d%% of the available %d", def, defaultBudgetPercent, avail)
	}
	withBudget(t, 12345)
	if b, _ := MemoryBudget(); b != 12345 {
		t.Errorf("after SetMemoryBudget(12345), MemoryBudget = %d", b)
	}
	if prev := SetMemoryBudget(0); prev != 12345 {
		t.Errorf("SetMemoryBudget(0) returned %d, want the 12345 it replaced", prev)
	}
	if b, _ := MemoryBudget(); b != def {
		t.Errorf("SetMemoryBudget(0) gave %d, want the default %d", b, def)
	}
}

func TestAvailableMemory(t *testing.T) {
	n := AvailableMemory()
	if n <= 0 {
		t.Fatalf("AvailableMemory = %d", n)
	}
	old := debug.SetMemoryLimit(n / 3)
	defer debug.SetMemoryLimit(old)
	if got := AvailableMemory(); got != n/3 {
		t.Errorf("with GOMEMLIMIT %d, AvailableMemory = %d", n/3, got)
	}
}

func TestCheckAllocation(t *testing.T) {
	withBudget(t, 64<<20)
	keep := make([]byte, 40<<20) // live while the checks run
	cases := []struct {
		name string
		n    int64
		want []string // nil: fits
	}{
		{"small", 1000, nil},
		{"the whole budget beside a 40 MiB heap", 64 << 20, []string{"with", "in use", "over the memory budget of 64.0 MiB"}},
		{"fits beside the heap", 8 << 20, nil},
		{"over the budget", 65 << 20, []string{"needs 65.0 MiB, over the memory budget of 64.0 MiB", "blob.SetMemoryBudget", MemoryBudgetEnv}},
		{"over what the heap leaves", 30 << 20, []string{"needs 30.0 MiB with", "in use, over the memory budget of 64.0 MiB"}},
		{"negative", -1, []string{"cannot allocate -1 bytes"}},
	}
	for _, c := range cases {
		err := CheckAllocation(c.n)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: CheckAllocation(%d) = %v", c.name, c.n, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: CheckAllocation(%d) succeeded", c.name, c.n)
			continue
		}
		if c.n >= 0 && !errors.Is(err, ErrOverBudget) {
			t.Errorf("%s: %v does not wrap ErrOverBudget", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", c.name, err, w)
			}
		}
	}
	runtime.KeepAlive(keep)
}

func TestBudgetBoundsTensors(t *testing.T) {
	withBudget(t, 1<<20-1)
	cases := []struct {
		name  string
		dtype DataType
		shape []int
		want  string // "": fits
	}{
		{"fits", Float32, []int{256, 255}, ""},
		{"float over", Float32, []int{512, 512}, "shape [512 512] of FLOAT: needs 1.0 MiB, over the memory budget of 1024.0 KiB"},
		{"strings by header", String, []int{1 << 16}, "shape [65536] of STRING: needs 1.0 MiB"},
		{"overflowing bytes", Int64, []int{1 << 31, 1 << 31}, "needs 32.0 EiB"},
		{"negative", Float32, []int{-2}, "negative dimension"},
	}
	for _, c := range cases {
		_, errNew := New(c.dtype, c.shape...)
		x := MustFromSlice([]int32{7}, 1)
		errInit := x.Init(c.dtype, c.shape...)
		for _, err := range []error{errNew, errInit} {
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s: %v", c.name, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
			}
		}
		if c.want != "" && (x.DataType() != Int32 || x.Size() != 1 || Data[int32](x)[0] != 7) {
			t.Errorf("%s: a refused Init changed the tensor into %v", c.name, x)
		}
	}
}

// TestBudgetFromEnvironment runs this test binary with CAFFE2GO_MEMORY_BUDGET
// set, and under ulimit -v, and reads what the child reports.
func TestBudgetFromEnvironment(t *testing.T) {
	if os.Getenv("CAFFE2GO_BUDGET_CHILD") != "" {
		b, err := MemoryBudget()
		_, errNew := New(Float32, 4)
		os.Stdout.WriteString("budget=" + strconv.FormatInt(b, 10) + " avail=" + strconv.FormatInt(AvailableMemory(), 10) + "\n")
		if err != nil {
			os.Stdout.WriteString("error=" + err.Error() + "\nnew=" + errNew.Error() + "\n")
		}
		return
	}
	if testing.Short() {
		t.Skip("runs child processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const asLimitKiB = 3 << 20 // ulimit -v: 3 GiB
	cases := []struct {
		name, env, ulimit string
		check             func(budget, avail int64, out string) string
	}{
		{"bytes", "256MiB", "", func(b, _ int64, _ string) string {
			return wantEq("budget", b, 256<<20)
		}},
		{"percent", "10%", "", func(b, avail int64, _ string) string {
			return wantEq("budget", b, avail/10)
		}},
		{"not a size", "lots", "", func(_, _ int64, out string) string {
			if !strings.Contains(out, "error=blob: "+MemoryBudgetEnv+`="lots" is not a memory size`) ||
				!strings.Contains(out, `new=blob: shape [4] of FLOAT: blob: `+MemoryBudgetEnv+`="lots"`) {
				return "no error naming the bad value, from MemoryBudget and from New: " + out
			}
			return ""
		}},
		{"ulimit -v", "", strconv.Itoa(asLimitKiB), func(b, avail int64, _ string) string {
			if avail <= 0 || avail >= asLimitKiB<<10 {
				return "available memory " + strconv.FormatInt(avail, 10) + " is not below the address-space limit"
			}
			return wantEq("budget", b, avail/100*defaultBudgetPercent)
		}},
	}
	for _, c := range cases {
		script := `exec "$0" -test.run='^TestBudgetFromEnvironment$'`
		if c.ulimit != "" {
			script = "ulimit -v " + c.ulimit + "; " + script
		}
		cmd := exec.Command("bash", "-c", script, exe)
		cmd.Env = append(os.Environ(), "CAFFE2GO_BUDGET_CHILD=1", MemoryBudgetEnv+"="+c.env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: child: %v\n%s", c.name, err, out)
			continue
		}
		var b, avail int64
		for f := range strings.FieldsSeq(string(out)) {
			if v, ok := strings.CutPrefix(f, "budget="); ok {
				b, _ = strconv.ParseInt(v, 10, 64)
			}
			if v, ok := strings.CutPrefix(f, "avail="); ok {
				avail, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		if msg := c.check(b, avail, string(out)); msg != "" {
			t.Errorf("%s: %s", c.name, msg)
		}
	}
}

func wantEq(what string, got, want int64) string {
	if got != want {
		return what + " " + strconv.FormatInt(got, 10) + ", want " + strconv.FormatInt(want, 10)
	}
	return ""
}

// TestHostileBlobProto: a BlobProto of 30 bytes claims 4·10⁹ floats (a
// chunk's segment may be empty while its dims give the whole tensor);
// deserializing it is an error naming the blob, and allocates nothing.
func TestHostileBlobProto(t *testing.T) {
	withBudget(t, 1<<30)
	p := &netdef.BlobProto{Name: proto.String("w"), Type: proto.String("Tensor"), Tensor: hostileProto()}
	data, err := proto.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 30 {
		t.Fatalf("the proto has %d bytes", len(data))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var b Blob
	_, err = DeserializeBlob(data, &b)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrOverBudget) || !strings.Contains(err.Error(), `blob "w": dims [4000000000] of FLOAT: needs 14.9 GiB, over the memory budget of 1.0 GiB`) {
		t.Errorf("DeserializeBlob: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("DeserializeBlob allocated %d bytes", n)
	}
	if !b.IsEmpty() {
		t.Errorf("the blob holds %v", b.Get())
	}
}

// TestCloneIgnoresBudget: a clone copies elements that exist, so it is not
// refused (Clone cannot return an error), while New of the same size is.
func TestCloneIgnoresBudget(t *testing.T) {
	x, err := New(Float32, 1<<19)
	if err != nil {
		t.Fatal(err)
	}
	Data[float32](x)[7] = 3
	withBudget(t, 1<<20-1)
	if _, err := New(Float32, 1<<19); !errors.Is(err, ErrOverBudget) {
		t.Fatalf("New of 2 MiB under a 1 MiB budget: %v", err)
	}
	c := x.Clone()
	if c.DataType() != Float32 || !slices.Equal(c.Dims(), x.Dims()) || !slices.Equal(Data[float32](c), Data[float32](x)) {
		t.Fatalf("clone %v of %v differs", c, x)
	}
	if Data[float32](c)[7] = 4; Data[float32](x)[7] != 3 {
		t.Fatal("the clone shares storage")
	}
}
