package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strings"
)

// sshDialer reaches a remote Docker daemon the way the docker CLI does for
// ssh:// hosts: each connection is `ssh [-l user] [-p port] -- host docker
// system dial-stdio`, whose stdin and stdout are the connection. ssh reads
// the user's own ~/.ssh/config, keys and agent, so whatever `ssh host` does
// (jump hosts, ControlMaster, identities) applies.
type sshDialer struct {
	target sshTarget
}

// sshTarget is a parsed ssh://[user@]host[:port][/socket] address.
type sshTarget struct {
	user, host, port string
	socket           string // the remote daemon's socket path; "" is the remote CLI's default
}

// parseSSH reads an ssh:// Docker host. A password in the URL is refused
// (it would sit in config files and process lists); use a key or the agent.
func parseSSH(raw string) (sshTarget, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return sshTarget{}, fmt.Errorf("ssh host %q: %w", raw, err)
	}
	if u.Scheme != "ssh" {
		return sshTarget{}, fmt.Errorf("%q is not an ssh:// address", raw)
	}
	if _, ok := u.User.Password(); ok {
		return sshTarget{}, fmt.Errorf("ssh host %q has a password: use an ssh key or agent instead", raw)
	}
	if u.Hostname() == "" {
		return sshTarget{}, fmt.Errorf("ssh host %q names no host (want ssh://[user@]host[:port])", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return sshTarget{}, fmt.Errorf("ssh host %q: query and fragment are not supported", raw)
	}
	t := sshTarget{user: u.User.Username(), host: u.Hostname(), port: u.Port()}
	if u.Path != "" && u.Path != "/" {
		t.socket = u.Path
	}
	if strings.HasPrefix(t.host, "-") || strings.HasPrefix(t.user, "-") {
		return sshTarget{}, fmt.Errorf("ssh host %q: a host or user may not start with '-'", raw)
	}
	return t, nil
}

// args is ssh's command line. -T: no terminal, the stream is binary.
// ConnectTimeout: a host that does not answer fails instead of hanging.
// ssh joins the words after the host with spaces and the remote user's
// shell splits them again, so the socket path (decoded from the URL: it may
// hold spaces, quotes or a ';') is quoted for a POSIX shell.
func (t sshTarget) args() []string {
	args := []string{"-o", "ConnectTimeout=30", "-T"}
	if t.user != "" {
		args = append(args, "-l", t.user)
	}
	if t.port != "" {
		args = append(args, "-p", t.port)
	}
	args = append(args, "--", t.host, "docker")
	if t.socket != "" {
		args = append(args, "--host", shellQuote("unix://"+t.socket))
	}
	return append(args, "system", "dial-stdio")
}

// shellQuote quotes s as one word for a POSIX shell: in single quotes, where
// a single quote of s ends the quoted run, is written escaped (\') and a new
// run begins. A word of only safe characters stays as it is, so common paths
// read as before.
func shellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-:+=,@%", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func newSSHDialer(raw string) (*sshDialer, error) {
	t, err := parseSSH(raw)
	if err != nil {
		return nil, err
	}
	return &sshDialer{target: t}, nil
}

// DialContext starts one ssh for one connection. The network and address
// the HTTP transport passes are placeholders and ignored. The process lives
// as long as the connection, not ctx: the transport keeps idle
// connections, and Close ends the process.
func (d *sshDialer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := exec.LookPath("ssh")
	if err != nil {
		return nil, fmt.Errorf("reach Docker over ssh: no ssh client in PATH; install OpenSSH: %w", err)
	}
	cmd := exec.Command(path, d.target.args()...)
	cmd.SysProcAttr = sshProcAttr()
	c, err := startCmdConn(cmd, d.target.host)
	if err != nil {
		return nil, errors.Join(errors.New("reach Docker over ssh"), err)
	}
	return c, nil
}
