// Package loss holds the loss and metric operators of the training path:
// LabelCrossEntropy, CrossEntropy, SoftmaxWithLoss, SquaredL2Distance,
// AveragedLoss, SigmoidCrossEntropyWithLogits and
// WeightedSigmoidCrossEntropyWithLogits (each with its Caffe2 gradient
// operator) and Accuracy, which must never be differentiated. The sigmoid
// cross entropies are FLOAT only, as in Caffe2, as are the criteria of
// pairs and rankings (ranking.go): CosineEmbeddingCriterion,
// MarginRankingCriterion, PairWiseLoss and BernoulliJSD, each with its
// gradient operator, and Detectron's SoftmaxFocalLoss (focal.go; CUDA-only
// in Caffe2, its kernels' arithmetic here).
//
// The differentiable operators take float (FLOAT or DOUBLE) inputs and
// produce outputs of the same type; labels are int32. Gradient operators and
// their inputs and outputs are those Caffe2 emits, for example
// SoftmaxWithLossGradient(logits, labels, [weight,] softmax, loss_grad) →
// logits_grad.
package loss
