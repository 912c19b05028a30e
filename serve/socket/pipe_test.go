package socket

import "testing"

func TestPipeName(t *testing.T) {
	tests := []struct{ user, want string }{
		{`alice`, `\\.\pipe\sandtray-alice`},
		{`DESKTOP-1Q2W\Alice`, `\\.\pipe\sandtray-desktop-1q2w.alice`},
		{`CORP\bob smith`, `\\.\pipe\sandtray-corp.bob_smith`},
		{`ZOË`, `\\.\pipe\sandtray-zo_`},
		{`a/b:c*d`, `\\.\pipe\sandtray-a_b_c_d`}, // nothing that reads as a path
		{``, `\\.\pipe\sandtray-user`},
	}
	for _, tc := range tests {
		if got := pipeName(tc.user); got != tc.want {
			t.Errorf("pipeName(%q) = %q, want %q", tc.user, got, tc.want)
		}
		if !isPipePath(pipeName(tc.user)) {
			t.Errorf("isPipePath(pipeName(%q)) = false", tc.user)
		}
	}
}

func TestIsPipePath(t *testing.T) {
	for p, want := range map[string]bool{
		`\\.\pipe\sandtray-alice`:          true,
		`\\.\PIPE\x`:                       true,
		`\\.\pipe\`:                        false, // no name
		`C:\Users\alice\mcp.sock`:          false,
		`/run/user/1000/sandtray/mcp.sock`: false,
		`\\server\pipe\x`:                  false, // remote pipes are never ours
	} {
		if got := isPipePath(p); got != want {
			t.Errorf("isPipePath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestPipeSDDLAdmitsOnlyTheUser(t *testing.T) {
	const sid = "S-1-5-21-1004336348-1177238915-682003330-1001"
	want := "O:" + sid + "D:P(A;;GA;;;" + sid + ")"
	if got := pipeSDDL(sid); got != want {
		t.Errorf("pipeSDDL = %q, want %q (owner the user; protected DACL; one allow entry, the user's)", got, want)
	}
}
