package mcp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var providerName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 70)
	for _, tc := range []struct{ server, tool, name, note string }{
		{"github", "create_issue", "github__create_issue", ""},
		{"fs", "read-file", "fs__read-file", ""},
		{"my.server", "tool.get", "my_server__tool_get", `'.' replaced by '_'`},
		{"a b", "héllo/x", "a_b__h_llo_x", `U+0020 'é' '/' replaced by '_'`},
		{"s", long, "s__" + long[:64-9-3] + "_", "cut to 64 characters with a hash"},
	} {
		name, note := ToolName(tc.server, tc.tool)
		if !strings.HasPrefix(name, tc.name) || !providerName.MatchString(name) {
			t.Errorf("ToolName(%q, %q) = %q, want %q (and a provider's name)", tc.server, tc.tool, name, tc.name)
		}
		if tc.note == "" && note != "" || !strings.Contains(note, tc.note) {
			t.Errorf("ToolName(%q, %q) note %q, want %q", tc.server, tc.tool, note, tc.note)
		}
	}
	// Two long names that differ past the cut stay apart.
	a, _ := ToolName("s", long+"a")
	b, _ := ToolName("s", long+"b")
	if a == b || len(a) != 64 {
		t.Errorf("long names %q and %q", a, b)
	}
}

func TestUniqueNames(t *testing.T) {
	// "a.b" and "a_b" sanitize to one name; both are offered, apart.
	tools := []*sdk.Tool{{Name: "a.b"}, {Name: "a_b"}, {Name: "a-b"}}
	taken := map[string]bool{}
	var names []string
	for _, tl := range tools {
		tool := newTool("s", tl)
		name := uniqueName(tool.Name, "s__"+tl.Name, taken)
		taken[name] = true
		names = append(names, name)
		if !providerName.MatchString(name) {
			t.Errorf("%q is not a provider's name", name)
		}
	}
	if names[0] != "s__a_b" || names[1] == names[0] || names[2] != "s__a-b" {
		t.Errorf("names %v", names)
	}
	// Many clashes of a name at the length limit stay within it.
	long := strings.Repeat("y", 64)
	for i := range 20 {
		name := uniqueName(long, fmt.Sprint(i%2), taken)
		if taken[name] || !providerName.MatchString(name) {
			t.Fatalf("clash %d: %q", i, name)
		}
		taken[name] = true
	}
}

func TestSummary(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Echo the text back. Useful for checks.", "Echo the text back."},
		{"  Read a file\n  from disk.  Then more.", "Read a file from disk."},
		{"Search code, e.g. functions. More.", "Search code, e.g. functions."},
		{"Version 1.2 of the API. More", "Version 1.2 of the API."},
		{"First paragraph without a stop\n\nSecond paragraph.", "First paragraph without a stop"},
		{"", ""},
		{strings.Repeat("word ", 40), strings.TrimSpace(strings.Repeat("word ", 23)) + "…"},
		{strings.Repeat("é", 100), strings.Repeat("é", 58) + "…"},
	} {
		got := Summary(tc.in)
		if got != tc.want {
			t.Errorf("Summary(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if len(got) > SummaryLen {
			t.Errorf("Summary(%q) is %d bytes", tc.in, len(got))
		}
	}
}

func TestArgRoles(t *testing.T) {
	schema := `{"type":"object","properties":{
		"path":        {"type":"string"},
		"filePath":    {"type":"string","description":"where"},
		"output_dir":  {"type":"string"},
		"target":      {"type":"string","description":"Absolute path to the file to write."},
		"paths":       {"type":"array","items":{"type":"string"}},
		"url":         {"type":"string"},
		"endpoint":    {"description":"the service"},
		"home":        {"type":"string","format":"uri"},
		"source":      {"type":"string","description":"The URL to fetch, http:// or https://."},
		"links":       {"type":"array","items":{"type":"string","format":"uri"}},
		"recursive_dir": {"type":"boolean"},
		"profile":     {"type":"string","description":"Which profile to use."},
		"count":       {"type":"integer","description":"how many files"},
		"fileCount":   {"type":["integer","null"]},
		"either":      {"type":["string","null"],"description":"A directory path, or null."}
	}}`
	var got []string
	for _, r := range ArgRoles(json.RawMessage(schema)) {
		s := fmt.Sprintf("%s=%s(%s)", r.Name, r.Role, r.Why)
		if r.Array {
			s += "[]"
		}
		got = append(got, s)
	}
	want := []string{
		"either=path(description)",
		"endpoint=url(name)",
		"filePath=path(name)",
		"home=url(format uri)",
		"links=url(format uri)[]",
		"output_dir=path(name)",
		"path=path(name)",
		"paths=path(name)[]",
		"source=url(description)",
		"target=path(description)",
		"url=url(name)",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("roles\n got %v\nwant %v", got, want)
	}
	if r := ArgRoles(json.RawMessage(`"not an object"`)); r != nil {
		t.Errorf("a bad schema: %v", r)
	}
}

func TestNameWords(t *testing.T) {
	for in, want := range map[string]string{
		"filePath": "file path", "file_path": "file path", "file-path": "file path",
		"URLPath": "url path", "baseURL": "base url", "path": "path", "HTMLFile": "html file",
	} {
		if got := strings.Join(nameWords(in), " "); got != want {
			t.Errorf("nameWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResultText(t *testing.T) {
	r := resultText(&sdk.CallToolResult{StructuredContent: map[string]any{"n": 1}})
	if r.Text != `{"n":1}` {
		t.Errorf("structured only: %q", r.Text)
	}
	r = resultText(&sdk.CallToolResult{IsError: true, Content: []sdk.Content{
		&sdk.TextContent{Text: "bad"},
		&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("1234")},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "x:y", Blob: []byte("12")}},
	}})
	if want := "bad\n[audio audio/wav, 4 bytes]\n[resource x:y, 2 bytes]"; r.Text != want || !r.IsError {
		t.Errorf("got %+v, want %q", r, want)
	}
}
