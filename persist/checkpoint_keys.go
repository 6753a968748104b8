package persist

import (
	"fmt"
	"strconv"
	"strings"
)

// Key helpers. Ids are zero-padded so that byte order is numeric order.
func ckptIDPrefix(id int64) string { return fmt.Sprintf("%s%020d/", ckptPrefix, id) }
func manifestKey(id int64) string  { return ckptIDPrefix(id) + "manifest" }
func genPrefix(id int64, gen uint64) string {
	return fmt.Sprintf("%s%016x/", ckptIDPrefix(id), gen)
}
func recordKey(id int64, gen uint64, name string, chunk int) string {
	return genPrefix(id, gen) + "blob/" + name + "#" + strconv.Itoa(chunk)
}

// parseCkptKey splits a key under "ckpt/" into the checkpoint id and the
// rest ("manifest", or "<gen>/blob/<name>#<chunk>"); ok is false for keys
// of another shape.
func parseCkptKey(key string) (id int64, rest string, ok bool) {
	k, found := strings.CutPrefix(key, ckptPrefix)
	if !found || len(k) < 21 || k[20] != '/' {
		return 0, "", false
	}
	id, err := strconv.ParseInt(k[:20], 10, 64)
	if err != nil || id < 0 {
		return 0, "", false
	}
	return id, k[21:], true
}

// parseGen returns the generation of a record key's rest.
func parseGen(rest string) (uint64, bool) {
	if len(rest) < 17 || rest[16] != '/' {
		return 0, false
	}
	g, err := strconv.ParseUint(rest[:16], 16, 64)
	return g, err == nil
}
