package tools

import (
	"errors"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestOversizeRequestText: the message the transport sends a request too
// long to read names both sizes and how to send less.
func TestOversizeRequestText(t *testing.T) {
	want := "This request is 2 KiB, over the limit of 1 KiB per request. " +
		"Send less per call: split file content into several write_file calls, or copy a large file with copy_to_sandbox."
	if got := OversizeRequest(2048, 1024); got != want {
		t.Errorf("OversizeRequest(2048, 1024) = %q, want %q", got, want)
	}
}

// An argument problem is a user error (TestBackendErrorsAreSortedByKind in
// package mcpserver sorts the rest).
func TestBadArgumentsAreUserErrors(t *testing.T) {
	if !sandbox.IsUserError(&badArguments{msg: "x"}) || !errors.Is(&badArguments{}, sandbox.ErrInvalid) {
		t.Error("badArguments must classify as sandbox.ErrInvalid")
	}
}
