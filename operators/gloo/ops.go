package gloo

import (
	"hash/fnv"
	"time"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Engine is the engine name of the collectives across processes.
const Engine = "GLOO"

// DefaultTimeout is the deadline of a common world's collectives and of
// its rendezvous when CreateCommonWorld's timeout_ms is not given (Gloo's
// default).
const DefaultTimeout = 30 * time.Second

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "FileStoreHandlerCreate", MinInputs: 0, MaxInputs: 0, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "path", Doc: "the store's directory, on a file system every rank can reach (created if missing)"},
			{Name: "prefix", Default: "", Doc: "keeps this run's keys apart: they go to a subdirectory named by its hash"},
		},
		Doc: "Outputs a store handler over files in a directory: the rendezvous CreateCommonWorld uses.",
	}, func(b *operators.Base) (operators.Operator, error) { return &storeOp{Base: b}, nil })
	operators.MustRegisterNoGradient("FileStoreHandlerCreate")

	operators.MustRegisterCPU(operators.Schema{
		Type: "RedisStoreHandlerCreate", MinInputs: 0, MaxInputs: 0, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "host", Doc: "the Redis server's host name or address"},
			{Name: "port", Default: int64(DefaultRedisPort), Doc: "the Redis server's port"},
			{Name: "prefix", Default: "", Doc: "prepended to every key (\"<prefix>/<key>\")"},
		},
		Doc: "Outputs a store handler over a Redis server: the rendezvous CreateCommonWorld uses. It connects at first use.",
	}, func(b *operators.Base) (operators.Operator, error) { return &storeOp{Base: b}, nil })
	operators.MustRegisterNoGradient("RedisStoreHandlerCreate")

	operators.MustRegisterSchema(operators.Schema{
		Type: "CreateCommonWorld", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{
			{Name: "size", Doc: "the number of ranks (processes) in the world, ≥ 1"},
			{Name: "rank", Default: int64(0), Doc: "this process's rank, 0 ≤ rank < size"},
			{Name: "timeout_ms", Default: int64(-1), Doc: "deadline of the rendezvous and of every collective on the world; -1: 30 s"},
			{Name: "transport", Default: "tcp", Doc: "the transport; only tcp"},
			{Name: "interface", Default: "", Doc: "the network interface to use (\"eth0\", \"lo\"); empty: the address of the host name"},
			{Name: "hostname", Default: "", Doc: "the address or host name to listen on, instead of interface"},
		},
		Doc: "Meets the other ranks through the store handler (input 0) and outputs a common world: a connection " +
			"to every other rank, which the collectives (engine GLOO) take as input 0. The operator's name, or " +
			"else its output's, keeps its keys apart from other worlds' in the store.",
	})
	operators.MustRegisterNoGradient("CreateCommonWorld")

	operators.MustRegisterSchema(operators.Schema{
		Type: "DestroyCommonWorld", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		EnforceInplace: [][2]int{{0, 0}},
		Doc:            "Closes the common world's connections; the blob holds a closed world after.",
	})
	operators.MustRegisterNoGradient("DestroyCommonWorld")

	timeoutArg := operators.ArgSpec{Name: "timeout_ms", Default: int64(-1), Doc: "this operator's deadline; -1: the common world's"}
	operators.MustRegisterSchema(operators.Schema{
		Type: "Broadcast", MinInputs: 2, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: operators.Unbounded,
		InputsCheck:  func(n int) bool { return n >= 2 },
		AllowInplace: func(in, out int) bool { return in == out+1 },
		Args: []operators.ArgSpec{
			{Name: "root", Default: int64(0), Doc: "the rank whose tensors every rank receives"},
			timeoutArg,
		},
		Doc: "Copies the root rank's tensors (inputs 1…) to every rank, in place: output i is input i+1. Input 0 is the common world.",
	})
	operators.MustRegisterNoGradient("Broadcast")

	operators.MustRegisterSchema(operators.Schema{
		Type: "Allgather", MinInputs: 2, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{timeoutArg},
		Doc: "Gathers every rank's inputs 1… (same dtype and size) into one 1-D output of size × (inputs − 1) × size of " +
			"input 1 elements, rank by rank, each rank's inputs in order. Input 0 is the common world.",
	})
	operators.MustRegisterNoGradient("Allgather")

	operators.MustRegisterSchema(operators.Schema{
		Type: "Barrier", MinInputs: 1, MaxInputs: 1, MinOutputs: 0, MaxOutputs: 0,
		Args: []operators.ArgSpec{timeoutArg},
		Doc:  "Returns once every rank of the common world (input 0) has reached it.",
	})
	operators.MustRegisterNoGradient("Barrier")

	operators.MustRegisterShapeFunc("Broadcast", func(_ *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return in[1:], nil
	})
	operators.MustRegisterShapeFunc("Allgather", func(_ *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{{Type: in[1].Type, Dims: []int{operators.AnyDim}}}, nil
	})
}

// storeOp is FileStoreHandlerCreate and RedisStoreHandlerCreate.
type storeOp struct{ *operators.Base }

func (o *storeOp) Run() error {
	a := StoreAddr{Kind: "file", Path: o.ArgString("path", ""), Prefix: o.ArgString("prefix", "")}
	if o.Type() == "RedisStoreHandlerCreate" {
		a = StoreAddr{Kind: "redis", Host: o.ArgString("host", ""), Port: int(o.ArgInt("port", DefaultRedisPort)), Prefix: a.Prefix}
	}
	s, err := a.Open()
	if err != nil {
		return o.Errorf("%v", err)
	}
	o.OutputBlob(0).Set(s)
	return nil
}

// collectiveTag is the Gloo tag of a collective operator: a hash of its
// type and blobs, the same in every process that builds the same net, and
// different for the collectives of one net that run at the same time.
func collectiveTag(def *netdef.OperatorDef) uint32 {
	h := fnv.New32a()
	h.Write([]byte(def.GetType()))
	for _, names := range [][]string{def.GetInput(), def.GetOutput()} {
		for _, n := range names {
			h.Write([]byte{0})
			h.Write([]byte(n))
		}
		h.Write([]byte{1})
	}
	return h.Sum32()
}

// MaxTimeout is the longest deadline a timeout_ms argument gives: larger
// values mean it (they would overflow a time.Duration, and Gloo's deadlines
// in nanoseconds).
const MaxTimeout = 10 * 365 * 24 * time.Hour

// opTimeout returns the deadline an operator's timeout_ms argument gives
// (at most MaxTimeout), or def when it is absent or not positive.
func opTimeout(b *operators.Base, def time.Duration) time.Duration {
	if ms := b.ArgInt("timeout_ms", -1); ms > 0 {
		if ms >= MaxTimeout.Milliseconds() {
			return MaxTimeout
		}
		return time.Duration(ms) * time.Millisecond
	}
	return def
}
