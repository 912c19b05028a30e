package config

import "testing"

// TestHTTPOriginNamesAnAddressNotLocalhost (F36): the URL clients are given
// names 127.0.0.1 over plain HTTP, never localhost, which a client may
// resolve to ::1 where anyone can listen while Sandtray is not running.
func TestHTTPOriginNamesAnAddressNotLocalhost(t *testing.T) {
	for _, c := range []struct {
		h    HTTP
		want string
	}{
		{HTTP{Listen: "localhost:8765"}, "http://127.0.0.1:8765"},
		{HTTP{Listen: "LocalHost:8765"}, "http://127.0.0.1:8765"},
		{HTTP{Listen: "127.0.0.1:8765"}, "http://127.0.0.1:8765"},
		{HTTP{Listen: "[::1]:8765"}, "http://[::1]:8765"},
		{HTTP{Listen: "0.0.0.0:8765", TLSCert: "/c", TLSKey: "/k"}, "https://127.0.0.1:8765"},
		{HTTP{Listen: "localhost:8765", TLSCert: "/c", TLSKey: "/k"}, "https://localhost:8765"},
	} {
		if got := c.h.Origin("8765"); got != c.want {
			t.Errorf("Origin of %+v = %s, want %s", c.h, got, c.want)
		}
	}
}
