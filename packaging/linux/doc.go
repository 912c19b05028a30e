// Package linux holds no code: its test runs install.sh, the Linux
// installer in this folder, the way a user runs it from the release archive.
package linux
