package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/workspace"
)

// TestStoreCheckAndRepair checks a healthy store, damages it, checks and
// repairs it, and loads the salvaged checkpoint.
func TestStoreCheckAndRepair(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, workspace.StoreDirName)
	ws := workspace.New(root)
	if err := ws.FeedBlob("w", blob.MustFromSlice(make([]float32, 20_000))); err != nil {
		t.Fatal(err)
	}
	if err := ws.SaveCheckpoint(3, []string{"w"}); err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runMain(t, "", "store", "check", dir)
	if code != 0 || !strings.Contains(out, "intact checkpoints (1): 3") || strings.Contains(out, "damaged") {
		t.Fatalf("check of a healthy store: status %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runMain(t, "", "store", "repair", dir)
	if code != 0 || !strings.Contains(out, "nothing to repair") {
		t.Fatalf("repair of a healthy store: status %d\n%s", code, out)
	}

	if err := os.Remove(filepath.Join(dir, "MANIFEST")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runMain(t, "", "store", "check", dir)
	if code != 1 || !strings.Contains(out, "damaged: MANIFEST") || !strings.Contains(out, "intact checkpoints (1): 3") ||
		!strings.Contains(out, "caffe2go store repair "+dir) {
		t.Fatalf("check of a damaged store: status %d\n%s", code, out)
	}
	code, out, _ = runMain(t, "", "store", "repair", dir)
	if code != 0 || !strings.Contains(out, "nothing was lost") || !strings.Contains(out, filepath.Join(dir, "damaged-")) {
		t.Fatalf("repair: status %d\n%s", code, out)
	}
	if code, out, _ = runMain(t, "", "store", "check", dir); code != 0 {
		t.Fatalf("check after repair: status %d\n%s", code, out)
	}
	ws = workspace.New(root)
	defer ws.Close()
	if err := ws.LoadCheckpoint(3); err != nil {
		t.Fatal(err)
	}

	// A store another process (here: this one) has open is not repaired.
	s, err := persist.Open(filepath.Join(t.TempDir(), "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, _, errOut = runMain(t, "", "store", "repair", s.Path()); code != 1 || !strings.Contains(errOut, "store is locked") {
		t.Fatalf("repair of an open store: status %d, %s", code, errOut)
	}
}

func TestStoreUsage(t *testing.T) {
	for _, args := range [][]string{{"store"}, {"store", "fix", "x"}, {"store", "check"}, {"store", "check", "a", "b"}} {
		if code, _, errOut := runMain(t, "", args...); code != 2 || !strings.Contains(errOut, "usage: caffe2go store check DIR") {
			t.Errorf("%q: status %d, %s", args, code, errOut)
		}
	}
	if code, out, _ := runMain(t, "", "store", "-h"); code != 0 || !strings.Contains(out, "usage: caffe2go store") {
		t.Errorf("store -h: status %d, %s", code, out)
	}
}
