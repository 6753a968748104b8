package caffe

import (
	"fmt"

	"google.golang.org/protobuf/proto"
)

// v1Types are the current type names of the V1 layer types, as Caffe's
// upgrade (UpgradeV1LayerType) names them.
var v1Types = map[V1LayerParameter_LayerType]string{
	V1LayerParameter_ABSVAL:                     "AbsVal",
	V1LayerParameter_ACCURACY:                   "Accuracy",
	V1LayerParameter_ARGMAX:                     "ArgMax",
	V1LayerParameter_BNLL:                       "BNLL",
	V1LayerParameter_CONCAT:                     "Concat",
	V1LayerParameter_CONTRASTIVE_LOSS:           "ContrastiveLoss",
	V1LayerParameter_CONVOLUTION:                "Convolution",
	V1LayerParameter_DECONVOLUTION:              "Deconvolution",
	V1LayerParameter_DATA:                       "Data",
	V1LayerParameter_DROPOUT:                    "Dropout",
	V1LayerParameter_DUMMY_DATA:                 "DummyData",
	V1LayerParameter_EUCLIDEAN_LOSS:             "EuclideanLoss",
	V1LayerParameter_ELTWISE:                    "Eltwise",
	V1LayerParameter_EXP:                        "Exp",
	V1LayerParameter_FLATTEN:                    "Flatten",
	V1LayerParameter_HDF5_DATA:                  "HDF5Data",
	V1LayerParameter_HDF5_OUTPUT:                "HDF5Output",
	V1LayerParameter_HINGE_LOSS:                 "HingeLoss",
	V1LayerParameter_IM2COL:                     "Im2col",
	V1LayerParameter_IMAGE_DATA:                 "ImageData",
	V1LayerParameter_INFOGAIN_LOSS:              "InfogainLoss",
	V1LayerParameter_INNER_PRODUCT:              "InnerProduct",
	V1LayerParameter_LRN:                        "LRN",
	V1LayerParameter_MEMORY_DATA:                "MemoryData",
	V1LayerParameter_MULTINOMIAL_LOGISTIC_LOSS:  "MultinomialLogisticLoss",
	V1LayerParameter_MVN:                        "MVN",
	V1LayerParameter_POOLING:                    "Pooling",
	V1LayerParameter_POWER:                      "Power",
	V1LayerParameter_RELU:                       "ReLU",
	V1LayerParameter_SIGMOID:                    "Sigmoid",
	V1LayerParameter_SIGMOID_CROSS_ENTROPY_LOSS: "SigmoidCrossEntropyLoss",
	V1LayerParameter_SILENCE:                    "Silence",
	V1LayerParameter_SOFTMAX:                    "Softmax",
	V1LayerParameter_SOFTMAX_LOSS:               "SoftmaxWithLoss",
	V1LayerParameter_SPLIT:                      "Split",
	V1LayerParameter_SLICE:                      "Slice",
	V1LayerParameter_TANH:                       "TanH",
	V1LayerParameter_WINDOW_DATA:                "WindowData",
	V1LayerParameter_THRESHOLD:                  "Threshold",
}

// upgradeV1 converts V1 layers to the current format, as Caffe's
// UpgradeV1Net does for what inference reads: name, type, bottoms, tops,
// rules, blobs and the type's parameters. Layers of the V0 format (a V1
// layer wrapping a V0LayerParameter) are not read.
func upgradeV1(v1 []*V1LayerParameter) ([]*LayerParameter, error) {
	out := make([]*LayerParameter, 0, len(v1))
	for i, l := range v1 {
		if l.Layer != nil {
			return nil, fmt.Errorf("caffe: layer %d (%q) is in the V0 format (layers { layer { ... } }), which is %w: upgrade the net with Caffe's upgrade_net_proto_text", i, l.GetName()+l.Layer.GetName(), ErrUnsupported)
		}
		typ, ok := v1Types[l.GetType()]
		if !ok {
			return nil, fmt.Errorf("caffe: V1 layer %q has type %v, which has no current name", l.GetName(), l.GetType())
		}
		n := &LayerParameter{
			Name: proto.String(l.GetName()), Type: proto.String(typ),
			Bottom: l.Bottom, Top: l.Top, Include: l.Include, Exclude: l.Exclude,
			LossWeight: l.LossWeight, Blobs: l.Blobs,
			AccuracyParam: l.AccuracyParam, ArgmaxParam: l.ArgmaxParam, ConcatParam: l.ConcatParam,
			ContrastiveLossParam: l.ContrastiveLossParam, ConvolutionParam: l.ConvolutionParam,
			DataParam: l.DataParam, DropoutParam: l.DropoutParam, DummyDataParam: l.DummyDataParam,
			EltwiseParam: l.EltwiseParam, ExpParam: l.ExpParam, Hdf5DataParam: l.Hdf5DataParam,
			Hdf5OutputParam: l.Hdf5OutputParam, HingeLossParam: l.HingeLossParam,
			ImageDataParam: l.ImageDataParam, InfogainLossParam: l.InfogainLossParam,
			InnerProductParam: l.InnerProductParam, LrnParam: l.LrnParam, MemoryDataParam: l.MemoryDataParam,
			MvnParam: l.MvnParam, PoolingParam: l.PoolingParam, PowerParam: l.PowerParam,
			ReluParam: l.ReluParam, SigmoidParam: l.SigmoidParam, SoftmaxParam: l.SoftmaxParam,
			SliceParam: l.SliceParam, TanhParam: l.TanhParam, ThresholdParam: l.ThresholdParam,
			WindowDataParam: l.WindowDataParam, TransformParam: l.TransformParam, LossParam: l.LossParam,
		}
		out = append(out, n)
	}
	return out, nil
}
