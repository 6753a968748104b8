//go:build gloo && cgo

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/gloo"
	_ "github.com/caffe2go/caffe2go/operators/std"
	"github.com/caffe2go/caffe2go/workspace"
)

// result is what rank 0 prints for one tensor size.
type result struct {
	Impl    string  `json:"impl"`
	Ranks   int     `json:"ranks"`
	MB      float64 `json:"mb"`
	Iters   int     `json:"iters"`
	Seconds float64 `json:"seconds"` // median per all-reduce
}

func main() {
	rank := flag.Int("rank", 0, "this process's rank")
	size := flag.Int("size", 2, "number of processes")
	store := flag.String("store", "", "a fresh directory the ranks meet in")
	mbs := flag.String("mb", "1,10,100", "tensor sizes in MB (10⁶ bytes of float32), comma-separated")
	iters := flag.String("iters", "20,10,3", "timed all-reduces per size, comma-separated")
	flag.Parse()
	if err := run(*rank, *size, *store, *mbs, *iters); err != nil {
		fmt.Fprintf(os.Stderr, "allreducebench: rank %d: %v\n", *rank, err)
		os.Exit(1)
	}
}

func run(rank, size int, store, mbList, itersList string) error {
	if store == "" {
		return fmt.Errorf("-store: give a fresh directory")
	}
	var mbs []float64
	var iters []int
	for _, f := range strings.Split(mbList, ",") {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return fmt.Errorf("-mb: %v", err)
		}
		mbs = append(mbs, v)
	}
	for _, f := range strings.Split(itersList, ",") {
		v, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("-iters: %v", err)
		}
		iters = append(iters, v)
	}
	if len(iters) != len(mbs) {
		return fmt.Errorf("-iters has %d counts for %d sizes", len(iters), len(mbs))
	}
	ws := workspace.New("")
	if err := ws.RunOperatorOnce(netdef.NewOperator("FileStoreHandlerCreate", nil, []string{"store"}, netdef.ArgString("path", store))); err != nil {
		return err
	}
	if err := ws.RunOperatorOnce(glooOp("CreateCommonWorld", []string{"store"}, []string{"cw"},
		netdef.ArgInt("size", int64(size)), netdef.ArgInt("rank", int64(rank)),
		netdef.ArgString("hostname", "127.0.0.1"), netdef.ArgInt("timeout_ms", 600000))); err != nil {
		return err
	}
	for k, mb := range mbs {
		n := int(mb * 1e6 / 4)
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rank + 1)
		}
		if err := ws.FeedBlob("x", blob.MustFromSlice(x, n)); err != nil {
			return err
		}
		net := &netdef.NetDef{Name: proto.String(fmt.Sprintf("ar%d", k)), Op: []*netdef.OperatorDef{glooOp("Allreduce", []string{"cw", "x"}, []string{"x"})}}
		if err := ws.CreateNet(net, true); err != nil {
			return err
		}
		barrier := glooOp("Barrier", []string{"cw"}, nil)
		if err := ws.RunNet(net.GetName(), 1); err != nil { // warm-up
			return err
		}
		// Rank r started with r+1 everywhere: 1+2+…+size now (later
		// all-reduces multiply it by size, up to +Inf, which sums as fast).
		got, err := ws.FetchBlob("x")
		if err != nil {
			return err
		}
		if v, want := got.AsFloat64s()[n-1], float64(size*(size+1)/2); v != want {
			return fmt.Errorf("the all-reduced tensor holds %v, want %v", v, want)
		}
		if err := ws.RunOperatorOnce(barrier); err != nil {
			return err
		}
		times := make([]float64, iters[k])
		for i := range times {
			start := time.Now()
			if err := ws.RunNet(net.GetName(), 1); err != nil {
				return err
			}
			times[i] = time.Since(start).Seconds()
		}
		if err := ws.RunOperatorOnce(barrier); err != nil {
			return err
		}
		slices.Sort(times)
		if rank == 0 {
			b, _ := json.Marshal(result{Impl: "caffe2go", Ranks: size, MB: mb, Iters: len(times), Seconds: times[len(times)/2]})
			fmt.Println(string(b))
		}
	}
	return nil
}

func glooOp(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	def := netdef.NewOperator(typ, in, out, args...)
	def.Engine = proto.String(gloo.Engine)
	return def
}
