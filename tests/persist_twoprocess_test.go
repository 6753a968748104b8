package tests

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// The two-process persistence test. Process 1 builds and trains a small
// model with the workspace API, saves the predict net and checkpoints the
// parameters (with the optimizer state and the iteration counter) in the
// store of a shared root folder, and prints the predictions it gets on a
// fixed input. Process 2, started fresh, loads the net and the checkpoint
// from that root folder and prints its predictions on the same input. Both
// are this test binary re-executed with twoProcRole set.

const (
	twoProcRole = "CAFFE2GO_TWOPROC_ROLE" // "train" or "predict"
	twoProcRoot = "CAFFE2GO_TWOPROC_ROOT"
	twoProcIter = 30
)

var twoProcState = []string{"w1", "b1", "w2", "b2", "w1_momentum", "b1_momentum", "w2_momentum", "b2_momentum", "iter"}

// twoProcData is a deterministic 3-class problem with 6 features.
func twoProcData(n, seed int) (*blob.Tensor, *blob.Tensor) {
	x := make([]float32, n*6)
	y := make([]int32, n)
	for i := 0; i < n; i++ {
		c := (i*7 + seed) % 3
		y[i] = int32(c)
		for k := 0; k < 6; k++ {
			x[i*6+k] = float32(math.Sin(float64(i*6+k+seed))) * 0.5
			if k%3 == c {
				x[i*6+k] += 0.4
			}
		}
	}
	return blob.MustFromSlice(x, n, 6), blob.MustFromSlice(y)
}

// twoProcForward adds FC → Relu → FC from "data" to the scores "fc2".
func twoProcForward(n *netdef.Net) {
	n.Op("FC", []string{"data", "w1", "b1"}, []string{"fc1"})
	n.Op("Relu", []string{"fc1"}, []string{"fc1"})
	n.Op("FC", []string{"fc1", "w2", "b2"}, []string{"fc2"})
}

// twoProcTrain runs in process 1.
func twoProcTrain(root string) error {
	if err := workspace.ResetWorkspace(root); err != nil {
		return err
	}
	init := netdef.NewNet("twoproc_init")
	for _, p := range []struct {
		name  string
		shape []int64
	}{{"w1", []int64{8, 6}}, {"b1", []int64{8}}, {"w2", []int64{3, 8}}, {"b2", []int64{3}}} {
		fill := "ConstantFill"
		if p.name[0] == 'w' {
			fill = "XavierFill"
		}
		op := init.Op(fill, nil, []string{p.name}, netdef.ArgInts("shape", p.shape...))
		seed := uint32(len(p.name) + int(p.shape[0]))
		op.DeviceOption = &netdef.DeviceOption{RandomSeed: &seed}
		init.Op("ConstantFill", []string{p.name}, []string{p.name + "_momentum"}, netdef.ArgFloat("value", 0))
	}
	init.Op("ConstantFill", nil, []string{"iter"}, netdef.ArgInts("shape", 1),
		netdef.ArgInt("dtype", int64(netdef.TensorProto_INT64)), netdef.ArgInt("value", 0))
	if err := workspace.RunNetOnce(init); err != nil {
		return err
	}
	x, y := twoProcData(48, 0)
	if err := workspace.FeedBlob("data", x); err != nil {
		return err
	}
	if err := workspace.FeedBlob("label", y); err != nil {
		return err
	}
	train := netdef.NewNet("twoproc_train")
	twoProcForward(train)
	train.Op("SoftmaxWithLoss", []string{"fc2", "label"}, []string{"softmax", "loss"})
	grads, err := operators.AddGradientOperators(train.Proto(), []string{"loss"}, nil)
	if err != nil {
		return err
	}
	train.Op("Iter", []string{"iter"}, []string{"iter"})
	train.Op("LearningRate", []string{"iter"}, []string{"lr"}, netdef.ArgFloat("base_lr", 0.05),
		netdef.ArgString("policy", "step"), netdef.ArgInt("stepsize", 10), netdef.ArgFloat("gamma", 0.8))
	for _, p := range []string{"w1", "b1", "w2", "b2"} {
		g := grads[p].Dense
		train.Op("MomentumSGDUpdate", []string{g, p + "_momentum", "lr", p}, []string{g, p + "_momentum", p},
			netdef.ArgFloat("momentum", 0.9))
	}
	if err := workspace.CreateNet(train, false); err != nil {
		return err
	}
	var first, last float32
	for it := 0; it < twoProcIter; it++ {
		if err := workspace.RunNet(train.Name(), 1); err != nil {
			return err
		}
		loss, err := workspace.FetchBlob("loss")
		if err != nil {
			return err
		}
		if last = blob.Data[float32](loss)[0]; it == 0 {
			first = last
		}
	}
	fmt.Printf("loss %g %g\n", first, last)

	predict := netdef.NewNet("twoproc_predict")
	twoProcForward(predict)
	predict.Op("Softmax", []string{"fc2"}, []string{"prob"})
	if err := predict.AddExternalOutput("prob"); err != nil {
		return err
	}
	if err := workspace.SaveNet("predict", predict); err != nil {
		return err
	}
	if err := workspace.SaveCheckpoint(twoProcIter, twoProcState); err != nil {
		return err
	}
	return twoProcPredict(predict.Proto())
}

// twoProcPredict feeds the fixed test input, runs the predict net once and
// prints the probabilities' bit patterns.
func twoProcPredict(def *netdef.NetDef) error {
	x, _ := twoProcData(10, 1)
	if err := workspace.FeedBlob("data", x); err != nil {
		return err
	}
	if err := workspace.CreateNet(def, true); err != nil {
		return err
	}
	if err := workspace.RunNet(def.GetName(), 1); err != nil {
		return err
	}
	prob, err := workspace.FetchBlob("prob")
	if err != nil {
		return err
	}
	bits := make([]string, 0, prob.Size())
	for _, p := range blob.Data[float32](prob) {
		bits = append(bits, strconv.FormatUint(uint64(math.Float32bits(p)), 16))
	}
	fmt.Printf("prob %v %s\n", prob.Shape(), strings.Join(bits, " "))
	return nil
}

// twoProcLoad runs in process 2.
func twoProcLoad(root string) error {
	if err := workspace.ResetWorkspace(root); err != nil {
		return err
	}
	if workspace.HasBlob("w1") {
		return fmt.Errorf("a fresh workspace already has parameters")
	}
	nets, err := workspace.SavedNets()
	if err != nil {
		return err
	}
	def, err := workspace.LoadNet("predict")
	if err != nil {
		return err
	}
	id, ok, err := workspace.LatestCheckpoint()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no checkpoint in %s (nets %q)", root, nets)
	}
	if err := workspace.LoadCheckpoint(id); err != nil {
		return err
	}
	iter, err := workspace.FetchBlob("iter")
	if err != nil {
		return err
	}
	fmt.Printf("checkpoint %d iter %d nets %s\n", id, blob.Data[int64](iter)[0], strings.Join(nets, ","))
	return twoProcPredict(def)
}

// TestPersistTwoProcessChild is the child side; it does nothing in a normal
// test run.
func TestPersistTwoProcessChild(t *testing.T) {
	role, root := os.Getenv(twoProcRole), os.Getenv(twoProcRoot)
	var err error
	switch role {
	case "":
		t.Skip("helper process of TestPersistTwoProcess")
	case "train":
		err = twoProcTrain(root)
	case "predict":
		err = twoProcLoad(root)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if cerr := workspace.Current().Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
}

func TestPersistTwoProcess(t *testing.T) {
	if os.Getenv(twoProcRole) != "" {
		t.Skip("in the child")
	}
	root := t.TempDir()
	run := func(role string) map[string]string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPersistTwoProcessChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), twoProcRole+"="+role, twoProcRoot+"="+root)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("process %q: %v\n%s", role, err, out)
		}
		lines := map[string]string{}
		for _, l := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(l, " "); ok {
				lines[k] = v
			}
		}
		return lines
	}
	trained := run("train")
	loaded := run("predict")

	var first, last float64
	if _, err := fmt.Sscanf(trained["loss"], "%g %g", &first, &last); err != nil || !(last < first) {
		t.Fatalf("process 1 did not train: loss %q (%v)", trained["loss"], err)
	}
	if want := fmt.Sprintf("%d iter %d nets predict", twoProcIter, twoProcIter); loaded["checkpoint"] != want {
		t.Errorf("process 2 loaded %q, want checkpoint %s", loaded["checkpoint"], want)
	}
	p1, p2 := strings.Fields(trained["prob"]), strings.Fields(loaded["prob"])
	if len(p1) != 2+30 || !slices.Equal(p1, p2) {
		t.Fatalf("predictions differ:\nprocess 1: %s\nprocess 2: %s", trained["prob"], loaded["prob"])
	}
	t.Logf("loss %.4f → %.4f over %d iterations; process 2 reproduced all %d probabilities bit for bit",
		first, last, twoProcIter, len(p1)-2)
}
