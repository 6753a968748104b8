// Package modelhelper is the model_helper module of caffe2go scripts:
// model_helper.ModelHelper(name = "m") makes a ModelHelper, the Starlark
// value of a brew.Model, which brew helpers, optimizers and
// data_parallel_model build on.
package modelhelper
