// Command caffe trains a Caffe net the way Caffe's tutorials do, with a
// solver prototxt and a train/test net prototxt whose Data layers read
// Caffe Datum records: here the feature MLP of Caffe's tabular-data
// walkthrough (a CSV converted into a LevelDB, then "caffe train"), on
// the 8×8 handwritten digits (1,797 rows of 64 features, 10 classes).
//
//	go run ./examples/caffe                 # 2 devices
//	go run ./examples/caffe -devices 1 -db-type lmdb   # LMDB needs -tags lmdb
//
// It writes the first 1,500 rows to digits_train_leveldb and the other
// 297 to digits_test_leveldb under -out (Datum records of 64×1×1 float
// values, keys %08d, as Caffe's converters write them), copies
// mlp_solver.prototxt and mlp_train_test.prototxt there, and trains with
// package brew/dataparallel/caffesolver, as
//
//	caffe2go caffe train -solver examples/caffe/out/mlp_solver.prototxt -devices 2
//
// would: Caffe's progress lines, a test every 500 iterations, and a
// snapshot at the end (digits_mlp_iter_1500.caffemodel and a checkpoint
// in the workspace store under -out).
package main

import (
	"bufio"
	"compress/gzip"
	"context"
	_ "embed"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew/dataparallel/caffesolver"
	"github.com/caffe2go/caffe2go/netdef/caffe"
	"github.com/caffe2go/caffe2go/workspace"

	_ "github.com/caffe2go/caffe2go/operators/std"
)

//go:embed mlp_solver.prototxt
var solverText string

//go:embed mlp_train_test.prototxt
var netText string

// trainRows is the number of rows trained on; the rest are tested.
const trainRows = 1500

func main() {
	csvPath := flag.String("csv", "examples/mlp/testdata/digits.csv.gz", "the data: rows of 64 features and the class (gzip-compressed or not)")
	out := flag.String("out", "examples/caffe/out", "folder for the DBs, the prototxts, the snapshots and the workspace store (recreated)")
	devices := flag.Int("devices", 2, "number of CPU devices")
	dbType := flag.String("db-type", "leveldb", "leveldb, or lmdb (in builds with -tags lmdb)")
	flag.Parse()
	acc, err := run(context.Background(), os.Stdout, *csvPath, *out, *dbType, *devices)
	if err != nil {
		fmt.Fprintln(os.Stderr, "caffe example:", err)
		os.Exit(1)
	}
	fmt.Printf("test accuracy %.4f on %d rows\n", acc, 1797-trainRows)
}

// run converts the CSV, writes the prototxts and trains; it returns the
// last test's accuracy.
func run(ctx context.Context, log io.Writer, csvPath, out, dbType string, devices int) (float64, error) {
	images, labels, err := readCSV(csvPath)
	if err != nil {
		return 0, err
	}
	if err := os.RemoveAll(out); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, err
	}
	n := len(labels)
	backend := strings.ToUpper(dbType)
	for _, part := range []struct {
		name   string
		lo, hi int
	}{{"digits_train_leveldb", 0, trainRows}, {"digits_test_leveldb", trainRows, n}} {
		x, err := blob.FromSlice(images[part.lo*64:part.hi*64], part.hi-part.lo, 64, 1, 1)
		if err != nil {
			return 0, err
		}
		y, err := blob.FromSlice(labels[part.lo:part.hi], part.hi-part.lo)
		if err != nil {
			return 0, err
		}
		k, err := caffesolver.WriteDatumDB(dbType, filepath.Join(out, part.name), x, y)
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(log, "wrote %d rows to %s (%s)\n", k, filepath.Join(out, part.name), dbType)
	}
	net := strings.ReplaceAll(netText, "backend: LEVELDB", "backend: "+backend)
	for name, text := range map[string]string{"mlp_solver.prototxt": solverText, "mlp_train_test.prototxt": net} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(text), 0o644); err != nil {
			return 0, err
		}
	}
	solverPath := filepath.Join(out, "mlp_solver.prototxt")
	sp, err := caffe.ReadSolver(solverPath)
	if err != nil {
		return 0, err
	}
	ws := workspace.New(out)
	defer ws.Close()
	s, err := caffesolver.New(caffesolver.Options{Solver: sp, Dir: out, Devices: devices, Workspace: ws, Log: log})
	if err != nil {
		return 0, err
	}
	outs, err := s.Solve(ctx)
	if err != nil {
		return 0, err
	}
	for _, o := range outs {
		if o.Name == "accuracy" {
			return o.Value, nil
		}
	}
	return 0, fmt.Errorf("the test net has no accuracy output")
}

// readCSV reads rows of 64 features and a class into float32 features
// (row-major) and int32 labels.
func readCSV(path string) ([]float32, []int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		if r, err = gzip.NewReader(br); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var x []float32
	var y []int32
	for i, row := range rows {
		if len(row) != 65 {
			return nil, nil, fmt.Errorf("%s: row %d has %d fields, want 65", path, i+1, len(row))
		}
		for j, v := range row {
			f, err := strconv.ParseFloat(v, 32)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: row %d field %d: %w", path, i+1, j+1, err)
			}
			if j < 64 {
				x = append(x, float32(f))
			} else {
				y = append(y, int32(f))
			}
		}
	}
	if len(y) <= trainRows {
		return nil, nil, fmt.Errorf("%s: %d rows, want more than %d", path, len(y), trainRows)
	}
	return x, y, nil
}
