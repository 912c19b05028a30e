package main

import (
	"context"
	"strings"
	"testing"
)

// TestSubcommandTable: every registered subcommand is listed by help and
// reached by name; an unknown one is an error that shows the usage.
func TestSubcommandTable(t *testing.T) {
	var out, errOut strings.Builder
	if err := run(context.Background(), []string{"help"}, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		if c.usage != "" && !strings.Contains(out.String(), "sandtray "+c.names[0]) {
			t.Errorf("help does not list %s:\n%s", c.names[0], out.String())
		}
	}
	for _, name := range []string{"serve", "install", "token", "bench", "autostart", "version", "doctor"} {
		if _, ok := lookup(name); !ok {
			t.Errorf("no %s subcommand", name)
		}
	}
	err := run(context.Background(), []string{"frobnicate"}, strings.NewReader(""), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), `unknown command "frobnicate"`) || !strings.Contains(err.Error(), "sandtray doctor") {
		t.Errorf("unknown command: %v", err)
	}
}
