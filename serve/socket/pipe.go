package socket

import (
	"strings"
)

// pipePrefix starts every local named pipe's path on Windows.
const pipePrefix = `\\.\pipe\`

// isPipePath reports whether p names a Windows named pipe.
func isPipePath(p string) bool {
	return len(p) > len(pipePrefix) && strings.EqualFold(p[:len(pipePrefix)], pipePrefix)
}

// pipeName is the engine's pipe for the Windows account user ("DOMAIN\name"
// or "name"): \\.\pipe\sandtray-domain.name, lower case, with anything but
// letters, digits, '.', '-' and '_' replaced by '_'. Pipe names are global
// to the machine, so another account could take a name first: Listen then
// fails (the first instance is created exclusively) and Dial refuses a pipe
// not owned by the user, so a squatter can deny service but never talk to
// the shim.
func pipeName(user string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.ReplaceAll(user, `\`, ".")) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" {
		name = "user"
	}
	return pipePrefix + "sandtray-" + name
}

// pipeSDDL is the pipe's security descriptor in SDDL: owned by sid, with a
// protected DACL (nothing inherited) that grants sid alone full access. Not
// even SYSTEM or Administrators are listed, as for a unix socket of mode
// 0600 in a 0700 directory.
func pipeSDDL(sid string) string {
	return "O:" + sid + "D:P(A;;GA;;;" + sid + ")"
}
