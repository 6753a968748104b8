//go:build gloo && cgo

package gloo_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/gloo"
	"github.com/caffe2go/caffe2go/workspace"
)

// glooOp returns an operator with engine GLOO.
func glooOp(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	def := netdef.NewOperator(typ, in, out, args...)
	def.Engine = proto.String(gloo.Engine)
	return def
}

// join creates rank's workspace with the common world "cw" of size ranks,
// meeting through a file store in dir; timeoutMs ≤ 0 keeps the default.
func join(dir string, rank, size int, timeoutMs int64) (*workspace.Workspace, error) {
	ws := workspace.New("")
	if err := ws.RunOperatorOnce(netdef.NewOperator("FileStoreHandlerCreate", nil, []string{"store"},
		netdef.ArgString("path", dir))); err != nil {
		return nil, err
	}
	args := []*netdef.Argument{netdef.ArgInt("size", int64(size)), netdef.ArgInt("rank", int64(rank)),
		netdef.ArgString("hostname", "127.0.0.1")}
	if timeoutMs > 0 {
		args = append(args, netdef.ArgInt("timeout_ms", timeoutMs))
	}
	create := glooOp("CreateCommonWorld", []string{"store"}, []string{"cw"}, args...)
	create.Name = proto.String("world")
	if err := ws.RunOperatorOnce(create); err != nil {
		return nil, err
	}
	return ws, nil
}

// ranks runs fn for ranks 0…n−1 at once, each on its own goroutine and
// workspace (a common world "cw" joined through a fresh file store), and
// fails t with every rank's error.
func ranks(t *testing.T, n int, fn func(rank int, ws *workspace.Workspace) error) {
	t.Helper()
	dir := t.TempDir()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			ws, err := join(dir, r, n, 20000)
			if err == nil {
				err = fn(r, ws)
			}
			errs[r] = err
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// values returns rank r's input k: count values drawn from a stream that
// depends on r and k only.
func values(r, k, count int) []float64 {
	rng := rand.New(rand.NewPCG(uint64(r), uint64(k)))
	v := make([]float64, count)
	for i := range v {
		v[i] = float64(rng.IntN(2001)-1000) / 8 // exact in every dtype
	}
	return v
}

func tensorOf(dtype blob.DataType, v []float64) *blob.Tensor {
	switch dtype {
	case blob.Float64:
		return blob.MustFromSlice(v, len(v))
	case blob.Int32:
		out := make([]int32, len(v))
		for i, x := range v {
			out[i] = int32(x * 8)
		}
		return blob.MustFromSlice(out, len(v))
	case blob.Int64:
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x * 8)
		}
		return blob.MustFromSlice(out, len(v))
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return blob.MustFromSlice(out, len(v))
}

// scale undoes tensorOf's scaling of integers.
func scale(dtype blob.DataType) float64 {
	if dtype == blob.Int32 || dtype == blob.Int64 {
		return 8
	}
	return 1
}

func TestAllreduce(t *testing.T) {
	for _, n := range []int{2, 3} {
		for _, dtype := range []blob.DataType{blob.Float32, blob.Float64, blob.Int32, blob.Int64} {
			for _, inputs := range []int{1, 2} {
				const count = 10007 // more than one chunk per rank, not a multiple of 3
				want := make([]float64, count)
				for r := range n {
					for k := range inputs {
						for i, v := range values(r, k, count) {
							want[i] += v
						}
					}
				}
				t.Run(fmt.Sprintf("%d-ranks/%v/%d-inputs", n, dtype, inputs), func(t *testing.T) {
					ranks(t, n, func(r int, ws *workspace.Workspace) error {
						names := []string{"x0", "x1"}[:inputs]
						for k, name := range names {
							if err := ws.FeedBlob(name, tensorOf(dtype, values(r, k, count))); err != nil {
								return err
							}
						}
						// Twice: the second run reuses the operator's tag.
						for range 2 {
							def := glooOp("Allreduce", append([]string{"cw"}, names...), names)
							if err := ws.RunOperatorOnce(def); err != nil {
								return err
							}
							for _, name := range names {
								got, err := ws.FetchBlob(name)
								if err != nil {
									return err
								}
								g := got.AsFloat64s()
								for i := range want {
									if g[i] != want[i]*scale(dtype) {
										return fmt.Errorf("%s[%d] = %v, want %v", name, i, g[i], want[i]*scale(dtype))
									}
								}
								if err := ws.FeedBlob(name, tensorOf(dtype, values(r, slicesIndex(names, name), count))); err != nil {
									return err
								}
							}
						}
						return nil
					})
				})
			}
		}
	}
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func TestBroadcast(t *testing.T) {
	const n, root, count = 3, 1, 777
	ranks(t, n, func(r int, ws *workspace.Workspace) error {
		for k, name := range []string{"a", "b"} {
			if err := ws.FeedBlob(name, tensorOf(blob.Float32, values(r, k, count))); err != nil {
				return err
			}
		}
		if err := ws.RunOperatorOnce(glooOp("Broadcast", []string{"cw", "a", "b"}, []string{"a", "b"}, netdef.ArgInt("root", root))); err != nil {
			return err
		}
		for k, name := range []string{"a", "b"} {
			got, err := ws.FetchBlob(name)
			if err != nil {
				return err
			}
			want := values(root, k, count)
			for i, g := range got.AsFloat64s() {
				if g != float64(float32(want[i])) {
					return fmt.Errorf("%s[%d] = %v, want root's %v", name, i, g, want[i])
				}
			}
		}
		return nil
	})
}

func TestAllgather(t *testing.T) {
	const n, count = 3, 5
	ranks(t, n, func(r int, ws *workspace.Workspace) error {
		for k, name := range []string{"a", "b"} {
			if err := ws.FeedBlob(name, tensorOf(blob.Float64, values(r, k, count))); err != nil {
				return err
			}
		}
		if err := ws.RunOperatorOnce(glooOp("Allgather", []string{"cw", "a", "b"}, []string{"y"})); err != nil {
			return err
		}
		got, err := ws.FetchBlob("y")
		if err != nil {
			return err
		}
		var want []float64
		for rr := range n {
			want = append(want, values(rr, 0, count)...)
			want = append(want, values(rr, 1, count)...)
		}
		g := got.AsFloat64s()
		if fmt.Sprint(got.Dims()) != fmt.Sprint([]int{len(want)}) {
			return fmt.Errorf("y is %v, want [%d]", got.Dims(), len(want))
		}
		for i := range want {
			if g[i] != want[i] {
				return fmt.Errorf("y[%d] = %v, want %v", i, g[i], want[i])
			}
		}
		return nil
	})
}

func TestBarrier(t *testing.T) {
	var arrived atomic.Int32
	ranks(t, 3, func(r int, ws *workspace.Workspace) error {
		if r == 2 {
			time.Sleep(200 * time.Millisecond)
		}
		arrived.Add(1)
		if err := ws.RunOperatorOnce(glooOp("Barrier", []string{"cw"}, nil)); err != nil {
			return err
		}
		if a := arrived.Load(); a != 3 {
			return fmt.Errorf("left the barrier when %d of 3 ranks had reached it", a)
		}
		return nil
	})
}

func TestDestroyCommonWorld(t *testing.T) {
	ranks(t, 2, func(r int, ws *workspace.Workspace) error {
		// Every rank has connected once the barrier returns.
		if err := ws.RunOperatorOnce(glooOp("Barrier", []string{"cw"}, nil)); err != nil {
			return err
		}
		if err := ws.RunOperatorOnce(glooOp("DestroyCommonWorld", []string{"cw"}, []string{"cw"})); err != nil {
			return err
		}
		if err := ws.FeedBlob("x", blob.MustFromSlice([]float32{1, 2}, 2)); err != nil {
			return err
		}
		err := ws.RunOperatorOnce(glooOp("Allreduce", []string{"cw", "x"}, []string{"x"}))
		if !errors.Is(err, gloo.ErrBroken) {
			return fmt.Errorf("Allreduce on a destroyed world: %v, want ErrBroken", err)
		}
		return nil
	})
}

func TestCommonWorldErrors(t *testing.T) {
	ws := workspace.New("")
	if err := ws.FeedBlob("x", blob.MustFromSlice([]float32{1}, 1)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		def  *netdef.OperatorDef
		want string
	}{
		{glooOp("CreateCommonWorld", []string{"x"}, []string{"cw"}, netdef.ArgInt("size", 2)), "not a store handler"},
		{glooOp("CreateCommonWorld", []string{"x"}, []string{"cw"}, netdef.ArgInt("size", 2), netdef.ArgInt("rank", 2)), "rank 2"},
		{glooOp("CreateCommonWorld", []string{"x"}, []string{"cw"}), "size 0"},
		{glooOp("CreateCommonWorld", []string{"x"}, []string{"cw"}, netdef.ArgInt("size", 2), netdef.ArgString("transport", "ibverbs")), "transport"},
		{glooOp("Allreduce", []string{"x", "x"}, []string{"x"}), "not a common world"},
		{glooOp("Barrier", []string{"x"}, nil), "not a common world"},
		{glooOp("Allreduce", []string{"x", "x"}, []string{"y"}), "in place"},
	} {
		err := ws.RunOperatorOnce(tc.def)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s%v: error %v, want it to mention %q", tc.def.GetType(), tc.def.GetArg(), err, tc.want)
		}
	}
}

// BenchmarkAllreduce times a 2-rank all-reduce of 1M floats on 127.0.0.1,
// both ranks in this process.
func BenchmarkAllreduce(b *testing.B) {
	const count = 1 << 20
	dir := b.TempDir()
	wss := make([]*workspace.Workspace, 2)
	var wg sync.WaitGroup
	var errs [2]error
	for r := range 2 {
		wg.Go(func() { wss[r], errs[r] = join(dir, r, 2, 0) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	def := glooOp("Allreduce", []string{"cw", "x"}, []string{"x"})
	for r, ws := range wss {
		if err := ws.FeedBlob("x", tensorOf(blob.Float32, values(r, 0, count))); err != nil {
			b.Fatal(err)
		}
		if err := ws.CreateNet(&netdef.NetDef{Name: proto.String("ar"), Op: []*netdef.OperatorDef{def}}, true); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(count * 4)
	b.ResetTimer()
	for range b.N {
		for r, ws := range wss {
			wg.Go(func() { errs[r] = ws.RunNet("ar", 1) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
