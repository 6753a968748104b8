package gloo

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// storeContract checks what CreateCommonWorld relies on: Set once, Get and
// Wait block until a key arrives, Wait times out naming the missing keys.
func storeContract(t *testing.T, s Store) {
	t.Helper()
	if err := s.Set("a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("a", []byte("2")); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("second Set of a key: %v, want ErrKeyExists", err)
	}
	if v, err := s.Get("a", time.Second); err != nil || string(v) != "1" {
		t.Fatalf("Get(a) = %q, %v; want the first value", v, err)
	}
	if ok, err := s.Check([]string{"a", "b"}); ok || err != nil {
		t.Fatalf("Check(a, b) = %v, %v before b is set", ok, err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.Set("b", []byte{0, 1, 2, '\n', 255})
	}()
	if v, err := s.Get("b", 5*time.Second); err != nil || string(v) != "\x00\x01\x02\n\xff" {
		t.Fatalf("Get(b) = %q, %v; want the bytes set while it waited", v, err)
	}
	start := time.Now()
	err := s.Wait([]string{"a", "c"}, 100*time.Millisecond)
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, ErrTimeout) || len(te.Missing) != 1 || te.Missing[0] != "c" {
		t.Fatalf("Wait(a, c): %v, want a timeout naming c", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("Wait with a 100ms timeout returned after %v", d)
	}
	p := PrefixStore{Prefix: "w", Store: s}
	if err := p.Set("a", []byte("p")); err != nil {
		t.Fatalf("a prefixed key must not collide with the bare one: %v", err)
	}
	if v, err := s.Get("w/a", time.Second); err != nil || string(v) != "p" {
		t.Fatalf("the prefix store's key a is w/a: %q, %v", v, err)
	}
}

func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	s, err := NewFileStore(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	storeContract(t, s)
	// Another prefix in the same directory is a fresh namespace.
	s2, err := NewFileStore(dir, "run2")
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Set("a", []byte("x")); err != nil {
		t.Fatalf("prefix run2: %v", err)
	}
	if _, err := NewFileStore("", ""); err == nil {
		t.Error("NewFileStore with an empty path succeeded")
	}
}

// TestFileStoreConcurrentSet has many goroutines race to set one key:
// exactly one wins.
func TestFileStoreConcurrentSet(t *testing.T) {
	s, err := NewFileStore(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 16 {
		wg.Go(func() {
			if s.Set("k", []byte("v")) == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d Sets of one key succeeded, want 1", wins)
	}
}

// TestRedisStore runs the store contract against a redis-server started
// for the test; it skips when redis-server is not installed.
func TestRedisStore(t *testing.T) {
	exe, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(exe, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s, err := NewRedisStore("127.0.0.1", port, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := s.Check([]string{"x"}); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("redis-server did not come up: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	storeContract(t, s)
}

func TestReadReply(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"+OK\r\n", "OK"},
		{":42\r\n", "42"},
		{"$3\r\nabc\r\n", "[97 98 99]"},
		{"$-1\r\n", "[]"},
		{"*2\r\n:1\r\n$1\r\nx\r\n", "[1 [120]]"},
		{"-ERR wrong\r\n", "error: redis: ERR wrong"},
		{"$99999999999\r\n", "error: malformed bulk length \"99999999999\""},
		{"?\r\n", "error: malformed reply \"?\\r\\n\""},
		{"+OK\n", "error: malformed reply \"+OK\\n\""},
	} {
		v, err := readReply(bufio.NewReader(strings.NewReader(tc.in)))
		got := fmt.Sprint(v)
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != tc.want {
			t.Errorf("readReply(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := string(encodeCommand([]string{"SETNX", "k", "a\r\nb"})); got != "*3\r\n$5\r\nSETNX\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n" {
		t.Errorf("encodeCommand = %q", got)
	}
}
