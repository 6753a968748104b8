// Package dataparallelmodel is the data_parallel_model module of caffe2go
// scripts: package brew/dataparallel with the names of Caffe2's
// caffe2.python.data_parallel_model. Parallelize(model,
// input_builder_fun, forward_pass_builder_fun, …, devices = [0, 1],
// cpu_device = True) takes Starlark functions that build each device's
// replica; RunInitNet, RunNet and the checkpoint helpers take the model.
// Only CPU devices exist.
package dataparallelmodel
