package caffe_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/netdef/caffe"
)

// opSummary writes an operator as "Type(in,…)->(out,…)".
func opSummary(op *netdef.OperatorDef) string {
	return fmt.Sprintf("%s(%s)->(%s)", op.GetType(), strings.Join(op.Input, ","), strings.Join(op.Output, ","))
}

func argOf(op *netdef.OperatorDef, name string) string {
	a := netdef.FindArg(op.Arg, name)
	switch {
	case a == nil:
		return "-"
	case len(a.Ints) > 0:
		return fmt.Sprint(a.Ints)
	case a.I != nil:
		return fmt.Sprint(a.GetI())
	case a.F != nil:
		return fmt.Sprint(a.GetF())
	case a.S != nil:
		return string(a.S)
	}
	return "?"
}

func TestConvertLeNet(t *testing.T) {
	net, weights := readLeNet(t, "lenet.prototxt")
	conv, err := caffe.Convert(net, weights)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, op := range conv.Predict.Op {
		ops = append(ops, opSummary(op))
	}
	want := []string{
		"Conv(data,conv1_w,conv1_b)->(conv1)",
		"MaxPool(conv1)->(pool1)",
		"Conv(pool1,conv2_w,conv2_b)->(conv2)",
		"MaxPool(conv2)->(pool2)",
		"FC(pool2,ip1_w,ip1_b)->(ip1)",
		"Relu(ip1)->(ip1)",
		"FC(ip1,ip2_w,ip2_b)->(ip2)",
		"Softmax(ip2)->(prob)",
	}
	if !slices.Equal(ops, want) {
		t.Errorf("predict net:\n%s\nwant\n%s", strings.Join(ops, "\n"), strings.Join(want, "\n"))
	}
	pool := conv.Predict.Op[1]
	if got := argOf(pool, "kernels") + argOf(pool, "strides") + argOf(pool, "pads"); got != "[2 2][2 2][0 0 0 0]" {
		t.Errorf("pool1 kernels, strides, pads: %s", got)
	}
	wantInit := map[string]string{
		"conv1_w": "[20 1 5 5]", "conv1_b": "[20]", "conv2_w": "[50 20 5 5]", "conv2_b": "[50]",
		"ip1_w": "[500 800]", "ip1_b": "[500]", "ip2_w": "[10 500]", "ip2_b": "[10]",
	}
	if len(conv.Init.Op) != len(wantInit) {
		t.Fatalf("init net has %d ops, want %d", len(conv.Init.Op), len(wantInit))
	}
	for _, op := range conv.Init.Op {
		name := op.Output[0]
		if op.GetType() != "GivenTensorFill" || argOf(op, "shape") != wantInit[name] {
			t.Errorf("init op %s shape %s, want GivenTensorFill of %s", opSummary(op), argOf(op, "shape"), wantInit[name])
		}
		n := 1
		for _, d := range netdef.FindArg(op.Arg, "shape").Ints {
			n *= int(d)
		}
		if got := len(netdef.FindArg(op.Arg, "values").Floats); got != n {
			t.Errorf("%s has %d values, want %d", name, got, n)
		}
	}
	if got := strings.Join(conv.Predict.ExternalInput, " "); got != "data conv1_w conv1_b conv2_w conv2_b ip1_w ip1_b ip2_w ip2_b" {
		t.Errorf("external inputs %s", got)
	}
	if got := fmt.Sprint(conv.Predict.ExternalOutput); got != "[prob]" {
		t.Errorf("external outputs %s", got)
	}
	// The prototxt's 64×1×28×28 input gives every shape.
	var shapes []string
	for _, l := range conv.Layers {
		shapes = append(shapes, fmt.Sprintf("%s%v", l.Name, l.Shapes))
	}
	wantShapes := "data[[64 1 28 28]] conv1[[64 20 24 24]] pool1[[64 20 12 12]] conv2[[64 50 8 8]] pool2[[64 50 4 4]] " +
		"ip1[[64 500]] relu1[[64 500]] ip2[[64 10]] prob[[64 10]]"
	if got := strings.Join(shapes, " "); got != wantShapes {
		t.Errorf("shapes\n%s\nwant\n%s", got, wantShapes)
	}
}

// blob makes a BlobProto of the given shape holding 0.5, 1, 1.5, …
func blob(dims ...int64) *caffe.BlobProto {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	b := &caffe.BlobProto{Shape: &caffe.BlobShape{Dim: dims}}
	for i := range n {
		b.Data = append(b.Data, float32(i+1)/2)
	}
	return b
}

// weightsOf makes a caffemodel holding the given blobs per layer.
func weightsOf(layers map[string][]*caffe.BlobProto) *caffe.NetParameter {
	w := &caffe.NetParameter{}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range layers {
			if !yield(k) {
				return
			}
		}
	}) {
		w.Layer = append(w.Layer, &caffe.LayerParameter{Name: proto.String(name), Blobs: layers[name]})
	}
	return w
}

const input4 = `layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 dim: 6 dim: 6 } } }
`

func TestConvertTranslations(t *testing.T) {
	for _, tc := range []struct {
		name     string
		prototxt string
		weights  map[string][]*caffe.BlobProto
		opts     []caffe.Option
		want     []string // operator summaries, with selected arguments
		args     []string // argument names shown after each operator
	}{{
		name: "max pooling rounds up with a tail pad",
		prototxt: input4 + `layer { name: "p" type: "Pooling" bottom: "x" top: "p"
			pooling_param { pool: MAX kernel_size: 3 stride: 2 } }`,
		args: []string{"pads", "legacy_pad", "count_include_pad"},
		want: []string{"MaxPool(x)->(p) [0 0 1 1] - -"},
	}, {
		name: "pooling of an unknown size keeps Caffe's rule at run time",
		prototxt: `layer { name: "d" type: "Data" top: "x" data_param { batch_size: 2 } }
		layer { name: "p" type: "Pooling" bottom: "x" top: "p" pooling_param { pool: MAX kernel_size: 3 stride: 2 pad: 1 } }`,
		args: []string{"pads", "legacy_pad"},
		want: []string{"MaxPool(x)->(p) [1 1 1 1] 3"},
	}, {
		name: "FLOOR rounding is Caffe2's",
		prototxt: input4 + `layer { name: "p" type: "Pooling" bottom: "x" top: "p"
			pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 round_mode: FLOOR } }`,
		args: []string{"pads", "legacy_pad", "count_include_pad"},
		want: []string{"AveragePool(x)->(p) [1 1 1 1] - 1"},
	}, {
		name: "average pooling past the padding pads with zeros first",
		prototxt: input4 + `layer { name: "p" type: "Pooling" bottom: "x" top: "p"
			pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 } }`,
		args: []string{"pads", "count_include_pad"},
		want: []string{"PadImage(x)->(p_padded) [1 1 1 1] -", "AveragePool(p_padded)->(p) [0 0 1 1] -"},
	}, {
		name: "global pooling",
		prototxt: input4 + `layer { name: "p" type: "Pooling" bottom: "x" top: "p"
			pooling_param { pool: AVE global_pooling: true } }`,
		args: []string{"global_pooling", "kernels"},
		want: []string{"AveragePool(x)->(p) 1 -"},
	}, {
		name:     "softmax along a middle axis",
		prototxt: input4 + `layer { name: "s" type: "Softmax" bottom: "x" top: "s" }`,
		args:     []string{"axes", "axis"},
		want:     []string{"Transpose(x)->(s_t) [0 2 3 1] -", "Softmax(s_t)->(s_t_softmax) - 3", "Transpose(s_t_softmax)->(s) [0 3 1 2] -"},
	}, {
		name: "batch norm merged with the scale after it",
		prototxt: input4 + `layer { name: "bn" type: "BatchNorm" bottom: "x" top: "x" }
			layer { name: "sc" type: "Scale" bottom: "x" top: "x" scale_param { bias_term: true } }`,
		weights: map[string][]*caffe.BlobProto{"bn": {blob(3), blob(3), blob(1)}, "sc": {blob(3), blob(3)}},
		args:    []string{"is_test", "epsilon"},
		want:    []string{"SpatialBN(x,sc_w,sc_b,bn_mean,bn_var)->(x) 1 1e-05"},
	}, {
		name: "batch norm whose output another layer reads is not merged",
		prototxt: input4 + `layer { name: "bn" type: "BatchNorm" bottom: "x" top: "b" }
			layer { name: "sc" type: "Scale" bottom: "b" top: "s" }
			layer { name: "r" type: "ReLU" bottom: "b" top: "r" }`,
		weights: map[string][]*caffe.BlobProto{"bn": {blob(3), blob(3), blob(1)}, "sc": {blob(3)}},
		args:    []string{"broadcast", "axis"},
		want:    []string{"SpatialBN(x,bn_scale,bn_bias,bn_mean,bn_var)->(b) - -", "Mul(b,sc_w)->(s) 1 1", "Relu(b)->(r) - -"},
	}, {
		name: "an in-place top of an operator that cannot run in place is renamed",
		prototxt: input4 + `layer { name: "n" type: "LRN" bottom: "x" top: "x" }
			layer { name: "r" type: "ReLU" bottom: "x" top: "x" relu_param { negative_slope: 0.5 } }`,
		args: []string{"size", "alpha"},
		want: []string{"LRN(x)->(x_1) 5 1", "LeakyRelu(x_1)->(x_1) - 0.5"},
	}, {
		name: "eltwise coefficients and products",
		prototxt: input4 + `layer { name: "e" type: "Eltwise" bottom: "x" bottom: "x" top: "e" eltwise_param { coeff: 1 coeff: -1 } }
			layer { name: "p" type: "Eltwise" bottom: "x" bottom: "e" bottom: "x" top: "p" eltwise_param { operation: PROD } }`,
		want: []string{"WeightedSum(x,e_coeff0,x,e_coeff1)->(e)", "Mul(x,e)->(p)", "Mul(p,x)->(p)"},
	}, {
		name: "power",
		prototxt: input4 + `layer { name: "a" type: "Power" bottom: "x" top: "a" power_param { power: 2 scale: 3 shift: 1 } }
			layer { name: "b" type: "Power" bottom: "x" top: "b" power_param { power: 0 } }
			layer { name: "c" type: "Power" bottom: "x" top: "c" }`,
		args: []string{"scale", "exponent", "value"},
		want: []string{"Scale(x)->(a) 3 - -", "Add(a,a_shift)->(a) - - -", "Pow(a)->(a) - 2 -", "ConstantFill(x)->(b) - - 1", "Copy(x)->(c) - - -"},
	}, {
		name: "slice, split, flatten, reshape",
		prototxt: input4 + `layer { name: "s" type: "Slice" bottom: "x" top: "a" top: "b" slice_param { slice_point: 1 } }
			layer { name: "sp" type: "Split" bottom: "a" top: "a" top: "a2" }
			layer { name: "f" type: "Flatten" bottom: "b" top: "f" flatten_param { axis: 1 end_axis: 2 } }
			layer { name: "r" type: "Reshape" bottom: "a2" top: "r" reshape_param { shape { dim: 0 dim: 3 dim: -1 } axis: 1 } }`,
		args: []string{"split", "shape"},
		want: []string{"Split(x)->(a,b) [1 2] -", "Copy(a)->(a2) - -", "Reshape(b)->(f,f_old_shape) - [0 -1 6]", "Reshape(a2)->(r,r_old_shape) - [0 0 3 -1]"},
	}, {
		name: "inner product with axis, transpose, no bias",
		prototxt: input4 + `layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
			inner_product_param { num_output: 4 axis: 2 transpose: true bias_term: false } }`,
		weights: map[string][]*caffe.BlobProto{"ip": {blob(36, 4)}},
		args:    []string{"axis"},
		want:    []string{"FCTransposed(x,ip_w,ip_b)->(y) 2"},
	}, {
		name: "data layer preprocessing",
		prototxt: `layer { name: "d" type: "Data" top: "x" top: "y"
			transform_param { scale: 0.5 mean_value: 1 crop_size: 4 } data_param { batch_size: 2 } }`,
		opts: []caffe.Option{caffe.InputShape("x", 2, 3, 7, 6)},
		args: []string{"pads", "scale"},
		want: []string{"PadImage(x)->(x_transformed) [-1 -1 -2 -1] -", "Sub(x_transformed,d_mean)->(x_transformed) - -", "Scale(x_transformed)->(x_transformed) - 0.5"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			net, err := caffe.ParseNet([]byte(tc.prototxt))
			if err != nil {
				t.Fatal(err)
			}
			conv, err := caffe.Convert(net, weightsOf(tc.weights), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, op := range conv.Predict.Op {
				s := opSummary(op)
				for _, a := range tc.args {
					s += " " + argOf(op, a)
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("operators:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestConvertErrors(t *testing.T) {
	conv := map[string][]*caffe.BlobProto{"c": {blob(4, 3, 3, 3), blob(4)}}
	for _, tc := range []struct {
		name, prototxt string
		weights        map[string][]*caffe.BlobProto
		want           string
		unsupported    bool
	}{
		{"unsupported type", input4 + `layer { name: "e" type: "ELU" bottom: "x" top: "e" }`, nil,
			`layer "e" (ELU): the layer type is not supported`, true},
		{"no weights", input4 + `layer { name: "c" type: "Convolution" bottom: "x" top: "c" convolution_param { num_output: 4 kernel_size: 3 } }`, nil,
			`layer "c" (Convolution): the weights have no blobs for this layer (want weights and bias)`, false},
		{"weights of the wrong shape", input4 + `layer { name: "c" type: "Convolution" bottom: "x" top: "c" convolution_param { num_output: 4 kernel_size: 5 } }`, conv,
			`layer "c" (Convolution): blob 0 (weights) has shape [4 3 3 3], want [4 3 5 5]`, false},
		{"stochastic pooling", input4 + `layer { name: "p" type: "Pooling" bottom: "x" top: "p" pooling_param { pool: STOCHASTIC kernel_size: 2 } }`, nil,
			`layer "p" (Pooling): pool STOCHASTIC is not supported`, true},
		{"mean file", `layer { name: "d" type: "Data" top: "x" transform_param { mean_file: "m.binaryproto" } }`, nil,
			`layer "d" (Data): transform_param mean_file "m.binaryproto" is not supported`, true},
		{"ignore label", input4 + `layer { name: "l" type: "Input" top: "y" input_param { shape { dim: 2 } } }
			layer { name: "f" type: "Flatten" bottom: "x" top: "f" }
			layer { name: "s" type: "SoftmaxWithLoss" bottom: "f" bottom: "y" top: "s" loss_param { ignore_label: 0 } }`, nil,
			`layer "s" (SoftmaxWithLoss): loss_param ignore_label is not supported`, true},
		{"unknown bottom", input4 + `layer { name: "r" type: "ReLU" bottom: "nope" top: "r" }`, nil,
			`layer "r" (ReLU): bottom "nope" is not produced by an earlier layer or an input`, false},
		{"top produced twice", input4 + `layer { name: "r" type: "ReLU" bottom: "x" top: "y" }
			layer { name: "s" type: "Sigmoid" bottom: "x" top: "y" }`, nil,
			`layer "s" (Sigmoid): top "y" is already produced by an earlier layer`, false},
		{"softmax of an unknown shape", `layer { name: "d" type: "HDF5Data" top: "x" }
			layer { name: "s" type: "Softmax" bottom: "x" top: "s" }`, nil,
			`layer "s" (Softmax): needs the shape of bottom "x", which is unknown: give the net's input shape with InputShape`, false},
		{"average pooling with padding of an unknown size", `layer { name: "d" type: "Data" top: "x" }
			layer { name: "p" type: "Pooling" bottom: "x" top: "p" pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 } }`, nil,
			`layer "p" (Pooling): average pooling with pad [1 1] needs the size of bottom "x"`, false},
		{"pad as large as the kernel", input4 + `layer { name: "p" type: "Pooling" bottom: "x" top: "p" pooling_param { kernel_size: 2 pad: 2 } }`, nil,
			`layer "p" (Pooling): pad [2 2] must be smaller than kernel [2 2]`, false},
		{"eltwise shapes", input4 + `layer { name: "i" type: "Input" top: "z" input_param { shape { dim: 2 dim: 3 } } }
			layer { name: "e" type: "Eltwise" bottom: "x" bottom: "z" top: "e" }`, nil,
			`layer "e" (Eltwise): bottom 1 "z" has shape [2 3], bottom 0 "x" has [2 3 6 6]`, false},
		{"batch statistics", input4 + `layer { name: "bn" type: "BatchNorm" bottom: "x" top: "x" batch_norm_param { use_global_stats: false } }`, nil,
			`layer "bn" (BatchNorm): use_global_stats false (normalizing with the batch's statistics at inference) is not supported`, true},
		{"reshape count", input4 + `layer { name: "r" type: "Reshape" bottom: "x" top: "r" reshape_param { shape { dim: 5 dim: -1 } } }`, nil,
			`layer "r" (Reshape): reshape_param shape [5 -1] does not divide bottom of shape [2 3 6 6]`, false},
		{"V0 layers", `layers { layer { name: "old" type: "conv" } }`, nil,
			`is in the V0 format`, true},
		{"both formats", input4 + `layers { name: "v1" type: RELU }`, nil,
			`the net has layers in both the current (layer) and the V1 (layers) format`, false},
		{"InputShape of no blob", input4, nil, `InputShape names blob "nope"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			net, err := caffe.ParseNet([]byte(tc.prototxt))
			if err != nil {
				t.Fatal(err)
			}
			var opts []caffe.Option
			if tc.name == "InputShape of no blob" {
				opts = append(opts, caffe.InputShape("nope", 1))
			}
			_, err = caffe.Convert(net, weightsOf(tc.weights), opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if got := errors.Is(err, caffe.ErrUnsupported); got != tc.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupported) = %v, want %v", got, tc.unsupported)
			}
		})
	}
}

// TestLegacyBlobShapes reads blobs written before N-D shapes
// (num/channels/height/width), as V1 caffemodels hold them: a bias of
// [1 1 1 N] and InnerProduct weights of [1 1 N K] are Caffe's [N] and
// [N K]; other leading dimensions than 1 are a mismatch.
func TestLegacyBlobShapes(t *testing.T) {
	legacy := func(n, c, h, w int32) *caffe.BlobProto {
		b := &caffe.BlobProto{Num: proto.Int32(n), Channels: proto.Int32(c), Height: proto.Int32(h), Width: proto.Int32(w)}
		b.Data = make([]float32, n*c*h*w)
		return b
	}
	net, err := caffe.ParseNet([]byte(input4 + `layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" inner_product_param { num_output: 2 } }`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		blobs   []*caffe.BlobProto
		wantErr string
	}{
		{"legacy", []*caffe.BlobProto{legacy(1, 1, 2, 108), legacy(1, 1, 1, 2)}, ""},
		{"current", []*caffe.BlobProto{blob(2, 108), blob(2)}, ""},
		{"legacy mismatch", []*caffe.BlobProto{legacy(2, 1, 1, 108), legacy(1, 1, 1, 2)}, "blob 0 (weights) has shape [2 1 1 108] (num, channels, height, width), want [2 108]"},
		{"values missing", []*caffe.BlobProto{{Shape: &caffe.BlobShape{Dim: []int64{2, 108}}}, blob(2)}, "blob 0 (weights) has shape [2 108] (216 elements) but holds 0 values"},
		{"three blobs", []*caffe.BlobProto{blob(2, 108), blob(2), blob(2)}, "the weights have 3 blobs for this layer, want weights and bias"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conv, err := caffe.Convert(net, weightsOf(map[string][]*caffe.BlobProto{"ip": tc.blobs}))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := argOf(conv.Init.Op[0], "shape") + argOf(conv.Init.Op[1], "shape"); got != "[2 108][2]" {
				t.Errorf("parameter shapes %s, want [2 108][2]", got)
			}
		})
	}
}

// TestIncludeRules selects layers by phase, level and stages as Caffe's
// Net::FilterNet does (the phase is always TEST).
func TestIncludeRules(t *testing.T) {
	net, err := caffe.ParseNet([]byte(input4 + `
		layer { name: "train" type: "ReLU" bottom: "x" top: "a" include { phase: TRAIN } }
		layer { name: "test" type: "ReLU" bottom: "x" top: "b" include { phase: TEST } }
		layer { name: "deep" type: "ReLU" bottom: "x" top: "c" include { min_level: 2 } }
		layer { name: "staged" type: "ReLU" bottom: "x" top: "d" include { stage: "deploy" } }
		layer { name: "unstaged" type: "ReLU" bottom: "x" top: "e" exclude { stage: "deploy" } }
		layer { name: "notstage" type: "ReLU" bottom: "x" top: "f" include { not_stage: "deploy" } }`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts []caffe.Option
		want string
	}{
		{nil, "in test unstaged notstage"},
		{[]caffe.Option{caffe.Level(2)}, "in test deep unstaged notstage"},
		{[]caffe.Option{caffe.Stages("deploy")}, "in test staged"},
	} {
		conv, err := caffe.Convert(net, weightsOf(nil), tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range conv.Layers {
			names = append(names, l.Name)
		}
		if got := strings.Join(names, " "); got != tc.want {
			t.Errorf("%d options: layers %q, want %q", len(tc.opts), got, tc.want)
		}
	}
}
