package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const demoScript = `# The demo: fix a failing test.
> reply
Let me run the tests.
call shell-exec {"command": "go test ./..."}

> reply if result contains FAIL
The test fails; fixing the sign.
call fs-edit {"path": "calc.go",
              "old": "a - b",
              "new": "a + b"}
> else if result matches ^ok\s
Nothing to fix.
> else
\# not a comment
\call not a call
\> not a header

> reply if not result is error
call shell-exec
call git-status {}
> reply
rawcall fs-write {"path": "x"
> error 503 upstream overloaded
> reply if message contains "No file has changed"
I will change one.
> reply
Done.
`

func writeScript(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.script")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func user(s string) Message { return Message{Role: RoleUser, Content: s} }
func result(s string, isErr bool) Message {
	return Message{Role: RoleTool, ToolCallID: "c", Name: "shell-exec", Content: s, IsError: isErr}
}

func say(t *testing.T, m Model, msgs ...Message) (Reply, error) {
	t.Helper()
	return m.Stream(context.Background(), Request{System: "sys", Messages: msgs}, nil)
}

func TestScriptFileBranches(t *testing.T) {
	m, err := New(Config{Provider: "script", Script: writeScript(t, demoScript)})
	if err != nil {
		t.Fatal(err)
	}
	s := m.(*Script)
	if s.Name() != "script:demo.script" {
		t.Errorf("name %q", s.Name())
	}
	var d deltas
	r, err := s.Stream(context.Background(), Request{Messages: []Message{user("fix it")}}, d.on)
	if err != nil || r.Text != "Let me run the tests." || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "shell-exec" ||
		r.ToolCalls[0].Arguments != `{"command":"go test ./..."}` || r.ToolCalls[0].ID != "call_1_0" || r.StopReason != "tool_calls" {
		t.Fatalf("reply 1: %+v, %v", r, err)
	}
	if d.text.String() != r.Text || strings.Join(d.tools, ",") != "shell-exec" {
		t.Errorf("deltas %q %q", d.text.String(), d.tools)
	}

	r, _ = say(t, s, user("fix it"), result("--- FAIL: TestAdd", true))
	if r.Text != "The test fails; fixing the sign." || r.ToolCalls[0].Arguments != `{"path":"calc.go","old":"a - b","new":"a + b"}` {
		t.Errorf("reply 2 (FAIL branch): %+v", r)
	}
	// "if not result is error" does not hold: the reply is skipped and the
	// next one answers.
	r, _ = say(t, s, result("exit status 1", true))
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "fs-write" || r.ToolCalls[0].Arguments != `{"path": "x"` {
		t.Errorf("reply 3 (rawcall after a skip): %+v", r)
	}
	if _, err := ParseArgs(r.ToolCalls[0]); err == nil {
		t.Error("rawcall arguments parsed")
	}
	_, err = say(t, s, user("x"))
	if err == nil || err.Error() != "provider script: 503 upstream overloaded (demo.script:23)" {
		t.Errorf("error reply: %v", err)
	}
	r, _ = say(t, s, result("ok", false), user("No file has changed"))
	if r.Text != "I will change one." {
		t.Errorf("message branch: %q", r.Text)
	}
	r, _ = say(t, s, user("x"))
	if r.Text != "Done." || s.Remaining() != 0 {
		t.Errorf("last: %q, remaining %d", r.Text, s.Remaining())
	}
	for i := 0; i < 2; i++ {
		r, err = say(t, s, user("x"))
		if err != nil || r.Text != ExhaustedText || len(r.ToolCalls) != 0 || r.StopReason != "stop" {
			t.Errorf("exhausted: %+v, %v", r, err)
		}
	}
	if n := len(s.Requests()); n != 8 {
		t.Errorf("%d requests recorded, want 8", n)
	}
}

func TestScriptOtherBranches(t *testing.T) {
	m, err := ParseScript("t.script", []byte(demoScript))
	if err != nil {
		t.Fatal(err)
	}
	say(t, m, user("x"))
	if r, _ := say(t, m, result("ok  pkg 0.1s", false)); r.Text != "Nothing to fix." {
		t.Errorf("matches branch: %q", r.Text)
	}
	if r, _ := say(t, m, result("ok", false)); len(r.ToolCalls) != 2 || r.ToolCalls[0].Name != "shell-exec" || r.ToolCalls[0].Arguments != "{}" || r.ToolCalls[1].ID != "call_3_1" {
		t.Errorf("not-error branch, call with no arguments: %+v", r.ToolCalls)
	}

	m, _ = ParseScript("t.script", []byte(demoScript))
	say(t, m, user("x"))
	r, _ := say(t, m, result("weird", false))
	if r.Text != "# not a comment\ncall not a call\n> not a header" || len(r.ToolCalls) != 0 {
		t.Errorf("else branch with escaped lines: %q %v", r.Text, r.ToolCalls)
	}
}

func TestScriptResultsSubject(t *testing.T) {
	s := NewScript([]ScriptReply{
		{If: &Cond{Subject: "results", Matches: regexp.MustCompile(`(?s)one.*two`)}, Text: "both"},
		{If: &Cond{Subject: "result", Contains: "one"}, Text: "last only"},
		{Text: "fallback"},
	})
	msgs := []Message{user("u"), {Role: RoleAssistant, Content: "a"}, result("one", false), result("two", false)}
	if r, _ := say(t, s, msgs...); r.Text != "both" {
		t.Errorf("results: %q", r.Text)
	}
	if r, _ := say(t, s, msgs...); r.Text != "fallback" {
		t.Errorf("result is the last tool message only: %q", r.Text)
	}
}

func TestScriptExhausted(t *testing.T) {
	s, err := ParseScript("e.script", []byte("> reply\nhi\n> exhausted\nOut of lines.\n"))
	if err != nil {
		t.Fatal(err)
	}
	say(t, s, user("x"))
	if r, _ := say(t, s, user("x")); r.Text != "Out of lines." {
		t.Errorf("custom exhausted text %q", r.Text)
	}
	s, _ = ParseScript("e.script", []byte("> exhausted error the script ran out\n"))
	if _, err := say(t, s, user("x")); err == nil || err.Error() != "provider script: the script ran out (e.script:1)" {
		t.Errorf("exhausted error: %v", err)
	}
	g := NewScript(nil)
	g.SetExhausted(ScriptReply{Err: "no more"})
	if _, err := say(t, g, user("x")); err == nil || err.Error() != "provider script: no more" {
		t.Errorf("SetExhausted: %v", err)
	}
}

func TestScriptParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"hello\n", "bad.script:1: text before the first \"> reply\""},
		{"# c\n\n> reply\ncall fs-write {\"path\": }\n", `bad.script:4: arguments of call fs-write: invalid character '}' looking for beginning of value`},
		{"> reply\ncall fs-write {\"path\":\n \"a\"\n", `bad.script:2: arguments of call fs-write: unexpected end of input`},
		{"> reply\ncall fs-write [1]\n", `bad.script:2: arguments of call fs-write: not a JSON object`},
		{"> reply\ncall\n", `bad.script:2: call needs a tool name`},
		{"> reply\nrawcall\n", `bad.script:2: rawcall needs a tool name`},
		{"> reply if result matches (\n", "bad.script:1: bad regular expression"},
		{"> reply if output contains x\n", `bad.script:1: unknown subject "output"`},
		{"> reply if result has x\n", `bad.script:1: unknown test "has"`},
		{"> reply if result is fine\n", `bad.script:1: expected "is error"`},
		{"> reply if result contains\n", `bad.script:1: contains needs a text`},
		{"> reply if result contains \"x\n", `bad.script:1: bad quoted text`},
		{"> reply when x\n", `bad.script:1: after "reply" expected "if COND"`},
		{"> else\nx\n", `bad.script:1: "> else" with no "> reply if …" before it`},
		{"> reply\na\n> else\nb\n", `bad.script:3: "> else" after an alternative with no condition`},
		{"> replies\n", `bad.script:1: unknown header "> replies"`},
		{"> error\n", `bad.script:1: "> error" needs a message`},
		{"> error boom\ntext\n", `bad.script:2: an error reply (line 1) has no text or calls`},
		{"> exhausted\n> reply\n", `bad.script:2: "> reply" after "> exhausted"`},
		{"> exhausted\n> exhausted\n", `bad.script:2: a second "> exhausted"`},
		{"> exhausted if x\n", `bad.script:1: "> exhausted" takes no condition`},
	}
	for _, c := range cases {
		_, err := ParseScript("bad.script", []byte(c.src))
		if err == nil || !strings.HasPrefix(err.Error(), "provider script: "+c.want) {
			t.Errorf("ParseScript(%q) = %v\nwant provider script: %s…", c.src, err, c.want)
		}
	}
	path := writeScript(t, "> reply\ncall x {\n")
	_, err := LoadScript(path)
	if err == nil || !strings.Contains(err.Error(), path+":2: arguments of call x") {
		t.Errorf("LoadScript error does not name file:line: %v", err)
	}
}

func TestScriptRecordsRequestsAndUsage(t *testing.T) {
	s := NewScript([]ScriptReply{{Text: "abcdefgh", ToolCalls: []ToolCall{ScriptCall("fs-read", `{"path":"a"}`)}}})
	tools := []Tool{{Name: "fs-read", Description: "Read a file.", Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}}
	msgs := []Message{user(strings.Repeat("x", 400))}
	r, err := s.Stream(context.Background(), Request{System: strings.Repeat("s", 400), Messages: msgs, Tools: tools}, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs[0].Content = "changed by the caller afterwards"
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].System != strings.Repeat("s", 400) || reqs[0].Messages[0].Content != strings.Repeat("x", 400) || reqs[0].Tools[0].Name != "fs-read" {
		t.Errorf("recorded %+v", reqs)
	}
	if in := r.Usage.InputTokens; in < 200 || in > 240 {
		t.Errorf("input tokens %d, want about (800 chars + tools)/4", in)
	}
	if out := r.Usage.OutputTokens; out != (8+7+12+3)/4 {
		t.Errorf("output tokens %d", out)
	}
}

func TestScriptCancelled(t *testing.T) {
	s := NewScript([]ScriptReply{{Text: "x"}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Stream(ctx, Request{}, nil)
	if !errors.Is(err, context.Canceled) || s.Remaining() != 1 {
		t.Errorf("err %v, remaining %d", err, s.Remaining())
	}
}

// BenchmarkScriptTurn measures one scripted request of a 20-turn
// conversation with a tool list, as the loop's benchmark makes them.
func BenchmarkScriptTurn(b *testing.B) {
	replies := make([]ScriptReply, 20)
	for i := range replies {
		replies[i] = ScriptReply{ToolCalls: []ToolCall{ScriptCall("shell-exec", `{"command":"true"}`)}}
	}
	tools := make([]Tool, 8)
	for i := range tools {
		tools[i] = Tool{Name: fmt.Sprint("tool", i), Description: "does a thing", Parameters: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}}
	}
	var msgs []Message
	for i := 0; i < 20; i++ {
		msgs = append(msgs, Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c", Name: "shell-exec", Arguments: `{"command":"true"}`}}}, result("", false))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s := NewScript(replies)
		for turn := 0; turn < 20; turn++ {
			_, _ = s.Stream(context.Background(), Request{System: "sys", Messages: msgs[:2*turn], Tools: tools}, nil)
		}
	}
}

// The example in docs/script-provider.md parses and runs as described.
func TestScriptDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/script-provider.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(doc), "## Format")
	_, block, _ := strings.Cut(after, "```\n")
	block, _, _ = strings.Cut(block, "```")
	s, err := ParseScript("doc.script", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	say(t, s, user("fix"))
	if r, _ := say(t, s, result("--- FAIL: TestAdd", true)); len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "fs-edit" {
		t.Errorf("FAIL branch: %+v", r)
	}
	say(t, s, result("ok", false))
	if r, _ := say(t, s, result("ok", false)); r.Text != "The tests pass now. Done." {
		t.Errorf("last reply %q", r.Text)
	}
	if r, _ := say(t, s, user("x")); r.Text != "All done." {
		t.Errorf("exhausted %q", r.Text)
	}
}

// A script saved by a Windows editor: a byte-order mark, CRLF line ends,
// trailing spaces and tabs between words.
func TestScriptFromAWindowsEditor(t *testing.T) {
	src := "\ufeff> reply  \r\nLet me look.\r\ncall\tshell-exec {\"command\": \"ls\"}  \r\n>\treply if result\tcontains  FAIL \r\nFixing.\r\n> else\r\nDone.  \r\n"
	s, err := ParseScript("win.script", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Stream(context.Background(), Request{Messages: []Message{user("go")}}, nil)
	if err != nil || r.Text != "Let me look." || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "shell-exec" || r.ToolCalls[0].Arguments != `{"command":"ls"}` {
		t.Fatalf("%+v %v", r, err)
	}
	r, err = s.Stream(context.Background(), Request{Messages: []Message{user("go"), result("--- FAIL: x", false)}}, nil)
	if err != nil || r.Text != "Fixing." {
		t.Fatalf("%+v %v", r, err)
	}
}
