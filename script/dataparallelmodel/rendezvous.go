package dataparallelmodel

import (
	"fmt"
	"time"

	"go.starlark.net/starlark"

	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/operators/gloo"
)

// parseRendezvous reads Parallelize's rendezvous dict, Caffe2's keys
// (kv_handler, shard_id, num_shards, engine, transport, interface,
// exit_nets) plus caffe2go's store (a rendezvous URL used when there is no
// kv_handler), hostname, timeout_ms and barrier_timeout_ms. None gives nil.
func parseRendezvous(v starlark.Value) (*dataparallel.Rendezvous, error) {
	if v == starlark.None {
		return nil, nil
	}
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("rendezvous: want a dict, got %s", v.Type())
	}
	r := &dataparallel.Rendezvous{NumShards: 1}
	for _, item := range d.Items() {
		key, ok := starlark.AsString(item[0])
		if !ok {
			return nil, fmt.Errorf("rendezvous: key %s is not a string", item[0])
		}
		val := item[1]
		str := func(dst *string) error {
			s, ok := starlark.AsString(val)
			if !ok {
				return fmt.Errorf("rendezvous[%q]: want a string, got %s", key, val.Type())
			}
			*dst = s
			return nil
		}
		integer := func(dst *int) error {
			n, err := starlark.AsInt32(val)
			if err != nil {
				return fmt.Errorf("rendezvous[%q]: %v", key, err)
			}
			*dst = n
			return nil
		}
		millis := func(dst *time.Duration) error {
			var n int
			if err := integer(&n); err != nil {
				return err
			}
			*dst = time.Duration(n) * time.Millisecond
			return nil
		}
		var err error
		switch key {
		case "kv_handler":
			err = str(&r.KVHandler)
		case "shard_id":
			err = integer(&r.ShardID)
		case "num_shards":
			err = integer(&r.NumShards)
		case "engine":
			err = str(&r.Engine)
		case "transport":
			err = str(&r.Transport)
		case "interface":
			err = str(&r.Interface)
		case "hostname":
			err = str(&r.Hostname)
		case "timeout_ms":
			err = millis(&r.Timeout)
		case "barrier_timeout_ms":
			err = millis(&r.BarrierTimeout)
		case "store":
			var s string
			if err = str(&s); err == nil {
				r.Store, err = gloo.ParseStoreAddr(s)
			}
		case "exit_nets":
			if val != starlark.None {
				err = fmt.Errorf("rendezvous[%q]: exit nets are not supported (DestroyCommonWorld closes a world)", key)
			}
		default:
			err = fmt.Errorf("rendezvous: unknown key %q (want kv_handler, shard_id, num_shards, engine, transport, interface, exit_nets, store, hostname, timeout_ms, barrier_timeout_ms)", key)
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}
