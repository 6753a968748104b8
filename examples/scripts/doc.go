// Package scripts holds example caffe2go scripts, run with
// "caffe2go run examples/scripts/<name>.star":
//
//   - seed.star: the seed workflow of Caffe2's tutorials: define a model
//     (one replica per CPU device), initialize it, save the net, feed
//     per-device batches, run, fetch, then load the saved net and the
//     parameters in a fresh workspace and predict.
//   - toy_regression.star: Caffe2's toy-regression tutorial, nearly line
//     for line: hand-built nets, AddGradientOperators, a LearningRate
//     schedule and WeightedSum updates; it prints the fitted parameters.
//   - train_mlp.star: training with model_helper, brew and
//     optimizer.build_sgd as Caffe2's MNIST tutorial does, on a synthetic
//     task so that it needs no data files, then a test model that shares
//     the trained weights.
//   - train_mnist.star: Caffe2's MNIST tutorial: make_mnist_db on the files
//     in data/mnist, brew.db_input, LeNet, build_sgd, a test model and a
//     deploy model that is saved, loaded and run in a fresh workspace.
//   - data_parallel.star: data_parallel_model.Parallelize on two CPU
//     devices, per-device feeding, a checkpoint saved, reloaded and synced
//     with FinalizeAfterCheckpoint, and a predict net from the master's
//     replica.
//
// The training scripts take an iteration count as their first argument and
// print a progress line every few iterations (the loss and, where the model
// has one, the accuracy, averaged since the previous line), then their
// result, such as the test accuracy. The scripts that write files (seed,
// train_mnist, data_parallel) write them into a fresh temporary folder, or
// the folder given as their last argument, and print "writing to <folder>"
// first; nothing goes to the working directory.
//
// Lines starting with "#=>" give what the print above them prints. The
// package's test runs every script from the repository root, as "caffe2go
// run" is run there, each in a process of its own and with its default
// (short) iteration count, and checks what it prints against those lines:
// numbers with a decimal point may differ by 1% plus one unit of their last
// digit (the floating-point kernels chosen for the CPU may round
// differently), everything else must match. It also checks that nothing is
// left in the working directory.
package scripts
