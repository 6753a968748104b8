// Package brew is the brew module of caffe2go scripts: package brew's
// model-building helpers with Caffe2's names and keywords (brew.fc(model,
// "data", "fc", dim_in = 784, dim_out = 10), brew.conv, brew.relu, …),
// brew.db_input and brew.arg_scope. Each helper takes a
// modelhelper.ModelHelper first and returns its output's BlobReference.
package brew
