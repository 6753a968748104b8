package brew

import (
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// DBInput reads batches from a database of TensorProtos records, Caffe2's
// brew.db_input: the init net gets CreateDB([], "dbreader_"+db, db=db,
// db_type=dbType) and the net TensorProtosDBInput([reader], outs,
// batch_size=batchSize), where output i receives the i-th tensor of each
// record (batchSize 0 reads whole records). It returns the outputs' full
// names. Like Caffe2's, it takes no keyword options, so arg scopes do not
// apply to it.
func DBInput(m *Model, outs []string, batchSize int, db, dbType string) []string {
	return sticky(m, func() ([]string, error) {
		c := &call{m: m, name: "DBInput", scope: devicescope.Current()}
		if len(outs) > 0 {
			c.out = c.output(outs[0])
		}
		switch {
		case len(outs) == 0:
			return nil, c.errorf("no output blobs")
		case batchSize < 0:
			return nil, c.errorf("batch_size must not be negative, got %d", batchSize)
		case db == "" || dbType == "":
			return nil, c.errorf("db and db_type are required, got %q and %q", db, dbType)
		}
		full := make([]string, len(outs))
		for i, o := range outs {
			if o == "" {
				return nil, c.errorf("empty output blob name")
			}
			full[i] = c.output(o)
		}
		reader := c.output("dbreader_" + db)
		c.emit(m.InitNet, "CreateDB", nil, []string{reader},
			[]*netdef.Argument{netdef.ArgString("db", db), netdef.ArgString("db_type", dbType)})
		c.emit(m.Net, "TensorProtosDBInput", []string{reader}, full,
			[]*netdef.Argument{netdef.ArgInt("batch_size", int64(batchSize))})
		return full, nil
	})
}
