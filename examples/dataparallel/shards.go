package main

import (
	"fmt"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/operators/gloo"
)

// rendezvous returns the multi-process options c asks for.
func rendezvous(c config) (*dataparallel.Rendezvous, error) {
	if c.shardID < 0 || c.shardID >= c.numShards {
		return nil, fmt.Errorf("-shard-id %d: want 0 ≤ shard-id < -num-shards %d", c.shardID, c.numShards)
	}
	if c.rendezvous == "" {
		return nil, fmt.Errorf("-num-shards %d needs -rendezvous file:///shared/dir or redis://host:port", c.numShards)
	}
	addr, err := gloo.ParseStoreAddr(c.rendezvous)
	if err != nil {
		return nil, err
	}
	return &dataparallel.Rendezvous{Store: addr, ShardID: c.shardID, NumShards: c.numShards,
		Interface: c.iface, Hostname: c.hostname, Timeout: c.timeout, Coalesce: c.coalesce}, nil
}

// shardRows returns the examples shard of shards trains on: rows shard,
// shard + shards, shard + 2·shards, … of every tensor of d.
func shardRows(d brew.Dataset, shard, shards int) brew.Dataset {
	out := brew.Dataset{}
	for name, t := range d {
		n := t.Dim(0)
		w := t.Size() / max(n, 1)
		keep := (n - shard + shards - 1) / shards
		dims := append([]int{keep}, t.Dims()[1:]...)
		switch v := t.Raw().(type) {
		case []float32:
			out[name] = blob.MustFromSlice(pick(v, shard, shards, w, keep), dims...)
		case []int32:
			out[name] = blob.MustFromSlice(pick(v, shard, shards, w, keep), dims...)
		case []uint8:
			out[name] = blob.MustFromSlice(pick(v, shard, shards, w, keep), dims...)
		default:
			out[name] = t
		}
	}
	return out
}

func pick[T any](v []T, shard, shards, w, keep int) []T {
	out := make([]T, 0, keep*w)
	for r := shard; len(out) < keep*w; r += shards {
		out = append(out, v[r*w:(r+1)*w]...)
	}
	return out
}
