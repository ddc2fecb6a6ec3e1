package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

var readFile = os.ReadFile

// ParseScript parses a script in the text format of the package doc; name
// is used in error messages (file:line).
func ParseScript(name string, src []byte) (*Script, error) {
	p := scriptParser{name: name}
	s := NewScript(nil)
	s.name = "script:" + filepath.Base(name)
	src = bytes.TrimPrefix(src, []byte("\ufeff")) // a byte-order mark, as Windows editors write
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	var cur *ScriptReply // the alternative being filled
	var text []string
	flush := func() {
		if cur != nil {
			cur.Text = trimBlankLines(text)
		}
		text = nil
	}
	inExhausted := false
	for i := 0; i < len(lines); i++ {
		line, lineNo := lines[i], i+1
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasPrefix(line, ">") {
			flush()
			alt, isElse, exhausted, err := p.header(lineNo, strings.TrimSpace(line[1:]))
			if err != nil {
				return nil, err
			}
			switch {
			case exhausted:
				if inExhausted {
					return nil, p.errf(lineNo, "a second \"> exhausted\"; a script has at most one")
				}
				inExhausted = true
				s.exhausted = *alt
				cur = &s.exhausted
			case isElse:
				if cur == nil || inExhausted {
					return nil, p.errf(lineNo, "\"> else\" with no \"> reply if …\" before it")
				}
				if cur.If == nil {
					return nil, p.errf(lineNo, "\"> else\" after an alternative with no condition, which always holds; add \"if …\" to the one before")
				}
				cur.Else = alt
				cur = alt
			default:
				if inExhausted {
					return nil, p.errf(lineNo, "\"> reply\" after \"> exhausted\"; put \"> exhausted\" last")
				}
				s.replies = append(s.replies, *alt)
				cur = &s.replies[len(s.replies)-1]
			}
			continue
		}
		if cur != nil && cur.Err != "" && trimmed != "" {
			return nil, p.errf(lineNo, "an error reply (line %d) has no text or calls; start the next reply with \"> reply\"", cur.Line)
		}
		if cur == nil {
			if trimmed == "" {
				continue
			}
			return nil, p.errf(lineNo, "text before the first \"> reply\"; start each reply with a line \"> reply\"")
		}
		word, rest := cutSpace(trimmed)
		switch word {
		case "call":
			callName, args := cutSpace(rest)
			if callName == "" {
				return nil, p.errf(lineNo, "call needs a tool name: call NAME {JSON arguments}")
			}
			args = strings.TrimSpace(args)
			// JSON may go on over the following lines until it is complete.
			start := lineNo
			for args != "" && !json.Valid([]byte(args)) && i+1 < len(lines) && incompleteJSON(args) {
				i++
				args += "\n" + lines[i]
			}
			if args == "" {
				args = "{}"
			}
			v, err := decodeOne(args)
			if _, isObj := v.(map[string]any); err != nil || !isObj {
				msg := "not a JSON object"
				if err != nil {
					msg = err.Error()
				}
				return nil, p.errf(start, "arguments of call %s: %s; write one JSON object, or use rawcall for arguments that are malformed on purpose", callName, msg)
			}
			cur.ToolCalls = append(cur.ToolCalls, ToolCall{Name: callName, Arguments: compactJSON(args)})
		case "rawcall":
			callName, args := cutSpace(rest)
			if callName == "" {
				return nil, p.errf(lineNo, "rawcall needs a tool name: rawcall NAME TEXT")
			}
			cur.ToolCalls = append(cur.ToolCalls, ToolCall{Name: callName, Arguments: args})
		default:
			text = append(text, strings.TrimPrefix(line, `\`))
		}
	}
	flush()
	return s, nil
}

type scriptParser struct{ name string }

func (p scriptParser) errf(line int, format string, args ...any) error {
	return fmt.Errorf("provider script: %s:%d: %s", p.name, line, fmt.Sprintf(format, args...))
}

// header parses what follows ">" on a header line.
func (p scriptParser) header(line int, h string) (alt *ScriptReply, isElse, exhausted bool, err error) {
	alt = &ScriptReply{Line: line}
	word, rest := cutSpace(h)
	switch word {
	case "reply":
	case "error":
		if rest == "" {
			return nil, false, false, p.errf(line, "\"> error\" needs a message: > error TEXT")
		}
		alt.Err = rest
		return alt, false, false, nil
	case "else":
		isElse = true
	case "exhausted":
		if w, msg := cutSpace(rest); w == "error" && msg != "" {
			alt.Err = msg
		} else if rest != "" {
			return nil, false, false, p.errf(line, "\"> exhausted\" takes no condition; write \"> exhausted\" or \"> exhausted error TEXT\"")
		}
		return alt, false, true, nil
	default:
		return nil, false, false, p.errf(line, "unknown header %q; use \"> reply\", \"> reply if COND\", \"> else if COND\", \"> else\", \"> error TEXT\" or \"> exhausted\"", "> "+h)
	}
	if rest == "" {
		return alt, isElse, false, nil
	}
	w, cond := cutSpace(rest)
	if w != "if" {
		return nil, false, false, p.errf(line, "after %q expected \"if COND\", found %q", word, rest)
	}
	alt.If, err = p.cond(line, cond)
	return alt, isElse, false, err
}

// cond parses "[not] SUBJECT contains TEXT | matches REGEXP | is error".
func (p scriptParser) cond(line int, s string) (*Cond, error) {
	c := &Cond{}
	subject, s := cutSpace(s)
	if subject == "not" {
		c.Not = true
		subject, s = cutSpace(s)
	}
	switch subject {
	case "result", "results", "message":
		c.Subject = subject
	default:
		return nil, p.errf(line, "unknown subject %q; a condition is [not] result|results|message contains TEXT | matches REGEXP | is error", subject)
	}
	op, arg := cutSpace(s)
	if strings.HasPrefix(arg, `"`) {
		u, err := strconv.Unquote(arg)
		if err != nil {
			return nil, p.errf(line, "bad quoted text %s: %v", arg, err)
		}
		arg = u
	}
	switch op {
	case "contains":
		if arg == "" {
			return nil, p.errf(line, "contains needs a text")
		}
		c.Contains = arg
	case "matches":
		re, err := regexp.Compile(arg)
		if err != nil {
			return nil, p.errf(line, "bad regular expression: %v", err)
		}
		c.Matches = re
	case "is":
		if arg != "error" {
			return nil, p.errf(line, "expected \"is error\", found \"is %s\"", arg)
		}
		c.IsError = true
	default:
		return nil, p.errf(line, "unknown test %q; use contains, matches or is error", op)
	}
	return c, nil
}

// cutSpace cuts s at its first run of white space (spaces or tabs): the
// first word, and the rest trimmed.
func cutSpace(s string) (word, rest string) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

func incompleteJSON(s string) bool {
	var v any
	err := json.Unmarshal([]byte(s), &v)
	return err != nil && strings.Contains(err.Error(), "unexpected end of JSON input")
}

func compactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

func trimBlankLines(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}
