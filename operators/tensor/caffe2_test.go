package tensor

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// readNpy reads a little-endian, C-ordered .npy file of float32, int32 or
// int64 elements.
func readNpy(path string) (*blob.Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 10 || string(b[1:6]) != "NUMPY" {
		return nil, fmt.Errorf("%s: not a .npy file", path)
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:10])), 10
	default:
		hlen, start = int(binary.LittleEndian.Uint32(b[8:12])), 12
	}
	header, data := string(b[start:start+hlen]), b[start+hlen:]
	descr := regexp.MustCompile(`'descr':\s*'([^']*)'`).FindStringSubmatch(header)
	shapeM := regexp.MustCompile(`'shape':\s*\(([^)]*)\)`).FindStringSubmatch(header)
	if descr == nil || shapeM == nil || strings.Contains(header, "'fortran_order': True") {
		return nil, fmt.Errorf("%s: unsupported header %q", path, header)
	}
	shape := []int{}
	for _, f := range strings.Split(shapeM[1], ",") {
		if f = strings.TrimSpace(f); f != "" {
			d, err := strconv.Atoi(f)
			if err != nil {
				return nil, err
			}
			shape = append(shape, d)
		}
	}
	switch descr[1] {
	case "<f4":
		v := make([]float32, len(data)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		return blob.FromSlice(v, shape...)
	case "<i4":
		v := make([]int32, len(data)/4)
		for i := range v {
			v[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
		}
		return blob.FromSlice(v, shape...)
	case "<i8":
		v := make([]int64, len(data)/8)
		for i := range v {
			v[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
		}
		return blob.FromSlice(v, shape...)
	}
	return nil, fmt.Errorf("%s: unsupported dtype %s", path, descr[1])
}

func readOpDef(t *testing.T, path string) *netdef.OperatorDef {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	def := &netdef.OperatorDef{}
	if err := proto.Unmarshal(b, def); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return def
}

// normalized makes two operator definitions comparable the way Caffe2's
// serialized tests compare them: arguments sorted by name, an absent name
// equal to an empty one.
func normalized(op *netdef.OperatorDef) *netdef.OperatorDef {
	c := optest.SortedArgs(op)
	c.Name = proto.String(c.GetName())
	return c
}

// TestCaffe2Serialized runs Caffe2's serialized operator tests for this
// family: the outputs must match within 1e-4 and the gradient definitions
// exactly.
func TestCaffe2Serialized(t *testing.T) {
	dirs, err := filepath.Glob("testdata/caffe2-optests/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no serialized tests found: %v", err)
	}
	for _, dir := range dirs {
		if filepath.Ext(dir) == ".md" {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var meta struct {
				Inputs  []struct{ File string }
				Outputs []struct{ File string }
			}
			mb, err := os.ReadFile(filepath.Join(dir, "meta.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(mb, &meta); err != nil {
				t.Fatal(err)
			}
			def := readOpDef(t, filepath.Join(dir, "op.pb"))
			var in []*blob.Tensor
			for _, f := range meta.Inputs[:len(def.Input)] {
				x, err := readNpy(filepath.Join(dir, f.File))
				if err != nil {
					t.Fatal(err)
				}
				in = append(in, x)
			}
			got := runOp(t, def, in...)
			for i, f := range meta.Outputs {
				want, err := readNpy(filepath.Join(dir, f.File))
				if err != nil {
					t.Fatal(err)
				}
				g := got[i]
				if g.DataType() != want.DataType() || fmt.Sprint(g.Dims()) != fmt.Sprint(want.Dims()) {
					t.Fatalf("output %d: %v, want %v", i, g, want)
				}
				gv, wv := g.AsFloat64s(), want.AsFloat64s()
				for k := range wv {
					if math.Abs(gv[k]-wv[k]) > 1e-4+1e-4*math.Abs(wv[k]) {
						t.Errorf("output %d element %d: %g, want %g", i, k, gv[k], wv[k])
					}
				}
			}

			grads, _ := filepath.Glob(filepath.Join(dir, "grad_*.pb"))
			if len(grads) == 0 {
				return
			}
			gout := make([]operators.Gradient, len(def.Output))
			for i, o := range def.Output {
				gout[i] = operators.Dense(o + "_grad")
			}
			gd, err := operators.GetGradientDefs(def, gout)
			if err != nil {
				t.Fatal(err)
			}
			if len(gd.Ops) != len(grads) {
				t.Fatalf("%d gradient operators, Caffe2 has %d", len(gd.Ops), len(grads))
			}
			for i := range grads {
				want := readOpDef(t, filepath.Join(dir, fmt.Sprintf("grad_%d.pb", i)))
				if g, w := normalized(gd.Ops[i]), normalized(want); !proto.Equal(g, w) {
					t.Errorf("gradient operator %d:\n got %v\nwant %v", i, g, w)
				}
			}
		})
	}
}
