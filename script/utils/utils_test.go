package utils

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

func callTempDir(t *testing.T, args ...starlark.Value) (starlark.Value, error) {
	t.Helper()
	return starlark.Call(&starlark.Thread{Name: t.Name()}, Module.Members["TempDir"], args, nil)
}

func TestTempDirMakesAFreshDirectoryInTMPDIR(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	first, err := callTempDir(t)
	if err != nil {
		t.Fatalf("TempDir(): %v", err)
	}
	second, err := callTempDir(t, starlark.String("mnist-"))
	if err != nil {
		t.Fatalf("TempDir(\"mnist-\"): %v", err)
	}
	for _, c := range []struct {
		got    starlark.Value
		prefix string
	}{{first, "caffe2go-"}, {second, "mnist-"}} {
		dir, ok := starlark.AsString(c.got)
		if !ok {
			t.Fatalf("TempDir returned %s, want a string", c.got.Type())
		}
		if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), c.prefix) {
			t.Errorf("TempDir returned %q, want a directory in %q named %q…", dir, tmp, c.prefix)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Errorf("reading the directory TempDir returned: %v", err)
		} else if len(entries) != 0 {
			t.Errorf("TempDir's directory %q holds %d entries, want none", dir, len(entries))
		}
	}
	if first == second {
		t.Errorf("two calls of TempDir both returned %s", first)
	}
}

func TestTempDirNamesWhatFailed(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	if _, err := callTempDir(t); err == nil || !strings.Contains(err.Error(), "TempDir") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("TempDir() in a missing $TMPDIR: error %v, want one naming TempDir and the folder", err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	if _, err := callTempDir(t, starlark.String("a/b")); err == nil || !strings.Contains(err.Error(), "separator") {
		t.Errorf("TempDir(\"a/b\"): error %v, want one about the path separator", err)
	}
	if _, err := callTempDir(t, starlark.MakeInt(1)); err == nil || !strings.Contains(err.Error(), "prefix") {
		t.Errorf("TempDir(1): error %v, want one naming the prefix argument", err)
	}
}
