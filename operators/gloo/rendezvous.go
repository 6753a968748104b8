package gloo

import (
	"fmt"
	"net"
	"net/url"
	"strconv"

	"github.com/caffe2go/caffe2go/netdef"
)

// DefaultRedisPort is the port of a redis:// rendezvous URL without one.
const DefaultRedisPort = 6379

// StoreAddr says where the ranks of a job meet: a directory every rank can
// reach, or a Redis server.
type StoreAddr struct {
	// Kind is "file" or "redis".
	Kind string
	// Path is the file store's directory (Kind "file").
	Path string
	// Host and Port are the Redis server's (Kind "redis").
	Host string
	Port int
	// Prefix separates the keys of one run from another's in the same
	// directory or database.
	Prefix string
}

// ParseStoreAddr parses a rendezvous URL: file:///shared/dir (or a bare
// absolute path) or redis://host[:port]. A query ?prefix=run7 sets Prefix.
func ParseStoreAddr(s string) (StoreAddr, error) {
	if s == "" {
		return StoreAddr{}, fmt.Errorf("rendezvous: empty address (want file:///dir or redis://host:port)")
	}
	if s[0] == '/' {
		return StoreAddr{Kind: "file", Path: s}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return StoreAddr{}, fmt.Errorf("rendezvous %q: %w", s, err)
	}
	a := StoreAddr{Prefix: u.Query().Get("prefix")}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return StoreAddr{}, fmt.Errorf("rendezvous %q: a file URL names a directory on this machine (file:///dir), not host %q", s, u.Host)
		}
		if u.Path == "" {
			return StoreAddr{}, fmt.Errorf("rendezvous %q: no directory (want file:///dir)", s)
		}
		a.Kind, a.Path = "file", u.Path
	case "redis":
		host, port := u.Host, ""
		if h, p, err := net.SplitHostPort(u.Host); err == nil {
			host, port = h, p
		}
		if host == "" {
			return StoreAddr{}, fmt.Errorf("rendezvous %q: no host (want redis://host:port)", s)
		}
		a.Kind, a.Host, a.Port = "redis", host, DefaultRedisPort
		if port != "" {
			n, err := strconv.Atoi(port)
			if err != nil || n <= 0 || n > 65535 {
				return StoreAddr{}, fmt.Errorf("rendezvous %q: bad port %q", s, port)
			}
			a.Port = n
		}
		if u.Path != "" && u.Path != "/" {
			return StoreAddr{}, fmt.Errorf("rendezvous %q: a redis URL takes no path (use ?prefix=)", s)
		}
	default:
		return StoreAddr{}, fmt.Errorf("rendezvous %q: scheme %q is not file or redis", s, u.Scheme)
	}
	return a, nil
}

// String returns the address as a URL ParseStoreAddr reads back.
func (a StoreAddr) String() string {
	var u url.URL
	switch a.Kind {
	case "file":
		u = url.URL{Scheme: "file", Path: a.Path}
	case "redis":
		u = url.URL{Scheme: "redis", Host: net.JoinHostPort(a.Host, strconv.Itoa(a.Port))}
	default:
		return fmt.Sprintf("StoreAddr{Kind: %q}", a.Kind)
	}
	if a.Prefix != "" {
		u.RawQuery = url.Values{"prefix": {a.Prefix}}.Encode()
	}
	return u.String()
}

// Open opens the store (what the operator StoreOp builds does).
func (a StoreAddr) Open() (Store, error) {
	switch a.Kind {
	case "file":
		return NewFileStore(a.Path, a.Prefix)
	case "redis":
		return NewRedisStore(a.Host, a.Port, a.Prefix)
	}
	return nil, fmt.Errorf("rendezvous: store kind %q is not file or redis", a.Kind)
}

// StoreOp returns the operator that creates the store handler blob out:
// FileStoreHandlerCreate or RedisStoreHandlerCreate.
func (a StoreAddr) StoreOp(out string) (*netdef.OperatorDef, error) {
	switch a.Kind {
	case "file":
		return netdef.NewOperator("FileStoreHandlerCreate", nil, []string{out},
			netdef.ArgString("path", a.Path), netdef.ArgString("prefix", a.Prefix)), nil
	case "redis":
		return netdef.NewOperator("RedisStoreHandlerCreate", nil, []string{out},
			netdef.ArgString("host", a.Host), netdef.ArgInt("port", int64(a.Port)), netdef.ArgString("prefix", a.Prefix)), nil
	}
	return nil, fmt.Errorf("rendezvous: store kind %q is not file or redis", a.Kind)
}
