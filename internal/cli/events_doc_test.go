package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/sandbox"
	"github.com/nodwyn/nodwyn/internal/store"
)

// docField is one row of a table in docs/events.md.
type docField struct {
	typ     string // "string", "integer", "boolean", "object", "list of strings", "list of objects"
	always  bool
	meaning string
}

// eventDoc reads docs/events.md: the event's top-level keys (type "") and,
// for each type, its data fields ("tool_calls[].id" for a list's objects).
func eventDoc(t *testing.T) (map[string]map[string]docField, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "events.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]map[string]docField{"": {}}
	section := ""
	heading := regexp.MustCompile("^## `([a-z._]+)`$")
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if m := heading.FindStringSubmatch(line); m != nil {
			section = m[1]
			doc[section] = map[string]docField{}
			continue
		}
		if strings.HasPrefix(line, "## ") {
			section = "-" // not an event's section
			continue
		}
		if !strings.HasPrefix(line, "| `") || section == "-" {
			continue
		}
		cells := strings.Split(line, "|")
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		doc[section][name] = docField{typ: strings.TrimSpace(cells[2]), always: strings.TrimSpace(cells[3]) == "always", meaning: strings.TrimSpace(cells[4])}
	}
	return doc, string(b)
}

func jsonTypeIs(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "number":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "list of strings", "list of objects":
		l, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range l {
			if !jsonTypeIs(e, strings.TrimSuffix(strings.TrimPrefix(typ, "list of "), "s")) {
				return false
			}
		}
		return true
	}
	return false
}

// checkFields checks an object's keys against the documented fields whose
// names start with prefix: each key documented with its type, each field
// documented as always there.
func checkFields(t *testing.T, what string, obj map[string]any, fields map[string]docField, prefix string) {
	t.Helper()
	for k, v := range obj {
		f, ok := fields[prefix+k]
		if !ok {
			t.Errorf("%s: field %s is not in docs/events.md", what, prefix+k)
			continue
		}
		if !jsonTypeIs(v, f.typ) {
			t.Errorf("%s: field %s is %T (%v), docs/events.md says %s", what, prefix+k, v, v, f.typ)
		}
		if f.typ == "list of objects" {
			for _, e := range v.([]any) {
				checkFields(t, what, e.(map[string]any), fields, prefix+k+"[].")
			}
		}
	}
	for name, f := range fields {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || strings.Contains(rest, ".") || !f.always {
			continue
		}
		if _, there := obj[rest]; !there {
			t.Errorf("%s: field %s is documented as always there but is missing", what, name)
		}
	}
}

// Every event a --json run writes has the fields docs/events.md lists for
// its type, with the documented JSON types, and every type the document
// lists occurs; the first event carries the schema version (issue 8 item 19).
func TestJSONEventsAreAsDocumented(t *testing.T) {
	scratchInTest(t) // a sandbox-mode run keeps its scratch directory
	doc, text := eventDoc(t)
	if !strings.Contains(text, fmt.Sprintf("now **%d**", store.EventSchema)) {
		t.Errorf("docs/events.md does not say the schema version is %d", store.EventSchema)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(proj, 0o755)
	script := filepath.Join(dir, "m.script")
	os.WriteFile(script, []byte(`> reply
Looking.
call shell-exec {"command": "echo hi"}
call fs-write {"path": "a.txt", "content": "a\n"}
call fs-find {"pattern": "*.txt"}
call run-tests {"command": "echo tested"}
> reply
rawcall fs-read {"path":
call no-such-tool {}
call shell-exec {"command": "cat ~/.ssh/id_rsa"}
> reply
Done.
> error boom
`), 0o644)
	// A working copy (from a --contract file), so run-tests runs and a
	// self_validation event is emitted.
	contract := filepath.Join(dir, "contract.toml")
	os.WriteFile(contract, []byte("[sandbox]\nmode = \"working_copy\"\n"), 0o644)
	getenv := homeEnv(home)
	var stdout, stderr bytes.Buffer
	Main([]string{"run", "--sandbox", "container", "--json", "--contract", contract, "--script", script, "-C", proj, "go"},
		strings.NewReader(""), &stdout, &stderr, getenv)

	seen := map[string]bool{}
	ids := map[string]map[string]bool{} // type → the call ids it carried
	check := func(out string) {
		n := 0
		for line := range strings.Lines(out) {
			var ev map[string]any
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("not a JSON line: %q (%v)", line, err)
			}
			n++
			typ, _ := ev["type"].(string)
			what := fmt.Sprintf("event %d (%s)", n, typ)
			if n == 1 {
				if ev["schema"] != float64(store.EventSchema) {
					t.Errorf("%s: schema %v, want %d", what, ev["schema"], store.EventSchema)
				}
			} else if _, has := ev["schema"]; has {
				t.Errorf("%s: schema on an event after the first", what)
			}
			top := map[string]any{}
			for k, v := range ev {
				top[k] = v
			}
			delete(top, "schema") // checked above
			checkFields(t, what, top, doc[""], "")
			fields, ok := doc[typ]
			if !ok {
				t.Errorf("%s: type %q is not in docs/events.md", what, typ)
				continue
			}
			seen[typ] = true
			data, _ := ev["data"].(map[string]any)
			checkFields(t, what, data, fields, "")
			if strings.HasPrefix(typ, "tool.") {
				if ids[typ] == nil {
					ids[typ] = map[string]bool{}
				}
				ids[typ][fmt.Sprint(data["id"])] = true
			}
		}
	}
	check(stdout.String())
	// A run with --judge, for the judge event (sandbox mode has none).
	judged := filepath.Join(dir, "j.script")
	os.WriteFile(judged, []byte("> reply\ncall shell-exec {\"command\": \"rm -rf build\"}\n> reply\nno, keep it\n> reply\nDone.\n"), 0o644)
	var jout bytes.Buffer
	Main([]string{"run", "--judge", "--json", "--script", judged, "-C", proj, "go"}, strings.NewReader(""), &jout, &stderr, getenv)
	check(jout.String())
	stdout.WriteString(jout.String())
	// A run that compacts, for model.aside and compaction: results long
	// enough that a summary is smaller than them (a summary that is not is
	// refused), and a window so
	// small that the first turns are over it, and one message kept.
	cfgDir := filepath.Join(home, ".config", "nodwyn")
	os.MkdirAll(cfgDir, 0o755)
	os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("[provider]\ncontext_window = 1000\n"), 0o644)
	os.WriteFile(filepath.Join(cfgDir, "init.scm"), []byte("(define compact-keep 1)\n"), 0o644)
	compacted := filepath.Join(dir, "c.script")
	os.WriteFile(compacted, []byte("> reply\ncall shell-exec {\"command\": \"seq 1 150\"}\n> reply\ncall shell-exec {\"command\": \"seq 151 300\"}\n> reply\n1. Task: echo. 2. Done: a.\n> reply\nDone.\n"), 0o644)
	var cout bytes.Buffer
	Main([]string{"run", "--unattended", "--json", "--script", compacted, "-C", proj, "go"}, strings.NewReader(""), &cout, &stderr, getenv)
	check(cout.String())
	stdout.WriteString(cout.String())
	// A run whose command goes through the egress proxy, for net.conn:
	// where the session's namespaces can be had (root).
	if ns, err := sandbox.NewSessionNS(true); err == nil {
		ns.Close()
		b, _ := json.Marshal(map[string]string{"command": viaProxy("http://127.0.0.1:9/x")})
		netScript := filepath.Join(dir, "n.script")
		os.WriteFile(netScript, []byte("> reply\ncall shell-exec "+string(b)+"\n> reply\nDone.\n"), 0o644)
		var nout bytes.Buffer
		Main([]string{"run", "--unattended", "--yolo", "--json", "--script", netScript, "-C", proj, "go"}, strings.NewReader(""), &nout, &stderr, getenv)
		check(nout.String())
		stdout.WriteString(nout.String())
	} else {
		t.Logf("net.conn not checked: no session namespaces here (%v)", err)
		seen["net.conn"] = true
	}
	// A run with an MCP server (this test binary, TestMain), for
	// mcp.server; its tool's call is an ordinary confirm, declined.
	os.Remove(filepath.Join(cfgDir, "init.scm"))
	os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(fmt.Sprintf("[mcp.servers.test]\ncommand = %q\nenv = { NODWYN_MCPTEST = \"1\" }\n", os.Args[0])), 0o644)
	mcpScript := filepath.Join(dir, "mcp.script")
	os.WriteFile(mcpScript, []byte("> reply\ncall test__echo {\"text\": \"hi\"}\n> reply\nDone.\n"), 0o644)
	var mout bytes.Buffer
	Main([]string{"run", "--unattended", "--json", "--script", mcpScript, "-C", proj, "go"}, strings.NewReader(""), &mout, &stderr, getenv)
	check(mout.String())
	stdout.WriteString(mout.String())
	for typ := range doc {
		if typ != "" && !seen[typ] {
			t.Errorf("docs/events.md lists %s, which the run did not emit (the test should make one)", typ)
		}
	}
	for _, id := range []string{"call_1_0", "call_1_1", "call_1_2", "call_1_3", "call_2_0", "call_2_1", "call_2_2"} {
		for _, typ := range []string{"tool.call", "tool.result"} {
			if !ids[typ][id] {
				t.Errorf("no %s with id %s", typ, id)
			}
		}
	}
	if !ids["tool.decision"]["call_2_2"] {
		t.Errorf("no tool.decision with id call_2_2")
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}

// goFields are a struct's fields by json name, an embedded struct's among
// them (as encoding/json and event.Map see them), with whether each is
// omitempty.
func goFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue // an embedded struct's fields are visible themselves
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name // as JSON would name it: the test then says it is not documented
		}
		out[name] = f
	}
	return out
}

// goTypeIs reports whether a Go type holds the documented JSON type.
func goTypeIs(t reflect.Type, typ string) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch typ {
	case "string":
		return t.Kind() == reflect.String
	case "integer":
		return t.Kind() == reflect.Int || t.Kind() == reflect.Int64
	case "number":
		return t.Kind() == reflect.Float64
	case "boolean":
		return t.Kind() == reflect.Bool
	case "object":
		return t.Kind() == reflect.Struct || t.Kind() == reflect.Map && t.Key().Kind() == reflect.String
	case "list of strings":
		return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String
	case "list of objects":
		return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct
	}
	return false
}

// checkGoFields checks a struct's fields against the documented fields whose
// names start with prefix, both ways: the same json names, compatible
// types, and omitempty exactly where the document says "when".
func checkGoFields(t *testing.T, what string, st reflect.Type, fields map[string]docField, prefix string) {
	t.Helper()
	gf := goFields(st)
	for name, f := range gf {
		df, ok := fields[prefix+name]
		if !ok {
			t.Errorf("%s: %s.%s (json %q) is not in docs/events.md", what, st.Name(), f.Name, prefix+name)
			continue
		}
		if !goTypeIs(f.Type, df.typ) {
			t.Errorf("%s: %s.%s is %s, docs/events.md says %s", what, st.Name(), f.Name, f.Type, df.typ)
		}
		omit := strings.HasSuffix(f.Tag.Get("json"), ",omitempty")
		if omit == df.always {
			t.Errorf("%s: %s.%s omitempty is %v, docs/events.md says it is there %q", what, st.Name(), f.Name, omit, map[bool]string{true: "always", false: "when …"}[df.always])
		}
		if k := f.Type.Kind(); omit && k != reflect.String && k != reflect.Pointer && k != reflect.Slice && k != reflect.Map {
			t.Errorf("%s: %s.%s is omitempty but a %s: event.Map leaves out only \"\", nil pointers, lists and maps", what, st.Name(), f.Name, f.Type)
		}
		elem := f.Type
		if elem.Kind() == reflect.Slice {
			elem = elem.Elem()
		}
		if elem.Kind() != reflect.Struct {
			continue
		}
		if df.typ == "list of objects" {
			checkGoFields(t, what, elem, fields, prefix+name+"[].")
			continue
		}
		// An object whose keys the document names in its meaning
		// (run.start's confinement).
		for sub := range goFields(elem) {
			if !strings.Contains(df.meaning, "`"+sub+"`") {
				t.Errorf("%s: %s's key %s (%s) is not named in docs/events.md's meaning of %s", what, prefix+name, sub, elem.Name(), prefix+name)
			}
		}
	}
	for name := range fields {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || strings.Contains(rest, ".") {
			continue
		}
		if _, there := gf[rest]; !there {
			t.Errorf("%s: docs/events.md lists %s, which %s has no field for", what, name, st)
		}
	}
}

// The types the session builds its events with (internal/event) are the
// document: each documented type has one, each type is documented, and
// their fields are the same both ways (names, JSON types, and omitempty
// where the document says "when"), so neither can change without the
// other.
func TestEventTypesAreAsDocumented(t *testing.T) {
	doc, _ := eventDoc(t)
	types := map[string]event.Data{}
	for _, d := range event.Types() {
		types[d.Type()] = d
	}
	for typ, fields := range doc {
		if typ == "" {
			continue
		}
		d, ok := types[typ]
		if !ok {
			t.Errorf("docs/events.md lists %s, which internal/event has no type for", typ)
			continue
		}
		checkGoFields(t, typ, reflect.TypeOf(d), fields, "")
	}
	for typ := range types {
		if _, ok := doc[typ]; !ok {
			t.Errorf("internal/event has a type %s that docs/events.md does not list", typ)
		}
	}
}
