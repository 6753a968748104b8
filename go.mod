module github.com/caffe2go/caffe2go

go 1.23

require google.golang.org/protobuf v1.36.12
