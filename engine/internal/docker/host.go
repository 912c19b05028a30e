package docker

// Host is the daemon address the client talks to, e.g.
// "unix:///var/run/docker.sock", for status lines and error messages.
func (c *Client) Host() string { return c.api.DaemonHost() }
