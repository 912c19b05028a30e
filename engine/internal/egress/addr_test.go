package egress

import (
	"net/netip"
	"testing"
)

func TestClassify(t *testing.T) {
	for addr, want := range map[string]string{
		"93.184.216.34":          "",
		"2606:4700::1111":        "",
		"1.1.1.1":                "",
		"127.0.0.1":              "a loopback address",
		"127.8.9.10":             "a loopback address",
		"::1":                    "a loopback address",
		"10.1.2.3":               "a private address",
		"172.17.0.1":             "a private address", // Docker's bridge gateway
		"192.168.1.1":            "a private address",
		"fd12:3456::1":           "a private address",
		"100.64.0.1":             "a carrier-grade NAT address",
		"169.254.169.254":        "a cloud metadata address",
		"fd00:ec2::254":          "a cloud metadata address",
		"100.100.100.200":        "a cloud metadata address",
		"169.254.1.1":            "a link-local address",
		"fe80::1":                "a link-local address",
		"224.0.0.1":              "a multicast address",
		"ff02::1":                "a multicast address",
		"0.0.0.0":                "an unspecified address",
		"::":                     "an unspecified address",
		"255.255.255.255":        "a reserved address",
		"::ffff:127.0.0.1":       "a loopback address",
		"::ffff:169.254.169.254": "a cloud metadata address",
		"64:ff9b::a9fe:a9fe":     "a cloud metadata address", // NAT64 of 169.254.169.254
		"2002:0a00:0001::1":      "a private address",        // 6to4 of 10.0.0.1
	} {
		if got := Classify(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Classify(%s) = %q, want %q", addr, got, want)
		}
	}
}
