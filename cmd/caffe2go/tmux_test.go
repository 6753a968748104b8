package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestREPLInTmux uses the REPL the way a person does, in a real terminal:
// tmux runs the built command, send-keys types, capture-pane reads the
// screen. It defines a net, runs it, fetches a blob, makes a typo, sees the
// error, recalls a line from the history with the Up key and goes on in the
// same session. It is skipped where tmux is not installed (apt-get install
// tmux) and with -short.
func TestREPLInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "caffe2go")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	session := fmt.Sprintf("caffe2go-test-%d", os.Getpid())
	socket := filepath.Join(dir, "tmux.sock")
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	history := filepath.Join(dir, "history")
	tm("new-session", "-d", "-s", session, "-x", "160", "-y", "50", "-c", dir,
		bin+" repl -history "+history)
	defer exec.Command(tmux, "-S", socket, "kill-server").Run()

	screen := func() string { return tm("capture-pane", "-p", "-t", session, "-S", "-200") }
	waitFor := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			s := screen()
			if strings.Contains(s, want) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %q:\n%s", want, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	typeLine := func(line string) {
		t.Helper()
		tm("send-keys", "-t", session, "-l", line)
		tm("send-keys", "-t", session, "Enter")
	}

	waitFor(">>>")
	typeLine(`net = core.Net("tmux_net")`)
	typeLine(`def add_ops(n):`)
	typeLine(`    n.Relu("x", "y")`)
	typeLine(`    n.Scale("y", "z", scale = 2.0)`)
	typeLine(``)
	typeLine(`add_ops(net)`)
	typeLine(`workspace.FeedBlob("x", np.array([[-1.5, 2.0, 3.25]], dtype = np.float32))`)
	waitFor("True")
	typeLine(`workspace.RunNetOnce(net)`)
	typeLine(`workspace.FetchBlob("z")`)
	waitFor("array([[0. , 4. , 6.5]], dtype=float32)")
	typeLine(`workspace.FetchBlob("zz")`)
	waitFor(`can't find blob: "zz"`)
	typeLine(`net.Rleu("x", "w")`)
	waitFor("Did you mean: [Relu")
	// Recall the FetchBlob line with Up (twice: past the typo) and run it again.
	tm("send-keys", "-t", session, "Up")
	tm("send-keys", "-t", session, "Up")
	waitFor(`>>> workspace.FetchBlob("zz")`)
	tm("send-keys", "-t", session, "C-u")
	typeLine(`print(workspace.FetchBlob("z").shape, workspace.Blobs())`)
	waitFor(`(1, 3) ["x", "y", "z"]`)
	typeLine(`help(workspace.FetchBlob)`)
	waitFor("Returns a copy of a blob")
	// A long RunNet stops on Ctrl-C, back at the prompt, and the session
	// and its workspace go on.
	typeLine(`workspace.CreateNet(net)`)
	typeLine(`workspace.RunNet("tmux_net", 1000000000)`)
	time.Sleep(300 * time.Millisecond)
	tm("send-keys", "-t", session, "C-c")
	waitFor("context canceled (interrupted)")
	typeLine(`print("still here", workspace.FetchBlob("z").shape)`)
	s := waitFor("still here (1, 3)")
	tm("send-keys", "-t", session, "C-d")
	deadline := time.Now().Add(10 * time.Second)
	for exec.Command(tmux, "-S", socket, "has-session", "-t", session).Run() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the REPL did not exit on Ctrl-D:\n%s", screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
	data, err := os.ReadFile(history)
	if err != nil || !strings.Contains(string(data), `workspace.FetchBlob("z")`) {
		t.Errorf("history file: %v\n%s", err, data)
	}
	t.Logf("screen:\n%s", s)
}
