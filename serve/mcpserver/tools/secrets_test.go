package tools

import (
	"strings"
	"testing"
)

func TestListSecretsTextNone(t *testing.T) {
	if got := secretsText(secretsListed{}); !strings.Contains(got, "Settings → Secrets") {
		t.Fatal(got)
	}
}
