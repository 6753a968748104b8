package tests

import (
	"path/filepath"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// The store handlers of multi-host training (operators/gloo). The
// collectives with engine GLOO need the gloo build tag and other
// processes; operators/gloo tests them.
func init() {
	caseSets = append(caseSets, func(s *sampler) []optest.Case {
		op, as, ai := cgParse, netdef.ArgString, netdef.ArgInt
		dir := filepath.Join(s.dir, "filestore")
		return []optest.Case{
			{Op: op("FileStoreHandlerCreate() -> handler", as("path", dir), as("prefix", "conformance"))},
			// It connects at first use, so no server is needed here.
			{Op: op("RedisStoreHandlerCreate() -> handler", as("host", "127.0.0.1"), ai("port", 6379), as("prefix", "conformance"))},
		}
	})
}
