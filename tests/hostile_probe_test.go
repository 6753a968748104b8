package tests

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/operators"
)

// The hostile-argument probe. For every registered operator it draws
// hostile cases (hostileCase) and runs them in a child process (this test
// binary re-executed) under ulimit -v, so that an allocation the memory
// budget lets through and the machine cannot hold kills the child, not the
// test. The parent counts the outcomes; a child that dies or stops making
// progress is a failure, reported with the case that did it, and the
// probe goes on with a fresh child from the next case. Recovered panics
// are bugs too.
//
// By default (CI) it draws probeShortCases cases per operator from a fixed
// seed. CAFFE2GO_PROBE_CASES=N draws N per operator, and
// CAFFE2GO_PROBE_SEED=S (an integer, or "random") picks the stream, and
// CAFFE2GO_PROBE_OPS=RE probes only the operators whose type RE matches.
const (
	probeChildEnv   = "CAFFE2GO_PROBE_CHILD" // "first,seed,perOp" in the child
	probeCasesEnv   = "CAFFE2GO_PROBE_CASES"
	probeSeedEnv    = "CAFFE2GO_PROBE_SEED"
	probeOpsEnv     = "CAFFE2GO_PROBE_OPS"
	probeShortCases = 10
	probeAddrSpace  = 4 << 20 // ulimit -v of the child, KiB: 4 GiB
	probeStall      = 60 * time.Second
	// probeChildCases is the most cases one child runs: a fresh process
	// now and then keeps what failed DB opens leak under ulimit -v (badger
	// allocates its 64 MiB memtable before mapping its value log, and
	// keeps it when the mapping fails) from adding up over a long probe.
	probeChildCases = 500
	probeMarker     = "@@probe "
)

// probeCase returns case i of the probe: operator i/perOp of the sorted
// registered operators, drawn from a stream that depends on seed and i
// only, so that parent and child agree on it.
func probeCase(ops []string, seed uint64, perOp, i int) hostileCase {
	c := randChooser{rand.New(rand.NewPCG(seed, uint64(i)))}
	return newHostileCase(c, ops[i/perOp])
}

func TestHostileArgumentProbe(t *testing.T) {
	if v := os.Getenv(probeChildEnv); v != "" {
		probeChild(t, v)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("the probe limits its child's memory with ulimit -v (bash on Linux)")
	}
	perOp, seed := probeShortCases, uint64(1)
	if v := os.Getenv(probeCasesEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a number of cases per operator", probeCasesEnv, v)
		}
		perOp = n
	}
	if v := os.Getenv(probeSeedEnv); v == "random" {
		seed = rand.Uint64()
	} else if v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an integer or \"random\"", probeSeedEnv, v)
		}
		seed = s
	}
	ops, err := probeOps()
	if err != nil {
		t.Fatal(err)
	}
	total := len(ops) * perOp
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var counts [numOutcomes]int
	var deaths, stalls, children int
	perType := map[string][numOutcomes]int{}
	for next := 0; next < total; {
		children++
		res := runProbeChild(t, exe, next, seed, perOp)
		for _, r := range res.done {
			counts[r.outcome]++
			pt := perType[ops[r.index/perOp]]
			pt[r.outcome]++
			perType[ops[r.index/perOp]] = pt
			if r.outcome == recovered {
				t.Errorf("case %d (seed %d): recovered panic: %s\n  case: %v", r.index, seed, r.msg, probeCase(ops, seed, perOp, r.index))
			}
		}
		if res.last >= 0 {
			if res.stalled {
				stalls++
			} else {
				deaths++
			}
			t.Errorf("case %d (seed %d): the child %s: %s\n  case: %v", res.last, seed, map[bool]string{true: "made no progress for " + probeStall.String(), false: "died"}[res.stalled],
				res.why, probeCase(ops, seed, perOp, res.last))
			next = res.last + 1
			continue
		}
		if !res.finished {
			t.Fatalf("the child stopped outside a case: %s", res.why)
		}
		next += len(res.done)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "probe: %d operators × %d cases = %d cases (seed %d) in %d child processes under ulimit -v %d KiB: %d deaths, %d stalls",
		len(ops), perOp, total, seed, children, probeAddrSpace, deaths, stalls)
	for o, n := range counts {
		fmt.Fprintf(&sb, ", %d %s", n, outcomeNames[o])
	}
	t.Log(sb.String())
	var neverRan []string
	for _, op := range ops {
		if perType[op][ran] == 0 {
			neverRan = append(neverRan, op)
		}
	}
	t.Logf("probe: %d operators never ran successfully in these cases (every case an error): %s", len(neverRan), strings.Join(neverRan, " "))
}

// probeOps is the operators the probe draws cases for: every registered
// one, or those CAFFE2GO_PROBE_OPS matches. Parent and child compute it
// alike, as the child inherits the environment.
func probeOps() ([]string, error) {
	ops := operators.RegisteredOperators()
	v := os.Getenv(probeOpsEnv)
	if v == "" {
		return ops, nil
	}
	re, err := regexp.Compile(v)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %v", probeOpsEnv, v, err)
	}
	var keep []string
	for _, op := range ops {
		if re.MatchString(op) {
			keep = append(keep, op)
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("%s=%q matches no registered operator", probeOpsEnv, v)
	}
	return keep, nil
}

// probeResult is what the parent learned from one child.
type probeResult struct {
	done     []probeDone
	last     int  // the case started and not finished, -1 when none
	stalled  bool // the child was killed for making no progress
	finished bool // the child ran its share of the cases
	why      string
}

type probeDone struct {
	index   int
	outcome hostileOutcome
	msg     string
}

// runProbeChild runs cases from first on (probeChildCases at most) in a
// child under ulimit -v and collects their outcomes until it is done, dies
// or stalls.
func runProbeChild(t *testing.T, exe string, first int, seed uint64, perOp int) probeResult {
	dir := t.TempDir()
	cmd := exec.Command("bash", "-c", fmt.Sprintf(`ulimit -v %d && exec "$0" -test.run='^TestHostileArgumentProbe$'`, probeAddrSpace), exe)
	cmd.Dir = dir // relative paths in arguments (db names) land here
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d,%d,%d", probeChildEnv, first, seed, perOp))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	res := probeResult{last: -1}
	timer := time.NewTimer(probeStall)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				err := cmd.Wait()
				if !res.finished {
					res.why = fmt.Sprintf("%v; stderr: %s", err, crashReport(stderr.String()))
				}
				return res
			}
			timer.Reset(probeStall)
			fields := strings.SplitN(strings.TrimPrefix(line, probeMarker), " ", 3)
			if !strings.HasPrefix(line, probeMarker) || len(fields) < 1 {
				continue // an operator's own output (Print)
			}
			switch fields[0] {
			case "start":
				res.last, _ = strconv.Atoi(fields[1])
			case "end":
				i, _ := strconv.Atoi(fields[1])
				o, msg, _ := strings.Cut(fields[2], " ")
				n, _ := strconv.Atoi(o)
				res.done = append(res.done, probeDone{i, hostileOutcome(n), msg})
				res.last = -1
			case "stopped":
				res.finished = true
			}
		case <-timer.C:
			res.stalled = true
			_ = cmd.Process.Kill()
			for range lines {
			}
			_ = cmd.Wait()
			res.why = "stderr: " + crashReport(stderr.String())
			return res
		}
	}
}

// crashReport returns what a child's stderr says of its crash: the lines
// from the first runtime error or panic up to the first stack trace, and
// the first frames of that trace in this module; else the end of stderr.
func crashReport(s string) string {
	at := -1
	for _, mark := range []string{"fatal error:", "runtime: ", "panic: "} {
		if i := strings.Index(s, mark); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		if len(s) > 1500 {
			return "…" + s[len(s)-1500:]
		}
		return s
	}
	var head, frames []string
	inTrace := false
	for line := range strings.SplitSeq(s[at:], "\n") {
		switch {
		case strings.HasPrefix(line, "goroutine "):
			if inTrace {
				return strings.Join(append(head, frames...), "\n")
			}
			inTrace = true
		case !inTrace:
			head = append(head, line)
		case strings.Contains(line, "caffe2go/caffe2go/") && !strings.HasPrefix(line, "\t") && len(frames) < 6:
			frames = append(frames, "  "+line)
		}
	}
	return strings.Join(append(head, frames...), "\n")
}

// probeChild runs probeChildCases of the probe's cases (fewer at the end) from
// the one its environment names, writing a line before and after each.
func probeChild(t *testing.T, spec string) {
	var first, perOp int
	var seed uint64
	if _, err := fmt.Sscanf(spec, "%d,%d,%d", &first, &seed, &perOp); err != nil {
		t.Fatalf("%s=%q: %v", probeChildEnv, spec, err)
	}
	ops, err := probeOps()
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for i := first; i < min(len(ops)*perOp, first+probeChildCases); i++ {
		hc := probeCase(ops, seed, perOp, i)
		fmt.Printf("\n%sstart %d\n", probeMarker, i)
		outcome, err := hc.run(root)
		msg := ""
		if err != nil {
			msg = strings.ReplaceAll(err.Error(), "\n", " ")
		}
		fmt.Printf("\n%send %d %d %s\n", probeMarker, i, outcome, msg)
	}
	fmt.Printf("\n%sstopped\n", probeMarker)
}
