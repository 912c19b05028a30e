//go:build linux

// Command sandtray-agent runs inside every sandbox: see package agent. It
// is built for Linux only, without cgo, and embedded in sandtray
// (agent/agentbin).
package main

import (
	"os"

	"github.com/sandtray/sandtray/agent"
)

func main() { os.Exit(agent.Main(os.Args, os.Stdin, os.Stdout, os.Stderr)) }
