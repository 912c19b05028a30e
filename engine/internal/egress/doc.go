// Package egress is the gate every connection of a sandbox with network
// "egress" goes through: an HTTP proxy on the host (plain HTTP and CONNECT,
// by github.com/elazarl/goproxy) that decides each connection by the user's
// rules, deny first, then allow, then ask the user, and records every
// decision.
//
// The gate never listens on a network. Connections are handed to it by the
// engine (ServeConn), each coming out of one sandbox through a Docker exec
// (the channel, channel.go), so the gate knows which sandbox a connection
// is from by how it arrived, never by anything the sandbox sends. It
// resolves names itself, refuses IP literals no rule names, refuses names
// that resolve to loopback, private, link-local, CGNAT, multicast,
// unspecified or cloud-metadata addresses unless a rule names the host
// exactly, and dials the address it checked, so a second DNS answer cannot
// move a connection elsewhere. A host and port a sandbox names are read
// once (hostrule.Host, hostrule.Target) before any rule, and deny rules
// come first for every host. A refusal is HTTP 403 (400 for a host or port
// that is none) with a one-line body that names the host and says how the
// user can allow it, which is also a refused CONNECT's reason phrase.
//
// Everything a sandbox sends is bounded (the request line and headers, the
// bodies held to swap a secret in, the tables of hosts and of requests
// waiting for the user), and so is what the gate keeps of it.
//
// What the user answers (Answer), what a model asks for up front (Request),
// the pending requests (Pending, Watch), each sandbox's rules and recent
// decisions (Network) are the gate's public API, for the engine, its
// control endpoint and the tray app.
package egress
