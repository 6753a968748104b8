package brew

// LeNet adds Caffe2's MNIST LeNet to m, reading N×1×28×28 images from data
// and their int32 labels from label: conv 5×5 (20 maps) → max pool 2/2 →
// conv 5×5 (50) → max pool 2/2 → FC 500 → ReLU → FC 10 → SoftmaxWithLoss,
// and Accuracy into the blob "accuracy". Its blobs and parameters carry the
// tutorial's names (conv1, pool1, conv2, pool2, fc3, pred and conv1_w …
// pred_b). It returns the softmax and loss blobs; a failure is m's sticky
// error (Model.Err).
func LeNet(m *Model, data, label string) (softmax, loss string) {
	conv1 := Conv(m, data, "conv1", 1, 20, 5)
	pool1 := MaxPool(m, conv1, "pool1", Kernel(2), Stride(2))
	conv2 := Conv(m, pool1, "conv2", 20, 50, 5)
	pool2 := MaxPool(m, conv2, "pool2", Kernel(2), Stride(2))
	fc3 := Relu(m, FC(m, pool2, "fc3", 50*4*4, 500), "fc3")
	softmax, loss = SoftmaxWithLoss(m, FC(m, fc3, "pred", 500, 10), label, "softmax", "loss")
	Accuracy(m, softmax, label, "accuracy")
	return softmax, loss
}
