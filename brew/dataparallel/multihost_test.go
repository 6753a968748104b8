//go:build gloo && cgo

package dataparallel_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/gloo"
	"github.com/caffe2go/caffe2go/workspace"
)

// shardEnv makes the test binary one shard of TestMultiHostEquiv
// (TestShard): "shard numShards rendezvousURL outFile".
const shardEnv = "CAFFE2GO_DPM_SHARD"

const (
	mhFeatures, mhHidden, mhClasses = 8, 6, 3
	mhBatch, mhSteps                = 16, 20
)

// mhInit is a GivenTensorFill of n values drawn from seed.
func mhInit(seed uint64, n int) brew.Initializer {
	rng := rand.New(rand.NewPCG(seed, 7))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * 0.3)
	}
	return brew.Init("GivenTensorFill", netdef.ArgFloats("values", v...))
}

// mhBatchAt returns step's batch of mhBatch examples.
func mhBatchAt(step int) brew.Dataset {
	rng := rand.New(rand.NewPCG(11, uint64(step)))
	x := make([]float32, mhBatch*mhFeatures)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	labels := make([]int32, mhBatch)
	for r := range labels {
		if x[r*mhFeatures] > 0 {
			labels[r] = 1
		}
		if x[r*mhFeatures+1] > 1 {
			labels[r] = 2
		}
	}
	return brew.Dataset{"data": blob.MustFromSlice(x, mhBatch, mhFeatures), "label": blob.MustFromSlice(labels, mhBatch)}
}

// rows returns the rows [lo, hi) of every tensor of d.
func rows(d brew.Dataset, lo, hi int) brew.Dataset {
	out := brew.Dataset{}
	for name, t := range d {
		w := t.Size() / t.Dim(0)
		switch v := t.Raw().(type) {
		case []float32:
			out[name] = blob.MustFromSlice(v[lo*w:hi*w], append([]int{hi - lo}, t.Dims()[1:]...)...)
		case []int32:
			out[name] = blob.MustFromSlice(v[lo*w:hi*w], append([]int{hi - lo}, t.Dims()[1:]...)...)
		}
	}
	return out
}

// trainMultiHost trains the MLP for mhSteps steps on devices, as shard of
// shards (rdv nil: one process), with initial parameters drawn from
// initSeed, and returns the master's parameters by name.
func trainMultiHost(t testing.TB, devices []int, rdv *dataparallel.Rendezvous, initSeed uint64) map[string][]float32 {
	t.Helper()
	ws := newWorkspace(t)
	brew.ResetOptimizerInstanceCount()
	m := brew.NewModel("mlp")
	forward := func(m *brew.Model, lossScale float32) ([]string, error) {
		m.AddExternalInputs("data", "label")
		h := brew.FC(m, "data", "fc1", mhFeatures, mhHidden,
			brew.WeightInit(mhInit(initSeed, mhFeatures*mhHidden)), brew.BiasInit(mhInit(initSeed+1, mhHidden)))
		h = brew.Relu(m, h, h)
		y := brew.FC(m, h, "fc2", mhHidden, mhClasses,
			brew.WeightInit(mhInit(initSeed+2, mhHidden*mhClasses)), brew.BiasInit(mhInit(initSeed+3, mhClasses)))
		_, loss := brew.SoftmaxWithLoss(m, y, "label", "softmax", "loss")
		scaled := m.Op("Scale", []string{loss}, []string{"loss_scaled"}, netdef.ArgFloat("scale", lossScale))
		return scaled.GetOutput(), m.Err()
	}
	p, err := dataparallel.Parallelize(m, dataparallel.Options{
		ForwardBuilder:     forward,
		ParamUpdateBuilder: perDeviceSGD(0.5),
		Devices:            devices,
		Rendezvous:         rdv,
		Workspace:          ws,
	})
	if err != nil {
		t.Fatal(err)
	}
	return trainSteps(t, ws, p, devices, mhSteps, mhBatch, mhBatchAt)
}

// trainSteps runs steps training steps of p, this shard's rows of
// batch(step) (of size examples over every shard) fed to its devices, the
// init net run after the first feed, and returns the master's parameters
// by name after checking that every device holds the same.
func trainSteps(t testing.TB, ws *workspace.Workspace, p *dataparallel.Parallel, devices []int, steps, size int, batch func(step int) brew.Dataset) map[string][]float32 {
	t.Helper()
	shard, shards := p.ShardID(), p.NumShards()
	per := size / shards
	for step := range steps {
		if err := p.Scatter(rows(batch(step), shard*per, (shard+1)*per)); err != nil {
			t.Fatal(err)
		}
		if step == 0 {
			if err := p.RunInitNet(); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.RunNet(1); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string][]float32{}
	for _, name := range p.ParamNames() {
		v, err := ws.FetchBlob(p.DeviceBlob(devices[0], name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = append([]float32(nil), blob.Data[float32](v)...)
		for _, d := range devices[1:] {
			w, err := ws.FetchBlob(p.DeviceBlob(d, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := allclose(blob.Data[float32](w), out[name], 0, 0); err != nil {
				t.Fatalf("%s differs from the master's copy: %v", p.DeviceBlob(d, name), err)
			}
		}
	}
	return out
}

// TestShard is one shard of TestMultiHostEquiv, in a process of its own.
func TestShard(t *testing.T) {
	spec := os.Getenv(shardEnv)
	if spec == "" {
		t.Skip("runs only as a shard of TestMultiHostEquiv")
	}
	f := strings.Fields(spec)
	shard, _ := strconv.Atoi(f[0])
	shards, _ := strconv.Atoi(f[1])
	addr, err := gloo.ParseStoreAddr(f[2])
	if err != nil {
		t.Fatal(err)
	}
	// Shard 1 starts from other parameters: the broadcast from shard 0
	// must replace them.
	params := trainMultiHost(t, []int{0}, &dataparallel.Rendezvous{Store: addr, ShardID: shard, NumShards: shards,
		Hostname: "127.0.0.1", Timeout: 20 * time.Second, BarrierTimeout: 60 * time.Second}, uint64(100+shard*50))
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f[3], b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runShards trains shards processes of one device each, meeting at url,
// and returns each shard's parameters.
func runShards(t *testing.T, shards int, url string) []map[string][]float32 {
	t.Helper()
	specs := make([]string, shards)
	for s := range specs {
		specs[s] = fmt.Sprintf("%d %d %s", s, shards, url)
	}
	return runChildren(t, "TestShard", shardEnv, specs)
}

// runChildren runs the test child of this binary once per spec, at once,
// each in a process of its own with env set to the spec and the file the
// child writes its parameters to (as JSON), and returns each child's
// parameters.
func runChildren(t *testing.T, child, env string, specs []string) []map[string][]float32 {
	t.Helper()
	dir := t.TempDir()
	cmds := make([]*exec.Cmd, len(specs))
	outs := make([]string, len(specs))
	for s, spec := range specs {
		outs[s] = filepath.Join(dir, fmt.Sprintf("child%d.json", s))
		cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.v")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s", env, spec, outs[s]))
		var log strings.Builder
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("%s %q:\n%s", child, spec, log.String())
			}
		})
		cmds[s] = cmd
	}
	results := make([]map[string][]float32, len(specs))
	for s, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s %q: %v", child, specs[s], err)
			continue
		}
		b, err := os.ReadFile(outs[s])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &results[s]); err != nil {
			t.Fatal(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return results
}

// TestMultiHostEquiv trains the same MLP for 20 steps of 16 examples as 2
// processes × 1 device (Gloo across the processes) and as 1 process × 2
// devices: every shard must end with the single process's parameters.
func TestMultiHostEquiv(t *testing.T) {
	want := trainMultiHost(t, []int{0, 1}, nil, 100)
	urls := []string{"file://" + t.TempDir()}
	if exe, err := exec.LookPath("redis-server"); err == nil {
		urls = append(urls, startRedis(t, exe)+"?prefix=equiv")
	} else {
		t.Log("redis-server is not installed: the Redis rendezvous is not tested")
	}
	for _, url := range urls {
		start := time.Now()
		got := runShards(t, 2, url)
		t.Logf("%s: 2 shards × %d steps in %v", url, mhSteps, time.Since(start).Round(time.Millisecond))
		for s, params := range got {
			for name, w := range want {
				if err := allclose(params[name], w, 0, 1e-6); err != nil {
					t.Errorf("%s: shard %d: %s: %v", url, s, name, err)
				}
			}
		}
	}
}

// startRedis starts a redis-server for the test and returns its URL.
func startRedis(t *testing.T, exe string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(exe, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
			c.Close()
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("redis-server did not come up: %v", err)
		}
	}
	return fmt.Sprintf("redis://127.0.0.1:%d", port)
}
