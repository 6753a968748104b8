//go:build cuda && cgo

package main

import "github.com/caffe2go/caffe2go/devicescope/cuda"

func init() { shareGPUs = cuda.ShareGPUs }
