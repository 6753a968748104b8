package main

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestNetWeights draws a 2×1×1×2 blob of an init net at zoom 1: two tiles
// side by side, the values 0 to 3 as gray 0, 85, 170 and 255, and LeNet's
// conv1 from its caffemodel: 20 tiles of 5×5 in 5 columns and 4 rows.
func TestNetWeights(t *testing.T) {
	dir := isolate(t)
	init := `op { type: "GivenTensorFill" output: "w" arg { name: "shape" ints: 2 ints: 1 ints: 1 ints: 2 } arg { name: "values" floats: 0 floats: 1 floats: 2 floats: 3 } }
op { type: "GivenTensorFill" output: "v" arg { name: "shape" ints: 4 } arg { name: "values" floats: 0 floats: 1 floats: 2 floats: 3 } }`
	if err := os.WriteFile(filepath.Join(dir, "init.pbtxt"), []byte(init), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMain(t, "", "net", "weights", "-blob", "w", "init.pbtxt", "-o", "w.png", "-zoom", "1")
	if code != 0 || !strings.Contains(out, "wrote w.png: 2 filters × 1 channels of 1×2") {
		t.Fatalf("code %d: %s%s", code, out, errOut)
	}
	img := readPNG(t, "w.png")
	if b := img.Bounds(); b.Dx() != 7 || b.Dy() != 3 {
		t.Fatalf("image %v, want 7×3", b)
	}
	for _, p := range []struct{ x, y, gray int }{{1, 1, 0}, {2, 1, 85}, {4, 1, 170}, {5, 1, 255}, {0, 0, 0}} {
		if r, _, _, _ := img.At(p.x, p.y).RGBA(); int(r>>8) != p.gray {
			t.Errorf("pixel (%d, %d): gray %d, want %d", p.x, p.y, r>>8, p.gray)
		}
	}
	code, out, errOut = runMain(t, "", "net", "weights", "-blob", "conv1_w", "-o", "conv1.png", filepath.Join(lenetDir, "lenet_iter_10000.caffemodel"))
	if code != 0 || !strings.Contains(out, "20 filters × 1 channels of 5×5") {
		t.Fatalf("caffemodel: code %d: %s%s", code, out, errOut)
	}
	if b := readPNG(t, "conv1.png").Bounds(); b.Dx() != 5*41+1 || b.Dy() != 4*41+1 {
		t.Errorf("conv1 grid %v, want %d×%d", b, 5*41+1, 4*41+1)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-blob", "v", "init.pbtxt"}, "blob v: is FLOAT [4], want a float32 blob of 4 dimensions"},
		{[]string{"-blob", "x", "init.pbtxt"}, "does not create blob x"},
		{[]string{"-blob", "ip9_w", filepath.Join(lenetDir, "lenet_iter_10000.caffemodel")}, `no blob 0 of a layer "ip9"`},
		{[]string{"-blob", "w", dir}, "holds no checkpoint"},
	} {
		code, _, errOut := runMain(t, "", append([]string{"net", "weights"}, tc.args...)...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: code %d, stderr %s; want %q", tc.args, code, errOut, tc.want)
		}
	}
}
