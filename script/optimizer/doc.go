// Package optimizer is the optimizer module of caffe2go scripts: package
// brew's optimizers with Caffe2's names and keywords (build_sgd,
// build_adam, build_adagrad, build_rms_prop, add_weight_decay), which add
// parameter updates to a model whose gradients exist.
package optimizer
