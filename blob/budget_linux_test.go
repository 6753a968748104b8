package blob

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCgroupLimitAlong(t *testing.T) {
	root := t.TempDir()
	write := func(dir, file, v string) {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, file), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("/", "memory.max", "max")
	write("/a", "memory.max", "8589934592")
	write("/a/b", "memory.max", "max")
	write("/a/b/c", "memory.max", "garbage")
	write("/", "memory.limit_in_bytes", "9223372036854771712") // v1: no limit
	write("/p", "memory.limit_in_bytes", "4294967296")
	write("/p/q", "memory.limit_in_bytes", "9223372036854771712")
	cases := []struct {
		dir, file string
		want      int64
	}{
		{"/a/b/c", "memory.max", 8 << 30},          // the parent's limit applies
		{"/a", "memory.max", 8 << 30},              // its own
		{"/", "memory.max", 0},                     // max: none
		{"/elsewhere/x", "memory.max", 0},          // not under root: root's, none
		{"/p/q", "memory.limit_in_bytes", 4 << 30}, // v1, from the parent
		{"/", "memory.limit_in_bytes", 0},          // v1's "no limit"
		{"/missing", "memory.limit_in_bytes", 0},
	}
	for _, c := range cases {
		if got := limitAlong(root, c.dir, c.file); got != c.want {
			t.Errorf("limitAlong(%s, %s) = %d, want %d", c.dir, c.file, got, c.want)
		}
	}
}

func TestSystemMemoryIsBelowPhysical(t *testing.T) {
	n := systemMemory()
	if n <= 0 {
		t.Fatalf("systemMemory = %d on Linux", n)
	}
	if m := mappedBytes(); m <= 0 {
		t.Errorf("mappedBytes = %d", m)
	}
}
