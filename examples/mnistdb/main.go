// Command mnistdb converts the MNIST idx files into a dataset DB, the way
// Caffe2's make_mnist_db does (one record per image: a TensorProtos with the
// image as BYTE [1, 28, 28] and the label as an INT32 scalar), then reads it
// back through the CreateDB and TensorProtosDBInput operators: it draws the
// first few images as text and measures how fast the whole DB reads.
//
//	go run ./examples/mnistdb
//	go run ./examples/mnistdb -images data/mnist/train-images-idx3-ubyte.gz \
//	    -labels data/mnist/train-labels-idx1-ubyte.gz -db examples/mnistdb/out/mnist-train
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/mnist"
	"github.com/caffe2go/caffe2go/workspace"
)

func main() {
	images := flag.String("images", "data/mnist/t10k-images-idx3-ubyte.gz", "idx file of the images (gzip or not)")
	labels := flag.String("labels", "data/mnist/t10k-labels-idx1-ubyte.gz", "idx file of the labels (gzip or not)")
	db := flag.String("db", "examples/mnistdb/out/mnist-t10k", "the DB to create (emptied when it exists)")
	dbType := flag.String("type", persist.DefaultDBType, "DB type: badger, minidb, leveldb or lmdb (lmdb needs a build with -tags lmdb)")
	show := flag.Int("show", 3, "how many records to draw")
	batch := flag.Int("batch", 100, "batch size of the read-throughput pass")
	flag.Parse()
	if _, err := run(os.Stdout, *images, *labels, *dbType, *db, *show, *batch); err != nil {
		log.Fatal(err)
	}
}

// stats is what a run measured.
type stats struct {
	records                int
	importTime, readTime   time.Duration
	readBytes              int // image and label bytes read in the timed pass
	firstLabels            []int32
	firstImages            [][]uint8
	readRecordsPerSec      float64
	readMegabytesPerSecond float64
}

// run imports the idx files into the DB at path, then reads it back.
func run(out io.Writer, images, labels, dbType, path string, show, batch int) (st stats, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return st, err
	}
	start := time.Now()
	if st.records, err = mnist.Import(images, labels, dbType, path); err != nil {
		return st, err
	}
	st.importTime = time.Since(start)
	fmt.Fprintf(out, "wrote %d records to %s DB %s in %v\n", st.records, dbType, path, st.importTime.Round(time.Millisecond))

	ws := workspace.New(filepath.Dir(path))
	createDB := netdef.NewOperator("CreateDB", nil, []string{"reader"},
		netdef.ArgString("db", filepath.Base(path)), netdef.ArgString("db_type", dbType))
	if err := ws.RunOperatorOnce(createDB); err != nil {
		return st, err
	}
	if show > 0 {
		if err := ws.RunOperatorOnce(netdef.NewOperator("TensorProtosDBInput", []string{"reader"}, []string{"data", "label"},
			netdef.ArgInt("batch_size", int64(show)))); err != nil {
			return st, err
		}
		data, err := ws.FetchBlob("data")
		if err != nil {
			return st, err
		}
		label, err := ws.FetchBlob("label")
		if err != nil {
			return st, err
		}
		fmt.Fprintf(out, "first batch: data %v, label %v\n", data, label)
		pixels, per := blob.Data[uint8](data), data.SizeFromDim(1)
		for i, l := range blob.Data[int32](label) {
			st.firstLabels = append(st.firstLabels, l)
			st.firstImages = append(st.firstImages, append([]uint8(nil), pixels[i*per:(i+1)*per]...))
			fmt.Fprintf(out, "record %d: label %d\n%s", i, l, draw(pixels[i*per:(i+1)*per], data.Dim(3)))
		}
	}

	// Read every record once more, in batches, from a fresh reader.
	if err := ws.RunOperatorOnce(createDB); err != nil {
		return st, err
	}
	batch = max(1, min(batch, st.records))
	input := netdef.NewOperator("TensorProtosDBInput", []string{"reader"}, []string{"data", "label"}, netdef.ArgInt("batch_size", int64(batch)))
	net := netdef.NewNet("read")
	net.AddOp(input)
	if err := ws.CreateNet(net, true); err != nil {
		return st, err
	}
	iters := st.records / batch
	start = time.Now()
	if err := ws.RunNet("read", iters); err != nil {
		return st, err
	}
	st.readTime = time.Since(start)
	data, _ := ws.FetchBlob("data")
	st.readBytes = iters * batch * (data.SizeFromDim(1) + 4)
	secs := st.readTime.Seconds()
	st.readRecordsPerSec = float64(iters*batch) / secs
	st.readMegabytesPerSecond = float64(st.readBytes) / 1e6 / secs
	fmt.Fprintf(out, "read %d records in batches of %d in %v: %.0f records/s, %.1f MB/s of tensor data\n",
		iters*batch, batch, st.readTime.Round(time.Millisecond), st.readRecordsPerSec, st.readMegabytesPerSecond)
	return st, nil
}

// draw renders a grey image (0 = white) as text, two pixel rows per line.
func draw(pixels []uint8, cols int) string {
	const ramp = " .:-=+*#%@"
	var sb strings.Builder
	rows := len(pixels) / cols
	for r := 0; r < rows; r += 2 {
		for c := range cols {
			v := int(pixels[r*cols+c])
			if r+1 < rows {
				v = (v + int(pixels[(r+1)*cols+c])) / 2
			}
			sb.WriteByte(ramp[v*(len(ramp)-1)/255])
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}
