package main

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mainArgsEnv makes the test binary run the command's main with the
// arguments it holds (separated by newlines), as the command itself.
const mainArgsEnv = "DATAPARALLEL_MAIN_ARGS"

// TestMain runs the command when mainArgsEnv says so, else the tests.
func TestMain(m *testing.M) {
	if args := os.Getenv(mainArgsEnv); args != "" {
		os.Args = append([]string{"dataparallel"}, strings.Split(args, "\n")...)
		main()
		return
	}
	os.Exit(m.Run())
}

// command returns the command (this test binary running main) with args.
func command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(args, "\n"))
	return cmd
}

// writeMNIST writes n random 28×28 images with random labels 0…9 as the
// idx files images and labels in dir (uncompressed) and returns their
// paths: a tiny stand-in for MNIST, quick to import.
func writeMNIST(t *testing.T, dir, name string, n int, seed uint64) (images, labels string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	img := binary.BigEndian.AppendUint32(nil, 0x803)
	img = binary.BigEndian.AppendUint32(img, uint32(n))
	img = binary.BigEndian.AppendUint32(img, 28)
	img = binary.BigEndian.AppendUint32(img, 28)
	lbl := binary.BigEndian.AppendUint32(nil, 0x801)
	lbl = binary.BigEndian.AppendUint32(lbl, uint32(n))
	for range n {
		for range 28 * 28 {
			img = append(img, byte(rng.IntN(256)))
		}
		lbl = append(lbl, byte(rng.IntN(10)))
	}
	images, labels = filepath.Join(dir, name+"-images-idx3-ubyte"), filepath.Join(dir, name+"-labels-idx1-ubyte")
	if err := os.WriteFile(images, img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(labels, lbl, 0o644); err != nil {
		t.Fatal(err)
	}
	return images, labels
}

// dataFlags returns the command's flags that train and test on tiny random
// idx files it writes in dir (train and test images).
func dataFlags(t *testing.T, dir string, train, test int) []string {
	t.Helper()
	trImages, trLabels := writeMNIST(t, dir, "train", train, 1)
	teImages, teLabels := writeMNIST(t, dir, "test", test, 2)
	return []string{"-train-images", trImages, "-train-labels", trLabels, "-test-images", teImages, "-test-labels", teLabels}
}

// TestErrorPrefix: the command writes brew/dataparallel's errors after its
// name once, not as "dataparallel: dataparallel: …".
func TestErrorPrefix(t *testing.T) {
	dir := t.TempDir()
	cmd := command(append(dataFlags(t, dir, 64, 16), "-root", filepath.Join(dir, "root"), "-engine", "BOGUS")...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, out)
	}
	const want = `dataparallel: no Allreduce engine "BOGUS" is registered`
	last := strings.TrimSpace(string(out))
	if i := strings.LastIndex(last, "\n"); i >= 0 {
		last = last[i+1:]
	}
	if !strings.HasPrefix(last, want) {
		t.Errorf("the command's last line is %q, want it to begin with %q", last, want)
	}
}

// TestWithoutPackagePrefix: the shortened error still unwraps to the
// original, and other errors are left alone.
func TestWithoutPackagePrefix(t *testing.T) {
	inner := errors.New("dataparallel: device cpu_0: boom")
	err := withoutPackagePrefix(inner)
	if err.Error() != "device cpu_0: boom" || !errors.Is(err, inner) {
		t.Errorf("withoutPackagePrefix(%q) = %q (Is: %v)", inner, err, errors.Is(err, inner))
	}
	other := errors.New("step 3: dataparallel: x")
	if withoutPackagePrefix(other) != other || withoutPackagePrefix(nil) != nil {
		t.Error("withoutPackagePrefix changed an error that does not begin with the prefix")
	}
}
