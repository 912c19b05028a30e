package egress

import "net/netip"

// special are the address ranges a name may not resolve to unless a rule
// names the host explicitly (Rule.Explicit): what is on this machine, on the
// user's networks, or a cloud's metadata service. Each has the word a
// refusal uses.
var special = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("169.254.169.254/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("169.254.170.2/32"), "a cloud metadata address"}, // AWS ECS task metadata
	{netip.MustParsePrefix("100.100.100.200/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "a cloud metadata address"},
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a reserved address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"}, // and the broadcast address
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("::/128"), "an unspecified address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("fc00::/7"), "a private address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

// Classify says what kind of special address ip is ("a private address",
// "a cloud metadata address", ...), or "" for an ordinary public one. An
// IPv4 address inside IPv6 (mapped, NAT64 64:ff9b::/96, 6to4 2002::/16) is
// judged by the IPv4 address it carries.
func Classify(ip netip.Addr) string {
	ip = embedded(ip.Unmap())
	for _, s := range special {
		if s.prefix.Contains(ip) {
			return s.what
		}
	}
	return ""
}

var (
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	sixTo = netip.MustParsePrefix("2002::/16")
)

// embedded is the IPv4 address an IPv6 transition address carries, or ip.
func embedded(ip netip.Addr) netip.Addr {
	if !ip.Is6() {
		return ip
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case sixTo.Contains(ip):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return ip
}
