package docker

// Host is the daemon address the client talks to, e.g.
// "unix:///var/run/docker.sock" or "ssh://me@box", for commands a person
// can paste (docker -H) and error messages.
func (c *Client) Host() string { return c.endpoint.Host }
