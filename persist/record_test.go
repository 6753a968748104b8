package persist

import (
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
)

// stRecords encodes every chunk of a blob, as SaveCheckpoint does.
func stRecords(t testing.TB, name string, b *blob.Blob, chunkBytes int) (BlobInfo, [][]byte) {
	t.Helper()
	p, err := planBlob(name, b, chunkBytes)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([][]byte, p.info.Chunks)
	info := p.info
	for i := range recs {
		if recs[i], err = p.next(i); err != nil {
			t.Fatal(err)
		}
		info.CRC32C = crcUpdate(info.CRC32C, recs[i])
		info.ChunkCRC32C = append(info.ChunkCRC32C, crc32.Checksum(recs[i], castagnoli))
	}
	return info, recs
}

func crcUpdate(crc uint32, v []byte) uint32 { return crc32.Update(crc, castagnoli, v) }

// stAssemble runs records through an assembler.
func stAssemble(info BlobInfo, recs [][]byte) (any, error) {
	a, err := newAssembler(info)
	if err != nil {
		return nil, err
	}
	for i, v := range recs {
		if err := a.add(i, v); err != nil {
			return nil, err
		}
	}
	return a.finish()
}

func stHostileInputs(t testing.TB) []struct {
	info BlobInfo
	recs [][]byte
} {
	r := rand.New(rand.NewPCG(9, 9))
	var out []struct {
		info BlobInfo
		recs [][]byte
	}
	for _, dtype := range stAllTypes {
		var b blob.Blob
		b.Set(stRandomTensor(r, dtype, 4, 5))
		info, recs := stRecords(t, "x", &b, 24)
		out = append(out, struct {
			info BlobInfo
			recs [][]byte
		}{info, recs})
	}
	var b blob.Blob
	b.Set([]byte("some bytes of a byte-string blob"))
	info, recs := stRecords(t, "s", &b, 10)
	return append(out, struct {
		info BlobInfo
		recs [][]byte
	}{info, recs})
}

// TestRecordsRejectDamage mutates valid records at random (flipped bits,
// truncation, cut-and-paste, records of other blobs) and checks that every
// mutation is an error, never a panic or a wrong value accepted silently:
// caught by the per-record checksums, and, without them (as for a damaged
// record whose checksum happened to match), by decoding, the checks against
// the manifest and the whole-blob checksum.
func TestRecordsRejectDamage(t *testing.T) {
	inputs := stHostileInputs(t)
	for _, in := range stHostileInputs(t) {
		in.info.ChunkCRC32C = nil
		inputs = append(inputs, in)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for _, in := range inputs {
		if _, err := stAssemble(in.info, in.recs); err != nil {
			t.Fatalf("intact %v records: %v", in.info.DataType, err)
		}
		for trial := 0; trial < 300; trial++ {
			recs := make([][]byte, len(in.recs))
			for i := range recs {
				recs[i] = append([]byte{}, in.recs[i]...)
			}
			c := r.IntN(len(recs))
			v := recs[c]
			switch trial % 4 {
			case 0:
				v[r.IntN(len(v))] ^= byte(1 << r.IntN(8))
			case 1:
				v = v[:r.IntN(len(v))]
			case 2:
				i, j := r.IntN(len(v)), r.IntN(len(v))
				v = append(v[:min(i, j)], v[max(i, j):]...)
				if i == j {
					v = append(v, 0)
				}
			case 3:
				other := inputs[r.IntN(len(inputs))]
				v = append([]byte{}, other.recs[r.IntN(len(other.recs))]...)
				if string(v) == string(recs[c]) {
					v = v[1:]
				}
			}
			recs[c] = v
			if _, err := stAssemble(in.info, recs); err == nil {
				t.Fatalf("%v chunk %d: a damaged record was accepted (trial %d)", in.info.DataType, c, trial)
			}
		}
	}
}

// FuzzBlobRecord feeds arbitrary bytes as a chunk record: decoding must fail
// cleanly or, for the intact seeds, succeed.
func FuzzBlobRecord(f *testing.F) {
	inputs := stHostileInputs(f)
	for _, in := range inputs {
		f.Add(in.recs[0], uint8(len(inputs)))
	}
	f.Fuzz(func(t *testing.T, v []byte, which uint8) {
		in := inputs[int(which)%len(inputs)]
		info := in.info
		info.Chunks, info.ChunkCRC32C = 1, nil // reach the decoder
		a, err := newAssembler(info)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.add(0, v); err != nil {
			return
		}
		_, _ = a.finish()
	})
}

func TestUnsealRejectsDamage(t *testing.T) {
	v, err := seal([]byte("body"))
	if err != nil {
		t.Fatal(err)
	}
	if body, err := unseal(v); err != nil || string(body) != "body" {
		t.Fatalf("unseal(seal(body)) = %q, %v", body, err)
	}
	for i := range v {
		w := append([]byte{}, v...)
		w[i] ^= 0x10
		if _, err := unseal(w); err == nil {
			t.Errorf("flipping byte %d went unnoticed", i)
		}
	}
	if _, err := unseal(nil); !errors.Is(err, errNotSealed) {
		t.Errorf("unseal(nil) = %v", err)
	}
}
