package main

import (
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef/caffe"
	"github.com/caffe2go/caffe2go/workspace"
)

const netWeightsUsage = `usage: caffe2go net weights -blob NAME [-o grid.png] [-zoom N] [-checkpoint ID] SOURCE

Draws a 4-D filter blob [filters, channels, height, width] (a convolution's
weights) as a PNG grid: one tile per filter and channel, filter by filter,
in gray from the blob's smallest value (black) to its largest (white).
SOURCE is an init net (.pb or .pbtxt, run to create the blob), a
.caffemodel (NAME is <layer>_w or <layer>_b, as "caffe convert" names
them), or a workspace root whose store holds checkpoints ("caffe train"
snapshots; NAME may omit the device prefix cpu_0/).

  caffe2go net weights -blob conv1_w examples/mnist/lenet_iter_10000.caffemodel -o conv1.png

Flags:
`

func cmdNetWeights(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("net weights", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, netWeightsUsage); fs.PrintDefaults() }
	name := fs.String("blob", "", "the blob to draw (required)")
	out := fs.String("o", "weights.png", "the PNG file to write")
	zoom := fs.Int("zoom", 8, "pixels per weight")
	ckpt := fs.Int64("checkpoint", -1, "the checkpoint of a workspace store to read (default: the latest)")
	// Flags may follow the source, as in "net weights -blob w SOURCE -o x.png".
	var sources []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		sources, args = append(sources, fs.Arg(0)), fs.Args()[1:]
	}
	if *name == "" || len(sources) != 1 || *zoom < 1 {
		fs.Usage()
		return usageError("net weights: want -blob NAME, a positive -zoom and one source")
	}
	t, err := weightsBlob(sources[0], *name, *ckpt, stderr)
	if err != nil {
		return err
	}
	img, err := filterGrid(t, *zoom)
	if err != nil {
		return fmt.Errorf("net weights: blob %s: %w", *name, err)
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("net weights: writing %s: %w", *out, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	d := t.Dims()
	fmt.Fprintf(stdout, "wrote %s: %d filters × %d channels of %d×%d\n", *out, d[0], d[1], d[2], d[3])
	return nil
}

// weightsBlob reads blob name from source (see netWeightsUsage).
func weightsBlob(source, name string, ckpt int64, stderr io.Writer) (*blob.Tensor, error) {
	if st, err := os.Stat(source); err == nil && st.IsDir() {
		ws := workspace.New(source)
		defer ws.Close()
		if ckpt < 0 {
			id, ok, err := ws.LatestCheckpoint()
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fmt.Errorf("net weights: the store of %s holds no checkpoint", source)
			}
			ckpt = id
		}
		if err := ws.LoadCheckpoint(ckpt); err != nil {
			return nil, fmt.Errorf("net weights: checkpoint %d of %s: %w", ckpt, source, err)
		}
		for _, n := range []string{name, "cpu_0/" + name} {
			if ws.HasBlob(n) {
				return ws.FetchBlob(n)
			}
		}
		return nil, fmt.Errorf("net weights: checkpoint %d of %s has no blob %s (nor cpu_0/%s)", ckpt, source, name, name)
	}
	if strings.EqualFold(filepath.Ext(source), ".caffemodel") {
		w, err := caffe.ReadWeights(source)
		if err != nil {
			return nil, err
		}
		layer, i := strings.TrimSuffix(name, "_w"), 0
		if strings.HasSuffix(name, "_b") {
			layer, i = strings.TrimSuffix(name, "_b"), 1
		}
		for _, l := range w.Layer {
			if l.GetName() == layer && i < len(l.Blobs) {
				b := l.Blobs[i]
				var dims []int
				for _, d := range b.GetShape().GetDim() {
					dims = append(dims, int(d))
				}
				if b.Shape == nil {
					dims = []int{int(b.GetNum()), int(b.GetChannels()), int(b.GetHeight()), int(b.GetWidth())}
				}
				return blob.FromSlice(b.Data, dims...)
			}
		}
		return nil, fmt.Errorf("net weights: %s has no blob %d of a layer %q (for blob %s)", source, i, layer, name)
	}
	def, err := readNet(source, stderr)
	if err != nil {
		return nil, err
	}
	ws := workspace.New(filepath.Dir(source))
	defer ws.Close()
	if err := ws.RunNetOnce(def); err != nil {
		return nil, fmt.Errorf("net weights: running init net %s: %w", source, err)
	}
	if !ws.HasBlob(name) {
		return nil, fmt.Errorf("net weights: init net %s does not create blob %s", source, name)
	}
	return ws.FetchBlob(name)
}

// filterGrid draws a float32 [n, c, h, w] blob as a gray grid of n·c tiles
// (zoom pixels per value, one-pixel gaps), about as many columns as rows.
func filterGrid(t *blob.Tensor, zoom int) (*image.Gray, error) {
	d := t.Dims()
	if len(d) != 4 || t.DataType() != blob.Float32 {
		return nil, fmt.Errorf("is %v %v, want a float32 blob of 4 dimensions", t.DataType(), d)
	}
	n, c, h, w := d[0], d[1], d[2], d[3]
	tiles := n * c
	if tiles == 0 || h == 0 || w == 0 {
		return nil, errors.New("is empty")
	}
	if int64(tiles)*int64(h*w)*int64(zoom*zoom) > 1<<28 {
		return nil, fmt.Errorf("of shape %v makes too large an image at zoom %d", d, zoom)
	}
	cols := int(math.Ceil(math.Sqrt(float64(tiles))))
	rows := (tiles + cols - 1) / cols
	tw, th := w*zoom+1, h*zoom+1
	img := image.NewGray(image.Rect(0, 0, cols*tw+1, rows*th+1))
	v := blob.Data[float32](t)
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	span := hi - lo
	if span == 0 {
		span = 1
	}
	for k := range tiles {
		x0, y0 := (k%cols)*tw+1, (k/cols)*th+1
		for y := range h {
			for x := range w {
				g := color.Gray{Y: uint8(math.Round(float64((v[(k*h+y)*w+x] - lo) / span * 255)))}
				for dy := range zoom {
					for dx := range zoom {
						img.SetGray(x0+x*zoom+dx, y0+y*zoom+dy, g)
					}
				}
			}
		}
	}
	return img, nil
}
