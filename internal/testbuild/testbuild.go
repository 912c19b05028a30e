// Package testbuild builds the project's commands for tests that run them
// as programs, with the race detector when the test binary itself has it
// (go test -race): the build then reuses the packages go test compiled,
// Fyne's and GLFW's C included, instead of compiling the whole tree a
// second time, and the program runs under the same detector as its test.
package testbuild

import (
	"os/exec"
)

// Command is `go build -o out pkgs...`, with -race when the calling test
// binary was built with it.
func Command(out string, pkgs ...string) *exec.Cmd {
	args := []string{"build"}
	if race {
		args = append(args, "-race")
	}
	args = append(args, "-o", out)
	return exec.Command("go", append(args, pkgs...)...)
}
