module github.com/caffe2go/caffe2go/ci/avx512/harness

go 1.25.0
