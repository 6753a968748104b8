package scripts

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/script"
	"github.com/caffe2go/caffe2go/script/golden"
	"github.com/caffe2go/caffe2go/workspace"
)

// TestExamplesPrintWhatTheirCommentsSay runs each script and compares what
// it prints with its "#=>" lines.
func TestExamplesPrintWhatTheirCommentsSay(t *testing.T) {
	files, err := filepath.Glob("*.star")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example scripts: %v", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// The scripts run from the repository root, as "caffe2go run
	// examples/scripts/<name>.star" does there (train_mnist.star reads
	// data/mnist).
	t.Chdir(filepath.Join("..", ".."))
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(wd, file))
			if err != nil {
				t.Fatal(err)
			}
			want := golden.Output(string(src))
			if len(want) == 0 {
				t.Fatalf("%s has no #=> lines", file)
			}
			// Each script starts in the default workspace, rooted in a
			// fresh folder, as "caffe2go run" in an empty directory would.
			dir := t.TempDir()
			if err := workspace.SwitchWorkspace(workspace.DefaultName, true); err != nil {
				t.Fatal(err)
			}
			if err := workspace.ResetWorkspace(dir); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				for _, name := range workspace.Workspaces() {
					if workspace.SwitchWorkspace(name, false) == nil {
						_ = workspace.ResetWorkspace(wd)
					}
				}
				_ = workspace.SwitchWorkspace(workspace.DefaultName, true)
			})
			var out bytes.Buffer
			in := script.New(script.Options{Stdout: &out, Argv: []string{filepath.Join("examples", "scripts", file)}})
			if err := in.Exec(filepath.Join(wd, file), src); err != nil {
				t.Fatalf("%s\noutput so far:\n%s", script.FormatError(err), out.String())
			}
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s printed:\n%s\nits comments say:\n%s", file, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
