package session

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/roles"
	"github.com/nodwyn/nodwyn/scheme"
)

// countLinesInit defines count-lines as README.md's "Adding tools" does,
// with a mark of each run of its procedure: a file ran-N it writes first,
// through call-tool (so a call the guard refuses leaves none).
const countLinesInit = `
(define count-lines-runs 0)
(define-tool "count-lines"
  '((lean . "Count the lines of a file.")
    (full . "Count the lines of a text file, as wc -l would."))
  '((path string "the file to count" path-read required)
    (blank boolean "count blank lines too"))
  (lambda (args)
    (set! count-lines-runs (+ count-lines-runs 1))
    (call-tool "fs-write" (list (cons 'path (string-append "ran-" (number->string count-lines-runs)))
                                (cons 'content "x")))
    (let ((r (call-tool "fs-read" (list (cons 'path (alist-ref args 'path))))))
      (if (result-error? r)
          r
          (string-append (number->string (length (string-split (string-trim-right (result-output r)) #\newline)))
                         " lines")))))
`

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// eventsOf are the run's events of a type, their data.
func (r *run) eventsOf(typ string) []map[string]any {
	var out []map[string]any
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e.Data)
		}
	}
	return out
}

// A tool a project's init.scm defines is offered in both profiles with its
// own descriptions and schema; a call is judged by its declared roles
// before its procedure runs (a path under ~/.ssh is refused, and the
// procedure never ran: no ran-2); an allowed call runs it, and what it
// does goes through call-tool (its fs-read and fs-write are calls of
// their own, marked within count-lines, with no model id); its result and
// events are any tool's.
func TestASchemeToolIsOfferedJudgedAndRun(t *testing.T) {
	for _, profile := range []string{"lean", "full"} {
		t.Run(profile, func(t *testing.T) {
			opts := baseOpts(t)
			opts.Profile = profile
			key := plantCanary(t)
			writeInit(t, &opts, countLinesInit)
			writeFile(t, filepath.Join(opts.Folder, "a.txt"), "one\ntwo\nthree\n")
			r := runSession(t, opts, `
> reply
call count-lines {"path": "a.txt"}
> reply
call count-lines {"path": "`+key+`"}
> reply
call count-lines {}
> reply
done
`)
			reqs := r.model.Requests()
			if r.out.Status != "finished" || len(reqs) != 4 {
				t.Fatalf("status %q, %d requests: %s", r.out.Status, len(reqs), r.out.Text)
			}
			i := slices.IndexFunc(reqs[0].Tools, func(tl provider.Tool) bool { return tl.Name == "count-lines" })
			if i < 0 {
				t.Fatalf("count-lines is not offered: %v", reqs[0].Tools)
			}
			if reqs[0].Tools[0].Name == "count-lines" {
				t.Errorf("count-lines comes before nodwyn's own tools")
			}
			tool := reqs[0].Tools[i]
			want := map[string]string{"lean": "Count the lines of a file.", "full": "Count the lines of a text file, as wc -l would."}[profile]
			if tool.Description != want {
				t.Errorf("description %q, want %q", tool.Description, want)
			}
			schema := string(mustJSON(t, tool.Parameters))
			for _, w := range []string{`"path":{"description":"the file to count","type":"string"}`, `"blank":{"description":"count blank lines too","type":"boolean"}`, `"required":["path"]`} {
				if !strings.Contains(schema, w) {
					t.Errorf("schema %s lacks %s", schema, w)
				}
			}
			for k, want := range []string{"3 lines", "refused (PathDenylist)", `count-lines: missing argument "path" (a string)`} {
				res := lastMessage(reqs[k+1])
				if !strings.Contains(res.Content, want) || res.IsError != (k > 0) {
					t.Errorf("call %d: the model read %q (error %v), want %q", k+1, res.Content, res.IsError, want)
				}
			}
			if part, saw := modelSaw(reqs, canary); saw {
				t.Errorf("the model was shown the key: %q", part)
			}
			if _, err := os.Stat(filepath.Join(opts.Folder, "ran-1")); err != nil {
				t.Errorf("the allowed call's procedure did not run: %v", err)
			}
			for _, f := range []string{"ran-2", "ran-3"} {
				if _, err := os.Stat(filepath.Join(opts.Folder, f)); err == nil {
					t.Errorf("%s exists: the procedure ran for a call that was refused or had bad arguments", f)
				}
			}

			// The events: the model's three calls with their ids, each
			// judged; the first's own calls within it, with no id.
			var model, nested []map[string]any
			for _, d := range r.eventsOf("tool.call") {
				if d["within"] != nil {
					nested = append(nested, d)
				} else {
					model = append(model, d)
				}
			}
			if len(model) != 3 || len(nested) != 2 {
				t.Fatalf("%d calls of the model's and %d within: %v", len(model), len(nested), r.eventsOf("tool.call"))
			}
			for _, d := range model {
				if d["name"] != "count-lines" || d["id"] == "" {
					t.Errorf("a model's call: %v", d)
				}
			}
			for k, name := range []string{"fs-write", "fs-read"} {
				if d := nested[k]; d["name"] != name || d["id"] != "" || d["within"] != "count-lines" {
					t.Errorf("call %d within count-lines: %v", k, d)
				}
			}
			decisions := r.eventsOf("tool.decision")
			refused := slices.IndexFunc(decisions, func(d map[string]any) bool {
				return d["name"] == "count-lines" && d["decision"] == "refuse" && d["checker"] == "PathDenylist" && d["allowed"] == false
			})
			if refused < 0 {
				t.Errorf("no refusal of count-lines by PathDenylist: %v", decisions)
			}
			var results []map[string]any
			for _, d := range r.eventsOf("tool.result") {
				if d["name"] == "count-lines" {
					results = append(results, d)
				}
			}
			if len(results) != 3 || results[0]["output"] != "3 lines" || results[0]["error"] != false || results[0]["exit"] != 0 ||
				results[1]["exit"] != -1 || results[0]["id"] != model[0]["id"] || results[0]["within"] != nil {
				t.Errorf("count-lines' results: %v", results)
			}
			if ch, _ := results[0]["changed"].([]string); len(ch) != 1 || filepath.Base(ch[0]) != "ran-1" {
				t.Errorf("the first call changed %v; want ran-1, which its fs-write wrote", results[0]["changed"])
			}
		})
	}
}

// An error raised in a tool's procedure is the call's error result, and
// the run goes on; a primitive the procedure calls that the guard refuses
// gives the procedure the refusal (here handed on as the tool's result);
// a procedure may not change the conversation or end the run.
func TestASchemeToolsErrorsAreResults(t *testing.T) {
	opts := baseOpts(t)
	key := plantCanary(t)
	writeInit(t, &opts, `
(define-tool "boom" "Fails." '() (lambda (args) (error "boom: it broke" 42)))
(define-tool "peek" "Reads a fixed file." '()
  (lambda (args) (call-tool "fs-read" (list (cons 'path "`+key+`")))))
(define-tool "talk" "Talks to the model." '()
  (lambda (args) (add-message! 'user "injected by a tool") "said"))
(define-tool "quit" "Ends the run." '()
  (lambda (args) (finish! 'finished "the tool ended the run") "ended"))
(define-tool "shape" "Returns a list." '((n integer "how many" required))
  (lambda (args) (list 'n (alist-ref args 'n))))
(define-tool "late" "Defines a tool late." '()
  (lambda (args) (define-tool "later" "Too late." '() (lambda (a) "")) "defined"))
`)
	r := runSession(t, opts, `
> reply
call boom {}
> reply
call peek {}
> reply
call talk {}
> reply
call quit {}
> reply
call shape {"n": "7"}
> reply
call late {}
> reply
done
`)
	reqs := r.model.Requests()
	if r.out.Status != "finished" || len(reqs) != 7 || r.out.Text != "done" {
		t.Fatalf("status %q, %d requests: %s", r.out.Status, len(reqs), r.out.Text)
	}
	for k, want := range []string{"boom failed: ", "refused (PathDenylist)", "add-message!: not allowed inside a Scheme tool (talk", "finish!: not allowed inside a Scheme tool (quit"} {
		res := lastMessage(reqs[k+1])
		if !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("call %d: the model read %q (error %v), want an error with %q", k+1, res.Content, res.IsError, want)
		}
	}
	if res := lastMessage(reqs[1]); !strings.Contains(res.Content, "boom: it broke 42") || !strings.Contains(res.Content, "init.scm:2:") {
		t.Errorf("the error does not say what and where: %q", res.Content)
	}
	if res := lastMessage(reqs[5]); res.IsError || res.Content != "(n 7)" {
		t.Errorf("a list is displayed: %q (error %v)", res.Content, res.IsError)
	}
	if res := lastMessage(reqs[6]); !res.IsError || !strings.Contains(res.Content, "define-tool later: tools are defined while the init chain loads") {
		t.Errorf("a tool defined during the run: %q (error %v)", res.Content, res.IsError)
	}
	if slices.ContainsFunc(reqs[6].Tools, func(tl provider.Tool) bool { return tl.Name == "later" }) {
		t.Errorf("a tool defined during the run is offered")
	}
	if _, saw := modelSaw(reqs, canary, "injected by a tool"); saw {
		t.Errorf("the model saw the key or the tool's message")
	}
}

// A tool that calls itself stops at maxSchemeToolDepth with an error
// result; the run goes on.
func TestASchemeToolCannotRecurseWithoutBound(t *testing.T) {
	opts := baseOpts(t)
	writeInit(t, &opts, `
(define depth 0)
(define-tool "deeper" "Calls itself." '()
  (lambda (args)
    (set! depth (+ depth 1))
    (let ((r (call-tool "deeper" "{}")))
      (string-append "inner: " (result-output r)))))
(define-tool "how-deep" "Says how deep deeper went." '()
  (lambda (args) (number->string depth)))
`)
	r := runSession(t, opts, `
> reply
call deeper {}
> reply
call how-deep {}
> reply
done
`)
	reqs := r.model.Requests()
	if r.out.Status != "finished" || len(reqs) != 3 {
		t.Fatalf("status %q, %d requests: %s", r.out.Status, len(reqs), r.out.Text)
	}
	if res := lastMessage(reqs[1]); !strings.Contains(res.Content, "only 4 deep (deeper → deeper → deeper → deeper → deeper)") {
		t.Errorf("the model read %q", res.Content)
	}
	if res := lastMessage(reqs[2]); res.Content != "4" {
		t.Errorf("deeper ran %s times, want 4", res.Content)
	}
}

// define-tool checks what it is given where it is called: each mistake
// stops the run before any model call with the init.scm's file and line
// and what to do.
func TestDefineToolsMistakesNameTheLine(t *testing.T) {
	for _, tc := range []struct{ name, def, want string }{
		{"type", `'((path strng "the file" path-read))`, `parameter 1 (path, line 3): unknown type strng; the types are string, integer, number, boolean, array, object`},
		{"role on a number", `'((n integer "how many" path-read))`, `parameter 1 (n, line 3): it has the role path-read, so its type must be string`},
		{"unknown role", `'((p string "a path" path-red))`, `unknown word path-red after the description`},
		{"two paths", `'((from string "from" path-read required) (to string "to" path-write required))`, `parameters from and to all have a path role`},
		{"twice", `'((p string "a") (p string "b"))`, `parameter p is given twice`},
		{"no description", `'((p string))`, `a parameter is (name type "description" [role] [required])`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := baseOpts(t)
			writeInit(t, &opts, "\n(define-tool \"t1\" \"A tool.\"\n  "+tc.def+"\n  (lambda (args) \"\"))\n")
			opts.Model = script(t, "> reply\ndone\n")
			_, err := New(context.Background(), opts)
			if err == nil {
				t.Fatal("New succeeded")
			}
			at := filepath.Join(opts.Folder, ".nodwyn", "init.scm") + ":2:1: define-tool t1: "
			if !strings.Contains(err.Error(), at) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nwant %q … %q", err, at, tc.want)
			}
		})
	}
	for _, tc := range []struct{ src, want string }{
		{`(define-tool "fs-read" "Mine." '() (lambda (a) ""))`, "define-tool fs-read: fs-read is one of nodwyn's own tools"},
		{`(define-tool "has space" "x" '() (lambda (a) ""))`, "define-tool: the name must be"},
		{`(define-tool "t2" "" '() (lambda (a) ""))`, "define-tool t2: the description must be"},
		{`(define-tool "t3" "x" '() "not a procedure")`, "define-tool t3: the fourth argument must be a procedure"},
	} {
		opts := baseOpts(t)
		writeInit(t, &opts, tc.src)
		if _, err := New(context.Background(), opts); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "init.scm:1:1") {
			t.Errorf("%s: error %v, want %q at init.scm:1:1", tc.src, err, tc.want)
		}
	}
}

// A profile's tools setting chooses the tools it offers: a Scheme tool is
// offered only in the profiles that list it, when they list; a name that
// is no tool stops the run with the profile's name and the near one.
func TestAProfilesToolsChooseSchemeTools(t *testing.T) {
	opts := baseOpts(t)
	opts.Profile = "narrow"
	writeInit(t, &opts, countLinesInit+`
(define-profile 'narrow (list (cons 'tools '("fs-read" count-lines))))
(define-profile 'plain (list (cons 'tools '("fs-read" "fs-write"))))
(define-profile 'typo (list (cons 'tools '("fs-read" "count-line"))))
`)
	r := runSession(t, opts, "> reply\ndone\n")
	var names []string
	for _, tl := range r.model.Requests()[0].Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"fs-read", "count-lines"}) {
		t.Errorf("narrow offers %v", names)
	}

	opts.Profile = "plain"
	r = runSession(t, opts, "> reply\ndone\n")
	names = names[:0]
	for _, tl := range r.model.Requests()[0].Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"fs-read", "fs-write"}) {
		t.Errorf("plain offers %v", names)
	}

	opts.Profile = "typo"
	r = runSession(t, opts, "> reply\ndone\n")
	if r.out.Status != "failed" || !strings.Contains(r.out.Text, "profile typo: its tools setting names count-line, which is no tool; did you mean count-lines?") {
		t.Errorf("outcome %q: %s", r.out.Status, r.out.Text)
	}

	writeInit(t, &opts, `(define-profile 'bad (list (cons 'tools "fs-read")))`)
	if _, err := New(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "define-profile bad: tools must be a list of tool names") {
		t.Errorf("a tools setting that is no list: %v", err)
	}
}

// Without a project init.scm (an untrusted project's never runs), there
// is no Scheme tool: not offered, and a call to one is no such tool.
func TestWithoutTheProjectInitThereIsNoSchemeTool(t *testing.T) {
	opts := baseOpts(t)
	writeFile(t, filepath.Join(opts.Folder, ".nodwyn", "init.scm"), countLinesInit) // on disk, not trusted: not in ProjectScheme
	r := runSession(t, opts, `
> reply
call count-lines {"path": "a.txt"}
> reply
done
`)
	reqs := r.model.Requests()
	if slices.ContainsFunc(reqs[0].Tools, func(tl provider.Tool) bool { return tl.Name == "count-lines" }) {
		t.Errorf("count-lines is offered")
	}
	if res := lastMessage(reqs[1]); !strings.Contains(res.Content, `no tool "count-lines"`) {
		t.Errorf("the model read %q", res.Content)
	}
	if _, err := os.Stat(filepath.Join(opts.Folder, "ran-1")); err == nil {
		t.Errorf("the project's procedure ran")
	}
}

// A tool's procedure runs under the run's context: one that never returns
// ends with the run at its deadline (answered as stopped), and the calls it
// makes count against the tool-call budget.
func TestASchemeToolRunsUnderTheRunsBounds(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		opts := baseOpts(t)
		opts.Timeout = 2 * time.Second
		opts.InitSteps = 1 << 50 // a step bound per call it never reaches
		writeInit(t, &opts, `(define-tool "spin" "Never ends." '() (lambda (args) (let loop () (loop))))`)
		r := runSession(t, opts, "> reply\ncall spin {}\n> reply\ndone\n")
		if r.out.Status != "deadline" {
			t.Fatalf("outcome %q: %s", r.out.Status, r.out.Text)
		}
		res := r.eventsOf("tool.result")
		if len(res) != 1 || res[0]["name"] != "spin" || res[0]["stopped"] != "deadline" {
			t.Errorf("spin's result: %v", res)
		}
	})
	t.Run("budget", func(t *testing.T) {
		opts := baseOpts(t)
		opts.MaxToolCalls = 3
		writeFile(t, filepath.Join(opts.Folder, "a.txt"), "a\n")
		writeInit(t, &opts, `
(define-tool "read-many" "Reads a file again and again." '()
  (lambda (args)
    (let loop ((n 0))
      (call-tool "fs-read" '((path . "a.txt")))
      (loop (+ n 1)))))`)
		r := runSession(t, opts, "> reply\ncall read-many {}\n> reply\ndone\n")
		if r.out.Status != "budget" {
			t.Fatalf("outcome %q: %s", r.out.Status, r.out.Text)
		}
		if n := len(r.eventsOf("tool.call")); n != 3 {
			t.Errorf("%d tool calls; the budget is 3, read-many's included", n)
		}
	})
}

// Each call of a Scheme tool has bounds of its own, the init chain's
// ([limits] init_steps, init_memory_mb; here lowered to keep the test
// short): a procedure that loops forever, one that keeps building a list,
// and one that calls a tool that loops each end with an error result that
// names the tool, the bound, where it was and how to raise it, and the
// run goes on; an ordinary tool's call after them is unaffected.
func TestARunawaySchemeToolIsAnErrorResult(t *testing.T) {
	opts := baseOpts(t)
	opts.InitSteps, opts.InitMemory = 1_000_000, 16<<20
	writeInit(t, &opts, countLinesInit+`
(define-tool "spin" "Never ends." '()
  (lambda (args) (let loop ((i 0)) (loop (+ i 1)))))
(define-tool "hoard" "Keeps everything." '()
  (lambda (args) (let loop ((kept '())) (loop (cons (make-vector 100 0) kept)))))
(define-tool "delegate" "Calls spin." '()
  (lambda (args) (call-tool "spin" "{}") (let loop () (loop))))
`)
	writeFile(t, filepath.Join(opts.Folder, "a.txt"), "one\ntwo\nthree\n")
	r := runSession(t, opts, `
> reply
call spin {}
> reply
call hoard {}
> reply
call delegate {}
> reply
call count-lines {"path": "a.txt"}
> reply
done
`)
	reqs := r.model.Requests()
	if r.out.Status != "finished" || len(reqs) != 5 {
		t.Fatalf("status %q, %d requests: %s", r.out.Status, len(reqs), r.out.Text)
	}
	cfg := filepath.Join(opts.Dirs.Config, "config.toml")
	init := filepath.Join(opts.Folder, ".nodwyn", "init.scm")
	for k, want := range [][]string{
		{"spin stopped: it made more than 1000000 procedure calls, a Scheme tool's step bound per call (it was at " + init + ":",
			"the run goes on", "defined at " + init + ":18:", "raise the bound with [limits] init_steps in " + cfg},
		{"hoard stopped: it kept more than 16 MB of data, a Scheme tool's memory bound per call",
			"defined at " + init + ":20:", "raise the bound with [limits] init_memory_mb in " + cfg},
		{"delegate stopped: it made more than 1000000 procedure calls"},
	} {
		res := lastMessage(reqs[k+1])
		for _, w := range want {
			if !res.IsError || !strings.Contains(res.Content, w) {
				t.Errorf("call %d: the model read %q (error %v), want an error with %q", k+1, res.Content, res.IsError, w)
			}
		}
	}
	if res := lastMessage(reqs[4]); res.IsError || res.Content != "3 lines" {
		t.Errorf("an ordinary tool after them: %q (error %v)", res.Content, res.IsError)
	}
	// spin, called by delegate, ended with delegate's bound: its result
	// says so, within delegate.
	var inner []map[string]any
	for _, d := range r.eventsOf("tool.result") {
		if d["within"] == "delegate" {
			inner = append(inner, d)
		}
	}
	if len(inner) != 1 || inner[0]["name"] != "spin" || inner[0]["error"] != true || inner[0]["output"] != "spin: stopped: delegate ran out of its bound" {
		t.Errorf("the results within delegate: %v", inner)
	}
}

// Without [limits], a Scheme tool's call has the init chain's default
// bounds.
func TestSchemeToolBoundsDefault(t *testing.T) {
	s := &Session{}
	if b := s.schemeToolBounds(); b.Steps != DefaultInitSteps || b.Memory != DefaultInitMemory {
		t.Errorf("bounds %+v, want %d steps and %d bytes", b, DefaultInitSteps, DefaultInitMemory)
	}
}

// The guard judges a Scheme tool by its parameters' roles as it judges a
// primitive: they are among its Options.Tools, and no checker of the
// session stands in for them.
func TestSchemeToolsRolesAreTheGuards(t *testing.T) {
	opts := baseOpts(t)
	writeInit(t, &opts, countLinesInit)
	opts.Model = script(t, "> reply\ndone\n")
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := guard.ToolParam{Tool: "count-lines", Param: "path", Role: roles.PathRead, Required: true}
	if tools := s.guard.Options().Tools; !slices.Contains(tools, want) || len(tools) != len(guardTools())+1 {
		t.Errorf("the guard's tools: %v, want prim's and %v", tools, want)
	}
	if len(s.pendingCheckers) != 0 {
		t.Errorf("checkers besides the guard's own: %v", s.pendingCheckers)
	}
}

// BenchmarkSchemeToolCall is one call of a Scheme tool that does nothing,
// through callTool (the guard, the events, its bounded procedure): what the
// bounds add to it is BenchmarkNestedCallBounded* against
// BenchmarkNestedCall in scheme/.
func BenchmarkSchemeToolCall(b *testing.B) {
	folder, dirs, st := benchEnv(b)
	opts := Options{Folder: folder, Instruction: "bench", Dirs: dirs, Store: st, Unattended: true,
		ProjectScheme: map[string][]byte{"init.scm": []byte(`(define-tool "noop" "Does nothing." '() (lambda (args) "done"))`)}}
	model, err := provider.ParseScript("bench", []byte("> reply\ndone\n"))
	if err != nil {
		b.Fatal(err)
	}
	opts.Model = model
	s, err := New(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	args := scheme.NewString("{}")
	b.ReportAllocs()
	for b.Loop() {
		v, err := s.callTool("noop", args)
		if err != nil {
			b.Fatal(err)
		}
		if out, isErr, _ := toolValue(v); out != "done" || isErr {
			b.Fatalf("noop: %q (error %v)", out, isErr)
		}
	}
}
