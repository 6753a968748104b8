package main

import (
	"bufio"
	"strings"
	"testing"
	"time"
)

// TestWorkloadsRun builds every workload at an eighth of its batch size and
// times a few steps: each must build, run and print its line.
func TestWorkloadsRun(t *testing.T) {
	var out strings.Builder
	if err := run(&out, "", 50*time.Millisecond, 8, true); err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		if name, _, ok := strings.Cut(sc.Text(), "\t"); ok {
			lines[name] = true
		}
	}
	for _, w := range []string{"mlp", "lenet", "convnet", "gemm"} {
		if !lines[w] {
			t.Errorf("no line for %s in:\n%s", w, out.String())
		}
	}
}
