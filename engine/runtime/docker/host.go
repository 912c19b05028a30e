package docker

// Host is the daemon address the client talks to, e.g.
// "unix:///var/run/docker.sock" or "ssh://me@box", for commands a person
// can paste (docker -H) and error messages.
func (c *Client) Host() string { return c.endpoint.Host }

// HostSource says where the address came from and why it was chosen, e.g.
// "Colima: the first that answered a ping", for status lines.
func (c *Client) HostSource() string {
	if c.endpoint.Source == "" {
		return ""
	}
	return c.endpoint.Source + ": " + c.endpoint.Why
}
