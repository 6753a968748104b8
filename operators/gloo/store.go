package gloo

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultStoreTimeout is how long a store waits for keys when the caller
// gives no timeout (Caffe2's StoreHandler::kDefaultTimeout).
const DefaultStoreTimeout = 30 * time.Second

// storePoll is how often a store looks for the keys it waits for.
const storePoll = 10 * time.Millisecond

// ErrKeyExists is the error of Store.Set for a key that is already set: in
// a rendezvous, the sign of a store directory or Redis database left from an
// earlier run (use a fresh directory, or another prefix).
var ErrKeyExists = errors.New("key is already set")

// ErrTimeout matches (errors.Is) every error of a wait that ran out of
// time: a store's *TimeoutError and a collective's deadline.
var ErrTimeout = errors.New("timed out")

// Store is the key-value store the ranks of a common world meet through
// (Caffe2's StoreHandler): each rank publishes its addresses under its own
// key and waits for the others'. FileStoreHandlerCreate and
// RedisStoreHandlerCreate output one; any Go value that implements Store
// and sits in a blob works as the input of CreateCommonWorld.
//
// Keys are set once: a store refuses to overwrite a key, so that a
// rendezvous never reads addresses an earlier run left behind.
type Store interface {
	// Set stores value under key; it fails with ErrKeyExists (wrapped)
	// when the key is already set.
	Set(key string, value []byte) error
	// Get waits up to timeout for key and returns its value.
	Get(key string, timeout time.Duration) ([]byte, error)
	// Check reports whether every key is set, without waiting.
	Check(keys []string) (bool, error)
	// Wait waits up to timeout for every key to be set; it fails with a
	// *TimeoutError when the time runs out.
	Wait(keys []string, timeout time.Duration) error
}

// TimeoutError says that a store waited for keys that were never set: in a
// rendezvous, a rank that never arrived.
type TimeoutError struct {
	Store   string        // the store, "file store /dir" or "redis store host:port"
	Keys    []string      // the keys it waited for
	Missing []string      // those still missing
	Waited  time.Duration // how long it waited
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s: timed out after %v waiting for key(s) %s (a rank that never arrived?)",
		e.Store, e.Waited, strings.Join(e.Missing, " "))
}

// Is makes errors.Is(err, ErrTimeout) true.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// waitKeys polls check until it reports every key present or timeout
// passes (a timeout ≤ 0 means DefaultStoreTimeout).
func waitKeys(name string, keys []string, timeout time.Duration, missing func([]string) ([]string, error)) error {
	if timeout <= 0 {
		timeout = DefaultStoreTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		left, err := missing(keys)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return &TimeoutError{Store: name, Keys: keys, Missing: left, Waited: timeout}
		}
		time.Sleep(storePoll)
	}
}

// FileStore is a Store in a directory that every rank can reach (a shared
// file system for ranks on several machines). Each key is a file named by
// a hash of the key; a value is written to a temporary file and then
// linked to its name, so a reader sees all of it or nothing, and a second
// Set of a key fails.
type FileStore struct {
	dir string
}

// NewFileStore returns the file store in path, or, with a prefix, in a
// subdirectory of path named by a hash of the prefix (Caffe2's
// FileStoreHandler). It creates the directories it needs.
func NewFileStore(path, prefix string) (*FileStore, error) {
	if path == "" {
		return nil, errors.New("file store: empty path")
	}
	dir, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	if prefix != "" {
		dir = filepath.Join(dir, encodeKey(prefix))
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	return &FileStore{dir: dir}, nil
}

// Dir returns the directory that holds the store's keys.
func (s *FileStore) Dir() string { return s.dir }

// BlobTypeName is the blob type Caffe2 gives a store handler.
func (s *FileStore) BlobTypeName() string { return "std::unique_ptr<caffe2::StoreHandler>" }

func (s *FileStore) String() string { return "file store " + s.dir }

// encodeKey names a key's file: hex of a hash, so any key is a file name.
func encodeKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:16])
}

func (s *FileStore) path(key string) string { return filepath.Join(s.dir, encodeKey(key)) }

// Set implements Store.
func (s *FileStore) Set(key string, value []byte) error {
	tmp := filepath.Join(s.dir, fmt.Sprintf(".%s.%d.%x", encodeKey(key), os.Getpid(), rand.Uint64()))
	if err := os.WriteFile(tmp, value, 0o666); err != nil {
		return fmt.Errorf("%s: set %q: %w", s, key, err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, s.path(key)); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s: set %q: %w (a store left from an earlier run? use a fresh directory or prefix)", s, key, ErrKeyExists)
		}
		return fmt.Errorf("%s: set %q: %w", s, key, err)
	}
	return nil
}

// Get implements Store.
func (s *FileStore) Get(key string, timeout time.Duration) ([]byte, error) {
	if err := s.Wait([]string{key}, timeout); err != nil {
		return nil, err
	}
	v, err := os.ReadFile(s.path(key))
	if err != nil {
		return nil, fmt.Errorf("%s: get %q: %w", s, key, err)
	}
	return v, nil
}

// Check implements Store.
func (s *FileStore) Check(keys []string) (bool, error) {
	left, err := s.missing(keys)
	return len(left) == 0, err
}

func (s *FileStore) missing(keys []string) ([]string, error) {
	var left []string
	for _, k := range keys {
		_, err := os.Stat(s.path(k))
		switch {
		case errors.Is(err, os.ErrNotExist):
			left = append(left, k)
		case err != nil:
			return nil, fmt.Errorf("%s: %w", s, err)
		}
	}
	return left, nil
}

// Wait implements Store.
func (s *FileStore) Wait(keys []string, timeout time.Duration) error {
	return waitKeys(s.String(), keys, timeout, s.missing)
}

// PrefixStore puts every key of the store under it in the namespace
// "<prefix>/" (gloo's PrefixStore), so that several common worlds can
// meet through one store.
type PrefixStore struct {
	Prefix string
	Store  Store
}

func (p PrefixStore) key(k string) string { return p.Prefix + "/" + k }

func (p PrefixStore) keys(ks []string) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = p.key(k)
	}
	return out
}

// Set implements Store.
func (p PrefixStore) Set(key string, value []byte) error { return p.Store.Set(p.key(key), value) }

// Get implements Store.
func (p PrefixStore) Get(key string, timeout time.Duration) ([]byte, error) {
	return p.Store.Get(p.key(key), timeout)
}

// Check implements Store.
func (p PrefixStore) Check(keys []string) (bool, error) { return p.Store.Check(p.keys(keys)) }

// Wait implements Store.
func (p PrefixStore) Wait(keys []string, timeout time.Duration) error {
	return p.Store.Wait(p.keys(keys), timeout)
}
