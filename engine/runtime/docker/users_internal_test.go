package docker

import (
	"errors"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestLookupIDs(t *testing.T) {
	const passwd = `root:x:0:0:root:/root:/bin/bash

daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
broken:x:abc:1::/:/bin/sh
short:x
2000:x:3000:3000:named like a uid:/:/bin/sh
sandbox:x:1000:1001:Sandbox:/home/sandbox:/bin/sh
sandbox:x:1500:1500:a second entry, never used:/:/bin/sh
`
	const group = `root:x:0:
staff:x:50:sandbox
sandbox:x:1001:
`
	tests := []struct {
		user     string
		uid, gid int
	}{
		{"sandbox", 1000, 1001},     // a name: its entry, first match wins
		{"sandbox:staff", 1000, 50}, // a group name from /etc/group
		{"sandbox:77", 1000, 77},    // a numeric group needs no entry
		{"1000", 1000, 1001},        // a listed uid: its primary group
		{"1234", 1234, 0},           // an unlisted uid: group 0, as runc does
		{"1234:1234", 1234, 1234},   // fully numeric
		{"2000", 2000, 0},           // numeric is always a uid, never the user named "2000"
		{"root", 0, 0},
		{"0:staff", 0, 50},
		{"daemon:sandbox", 1, 1001},
		{"nobody:nogroup", -1, -1},  // not in /etc/passwd
		{"sandbox:nogroup", -1, -1}, // not in /etc/group
		{"broken", -1, -1},          // a malformed entry is skipped
		{"short", -1, -1},
		{"sandbox:", -1, -1},
		{":1000", -1, -1},
		{"4294967296", -1, -1}, // out of range: not numeric, and no such name
	}
	for _, tt := range tests {
		uid, gid, err := lookupIDs(tt.user, []byte(passwd), []byte(group))
		if tt.uid < 0 {
			if !errors.Is(err, sandbox.ErrInvalid) {
				t.Errorf("lookupIDs(%q) = %d, %d, %v; want ErrInvalid", tt.user, uid, gid, err)
			}
			continue
		}
		if err != nil || uid != tt.uid || gid != tt.gid {
			t.Errorf("lookupIDs(%q) = %d, %d, %v; want %d, %d", tt.user, uid, gid, err, tt.uid, tt.gid)
		}
	}

	// A container without the files: numbers still resolve, names do not.
	if uid, gid, err := lookupIDs("1000", nil, nil); err != nil || uid != 1000 || gid != 0 {
		t.Errorf("no /etc/passwd: lookupIDs(1000) = %d, %d, %v; want 1000, 0", uid, gid, err)
	}
	if _, _, err := lookupIDs("sandbox", nil, nil); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("no /etc/passwd: lookupIDs(sandbox) = %v; want ErrInvalid", err)
	}
}
