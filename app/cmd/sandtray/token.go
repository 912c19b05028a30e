package main

import (
	"flag"
	"fmt"
	"io"
	"net"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/app/host"
	"github.com/sandtray/sandtray/app/httptoken"
	"github.com/sandtray/sandtray/app/install"
	"github.com/sandtray/sandtray/serve/mcpserver"
)

// runToken prints the bearer token that MCP over HTTP requires, creating it
// on first use; --rotate replaces it, which ends every HTTP session that a
// running Sandtray holds on the old one.
func runToken(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rotate := fs.Bool("rotate", false, "replace the token; HTTP sessions on the old one end")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("token takes no arguments, only --rotate")
	}
	f := httptoken.Open("")
	get := f.Ensure
	if *rotate {
		get = f.Rotate
	}
	tok, err := get()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	if *rotate {
		fmt.Fprintf(stderr, "sandtray: new token written to %s; HTTP clients must use it from now on (sandtray install CLIENT --http updates a client)\n", f.Path())
	}
	return nil
}

// httpTarget is what `install --http` writes: the endpoint's URL (url, or
// the one http.listen in config.toml gives) and the token.
func httpTarget(url string) (*install.HTTPTarget, error) {
	if url == "" {
		cfg, err := config.Load(host.ConfigPath())
		if err != nil {
			return nil, err
		}
		h := cfg.HTTP
		_, port, _ := net.SplitHostPort(h.Listen)
		if h.Listen == "" || port == "0" {
			return nil, fmt.Errorf("--http needs a fixed address: set http.listen in %s (e.g. \"127.0.0.1:8765\") "+
				"and restart Sandtray, or pass --url", host.ConfigPath())
		}
		url = h.Origin(port) + mcpserver.PathStreamable
	}
	tok, err := httptoken.Open("").Ensure()
	if err != nil {
		return nil, err
	}
	return &install.HTTPTarget{URL: url, Token: tok}, nil
}
