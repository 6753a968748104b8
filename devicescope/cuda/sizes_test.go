package cuda

import (
	"strings"
	"testing"
)

func TestSizeClass(t *testing.T) {
	for _, tc := range []struct{ n, want int }{
		{0, 512}, {1, 512}, {512, 512}, {513, 1024}, {4000, 4096},
		{1 << 20, 1 << 20}, {1<<20 + 1, 2 << 20}, {3 << 20, 4 << 20}, {4<<20 + 5, 6 << 20},
	} {
		if got := sizeClass(tc.n); got != tc.want {
			t.Errorf("sizeClass(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	for n := 1; n < 9<<20; n = n*3/2 + 7 {
		c := sizeClass(n)
		if c < n || c%minBlock != 0 || sizeClass(c) != c {
			t.Fatalf("sizeClass(%d) = %d: not a class holding the request", n, c)
		}
	}
}

func TestArchOptionAndCacheKey(t *testing.T) {
	if got := archOption(9, 0); got != "--gpu-architecture=compute_90" {
		t.Errorf("archOption(9, 0) = %q", got)
	}
	k := cacheKey("ops", "src", []string{"a", "b"})
	if !strings.HasPrefix(k, "ops-") || !strings.HasSuffix(k, ".ptx") {
		t.Errorf("cacheKey = %q", k)
	}
	for _, other := range []string{
		cacheKey("ops", "src2", []string{"a", "b"}),
		cacheKey("ops", "src", []string{"a", "c"}),
		cacheKey("ops", "src", []string{"ab"}),
	} {
		if other == k {
			t.Errorf("different sources or options share the key %q", k)
		}
	}
	if cacheKey("ops", "src", []string{"a", "b"}) != k {
		t.Error("cacheKey is not deterministic")
	}
}
