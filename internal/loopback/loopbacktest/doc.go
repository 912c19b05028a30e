// Package loopbacktest lets tests connect to a loopback port as another
// user, the way another local user's process would: the connection's socket
// is made under that user's file-system uid (setfsuid), so the kernel lists
// it as theirs in /proc/net/tcp. It needs CAP_SETUID (root); without it
// DialAs says so and tests skip.
package loopbacktest
