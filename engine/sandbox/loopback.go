package sandbox

import (
	"net"
	"strings"
)

// IsLoopbackHost reports whether host (a name or an IP, without a port) can
// only be reached from this machine: localhost or a loopback IP. An empty
// host (":8080") means every interface, so it is not loopback.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
