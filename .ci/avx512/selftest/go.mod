module github.com/caffe2go/caffe2go/ci/avx512/selftest

go 1.25.0

require golang.org/x/sys v0.46.0
