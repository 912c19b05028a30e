package run

import (
	"errors"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestLanguageFor(t *testing.T) {
	for _, name := range []string{"", "Python", "py", "node", "js", "C", "c++", "bash"} {
		if _, err := LanguageFor(name); err != nil {
			t.Errorf("LanguageFor(%q): %v", name, err)
		}
	}
	_, err := LanguageFor("cobol")
	if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "python, bash") {
		t.Errorf("unknown language: %v, want ErrInvalid listing the languages", err)
	}
}
