//go:build gloo && cgo

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/workspace"
)

// shard is one shard of the command running in a child process.
type shard struct {
	cmd    *exec.Cmd
	steps  chan int // the steps it reports (-log-every 1)
	mu     sync.Mutex
	output strings.Builder // stdout and stderr
	exited chan struct{}   // closed when it has exited
	when   time.Time       // when it exited
	err    error           // what Wait returned
}

// startShard starts the command with args and follows its output.
func startShard(t *testing.T, args ...string) *shard {
	t.Helper()
	s := &shard{cmd: command(args...), steps: make(chan int, 100000), exited: make(chan struct{})}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = &lockedWriter{s}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			s.write(line + "\n")
			var step int
			if _, err := fmt.Sscanf(line, "step %d", &step); err == nil {
				s.steps <- step
			}
		}
		s.err = s.cmd.Wait()
		s.when = time.Now()
		close(s.steps)
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.exited
	})
	return s
}

func (s *shard) write(str string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.output.WriteString(str)
}

func (s *shard) out() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.output.String()
}

// lockedWriter writes a child's stderr into its shard's output.
type lockedWriter struct{ s *shard }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.s.write(string(p))
	return len(p), nil
}

// TestShardKilledMidTraining trains the command as 3 processes meeting
// through a file store and kills one with SIGKILL after its 12th step:
// the two others stop within the collective timeout + 1 s with an error
// naming the all-reduce, their rank and the cause; shard 0's last
// checkpoint stays intact, and the 3 shards started again (a fresh store
// directory) all resume from it and finish.
func TestShardKilledMidTraining(t *testing.T) {
	if testing.Short() {
		t.Skip("trains LeNet in 6 processes")
	}
	const (
		shards  = 3
		timeout = 3 * time.Second
		killAt  = 12
		every   = 5 // checkpoint every 5 steps
	)
	dir := t.TempDir()
	// 96 training images: 32 per shard, 4 steps of 8 per epoch.
	data := dataFlags(t, dir, 96, 16)
	args := func(s int, store string, epochs int) []string {
		return append(append([]string(nil), data...),
			"-root", filepath.Join(dir, fmt.Sprintf("shard%d", s)),
			"-shard-id", fmt.Sprint(s), "-num-shards", fmt.Sprint(shards),
			"-rendezvous", "file://"+filepath.Join(dir, store), "-hostname", "127.0.0.1",
			"-timeout", timeout.String(), "-devices", "1", "-batch", "8", "-epochs", fmt.Sprint(epochs),
			"-checkpoint-every", fmt.Sprint(every), "-log-every", "1", "-engine", "RING")
	}
	procs := make([]*shard, shards)
	for s := range procs {
		procs[s] = startShard(t, args(s, "store1", 1000)...)
	}
	victim := procs[shards-1]
	for step := range victim.steps {
		if step == killAt {
			break
		}
	}
	select {
	case <-victim.exited:
		t.Fatalf("shard %d exited before the kill: %v\n%s", shards-1, victim.err, victim.out())
	default:
	}
	killed := time.Now()
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for s, p := range procs[:shards-1] {
		select {
		case <-p.exited:
		case <-time.After(timeout + 30*time.Second):
			t.Fatalf("shard %d still runs %v after its peer was killed\n%s", s, time.Since(killed), p.out())
		}
		out := p.out()
		var exit *exec.ExitError
		if !errors.As(p.err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("shard %d: %v, want exit status 1\n%s", s, p.err, out)
		}
		d := p.when.Sub(killed)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		msg := lines[len(lines)-1]
		t.Logf("shard %d exited %v after the kill: %s", s, d.Round(time.Millisecond), msg)
		if d > timeout+time.Second {
			t.Errorf("shard %d exited %v after the kill, want within the timeout %v + 1 s", s, d, timeout)
		}
		for _, want := range []string{"Allreduce", fmt.Sprintf("rank %d of %d", s, shards)} {
			if !strings.Contains(msg, want) {
				t.Errorf("shard %d: error %q does not name %q", s, msg, want)
			}
		}
		if !strings.Contains(msg, "closed") && !strings.Contains(msg, "timed out") && !strings.Contains(msg, "reset") {
			t.Errorf("shard %d: error %q does not say why (a closed connection or a timeout)", s, msg)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Shard 0's last checkpoint loads, and it is the one the restart uses.
	ws := workspace.New(filepath.Join(dir, "shard0"))
	last, found, err := ws.LatestCheckpoint()
	if err == nil && found {
		err = ws.LoadCheckpoint(last)
	}
	if cerr := ws.Close(); err == nil {
		err = cerr
	}
	if err != nil || !found || last < every || last%every != 0 {
		t.Fatalf("shard 0's latest checkpoint: %d (found %v): %v; want a multiple of %d", last, found, err, every)
	}
	t.Logf("shard 0's latest checkpoint: step %d", last)

	epochs := int(last)/4 + 2
	for s := range procs {
		procs[s] = startShard(t, args(s, "store2", epochs)...)
	}
	for s, p := range procs {
		<-p.exited
		out := p.out()
		if p.err != nil {
			t.Errorf("shard %d, restarted: %v\n%s", s, p.err, out)
			continue
		}
		if want := fmt.Sprintf("resumed from checkpoint %d\n", last); !strings.Contains(out, want) {
			t.Errorf("shard %d, restarted: no %q in its output\n%s", s, want, out)
		}
		if want := fmt.Sprintf("step %5d", epochs*4); !strings.Contains(out, want) || !strings.Contains(out, "test accuracy") {
			t.Errorf("shard %d, restarted: did not train to step %d and test\n%s", s, epochs*4, out)
		}
		if strings.Contains(out, fmt.Sprintf("step %5d ", last)) {
			t.Errorf("shard %d, restarted: trained step %d again\n%s", s, last, out)
		}
	}
}
