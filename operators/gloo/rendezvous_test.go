package gloo

import (
	"strings"
	"testing"
)

func TestParseStoreAddr(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want StoreAddr
		err  string
	}{
		{in: "file:///shared/rdv", want: StoreAddr{Kind: "file", Path: "/shared/rdv"}},
		{in: "/shared/rdv", want: StoreAddr{Kind: "file", Path: "/shared/rdv"}},
		{in: "file:///shared/rdv?prefix=run7", want: StoreAddr{Kind: "file", Path: "/shared/rdv", Prefix: "run7"}},
		{in: "redis://10.0.0.5:7000", want: StoreAddr{Kind: "redis", Host: "10.0.0.5", Port: 7000}},
		{in: "redis://cache", want: StoreAddr{Kind: "redis", Host: "cache", Port: DefaultRedisPort}},
		{in: "redis://[::1]:6380?prefix=a", want: StoreAddr{Kind: "redis", Host: "::1", Port: 6380, Prefix: "a"}},
		{in: "", err: "empty"},
		{in: "file://otherhost/dir", err: "not host"},
		{in: "file://", err: "no directory"},
		{in: "redis://:6379", err: "no host"},
		{in: "redis://h:99999", err: "bad port"},
		{in: "redis://h:6379/db", err: "no path"},
		{in: "tcp://h:1", err: "scheme"},
		{in: "relative/dir", err: "scheme"},
	} {
		got, err := ParseStoreAddr(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseStoreAddr(%q) = %+v, %v; want an error mentioning %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseStoreAddr(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		back, err := ParseStoreAddr(got.String())
		if err != nil || back != got {
			t.Errorf("ParseStoreAddr(%q.String() = %q) = %+v, %v; want it back", tc.in, got.String(), back, err)
		}
		op, err := got.StoreOp("h")
		if err != nil || !strings.HasSuffix(op.GetType(), "StoreHandlerCreate") {
			t.Errorf("%+v.StoreOp: %v, %v", got, op, err)
		}
	}
}
