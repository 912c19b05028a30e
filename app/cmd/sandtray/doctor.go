package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/sandtray/sandtray/app/doctor"
	"github.com/sandtray/sandtray/app/host"
)

func init() {
	register(command{names: []string{"doctor"}, run: runDoctor,
		usage: "doctor [--config FILE]            check Docker, the image, gVisor, the socket, MCP clients and config; exit 1 if Sandtray cannot work"})
}

// errCannotWork is doctor's failure: the report's last line has said so,
// so it prints nothing more (see quietError).
var errCannotWork error = quietError(1)

// quietError ends the command with its exit status and no message.
type quietError int

func (quietError) Error() string   { return "" }
func (q quietError) ExitCode() int { return int(q) }

// runDoctor prints the doctor's report; it fails when Sandtray cannot work.
func runDoctor(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	config := fs.String("config", "", "config file (default: config.toml in the xdg config dir)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r := doctor.Run(ctx, doctor.Options{ConfigPath: cmpOr(*config, host.ConfigPath())})
	fmt.Fprint(e.stdout, r.String())
	if !r.OK() {
		return errCannotWork
	}
	return nil
}
