//go:build gloo && cgo

package dataparallel_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/operators/gloo"
)

// lenetShardEnv makes the test binary one shard of
// TestMultiHostLeNetEquiv (TestLeNetShard): "shard numShards devices
// coalesce(0 or 1) rendezvousURL outFile".
const lenetShardEnv = "CAFFE2GO_DPM_LENET_SHARD"

const (
	mhLeNetSteps = 20 // training steps
	mhLeNetBatch = 8  // examples per step over every device of every shard
	mhLeNetSeed  = 5  // the random seed of shard 0's initial parameters
)

// trainLeNetShard trains LeNet (momentum SGD with weight decay) for the
// batches on devices, as the shard of rdv (nil: one process), and returns
// the master's parameters after checking that every device holds them.
// Its parameters start from the random fills seeded with initSeed; the
// broadcast from shard 0 at init must replace another shard's.
func trainLeNetShard(t testing.TB, devices []int, rdv *dataparallel.Rendezvous, initSeed uint32, batches []brew.Dataset) map[string][]float32 {
	t.Helper()
	ws := newWorkspace(t)
	brew.ResetOptimizerInstanceCount()
	m := brew.NewModel("lenet")
	p, err := dataparallel.Parallelize(m, dataparallel.Options{
		ForwardBuilder: lenetForward, OptimizerBuilder: lenetOptimizer,
		Devices: devices, Rendezvous: rdv, Workspace: ws,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range m.InitNet.Proto().GetOp() {
		op.DeviceOption.RandomSeed = &initSeed
	}
	return trainSteps(t, ws, p, devices, len(batches), mhLeNetBatch, func(step int) brew.Dataset { return batches[step] })
}

// TestLeNetShard is one shard of TestMultiHostLeNetEquiv, in a process of
// its own.
func TestLeNetShard(t *testing.T) {
	spec := os.Getenv(lenetShardEnv)
	if spec == "" {
		t.Skip("runs only as a shard of TestMultiHostLeNetEquiv")
	}
	f := strings.Fields(spec)
	if len(f) != 6 {
		t.Fatalf("%s=%q: want shard, shards, devices, coalesce, rendezvous and output file", lenetShardEnv, spec)
	}
	var n [4]int
	for i := range n {
		v, err := strconv.Atoi(f[i])
		if err != nil {
			t.Fatalf("%s=%q: %v", lenetShardEnv, spec, err)
		}
		n[i] = v
	}
	shard, shards, ndev := n[0], n[1], n[2]
	addr, err := gloo.ParseStoreAddr(f[4])
	if err != nil {
		t.Fatal(err)
	}
	devices := make([]int, ndev)
	for i := range devices {
		devices[i] = i
	}
	rdv := &dataparallel.Rendezvous{Store: addr, ShardID: shard, NumShards: shards,
		Hostname: "127.0.0.1", Timeout: 30 * time.Second, BarrierTimeout: 120 * time.Second, Coalesce: n[3] == 1}
	params := trainLeNetShard(t, devices, rdv, mhLeNetSeed+uint32(shard)*11, lenetBatches(13, mhLeNetSteps, mhLeNetBatch))
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f[5], b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMultiHostLeNetEquiv trains LeNet for 20 steps of 8 random images as
// 2 processes × 2 CPU devices and as 4 processes × 1 device (Gloo across
// the processes), meeting through the file store and through Redis, and as
// 1 process × 4 devices: every shard of every layout must end with the
// single process's parameters (atol 1e-6, but see 4 × 1 below). The shards
// other than 0 start from other random parameters, which shard 0's
// broadcast replaces.
//
// 2 processes × 2 devices sum the gradients in the same order as 1 × 4
// (coalesced or not) and must match as closely. 4 × 1 sums each element in
// an order that depends on its place in Gloo's ring: a rounding difference
// of 6e-8 (what the first 10 steps show) tips a ReLU or max-pool choice
// between steps 10 and 20 and grows to 3e-5 by step 20, so 4 × 1 is held to
// atol 1e-4.
func TestMultiHostLeNetEquiv(t *testing.T) {
	if testing.Short() {
		t.Skip("trains LeNet in 19 processes")
	}
	want := trainLeNetShard(t, []int{0, 1, 2, 3}, nil, mhLeNetSeed, lenetBatches(13, mhLeNetSteps, mhLeNetBatch))
	stores := []string{"file", "file-coalesced"}
	redisURL := ""
	if exe, err := exec.LookPath("redis-server"); err == nil {
		redisURL = startRedis(t, exe)
		stores = append(stores, "redis")
	} else {
		t.Log("redis-server is not installed: the Redis rendezvous is not tested")
	}
	for _, store := range stores {
		for _, layout := range []struct{ shards, devices int }{{2, 2}, {4, 1}} {
			t.Run(fmt.Sprintf("%s/%dx%d", store, layout.shards, layout.devices), func(t *testing.T) {
				url, coalesce := "file://"+t.TempDir(), 0
				if store == "file-coalesced" {
					coalesce = 1
				}
				if store == "redis" {
					url = fmt.Sprintf("%s?prefix=lenet%dx%d", redisURL, layout.shards, layout.devices)
				}
				specs := make([]string, layout.shards)
				for s := range specs {
					specs[s] = fmt.Sprintf("%d %d %d %d %s", s, layout.shards, layout.devices, coalesce, url)
				}
				start := time.Now()
				got := runChildren(t, "TestLeNetShard", lenetShardEnv, specs)
				t.Logf("%d processes × %d devices × %d steps in %v", layout.shards, layout.devices, mhLeNetSteps, time.Since(start).Round(time.Millisecond))
				var worst float64
				for s, params := range got {
					if len(params) != len(want) {
						t.Fatalf("shard %d has %d parameters, want %d", s, len(params), len(want))
					}
					atol := 1e-6
					if layout.shards == 4 {
						atol = 1e-4
					}
					for name, w := range want {
						if err := allclose(params[name], w, 0, atol); err != nil {
							t.Errorf("shard %d: %s: %v", s, name, err)
						}
						for i := range min(len(w), len(params[name])) {
							worst = max(worst, math.Abs(float64(params[name][i])-float64(w[i])))
						}
					}
				}
				t.Logf("largest difference from 1 process × 4 devices: %g", worst)
			})
		}
	}
}
