package gloo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// redisDialTimeout bounds connecting to the Redis server.
const redisDialTimeout = 10 * time.Second

// RedisStore is a Store in a Redis server (Caffe2's RedisStoreHandler):
// keys are "<prefix>/<key>", set with SETNX so that a key left from an
// earlier run is refused rather than overwritten. It speaks the Redis
// protocol (RESP) itself over one connection, which it opens at first use
// and reopens after an error.
type RedisStore struct {
	addr, prefix string

	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
}

// NewRedisStore returns the store on the Redis server at host:port; it
// connects at first use.
func NewRedisStore(host string, port int, prefix string) (*RedisStore, error) {
	if host == "" {
		return nil, errors.New("redis store: empty host")
	}
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("redis store: port %d is not in 1…65535", port)
	}
	return &RedisStore{addr: net.JoinHostPort(host, strconv.Itoa(port)), prefix: prefix}, nil
}

// BlobTypeName is the blob type Caffe2 gives a store handler.
func (s *RedisStore) BlobTypeName() string { return "std::unique_ptr<caffe2::StoreHandler>" }

func (s *RedisStore) String() string { return "redis store " + s.addr }

func (s *RedisStore) key(k string) string {
	if s.prefix == "" {
		return k
	}
	return s.prefix + "/" + k
}

// Close closes the connection, if open.
func (s *RedisStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn, s.r = nil, nil
	return err
}

// do sends one command and returns its reply: a string, []byte (nil for a
// nil bulk string), int64, or []any.
func (s *RedisStore) do(args ...string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		c, err := net.DialTimeout("tcp", s.addr, redisDialTimeout)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s, err)
		}
		s.conn, s.r = c, bufio.NewReader(c)
	}
	reply, err := s.roundTrip(args)
	if err != nil {
		var re redisError
		if !errors.As(err, &re) { // the connection is in an unknown state
			s.conn.Close()
			s.conn, s.r = nil, nil
		}
		return nil, fmt.Errorf("%s: %s: %w", s, args[0], err)
	}
	return reply, nil
}

func (s *RedisStore) roundTrip(args []string) (any, error) {
	if err := s.conn.SetDeadline(time.Now().Add(redisDialTimeout)); err != nil {
		return nil, err
	}
	if _, err := s.conn.Write(encodeCommand(args)); err != nil {
		return nil, err
	}
	return readReply(s.r)
}

// encodeCommand writes args as a RESP array of bulk strings.
func encodeCommand(args []string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// redisError is an error reply ("-ERR …").
type redisError string

func (e redisError) Error() string { return "redis: " + string(e) }

// maxRedisBulk bounds a bulk string or array a reply may announce.
const maxRedisBulk = 512 << 20

// readReply reads one RESP reply.
func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("malformed reply %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return nil, redisError(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxRedisBulk {
			return nil, fmt.Errorf("malformed bulk length %q", body)
		}
		if n == -1 {
			return []byte(nil), nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return buf[:n], nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxRedisBulk {
			return nil, fmt.Errorf("malformed array length %q", body)
		}
		out := make([]any, 0, max(n, 0))
		for range n {
			v, err := readReply(r)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("malformed reply %q", line)
}

// Set implements Store.
func (s *RedisStore) Set(key string, value []byte) error {
	reply, err := s.do("SETNX", s.key(key), string(value))
	if err != nil {
		return err
	}
	if n, ok := reply.(int64); !ok || n != 1 {
		return fmt.Errorf("%s: set %q: %w (a store left from an earlier run? use another prefix or flush the database)", s, key, ErrKeyExists)
	}
	return nil
}

// Get implements Store.
func (s *RedisStore) Get(key string, timeout time.Duration) ([]byte, error) {
	if err := s.Wait([]string{key}, timeout); err != nil {
		return nil, err
	}
	reply, err := s.do("GET", s.key(key))
	if err != nil {
		return nil, err
	}
	v, ok := reply.([]byte)
	if !ok || v == nil {
		return nil, fmt.Errorf("%s: get %q: no value", s, key)
	}
	return v, nil
}

// Check implements Store.
func (s *RedisStore) Check(keys []string) (bool, error) {
	left, err := s.missing(keys)
	return len(left) == 0, err
}

func (s *RedisStore) missing(keys []string) ([]string, error) {
	var left []string
	for _, k := range keys {
		reply, err := s.do("EXISTS", s.key(k))
		if err != nil {
			return nil, err
		}
		if n, ok := reply.(int64); !ok || n == 0 {
			left = append(left, k)
		}
	}
	return left, nil
}

// Wait implements Store.
func (s *RedisStore) Wait(keys []string, timeout time.Duration) error {
	return waitKeys(s.String(), keys, timeout, s.missing)
}
