package scripts

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/script"
	"github.com/caffe2go/caffe2go/script/golden"
	"github.com/caffe2go/caffe2go/workspace"
)

// writingTo is the line a script that writes files prints first: the folder
// they go to.
const writingTo = "writing to "

// TestExamplesPrintWhatTheirCommentsSay runs each script with its default
// (short) iteration count, as "caffe2go run examples/scripts/<name>.star"
// does from the repository root, and compares what it prints with its "#=>"
// lines (see sameLine for how). A script that writes files must write them
// into a fresh folder in $TMPDIR and name it in a "writing to" line; it
// must leave nothing in the working directory.
func TestExamplesPrintWhatTheirCommentsSay(t *testing.T) {
	fromRepositoryRoot(t)
	files, err := filepath.Glob(filepath.Join("examples", "scripts", "*.star"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example scripts: %v", err)
	}
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want := golden.Output(string(src))
			if len(want) == 0 {
				t.Fatalf("%s has no #=> lines", file)
			}
			got, tmp := runExample(t, file)

			if len(got) != len(want) {
				t.Errorf("%s printed %d lines, its comments say %d", file, len(got), len(want))
			}
			for i := range min(len(got), len(want)) {
				if !sameLine(got[i], want[i]) {
					t.Errorf("%s printed line %d:\n\t%s\nits comments say:\n\t%s", file, i+1, got[i], want[i])
				}
			}

			made, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			out, named := strings.CutPrefix(got[0], writingTo)
			switch {
			case !named && len(made) > 0:
				t.Errorf("%s made %s in $TMPDIR without a first line %q naming it", file, made[0].Name(), writingTo+"…")
			case named && (len(made) != 1 || filepath.Join(tmp, made[0].Name()) != out):
				t.Errorf("%s names %s as its folder; in $TMPDIR (%s) it made %v, want that folder alone", file, out, tmp, names(made))
			case named:
				wrote, err := os.ReadDir(out)
				if err != nil || len(wrote) == 0 {
					t.Errorf("%s wrote nothing into %s, the folder it names (%v)", file, out, err)
				}
			}
		})
	}
}

// TestExamplesWriteIntoAGivenFolder runs the scripts that write files with
// a folder given on the command line: they must write there, name it, and
// make nothing in $TMPDIR.
func TestExamplesWriteIntoAGivenFolder(t *testing.T) {
	fromRepositoryRoot(t)
	cases := []struct {
		file  string
		args  []string // before the folder
		wrote []string // what the folder must then hold, sorted
	}{
		{"seed.star", nil, []string{workspace.StoreDirName}},
		{"data_parallel.star", []string{"50"}, []string{"dp_checkpoint.minidb"}},
		{"train_mnist.star", []string{"20", "data/mnist"}, []string{workspace.StoreDirName, "mnist-test-nchw-minidb", "mnist-train-nchw-minidb"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "given", "out")
			got, tmp := runExample(t, filepath.Join("examples", "scripts", c.file), append(c.args, dir)...)
			if got[0] != writingTo+dir {
				t.Errorf("%s %v printed first %q, want %q", c.file, c.args, got[0], writingTo+dir)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatalf("%s %v: reading the folder given: %v", c.file, c.args, err)
			}
			if wrote := names(entries); !slices.Equal(wrote, c.wrote) {
				t.Errorf("%s %v wrote %v into the folder given, want %v", c.file, c.args, wrote, c.wrote)
			}
			if made, err := os.ReadDir(tmp); err != nil || len(made) > 0 {
				t.Errorf("%s %v made %v in $TMPDIR besides the folder given (%v)", c.file, c.args, names(made), err)
			}
		})
	}
}

// fromRepositoryRoot makes the repository root the test's working
// directory: "caffe2go run examples/scripts/<name>.star" runs there
// (train_mnist.star reads data/mnist).
func fromRepositoryRoot(t *testing.T) {
	t.Helper()
	t.Chdir(filepath.Join("..", ".."))
}

// runScriptEnv, set in the environment of the test binary, makes it run the
// script it names (with the binary's arguments as the script's) instead of
// the tests.
const runScriptEnv = "CAFFE2GO_EXAMPLE_SCRIPT"

// TestMain runs a script, as "caffe2go run" does, when runExample starts
// the test binary for it.
func TestMain(m *testing.M) {
	if file := os.Getenv(runScriptEnv); file != "" {
		os.Exit(runScript(file, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runScript runs the script file with sys.argv [file, args...] and returns
// the exit status: 1, with the traceback on stderr, if it fails.
func runScript(file string, args []string) int {
	src, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	in := script.New(script.Options{Stdout: os.Stdout, Argv: append([]string{file}, args...)})
	if err := in.Exec(context.Background(), file, src); err != nil {
		fmt.Fprintln(os.Stderr, script.FormatError(err))
		return 1
	}
	return 0
}

// runExample runs the script file (relative to the working directory) with
// sys.argv [file, args...] in a process of its own, as "caffe2go run" does
// (the random sources of the fill operators then start where they start
// for a user), with $TMPDIR a fresh folder. It returns the lines the script
// printed and that folder, and fails the test if the script fails or
// leaves anything new in the working directory.
func runExample(t *testing.T, file string, args ...string) (lines []string, tmp string) {
	t.Helper()
	before := workingDirectory(t)
	tmp = t.TempDir()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runScriptEnv+"="+file, "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s\noutput so far:\n%s", file, args, err, stderr.String(), out)
	}
	for _, name := range workingDirectory(t) {
		if !slices.Contains(before, name) {
			t.Errorf("%s %v left %s in the working directory", file, args, name)
		}
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"), tmp
}

func workingDirectory(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	return names(entries)
}

func names(entries []os.DirEntry) []string {
	s := make([]string, len(entries))
	for i, e := range entries {
		s[i] = e.Name()
	}
	return s
}

var (
	// tempFolder matches the folders utils.TempDir makes for the scripts;
	// their random suffix differs from run to run.
	tempFolder = regexp.MustCompile(`\S*/(caffe2go-[a-z_]+-)\d+`)
	number     = regexp.MustCompile(`\d+(\.\d+)?`)
)

// sameLine reports whether a printed line matches a "#=>" line. Temporary
// folders match whatever their random suffix. Numbers written with a
// decimal point (losses, accuracies) may differ by 1% plus one unit of
// their last digit, as the floating-point kernels chosen for the CPU may
// round differently; everything else must be equal.
func sameLine(got, want string) bool {
	got = tempFolder.ReplaceAllString(got, "$${TMPDIR}/${1}*")
	want = tempFolder.ReplaceAllString(want, "$${TMPDIR}/${1}*")
	gotNums, wantNums := number.FindAllStringIndex(got, -1), number.FindAllStringIndex(want, -1)
	if len(gotNums) != len(wantNums) || number.ReplaceAllString(got, "0") != number.ReplaceAllString(want, "0") {
		return false
	}
	for i, w := range wantNums {
		g, ws := got[gotNums[i][0]:gotNums[i][1]], want[w[0]:w[1]]
		_, decimals, isFloat := strings.Cut(ws, ".")
		if !isFloat {
			if g != ws {
				return false
			}
			continue
		}
		gv, err1 := strconv.ParseFloat(g, 64)
		wv, err2 := strconv.ParseFloat(ws, 64)
		if err1 != nil || err2 != nil || math.Abs(gv-wv) > 0.01*math.Abs(wv)+math.Pow(10, -float64(len(decimals))) {
			return false
		}
	}
	return true
}

func TestSameLine(t *testing.T) {
	cases := []struct {
		got, want string
		same      bool
	}{
		{"iteration 20: loss 1.4082, accuracy 57.6%", "iteration 20: loss 1.4082, accuracy 57.6%", true},
		{"iteration 20: loss 1.4201, accuracy 58.1%", "iteration 20: loss 1.4082, accuracy 57.6%", true},
		{"iteration 20: loss 1.4301, accuracy 57.6%", "iteration 20: loss 1.4082, accuracy 57.6%", false},
		{"iteration 20: loss 1.4082, accuracy 58.3%", "iteration 20: loss 1.4082, accuracy 57.6%", false},
		{"iteration 21: loss 1.4082, accuracy 57.6%", "iteration 20: loss 1.4082, accuracy 57.6%", false},
		{"iteration 20: loss 1.4082", "iteration 20: loss 1.4082, accuracy 57.6%", false},
		{"iteration 20: loss 1.4082, accuracy 57.6%", "iteration 20: loss 1.4082, accuracy: 57.6%", false},
		{"predicted classes: [6 6 5]", "predicted classes: [6 6 6]", false},
		{"writing to /tmp/x/caffe2go-seed-12", "writing to /tmp/caffe2go-seed-4253082971", true},
		{"writing to /tmp/x/caffe2go-mnist-12", "writing to /tmp/caffe2go-seed-4253082971", false},
	}
	for _, c := range cases {
		if got := sameLine(c.got, c.want); got != c.same {
			t.Errorf("sameLine(%q, %q) = %v, want %v", c.got, c.want, got, c.same)
		}
	}
}
