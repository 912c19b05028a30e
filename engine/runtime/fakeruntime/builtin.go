package fakeruntime

import (
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"
)

// Builtin runs p on the fake's tiny shell: a "/bin/sh -c script" whose
// simple commands are separated by newlines, ";", "&&" or "||", with
// $NAME and ${NAME} expanded from p's environment, quotes, and the
// redirections ">", ">>" and "2>" to a file of the container (or
// /dev/null), "2>&1" and ">&2"; or a command given as words. Its commands are
// true, false, :, exit, echo, cat (of files, or of its stdin), sleep, mkdir [-p], rm [-rf], cd, pwd and
// hostname; any other is "not found" (exit code 127). A killed process
// exits with 137.
func (p *Proc) Builtin() int {
	sh := &shell{p: p, cwd: cmpOr(p.Workdir, "/")}
	if len(p.Cmd) >= 3 && (p.Cmd[0] == "/bin/sh" || p.Cmd[0] == "sh") && p.Cmd[1] == "-c" {
		return sh.script(p.Cmd[2], p.Cmd[3:])
	}
	return sh.simple(p.Cmd, p.Stdout, p.Stderr)
}

type shell struct {
	p    *Proc
	cwd  string
	args []string // $0, $1, …
	exit bool
}

// token is a word, or an operator ("\n", ";", "&&", "||").
type token struct {
	word string
	op   string
}

func (sh *shell) expand(s string) string {
	return expandVars(s, func(name string) string {
		if n, err := strconv.Atoi(name); err == nil {
			if n < len(sh.args) {
				return sh.args[n]
			}
			return ""
		}
		return sh.p.Getenv(name)
	})
}

func expandVars(s string, get func(string) string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		var name string
		if s[j] == '{' {
			end := strings.IndexByte(s[j:], '}')
			if end < 0 {
				b.WriteByte(s[i])
				continue
			}
			name, i = s[j+1:j+end], j+end
		} else {
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if j == i+1 {
				b.WriteByte(s[i])
				continue
			}
			name, i = s[i+1:j], j-1
		}
		b.WriteString(get(name))
	}
	return b.String()
}

// tokenize splits a script into words and operators, honouring quotes
// (single: literal; double: with $ expansion).
func (sh *shell) tokenize(s string) []token {
	var out []token
	var word strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			out = append(out, token{word: word.String()})
			word.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				end = len(s) - i - 1
			}
			word.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				end = len(s) - i - 1
			}
			word.WriteString(sh.expand(s[i+1 : i+1+end]))
			i += end + 1
			inWord = true
		case c == '\n' || c == ';':
			flush()
			out = append(out, token{op: string(c)})
		case (c == '&' || c == '|') && i+1 < len(s) && s[i+1] == c:
			flush()
			out = append(out, token{op: s[i : i+2]})
			i++
		case c == ' ' || c == '\t':
			flush()
		case c == '$':
			j := i + 1
			if j < len(s) && s[j] == '{' {
				if end := strings.IndexByte(s[j:], '}'); end >= 0 {
					j += end + 1
				}
			} else {
				for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
					j++
				}
			}
			word.WriteString(sh.expand(s[i:j]))
			i = j - 1
			inWord = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return out
}

// script runs s with positional parameters args ($0, $1, …).
func (sh *shell) script(s string, args []string) int {
	sh.args = args
	code := 0
	skip := false
	var cmd []string
	run := func() {
		if len(cmd) > 0 && !skip {
			code = sh.simple(cmd, sh.p.Stdout, sh.p.Stderr)
		}
		cmd = cmd[:0]
	}
	for _, t := range sh.tokenize(s) {
		if sh.exit {
			return code
		}
		if t.op == "" {
			cmd = append(cmd, t.word)
			continue
		}
		run()
		switch t.op {
		case "&&":
			skip = code != 0
		case "||":
			skip = code == 0
		default:
			skip = false
		}
	}
	if !sh.exit {
		run()
	}
	return code
}

// simple runs one command with its redirections.
func (sh *shell) simple(argv []string, stdout, stderr io.Writer) int {
	var args []string
	var files []func()
	defer func() {
		for _, f := range files {
			f()
		}
	}()
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		target := ""
		op := ""
		for _, o := range []string{"2>&1", "1>&2", ">&2", "2>>", "2>", ">>", ">"} {
			if strings.HasPrefix(a, o) {
				op, target = o, strings.TrimPrefix(a, o)
				break
			}
		}
		if op == "" {
			args = append(args, a)
			continue
		}
		if op == "2>&1" {
			stderr = stdout
			continue
		}
		if op == "1>&2" || op == ">&2" {
			stdout = stderr
			continue
		}
		if target == "" && i+1 < len(argv) {
			i++
			target = argv[i]
		}
		w := sh.fileWriter(target, strings.HasSuffix(op, ">>"), &files)
		if strings.HasPrefix(op, "2") {
			stderr = w
		} else {
			stdout = w
		}
	}
	if len(args) == 0 {
		return 0
	}
	if sh.p.Killed() {
		return 137
	}
	return sh.command(args, stdout, stderr)
}

// fileWriter is a redirection's target; the file is written when the
// command ends (done appends its write).
func (sh *shell) fileWriter(name string, appending bool, done *[]func()) io.Writer {
	if name == "/dev/null" {
		return io.Discard
	}
	var buf strings.Builder
	abs := sh.abs(name)
	*done = append(*done, func() {
		data := buf.String()
		if appending {
			if old, err := sh.p.ReadFile(abs); err == nil {
				data = string(old) + data
			}
		}
		_ = sh.p.WriteFile(abs, []byte(data))
	})
	return &buf
}

func (sh *shell) abs(name string) string {
	if strings.HasPrefix(name, "/") {
		return path.Clean(name)
	}
	return path.Clean(sh.cwd + "/" + name)
}

func (sh *shell) command(args []string, stdout, stderr io.Writer) int {
	p := sh.p
	switch args[0] {
	case "true", ":":
		return 0
	case "false":
		return 1
	case "exit":
		sh.exit = true
		if len(args) > 1 {
			n, _ := strconv.Atoi(args[1])
			return n
		}
		return 0
	case "echo":
		fmt.Fprintln(stdout, strings.Join(args[1:], " "))
		return 0
	case "pwd":
		fmt.Fprintln(stdout, sh.cwd)
		return 0
	case "hostname":
		fmt.Fprintln(stdout, p.Hostname)
		return 0
	case "cd":
		dir := "/"
		if rest := dashDash(args[1:]); len(rest) > 0 {
			dir = sh.abs(rest[0])
		}
		if !sh.isDir(dir) {
			fmt.Fprintf(stderr, "sh: 1: cd: can't cd to %s\n", dir)
			return 2
		}
		sh.cwd = dir
		return 0
	case "cat":
		code := 0
		if len(args) == 1 && p.Stdin != nil { // cat with no file copies its stdin
			_, _ = io.Copy(stdout, p.Stdin)
		}
		for _, name := range dashDash(args[1:]) {
			data, err := p.ReadFile(sh.abs(name))
			if err != nil {
				fmt.Fprintf(stderr, "cat: %s: No such file or directory\n", name)
				code = 1
				continue
			}
			_, _ = stdout.Write(data)
		}
		return code
	case "sleep":
		if len(args) < 2 {
			fmt.Fprintln(stderr, "sleep: missing operand")
			return 1
		}
		if args[1] == "infinity" {
			<-p.Done()
			return 137
		}
		secs, err := strconv.ParseFloat(args[1], 64)
		if err != nil {
			fmt.Fprintf(stderr, "sleep: invalid time interval '%s'\n", args[1])
			return 1
		}
		if !p.Sleep(time.Duration(secs * float64(time.Second))) {
			return 137
		}
		return 0
	case "mkdir":
		for _, name := range dashDash(args[1:]) {
			p.r.d.mu.Lock()
			err := p.c.files.mkdirAll(sh.abs(name), 0o755, 0, 0, true)
			p.r.d.mu.Unlock()
			if err != nil {
				fmt.Fprintf(stderr, "mkdir: cannot create directory '%s': File exists\n", name)
				return 1
			}
		}
		return 0
	case "rm":
		for _, name := range dashDash(args[1:]) {
			p.r.d.mu.Lock()
			p.c.files.remove(sh.abs(name))
			p.r.d.mu.Unlock()
		}
		return 0
	}
	fmt.Fprintf(stderr, "sh: 1: %s: not found\n", args[0])
	return 127
}

func (sh *shell) isDir(dir string) bool {
	sh.p.r.d.mu.Lock()
	defer sh.p.r.d.mu.Unlock()
	n, ok := sh.p.c.files[clean(dir)]
	return ok && n.mode.IsDir()
}

// dashDash drops a command's options ("-p", "-rf") and a "--".
func dashDash(args []string) []string {
	var out []string
	opts := true
	for _, a := range args {
		switch {
		case opts && a == "--":
			opts = false
		case opts && strings.HasPrefix(a, "-") && len(a) > 1:
		default:
			out = append(out, a)
		}
	}
	return out
}
