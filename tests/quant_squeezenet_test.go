package tests

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// squeezeWidths are SqueezeNet 1.1's output channels (the zoo's predict
// net is 1.1: a 3×3 conv1 of stride 2): conv1, then each fire module's
// squeeze and expand widths, and the classifier.
var squeezeWidths = map[string]int{
	"conv1": 64, "fire2": 16, "fire3": 16, "fire4": 32, "fire5": 32,
	"fire6": 48, "fire7": 48, "fire8": 64, "fire9": 64, "conv10": zooClasses,
}

// squeezeWidth returns the output channels of the SqueezeNet conv that
// writes out.
func squeezeWidth(out string) int {
	module, layer, _ := strings.Cut(out, "/")
	w := squeezeWidths[module]
	if strings.HasPrefix(layer, "expand") {
		w *= 4
	}
	return w
}

// quantParams are an affine uint8 quantization.
type quantParams struct {
	scale float32
	zero  int32
}

// rangeQuant covers [lo, hi] (extended to hold 0) with 256 codes.
func rangeQuant(lo, hi float64) quantParams {
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	if hi-lo < 1e-8 {
		hi = lo + 1e-8
	}
	scale := (hi - lo) / 255
	return quantParams{float32(scale), int32(math.Max(0, math.Min(255, math.Round(-lo/scale))))}
}

func minMax(v []float32) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, float64(x)), math.Max(hi, float64(x))
	}
	return lo, hi
}

// squeezeImages returns n images [3, size, size] in [−1, 1]: smooth
// patterns of random frequency, phase and colour plus noise, so that the
// random-weight net's classes vary from image to image.
func squeezeImages(rng *rand.Rand, n, size int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		img := make([]float32, 3*size*size)
		for c := range 3 {
			a, b := rng.Float64()-0.5, rng.Float64()*0.6
			fx, fy, ph := rng.Float64()*0.3, rng.Float64()*0.3, rng.Float64()*6.3
			for y := range size {
				for x := range size {
					v := a + b*math.Sin(fx*float64(x)+fy*float64(y)+ph) + 0.3*(rng.Float64()-0.5)
					img[(c*size+y)*size+x] = float32(math.Max(-1, math.Min(1, v)))
				}
			}
		}
		out[i] = img
	}
	return out
}

// nchwToNHWC transposes [n, c, h, w] to [n, h, w, c].
func nchwToNHWC(x []float32, n, c, h, w int) []float32 {
	out := make([]float32, len(x))
	for b := range n {
		for ch := range c {
			for i := range h * w {
				out[(b*h*w+i)*c+ch] = x[(b*c+ch)*h*w+i]
			}
		}
	}
	return out
}

// TestSqueezeNetInt8AgreesWithFloat quantizes the model zoo's SqueezeNet
// predict net: every Conv (fused with its Relu) becomes Int8ConvRelu with
// uint8 weights and INT32 biases, MaxPool, Concat and the global
// AveragePool their Int8 forms, over NHWC int8 activations whose scales
// come from the float net's ranges on 10 calibration images. The weights
// are MSRA draws (fixed seed; the zoo's trained weights are not
// available), and the classifier's biases center its pre-activations over
// the calibration images so that the classes vary from image to image.
// On 50 other images the int8 net's top-1 class (the first of equal
// codes) must agree with the float net's on at least 90% of them.
func TestSqueezeNetInt8AgreesWithFloat(t *testing.T) {
	if testing.Short() {
		t.Skip("SqueezeNet at 227×227 on 60 images, float and int8: tens of seconds")
	}
	const size, calib, inputs = 227, 10, 50
	dir := filepath.Join(modelZooDir, "squeezenet")
	predict, err := netdef.ReadNetDef(filepath.Join(dir, "predict_net.pb"))
	if err != nil {
		t.Fatal(err)
	}
	input, _ := readValueInfo(t, filepath.Join(dir, "value_info.json"))
	rng := rand.New(rand.NewPCG(14, 7))
	images := squeezeImages(rng, calib+inputs, size)

	// The float net's parameters, shaped by running it op by op once.
	fws := workspace.New("")
	defer fws.Close()
	params := map[string]*blob.Tensor{}
	if err := fws.FeedBlob(input, blob.MustFromSlice(images[0], 1, 3, size, size)); err != nil {
		t.Fatal(err)
	}
	for _, op := range predict.Op {
		if op.GetType() == "Conv" {
			x, err := fws.FetchBlob(op.Input[0])
			if err != nil {
				t.Fatal(err)
			}
			c, m := x.Dim(1), squeezeWidth(op.Output[0])
			kh, kw := convKernel(op)
			fanIn := float64(c) * float64(kh*kw)
			w := make([]float32, m*c*int(kh*kw))
			for i := range w {
				w[i] = float32(rng.NormFloat64() * math.Sqrt(2/fanIn))
			}
			b := make([]float32, m)
			for i := range b {
				b[i] = float32(rng.Float64()*0.2 - 0.1)
			}
			params[op.Input[1]] = blob.MustFromSlice(w, m, c, int(kh), int(kw))
			params[op.Input[2]] = blob.MustFromSlice(b, m)
			for _, k := range op.Input[1:] {
				if err := fws.FeedBlob(k, params[k]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := fws.RunOperatorOnce(op); err != nil {
			t.Fatalf("%s: %v", op.GetType(), err)
		}
	}
	fnet := netdef.NetFromProto(predict).Clone("squeezenet_float", nil, nil).Proto()
	runFloat := func(imgs [][]float32) {
		x := make([]float32, 0, len(imgs)*3*size*size)
		for _, img := range imgs {
			x = append(x, img...)
		}
		if err := fws.FeedBlob(input, blob.MustFromSlice(x, len(imgs), 3, size, size)); err != nil {
			t.Fatal(err)
		}
		if err := fws.RunNetOnce(fnet); err != nil {
			t.Fatal(err)
		}
	}

	// The classifier's biases center its pre-activations over the
	// calibration images: b = −W·μ, μ the mean of its input's channels.
	// Random weights otherwise give every image one class.
	classifier := predict.Op[len(predict.Op)-1]
	for _, op := range predict.Op {
		if op.GetType() == "Conv" {
			classifier = op
		}
	}
	var mu []float64
	for i := 0; i < calib; i += 5 {
		runFloat(images[i : i+5])
		f, err := fws.FetchBlob(classifier.Input[0])
		if err != nil {
			t.Fatal(err)
		}
		c, hw := f.Dim(1), f.Dim(2)*f.Dim(3)
		if mu == nil {
			mu = make([]float64, c)
		}
		for k, v := range blob.Data[float32](f) {
			mu[k/hw%c] += float64(v) / float64(calib*hw)
		}
	}
	w10, b10 := params[classifier.Input[1]], params[classifier.Input[2]]
	for o := range b10.Dim(0) {
		s := 0.0
		for c, m := range mu {
			s += float64(blob.Data[float32](w10)[o*len(mu)+c]) * m
		}
		blob.Data[float32](b10)[o] = float32(-s)
	}
	if err := fws.FeedBlob(classifier.Input[2], b10); err != nil {
		t.Fatal(err)
	}

	// Calibration: the range of every activation over the calibration
	// images; a Concat's inputs take its range, since Int8Concat copies
	// codes.
	ranges := map[string][2]float64{}
	note := func(name string) {
		v, err := fws.FetchBlob(name)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := minMax(blob.Data[float32](v))
		if r, ok := ranges[name]; ok {
			lo, hi = math.Min(lo, r[0]), math.Max(hi, r[1])
		}
		ranges[name] = [2]float64{lo, hi}
	}
	for i := 0; i < calib; i += 5 {
		runFloat(images[i : i+5])
		note(input)
		for _, op := range predict.Op {
			note(op.Output[0])
		}
	}
	quant := map[string]quantParams{}
	for name, r := range ranges {
		quant[name] = rangeQuant(r[0], r[1])
	}
	alias := map[string]string{} // Dropout's output is its input
	for _, op := range predict.Op {
		switch op.GetType() {
		case "Concat":
			for _, in := range op.Input {
				quant[in] = quant[op.Output[0]]
			}
		case "Dropout":
			alias[op.Output[0]] = op.Input[0]
		}
	}
	name := func(n string) string {
		if a, ok := alias[n]; ok {
			return a
		}
		return n
	}

	// The int8 nets: an init net of Int8GivenTensorFill and
	// Int8GivenIntTensorFill, and the predict net.
	init := netdef.NewNet("squeezenet_int8_init")
	net := netdef.NewNet("squeezenet_int8")
	yq := func(q quantParams) []*netdef.Argument {
		return []*netdef.Argument{netdef.ArgFloat("Y_scale", q.scale), netdef.ArgInt("Y_zero_point", int64(q.zero))}
	}
	nhwc := netdef.ArgString("order", "NHWC")
	keep := func(op *netdef.OperatorDef) []*netdef.Argument {
		var args []*netdef.Argument
		for _, a := range op.Arg {
			if a.GetName() != "order" {
				args = append(args, a)
			}
		}
		return append(args, nhwc)
	}
	inQ := quant[input]
	net.Op("Int8Quantize", []string{"data_nhwc"}, []string{input}, yq(inQ)...)
	var logits string
	for i := 0; i < len(predict.Op); i++ {
		op := predict.Op[i]
		in, out := name(op.Input[0]), op.Output[0]
		switch op.GetType() {
		case "Conv":
			w, b := params[op.Input[1]], params[op.Input[2]]
			m, c, kh, kw := w.Dim(0), w.Dim(1), w.Dim(2), w.Dim(3)
			wq := rangeQuant(minMax(blob.Data[float32](w)))
			codes := make([]byte, w.Size())
			wd := blob.Data[float32](w)
			for o := range m {
				for ch := range c {
					for k := range kh * kw {
						v := math.RoundToEven(float64(wd[(o*c+ch)*kh*kw+k]/wq.scale)) + float64(wq.zero)
						codes[(o*kh*kw+k)*c+ch] = byte(math.Max(0, math.Min(255, v)))
					}
				}
			}
			bScale := quant[in].scale * wq.scale
			biases := make([]int64, m)
			for o, v := range blob.Data[float32](b) {
				biases[o] = int64(math.RoundToEven(float64(v / bScale)))
			}
			init.Op("Int8GivenTensorFill", nil, []string{op.Input[1]}, append(yq(wq),
				netdef.ArgInts("shape", int64(m), int64(kh), int64(kw), int64(c)), netdef.ArgString("values", string(codes)))...)
			init.Op("Int8GivenIntTensorFill", nil, []string{op.Input[2]}, netdef.ArgFloat("Y_scale", bScale),
				netdef.ArgInts("shape", int64(m)), netdef.ArgInts("values", biases...))
			typ := "Int8Conv"
			if i+1 < len(predict.Op) && predict.Op[i+1].GetType() == "Relu" && predict.Op[i+1].Input[0] == out {
				typ = "Int8ConvRelu"
				i++
			}
			net.Op(typ, []string{in, op.Input[1], op.Input[2]}, []string{out}, append(keep(op), yq(quant[out])...)...)
		case "MaxPool", "AveragePool":
			quant[out] = quant[in]
			net.Op("Int8"+op.GetType(), []string{in}, []string{out}, append(keep(op), yq(quant[in])...)...)
		case "Concat":
			ins := make([]string, len(op.Input))
			for k, n := range op.Input {
				ins[k] = name(n)
			}
			net.Op("Int8Concat", ins, []string{out}, append(keep(op), yq(quant[out])...)...)
		case "Dropout":
		case "Softmax":
			logits = in
			net.Op("Int8Dequantize", []string{in}, []string{"logits"})
		default:
			t.Fatalf("no int8 form for %s", op.GetType())
		}
	}
	qws := workspace.New("")
	defer qws.Close()
	if err := qws.RunNetOnce(init); err != nil {
		t.Fatal(err)
	}
	if err := qws.FeedBlob("data_nhwc", blob.MustFromSlice(make([]float32, 5*size*size*3), 5, size, size, 3)); err != nil {
		t.Fatal(err)
	}
	if err := qws.CreateNet(net, false); err != nil {
		t.Fatal(err)
	}

	agree, ties, classes := 0, 0, map[int]bool{}
	var floatTime, int8Time time.Duration
	var maxGap float64
	for i := calib; i < calib+inputs; i += 5 {
		batch := images[i : i+5]
		start := time.Now()
		runFloat(batch)
		floatTime += time.Since(start)
		pf, err := fws.FetchBlob(predict.Op[len(predict.Op)-1].Output[0])
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, 0, 5*3*size*size)
		for _, img := range batch {
			x = append(x, img...)
		}
		if err := qws.FeedBlob("data_nhwc", blob.MustFromSlice(nchwToNHWC(x, 5, 3, size, size), 5, size, size, 3)); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		if err := qws.RunNet(net.Name(), 1); err != nil {
			t.Fatal(err)
		}
		int8Time += time.Since(start)
		lq, err := qws.FetchBlob("logits")
		if err != nil {
			t.Fatal(err)
		}
		lf, err := fws.FetchBlob(logits)
		if err != nil {
			t.Fatal(err)
		}
		for b := range 5 {
			pfb := blob.Data[float32](pf)[b*zooClasses : (b+1)*zooClasses]
			lqb := blob.Data[float32](lq)[b*zooClasses : (b+1)*zooClasses]
			lfb := blob.Data[float32](lf)[b*zooClasses : (b+1)*zooClasses]
			top := argmax(pfb)
			topQ := argmax(lqb)
			classes[top] = true
			n := 0
			for _, v := range lqb {
				if v == lqb[topQ] {
					n++
				}
			}
			if n > 1 {
				ties++
			}
			if top == topQ {
				agree++
			}
			for k := range lfb {
				maxGap = math.Max(maxGap, math.Abs(float64(lfb[k]-lqb[k])))
			}
		}
	}
	msg := fmt.Sprintf("int8 top-1 agrees with float on %d of %d images (%.0f%%); the float net predicts %d distinct classes; %d int8 top-1s tie; largest |float − int8| logit %.4g (logit code step %.4g)",
		agree, inputs, 100*float64(agree)/inputs, len(classes), ties, maxGap, quant[logits].scale)
	t.Log(msg)
	t.Logf("float net %v, int8 net %v for %d images", floatTime, int8Time, inputs)
	if agree < inputs*9/10 {
		t.Error(msg)
	}
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
