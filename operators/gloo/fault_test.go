//go:build gloo && cgo

package gloo_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators/gloo"
	"github.com/caffe2go/caffe2go/workspace"
)

// childEnv makes the test binary a rank of a fault test (TestChildRank):
// "dir rank size timeoutMs".
const childEnv = "CAFFE2GO_GLOO_CHILD"

// TestChildRank is a rank in another process, started by the fault tests:
// it joins the world and all-reduces until an error, printing "iter N"
// after each step.
func TestChildRank(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("runs only as a fault test's child")
	}
	f := strings.Fields(spec)
	rank, _ := strconv.Atoi(f[1])
	size, _ := strconv.Atoi(f[2])
	timeout, _ := strconv.ParseInt(f[3], 10, 64)
	ws, err := join(f[0], rank, size, timeout)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for i := 0; ; i++ {
		if err := step(ws, rank); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("iter", i)
	}
}

// step all-reduces rank's ones and checks the sum.
func step(ws *workspace.Workspace, rank int) error {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(rank + 1)
	}
	if err := ws.FeedBlob("x", blob.MustFromSlice(x, len(x))); err != nil {
		return err
	}
	return ws.RunOperatorOnce(glooOp("Allreduce", []string{"cw", "x"}, []string{"x"}))
}

// child starts rank in another process and returns it and a channel of
// the iterations it reports.
func child(t *testing.T, dir string, rank, size int, timeoutMs int64) (*exec.Cmd, <-chan int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildRank$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d %d", childEnv, dir, rank, size, timeoutMs))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	iters := make(chan int, 1000)
	go func() {
		defer close(iters)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if n, ok := strings.CutPrefix(sc.Text(), "iter "); ok {
				i, _ := strconv.Atoi(n)
				iters <- i
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, iters
}

// untilError runs steps on ws until one fails (at most limit) and returns
// the error and when it came.
func untilError(ws *workspace.Workspace, rank, limit int) (error, time.Time) {
	for range limit {
		if err := step(ws, rank); err != nil {
			return err, time.Now()
		}
	}
	return nil, time.Now()
}

// TestPeerKilled kills one of 3 ranks mid-training with SIGKILL: both
// survivors must fail with an error naming the op and their rank within
// the timeout + 1 s.
func TestPeerKilled(t *testing.T) {
	const timeout = 3000
	dir := t.TempDir()
	cmd, iters := child(t, dir, 2, 3, timeout)
	wss := make([]*workspace.Workspace, 2)
	var wg sync.WaitGroup
	var errs [2]error
	for r := range 2 {
		wg.Go(func() {
			if wss[r], errs[r] = join(dir, r, 3, timeout); errs[r] == nil {
				for range 5 {
					if errs[r] = step(wss[r], r); errs[r] != nil {
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d before the kill: %v", r, err)
		}
	}
	for i := range iters {
		if i == 4 {
			break
		}
	}
	killed := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var when [2]time.Time
	for r := range 2 {
		wg.Go(func() { errs[r], when[r] = untilError(wss[r], r, 100) })
	}
	wg.Wait()
	for r, err := range errs {
		if err == nil {
			t.Fatalf("rank %d: 100 all-reduces after its peer was killed succeeded", r)
		}
		t.Logf("rank %d, %v after the kill: %v", r, when[r].Sub(killed).Round(time.Millisecond), err)
		if d := when[r].Sub(killed); d > timeout*time.Millisecond+time.Second {
			t.Errorf("rank %d failed %v after the kill, want within the timeout + 1 s", r, d)
		}
		if msg := err.Error(); !strings.Contains(msg, "allreduce") || !strings.Contains(msg, fmt.Sprintf("rank %d of 3", r)) {
			t.Errorf("rank %d: error %q should name the op and the rank", r, msg)
		}
		if err := step(wss[r], r); !errors.Is(err, gloo.ErrBroken) {
			t.Errorf("rank %d: the next all-reduce: %v, want ErrBroken", r, err)
		}
	}
}

// TestPeerStopped stops a rank with SIGSTOP: the other's all-reduce must
// fail with a timeout error naming the op, within the timeout + 1 s of
// its last step that succeeded.
func TestPeerStopped(t *testing.T) {
	const timeout = 1500
	dir := t.TempDir()
	cmd, iters := child(t, dir, 1, 2, timeout)
	ws, err := join(dir, 0, 2, timeout)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := step(ws, 0); err != nil {
			t.Fatal(err)
		}
	}
	<-iters
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Signal(syscall.SIGCONT)
	var last time.Time
	for range 10 {
		last = time.Now()
		if err = step(ws, 0); err != nil {
			break
		}
	}
	d := time.Since(last)
	t.Logf("%v after the last step began: %v", d.Round(time.Millisecond), err)
	if !errors.Is(err, gloo.ErrTimeout) || !strings.Contains(err.Error(), "allreduce") {
		t.Fatalf("error %v: want a timeout error naming allreduce", err)
	}
	if d > timeout*time.Millisecond+time.Second {
		t.Errorf("failed %v after the step began, want within the timeout + 1 s", d)
	}
}

// TestRankNeverArrives creates a 2-rank world with rank 1 never started:
// the rendezvous must fail with a timeout.
func TestRankNeverArrives(t *testing.T) {
	const timeout = 1000
	start := time.Now()
	_, err := join(t.TempDir(), 0, 2, timeout)
	d := time.Since(start)
	t.Logf("after %v: %v", d.Round(time.Millisecond), err)
	if !errors.Is(err, gloo.ErrTimeout) || !strings.Contains(err.Error(), "rendezvous") {
		t.Fatalf("error %v: want a rendezvous timeout", err)
	}
	if d > timeout*time.Millisecond+time.Second {
		t.Errorf("failed after %v, want within the timeout + 1 s", d)
	}
}

// TestStaleStore runs a world in a store directory, then meets again in
// the same directory: the second rendezvous is refused at once instead of
// reading the first run's addresses.
func TestStaleStore(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	var errs [2]error
	for r := range 2 {
		wg.Go(func() { _, errs[r] = join(dir, r, 2, 5000) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	_, err := join(dir, 0, 2, 5000)
	if !errors.Is(err, gloo.ErrKeyExists) && !strings.Contains(fmt.Sprint(err), "already set") {
		t.Fatalf("second rendezvous in the same store: %v, want a refusal", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the refusal took %v", d)
	}
}
