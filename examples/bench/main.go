// Command bench times one training step of the peer harness's workloads
// (torch_reference.py beside this file, which times them in PyTorch), built
// as caffe2go NetDefs with the same shapes, batch sizes and optimizer, and
// prints the same names, so the two can be run one after the other and
// compared as ratios:
//
//	go run ./examples/bench -threads 2 -seconds 4
//	/usr/bin/python3 examples/bench/torch_reference.py --threads 2 --seconds 4
//
// Each line is NAME, a tab, and the median milliseconds per step over five
// timed windows (after three warm-up steps), or GFLOP/s for gemm. Lines
// that start with # are comments: the CPU and the features the kernels
// look for, the GEMM micro-kernel in use, and after each workload the CPU
// time per step of every thread together in the median window (which
// shows what the worker pool burns polling for work) and the GEMM paths
// its operators took in one step (see gemm.Path). -threads takes a
// list, such as -threads 1,2,16, and prints one block per thread count.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/kernels/gemm"
	"github.com/caffe2go/caffe2go/workspace"
)

func main() {
	threads := flag.String("threads", "2", "GOMAXPROCS, the number of cores the kernels may use, or a comma-separated list of them (one block of results each)")
	seconds := flag.Float64("seconds", 3, "timed seconds per workload")
	only := flag.String("only", "", "run just this workload (mlp, lenet, convnet or gemm)")
	perOp := flag.Bool("perop", false, "after each training workload, print its time per operator type")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the timed runs to this file (read it with go tool pprof)")
	device := flag.String("device", "cpu", "cpu, or cuda for GPU 0 (needs a build with -tags cuda)")
	flag.Parse()
	dev, err := deviceOption(*device)
	if err != nil {
		log.Fatal(err)
	}
	counts, err := threadCounts(*threads)
	if err != nil {
		log.Fatal(err)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	printMachine(os.Stdout)
	for _, t := range counts {
		runtime.GOMAXPROCS(t)
		if err := run(os.Stdout, *only, time.Duration(*seconds*float64(time.Second)), 1, *perOp, dev); err != nil {
			pprof.StopCPUProfile()
			log.Fatal(err)
		}
	}
}

// threadCounts reads the -threads flag: one or more positive integers,
// separated by commas.
func threadCounts(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		t, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || t < 1 {
			return nil, fmt.Errorf("-threads %q: want positive integers separated by commas", list)
		}
		out = append(out, t)
	}
	return out, nil
}

// printMachine prints, as comments, the CPU, the instruction-set features
// the kernels choose by (golang.org/x/sys/cpu) and the GEMM micro-kernel
// this machine runs.
func printMachine(out io.Writer) {
	fmt.Fprintf(out, "# cpu: %s, %d logical CPUs, %s/%s, %s\n", cpuName(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(out, "# cpu features: %s\n", strings.Join(cpuFeatures(), " "))
	fmt.Fprintf(out, "# gemm micro-kernel: %s\n", gemm.Kernel())
}

// cpuName is the model name /proc/cpuinfo gives, where there is one.
func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown model"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown model"
}

// cpuFeatures lists the SIMD features of this CPU that matter to the
// kernels, as golang.org/x/sys/cpu reports them (x86 only; "none" elsewhere
// or when it has none of them).
func cpuFeatures() []string {
	var out []string
	for _, f := range []struct {
		name string
		has  bool
	}{
		{"sse4.1", cpu.X86.HasSSE41}, {"avx", cpu.X86.HasAVX}, {"avx2", cpu.X86.HasAVX2}, {"fma", cpu.X86.HasFMA},
		{"avx512f", cpu.X86.HasAVX512F}, {"avx512bw", cpu.X86.HasAVX512BW}, {"avx512dq", cpu.X86.HasAVX512DQ},
		{"avx512vl", cpu.X86.HasAVX512VL}, {"avx512vnni", cpu.X86.HasAVX512VNNI}, {"avx512bf16", cpu.X86.HasAVX512BF16},
		{"amx-tile", cpu.X86.HasAMXTile}, {"amx-bf16", cpu.X86.HasAMXBF16}, {"amx-int8", cpu.X86.HasAMXInt8},
	} {
		if f.has {
			out = append(out, f.name)
		}
	}
	if len(out) == 0 {
		out = append(out, "none")
	}
	return out
}

// run times the workloads (or just only) and prints a line for each. The
// batch sizes are divided by shrink, which tests use to stay quick.
// deviceOption reads the -device flag: nil for the CPU, GPU 0 for cuda.
func deviceOption(name string) (*netdef.DeviceOption, error) {
	switch name {
	case "cpu":
		return nil, nil
	case "cuda":
		if workspace.NumCudaDevices() == 0 {
			return nil, fmt.Errorf("-device cuda: no CUDA device (build with -tags cuda and run on a machine with an NVIDIA GPU; see the README)")
		}
		return netdef.NewDeviceOption(netdef.CUDA, 0), nil
	}
	return nil, fmt.Errorf("-device %q: want cpu or cuda", name)
}

func run(out io.Writer, only string, budget time.Duration, shrink int, perOp bool, dev *netdef.DeviceOption) error {
	fmt.Fprintf(out, "# caffe2go GOMAXPROCS=%d device %v\n", runtime.GOMAXPROCS(0), dev.Type())
	for _, w := range workloads {
		if only != "" && only != w.name {
			continue
		}
		ws := workspace.New("")
		net, err := w.build(ws, w.batch/shrink, dev)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		perStep, cpu, err := timeWindows(func() error { return ws.RunNet(net, 1) }, budget)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		fmt.Fprintf(out, "%s\t%.3f ms/step\n", w.name, perStep.Seconds()*1e3)
		printCPU(out, cpu, perStep)
		if dev == nil {
			if err := printPaths(out, ws, net); err != nil {
				return fmt.Errorf("%s: %w", w.name, err)
			}
		}
		if perOp {
			if err := printPerOp(out, ws, net); err != nil {
				return fmt.Errorf("%s: %w", w.name, err)
			}
		}
	}
	if (only == "" || only == "gemm") && dev != nil {
		return deviceGemm(out, budget, dev)
	}
	if only == "" || only == "gemm" {
		const n = 1024
		a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		perCall, cpu, err := timeWindows(func() error {
			gemm.Sgemm(false, false, n, n, n, 1, a, n, b, n, 0, c, n)
			return nil
		}, budget)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "gemm\t%.1f GFLOP/s\n", 2*n*n*n/perCall.Seconds()/1e9)
		printCPU(out, cpu, perCall)
	}
	return nil
}

// printPerOp prints the time net spends in each operator type, largest
// first, from Workspace.BenchmarkNet's per-operator timings.
func printPerOp(out io.Writer, ws *workspace.Workspace, net string) error {
	times, err := ws.BenchmarkNet(net, 1, 5, true)
	if err != nil {
		return err
	}
	byType := map[string]float64{}
	for i, op := range ws.GetNet(net).Proto().GetOp() {
		byType[op.GetType()] += times[i+1]
	}
	types := slices.Collect(maps.Keys(byType))
	slices.SortFunc(types, func(a, b string) int { return cmp.Compare(byType[b], byType[a]) })
	for _, typ := range types {
		fmt.Fprintf(out, "  %-28s %8.3f ms\n", typ, byType[typ])
	}
	return nil
}

// printPaths runs one more step of net operator by operator, counting
// the GEMM paths each operator's products take, and prints them by
// operator type as comments, such as
//
//	#   FC                           gemm: blocked-parallel 2, dot 1
func printPaths(out io.Writer, ws *workspace.Workspace, net string) error {
	gemm.CountPaths(true)
	defer gemm.CountPaths(false)
	byType := map[string]*[gemm.NumPaths]uint64{}
	var types []string
	for _, op := range ws.GetNet(net).Proto().GetOp() {
		before := gemm.PathCounts()
		if err := ws.RunOperatorOnce(op); err != nil {
			return err
		}
		after := gemm.PathCounts()
		sum := byType[op.GetType()]
		if sum == nil {
			sum = new([gemm.NumPaths]uint64)
			byType[op.GetType()] = sum
			types = append(types, op.GetType())
		}
		for p := range after {
			sum[p] += after[p] - before[p]
		}
	}
	for _, typ := range types {
		var parts []string
		for p, n := range byType[typ] {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%v %d", gemm.Path(p), n))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(out, "#   %-28s gemm: %s\n", typ, strings.Join(parts, ", "))
		}
	}
	return nil
}

// timeWindows runs step three times, then splits budget into five windows,
// runs step repeatedly in each and returns the median time per step — the
// peer harness's procedure — and the CPU time per step of the process,
// every thread's together, in that same window (0 where the system does
// not report it).
func timeWindows(step func() error, budget time.Duration) (wall, cpu time.Duration, err error) {
	for i := 0; i < 3; i++ {
		if err := step(); err != nil {
			return 0, 0, err
		}
	}
	const windows = 5
	type window struct{ wall, cpu time.Duration }
	per := make([]window, windows)
	for w := range per {
		start, cpu0, n := time.Now(), processCPU(), 0
		for time.Since(start) < budget/windows || n == 0 {
			if err := step(); err != nil {
				return 0, 0, err
			}
			n++
		}
		per[w] = window{time.Since(start) / time.Duration(n), (processCPU() - cpu0) / time.Duration(n)}
	}
	slices.SortFunc(per, func(a, b window) int { return cmp.Compare(a.wall, b.wall) })
	return per[windows/2].wall, per[windows/2].cpu, nil
}

// printCPU prints, as a comment, the CPU time per step and how many cores
// that keeps busy on average: the kernels' threads, the garbage collector
// and whatever time the worker pool spends polling for work.
func printCPU(out io.Writer, cpu, wall time.Duration) {
	if cpu > 0 {
		fmt.Fprintf(out, "#   cpu %.3f ms/step, %.2f cores busy\n", cpu.Seconds()*1e3, cpu.Seconds()/wall.Seconds())
	}
}

type workload struct {
	name  string
	batch int
	build func(ws *workspace.Workspace, batch int, dev *netdef.DeviceOption) (string, error)
}

var workloads = []workload{
	{"mlp", 256, func(ws *workspace.Workspace, batch int, dev *netdef.DeviceOption) (string, error) {
		m := newModel(ws, batch, dev, []int{93}, 9)
		x := m.fc("data", "fc1", 93, 512)
		x = m.relu(x)
		x = m.fc(x, "fc2", 512, 512)
		x = m.relu(x)
		x = m.fc(x, "fc3", 512, 9)
		return m.finish(x)
	}},
	{"lenet", 64, func(ws *workspace.Workspace, batch int, dev *netdef.DeviceOption) (string, error) {
		m := newModel(ws, batch, dev, []int{1, 28, 28}, 10)
		x := m.conv("data", "conv1", 1, 20, 5, 0)
		x = m.maxPool(x, "pool1")
		x = m.conv(x, "conv2", 20, 50, 5, 0)
		x = m.maxPool(x, "pool2")
		x = m.fc(x, "fc1", 50*4*4, 500)
		x = m.relu(x)
		x = m.fc(x, "fc2", 500, 10)
		return m.finish(x)
	}},
	{"convnet", 128, func(ws *workspace.Workspace, batch int, dev *netdef.DeviceOption) (string, error) {
		m := newModel(ws, batch, dev, []int{3, 32, 32}, 10)
		block := func(x, name string, cin, cout int) string {
			x = m.relu(m.spatialBN(m.conv(x, name+"_conv1", cin, cout, 3, 1), name+"_bn1", cout))
			return m.relu(m.spatialBN(m.conv(x, name+"_conv2", cout, cout, 3, 1), name+"_bn2", cout))
		}
		x := block("data", "b1", 3, 32)
		x = m.maxPool(x, "pool1")
		x = block(x, "b2", 32, 64)
		x = m.maxPool(x, "pool2")
		x = block(x, "b3", 64, 128)
		x = m.globalAveragePool(x, "gap")
		x = m.fc(x, "fc", 128, 10)
		return m.finish(x)
	}},
}

// model builds a training net by hand: parameters are fed into the
// workspace, layers are appended as operators, and finish adds the loss,
// the backward pass and a momentum-SGD update (lr 0.01, momentum 0.9) for
// every parameter, as the peer's torch.optim.SGD does.
type model struct {
	ws     *workspace.Workspace
	net    *netdef.Net
	dev    *netdef.DeviceOption // where the net runs and its blobs live (nil: the CPU)
	params []string
	rng    *rand.Rand
	err    error
}

func newModel(ws *workspace.Workspace, batch int, dev *netdef.DeviceOption, input []int, classes int) *model {
	m := &model{ws: ws, net: netdef.NewNet("train"), rng: rand.New(rand.NewPCG(3, 5)), dev: dev}
	m.feed("data", 1, append([]int{batch}, input...)...)
	labels := make([]int32, batch)
	for i := range labels {
		labels[i] = int32(m.rng.IntN(classes))
	}
	m.set(ws.FeedBlob("label", blob.MustFromSlice(labels), workspace.OnDevice(dev)))
	m.set(ws.FeedBlob("lr", blob.Scalar[float32](0.01), workspace.OnDevice(dev)))
	return m
}

func (m *model) set(err error) {
	if m.err == nil {
		m.err = err
	}
}

// feed stores a normal(0, scale²) tensor (or zeros for scale 0, or a
// constant for scale < 0: −scale) under name.
func (m *model) feed(name string, scale float64, shape ...int) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		switch {
		case scale > 0:
			v[i] = float32(m.rng.NormFloat64() * scale)
		case scale < 0:
			v[i] = float32(-scale)
		}
	}
	m.set(m.ws.FeedBlob(name, blob.MustFromSlice(v, shape...), workspace.OnDevice(m.dev)))
}

func (m *model) param(name string, scale float64, shape ...int) string {
	m.feed(name, scale, shape...)
	m.params = append(m.params, name)
	return name
}

func (m *model) fc(in, name string, din, dout int) string {
	w := m.param(name+"_w", 1/float64(din), dout, din)
	b := m.param(name+"_b", 0, dout)
	m.net.Op("FC", []string{in, w, b}, []string{name})
	return name
}

func (m *model) conv(in, name string, cin, cout, k, pad int) string {
	w := m.param(name+"_w", 1/float64(cin*k*k), cout, cin, k, k)
	b := m.param(name+"_b", 0, cout)
	args := []*netdef.Argument{netdef.ArgInt("kernel", int64(k)), netdef.ArgInt("pad", int64(pad)), netdef.ArgString("order", "NCHW")}
	if in == "data" {
		// The input needs no gradient, and PyTorch computes none for it
		// (its requires_grad is false).
		args = append(args, netdef.ArgInt("no_gradient_to_input", 1))
	}
	m.net.Op("Conv", []string{in, w, b}, []string{name}, args...)
	return name
}

func (m *model) spatialBN(in, name string, c int) string {
	scale := m.param(name+"_s", -1, c)
	bias := m.param(name+"_b", 0, c)
	mean, variance := name+"_rm", name+"_rv"
	m.feed(mean, 0, c)
	m.feed(variance, -1, c)
	m.net.Op("SpatialBN", []string{in, scale, bias, mean, variance},
		[]string{name, mean, variance, name + "_sm", name + "_siv"},
		netdef.ArgInt("is_test", 0), netdef.ArgFloat("epsilon", 1e-5), netdef.ArgFloat("momentum", 0.9))
	return name
}

func (m *model) relu(x string) string {
	m.net.Op("Relu", []string{x}, []string{x})
	return x
}

func (m *model) maxPool(in, name string) string {
	m.net.Op("MaxPool", []string{in}, []string{name}, netdef.ArgInt("kernel", 2), netdef.ArgInt("stride", 2))
	return name
}

func (m *model) globalAveragePool(in, name string) string {
	m.net.Op("AveragePool", []string{in}, []string{name}, netdef.ArgInt("global_pooling", 1))
	return name
}

// finish adds softmax cross-entropy, the backward pass and the updates, and
// creates the net; it returns the net's name.
func (m *model) finish(logits string) (string, error) {
	if m.err != nil {
		return "", m.err
	}
	m.net.Op("SoftmaxWithLoss", []string{logits, "label"}, []string{"softmax", "loss"})
	grads, err := operators.AddGradientOperators(m.net.Proto(), []string{"loss"}, nil)
	if err != nil {
		return "", err
	}
	// The input needs no gradient, and PyTorch computes none for it: an
	// FC that reads it computes dW and db only (FCGradient's third output
	// is optional), as a Conv that reads it has no_gradient_to_input.
	for _, op := range m.net.Proto().GetOp() {
		if op.GetType() == "FCGradient" && op.Input[0] == "data" && len(op.Output) == 3 {
			op.Output = op.Output[:2]
		}
	}
	for _, p := range m.params {
		mom := p + "_momentum"
		m.feed(mom, 0, m.ws.GetBlob(p).Tensor().Shape()...)
		g := grads[p].Dense
		m.net.Op("MomentumSGDUpdate", []string{g, mom, "lr", p}, []string{g, mom, p}, netdef.ArgFloat("momentum", 0.9))
	}
	if m.err != nil {
		return "", m.err
	}
	m.net.Proto().DeviceOption = m.dev
	if err := m.ws.CreateNet(m.net, false); err != nil {
		return "", err
	}
	return m.net.Name(), nil
}

// deviceGemm times the float32 product of two 8192×8192 matrices on the
// device with the MatMul operator (cuBLAS), the size the peer harness
// times on a GPU.
func deviceGemm(out io.Writer, budget time.Duration, dev *netdef.DeviceOption) error {
	const n = 8192
	ws := workspace.New("")
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range []string{"A", "B"} {
		v := make([]float32, n*n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		if err := ws.FeedBlob(name, blob.MustFromSlice(v, n, n), workspace.OnDevice(dev)); err != nil {
			return err
		}
	}
	net := netdef.NewNet("gemm")
	net.Op("MatMul", []string{"A", "B"}, []string{"C"})
	net.Proto().DeviceOption = dev
	if err := ws.CreateNet(net, false); err != nil {
		return err
	}
	perCall, _, err := timeWindows(func() error { return ws.RunNet(net.Name(), 1) }, budget)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "gemm\t%.1f GFLOP/s (%d³ float32)\n", 2*n*n*n/perCall.Seconds()/1e9, n)
	return nil
}
