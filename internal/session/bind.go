package session

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	nodwyn "github.com/nodwyn/nodwyn"
	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/scheme"
)

// bind registers the Go core's procedures in the session's Scheme
// environment. Each is a Go closure over the session: redefining its name in
// Scheme changes what Scheme calls, never what the core enforces.
func (s *Session) bind() {
	in := s.interp
	reg := func(name string, min, max int, doc string, fn func(args []scheme.Value) (scheme.Value, error)) {
		in.Register(scheme.NewPrimitive(name, min, max, doc, func(_ *scheme.Interp, args []scheme.Value) (scheme.Value, error) {
			return fn(args)
		}))
	}
	flag := func(name, doc string, v bool) {
		reg(name, 0, 0, doc, func([]scheme.Value) (scheme.Value, error) { return v, nil })
	}
	str := func(name, doc string, v func() string) {
		reg(name, 0, 0, doc, func([]scheme.Value) (scheme.Value, error) { return scheme.NewString(v()), nil })
	}

	flag("sandbox?", "(sandbox?) is #t when the run is in sandbox mode (nodwyn run --sandbox container).", s.opts.Sandbox)
	flag("unattended?", "(unattended?) is #t when nobody answers confirms.", s.opts.Unattended)
	flag("yolo?", "(yolo?) is #t when ordinary confirms are answered yes.", s.opts.Yolo)
	str("scratch-dir", "(scratch-dir) is the session's scratch directory, the commands' TMPDIR.", func() string { return s.scratch })
	str("folder", "(folder) is the absolute path of the folder the run works in.", func() string { return s.opts.Folder })
	str("session-id", "(session-id) is this session's id.", func() string { return s.ID })
	str("profile-name", "(profile-name) is the profile chosen by --profile, NODWYN_PROFILE or [loop] profile, or \"\".", func() string { return s.opts.Profile })
	str("instruction", "(instruction) is the run's instruction.", func() string { return s.opts.Instruction })
	reg("git-repo?", 0, 0, "(git-repo?) is #t when the folder is a git work tree.", func([]scheme.Value) (scheme.Value, error) {
		return s.gitRepo, nil
	})

	reg("load-embedded", 1, 1, "(load-embedded path) loads a file of nodwyn's embedded Scheme tree (init.scm, runtime/, prompts/).",
		func(args []scheme.Value) (scheme.Value, error) {
			var name string
			if err := scheme.UnpackArgs("load-embedded", args, &name); err != nil {
				return nil, err
			}
			return scheme.Void, in.Load(s.ctx(), nodwyn.FS, name)
		})

	reg("load", 1, 1, "(load path) loads a Scheme file from the folder's .nodwyn/ directory or nodwyn's configuration directory (a relative path is relative to .nodwyn/).",
		func(args []scheme.Value) (scheme.Value, error) {
			var p string
			if err := scheme.UnpackArgs("load", args, &p); err != nil {
				return nil, err
			}
			path, err := s.loadablePath(p)
			if err != nil {
				return nil, err
			}
			if rel, ok := s.projectRel(path); ok {
				// A project file runs only as trust read it.
				src, ok := s.opts.ProjectScheme[rel]
				if !ok {
					return nil, scheme.Errorf("load: %s is not among the project files trusted for this run; read it, then trust the project with: nodwyn trust -C %s", path, s.opts.Folder)
				}
				return scheme.Void, in.LoadSource(s.ctx(), src, path)
			}
			return scheme.Void, in.LoadFile(s.ctx(), path)
		})

	reg("tools", 0, 0, "(tools) lists the names of the tools offered in this folder: nodwyn's own, then those define-tool defined.", func([]scheme.Value) (scheme.Value, error) {
		if s.tools == nil {
			return scheme.Nil, nil
		}
		return strs(s.toolNames()), nil
	})
	reg("known-tools", 0, 0, "(known-tools) lists every tool nodwyn knows, offered in this folder or not (git-status outside a git work tree, self-check without a working copy), and those define-tool defined.",
		func([]scheme.Value) (scheme.Value, error) { return strs(s.knownTools()), nil })

	reg("define-tool", 4, 4, "(define-tool name description params proc) defines a tool the model can call, in an init.scm: description is a string (or ((lean . \"…\") (full . \"…\"))); params a list of (name type \"description\" [role] [required]), type one of string integer number boolean array object, role one of path-read path-write path-search command content pattern none (what the guard judges the argument as, before proc runs); proc a procedure of one argument, the arguments as an alist, returning the result text. proc reaches files and commands only through call-tool.",
		func(args []scheme.Value) (scheme.Value, error) { return s.defineTool(args) })
	reg("defined-tool", 1, 1, "(defined-tool name) is the tool define-tool defined under name, as an alist ((name . n) (lean . description) (full . description) (params . (((name . p) (type . t) (description . d) (role . r) (required . #t/#f)) …)) (defined-at . \"file:line:col\")), or #f.",
		func(args []scheme.Value) (scheme.Value, error) {
			if t := s.schemeTool(scheme.DisplayString(args[0])); t != nil {
				return t.value(), nil
			}
			return false, nil
		})

	reg("sandbox-caps", 0, 0, "(sandbox-caps) is an alist of what the execution seam contains: (mode . \"no_sandbox\"|\"working_copy\") (copy . #t/#f) (kill-on-drop . …) (kernel-floor . …) (network . …) (host-paths . …) (text . \"…\"). Not sandbox mode: see (sandbox?).",
		func([]scheme.Value) (scheme.Value, error) {
			if s.tools == nil {
				return nil, scheme.Errorf("sandbox-caps: the execution seam is chosen after the init chain has loaded; ask in a procedure the loop calls")
			}
			if s.caps == nil { // the seam does not change during a run
				s.caps = capsValue(s.tools.Sandbox().Capabilities())
			}
			return s.caps, nil
		})
	reg("self-check", 0, 0, "(self-check) runs the contract's first check as the self-check tool does (through the guard, in the working copy, recorded in the signed journal) and returns its result alist; #f when self-check is not offered (no working copy, or the session is not saved).",
		func([]scheme.Value) (scheme.Value, error) {
			if err := s.notInChecker("self-check"); err != nil {
				return nil, err
			}
			if s.tools == nil || !slices.Contains(s.tools.Names(), "self-check") {
				return false, nil
			}
			return s.callTool("self-check", scheme.Nil)
		})
	reg("check-declared?", 0, 0, "(check-declared?) is #t when the run has a contract with a check for self-check to run.",
		func([]scheme.Value) (scheme.Value, error) {
			if s.tools == nil {
				return false, nil
			}
			_, _, ok := s.tools.CheckCommand()
			return ok, nil
		})
	reg("contract-trusted?", 0, 0, "(contract-trusted?) is #t when the contract is the person's: the file nodwyn run --contract named, or the .nodwyn/contract.toml of a project whose files the person trusted. Only then may a profile run its check unasked (the full profile's finish does); the model may call self-check either way, through the guard.",
		func([]scheme.Value) (scheme.Value, error) {
			return s.opts.ContractGiven || s.opts.ContractTrusted, nil
		})

	reg("log-note", 1, 1, "(log-note text) writes a note to the session's log and event stream.", func(args []scheme.Value) (scheme.Value, error) {
		s.Note(scheme.DisplayString(args[0]))
		return scheme.Void, nil
	})

	reg("budget-left", 0, 0, "(budget-left) is an alist: (tool-calls . n-or-#f) (seconds . n-or-#f).", func([]scheme.Value) (scheme.Value, error) {
		var calls, secs scheme.Value = false, false
		if s.opts.MaxToolCalls > 0 {
			calls = s.opts.MaxToolCalls - s.toolCalls
		}
		if dl, ok := s.ctx().Deadline(); ok {
			secs = int(time.Until(dl).Seconds())
		}
		return scheme.List(scheme.Cons(scheme.Symbol("tool-calls"), calls), scheme.Cons(scheme.Symbol("seconds"), secs)), nil
	})

	reg("begin-turn!", 0, 0, "(begin-turn!) marks the start of a turn: (changed-files) counts from here.", func([]scheme.Value) (scheme.Value, error) {
		s.turnChanged = map[string]bool{}
		s.turnStart = s.gitStatus()
		return scheme.Void, nil
	})

	reg("changed-files", 0, 0, "(changed-files) lists the files changed since (begin-turn!): by the file tools, and in a git work tree what git status shows changed.",
		func([]scheme.Value) (scheme.Value, error) {
			set := map[string]bool{}
			for p := range s.turnChanged {
				set[p] = true
			}
			now := s.gitStatus()
			for p, st := range now {
				if s.turnStart[p] != st {
					set[p] = true
				}
			}
			for p := range s.turnStart {
				if _, ok := now[p]; !ok {
					set[p] = true
				}
			}
			names := make([]string, 0, len(set))
			for p := range set {
				names = append(names, p)
			}
			sort.Strings(names)
			out := make([]scheme.Value, len(names))
			for i, n := range names {
				out[i] = scheme.NewString(n)
			}
			return scheme.List(out...), nil
		})

	reg("scratch-save", 2, 2, "(scratch-save name text) writes text to a new file in the scratch directory and returns its path.",
		func(args []scheme.Value) (scheme.Value, error) {
			name := safeName(scheme.DisplayString(args[0]))
			f, err := os.CreateTemp(s.scratch, name+"-*.txt")
			if err != nil {
				return nil, scheme.Errorf("scratch-save: %v", err)
			}
			defer f.Close()
			if _, err := f.WriteString(scheme.DisplayString(args[1])); err != nil {
				return nil, scheme.Errorf("scratch-save: %v", err)
			}
			return scheme.NewString(f.Name()), nil
		})

	reg("add-message!", 2, 2, "(add-message! 'user text) adds a message to the conversation.", func(args []scheme.Value) (scheme.Value, error) {
		if err := s.notInChecker("add-message!"); err != nil {
			return nil, err
		}
		if err := s.notInSchemeTool("add-message!"); err != nil {
			return nil, err
		}
		role := scheme.DisplayString(args[0])
		if role != "user" {
			return nil, scheme.Errorf("add-message!: only 'user messages can be added, not %s", role)
		}
		s.addUser(scheme.DisplayString(args[1]))
		return scheme.Void, nil
	})

	reg("add-tool-result!", 4, 4, "(add-tool-result! id name text error?) answers a tool call in the conversation.", func(args []scheme.Value) (scheme.Value, error) {
		if err := s.notInSchemeTool("add-tool-result!"); err != nil {
			return nil, err
		}
		s.addToolResult(scheme.DisplayString(args[0]), scheme.DisplayString(args[1]), scheme.DisplayString(args[2]), scheme.IsTrue(args[3]))
		return scheme.Void, nil
	})

	reg("messages", 0, 0, "(messages) is the conversation the model sees, oldest first: a list of alists with (role . user|assistant|tool) (text . t) (tokens . estimate), an assistant's (tool-calls . (((id . i) (name . n) (arguments . json)) …)), a tool result's (tool-call-id . i) (name . n) (error . bool).",
		func([]scheme.Value) (scheme.Value, error) {
			return s.messagesValue(), nil
		})

	reg("instruction-files", 1, 1, "(instruction-files max-bytes) lists the project instructions: the person's <config>/AGENTS.md, then AGENTS.md (else CLAUDE.md) from the repository root down to the folder, as ((path . p) (text . first max-bytes, secrets redacted) (bytes . size) (cut . #t/#f)); read once per session, through the guard's denylist.",
		func(args []scheme.Value) (scheme.Value, error) {
			n, ok := args[0].(int)
			if !ok || n <= 0 {
				return nil, scheme.WrongType("instruction-files", "a positive number of bytes", args[0])
			}
			if s.guard == nil || s.tools == nil {
				return nil, scheme.Errorf("instruction-files: the files are read through the guard and the tools, which are assembled after init.scm has loaded; call it from the loop")
			}
			return s.instructionFilesValue(int64(n)), nil
		})

	reg("judge-model", 0, 0, "(judge-model) is the judge's model name when the run has --judge (ordinary confirms of an unattended run go to it), else #f.",
		func([]scheme.Value) (scheme.Value, error) {
			if !s.opts.Judge {
				return false, nil
			}
			if s.opts.JudgeModel != "" {
				return scheme.NewString(s.opts.JudgeModel), nil
			}
			return scheme.NewString(s.opts.ModelName), nil
		})

	reg("finish!", 2, 2, "(finish! outcome text) records how the run ended: 'finished or 'no-progress, and the last words.", func(args []scheme.Value) (scheme.Value, error) {
		if err := s.notInChecker("finish!"); err != nil {
			return nil, err
		}
		if err := s.notInSchemeTool("finish!"); err != nil {
			return nil, err
		}
		status := scheme.DisplayString(args[0])
		if _, ok := args[0].(scheme.Symbol); !ok || (status != "finished" && status != "no-progress") {
			return nil, scheme.Errorf("finish!: the outcome must be 'finished or 'no-progress, not %s (the others — budget, deadline, interrupted, failed — are the runtime's to record)", scheme.WriteString(args[0]))
		}
		s.outcome = &Outcome{Status: status, Text: scheme.DisplayString(args[1])}
		return scheme.Void, nil
	})

	reg("model-turn", 2, 3, "(model-turn system tools [options]) sends the conversation to the model with the system prompt and tools, a list of (name . description) ('() for none), or (name description schema) with the parameters' JSON schema as text, or, for an MCP tool, (name description full) to send its whole schema (an MCP tool's (name . description) goes with an any-object schema); options is an alist of (max-tokens . n) (temperature . t) (model . name). Returns the reply as an alist ((text . t) (tool-calls . calls)). On the provider's context-overflow error, (compact-on-overflow!) is called and the request sent once more.",
		func(args []scheme.Value) (scheme.Value, error) {
			if err := s.notInChecker("model-turn"); err != nil {
				return nil, err
			}
			if err := s.notInSchemeTool("model-turn"); err != nil {
				return nil, err
			}
			var opts scheme.Value = scheme.Nil
			if len(args) > 2 {
				opts = args[2]
			}
			return s.modelTurn(args[0], args[1], opts)
		})

	reg("model-ask", 2, 3, "(model-ask system text [options]) sends one request of its own, with no tools, whose only message is text, and returns the reply's text; the conversation is not changed (a summary, a side question). options as model-turn's.",
		func(args []scheme.Value) (scheme.Value, error) {
			if err := s.notInChecker("model-ask"); err != nil {
				return nil, err
			}
			var opts scheme.Value = scheme.Nil
			if len(args) > 2 {
				opts = args[2]
			}
			return s.modelAsk(scheme.DisplayString(args[0]), scheme.DisplayString(args[1]), opts)
		})

	reg("context-tokens", 0, 0, "(context-tokens) is how many tokens the next request would send: the last request's prompt tokens as the provider reported them plus an estimate of what was added since, else an estimate of the whole conversation.",
		func([]scheme.Value) (scheme.Value, error) { return s.contextTokens(), nil })

	reg("context-window", 0, 0, "(context-window) is the model's context window in tokens: [provider] context_window, else nodwyn's table of well-known models, else 128000.",
		func([]scheme.Value) (scheme.Value, error) { return s.contextWindow(), nil })

	reg("fold-message!", 2, 2, "(fold-message! index text) replaces the text of the tool result at index (0-based, as (messages) lists them) with a shorter text: an older result folded. Only tool results can be folded; the log keeps the whole result.",
		func(args []scheme.Value) (scheme.Value, error) {
			if err := s.notInChecker("fold-message!"); err != nil {
				return nil, err
			}
			if err := s.notInSchemeTool("fold-message!"); err != nil {
				return nil, err
			}
			i, ok := args[0].(int)
			if !ok || i < 0 || i >= len(s.messages) {
				return nil, scheme.Errorf("fold-message!: %s is not the index of a message (0 to %d)", scheme.WriteString(args[0]), len(s.messages)-1)
			}
			if s.messages[i].Role != "tool" {
				return nil, scheme.Errorf("fold-message!: message %d is a %s message; only tool results are folded", i, s.messages[i].Role)
			}
			text := scheme.DisplayString(args[1])
			if len(text) >= len(s.messages[i].Content) {
				return false, nil // nothing gained
			}
			s.messages[i].Content = text
			s.lastPrompt = 0 // the last report no longer describes what will be sent
			return true, nil
		})

	reg("replace-messages!", 3, 3, "(replace-messages! from to summary) replaces the messages [from, to) of the conversation (0-based, as (messages) lists them) with one user message, summary, keeping tool calls and their results together (a range that would split them is an error). The log keeps the whole history; the saved state what the model now sees. Returns ((before . tokens) (after . tokens)).",
		func(args []scheme.Value) (scheme.Value, error) {
			if err := s.notInChecker("replace-messages!"); err != nil {
				return nil, err
			}
			if err := s.notInSchemeTool("replace-messages!"); err != nil {
				return nil, err
			}
			from, ok1 := args[0].(int)
			to, ok2 := args[1].(int)
			if !ok1 || !ok2 {
				return nil, scheme.Errorf("replace-messages!: from and to must be whole numbers, not %s and %s", scheme.WriteString(args[0]), scheme.WriteString(args[1]))
			}
			return s.replaceMessages(from, to, scheme.DisplayString(args[2]))
		})

	reg("call-tool", 2, 2, "(call-tool name args) judges the call with the guard and runs it if allowed; args is a JSON string or an alist. Returns ((output . text) (error . bool) (decision . d) (checker . c) (exit . n)).",
		func(args []scheme.Value) (scheme.Value, error) {
			if err := s.notInChecker("call-tool"); err != nil {
				return nil, err
			}
			return s.callTool(scheme.DisplayString(args[0]), args[1])
		})

	reg("guard-check", 2, 2, "(guard-check tool args) returns the guard's decision without running anything: ((decision . d) (checker . c) (reason . r)).",
		func(args []scheme.Value) (scheme.Value, error) {
			req, err := s.request(scheme.DisplayString(args[0]), args[1])
			if err != nil {
				return nil, scheme.Errorf("guard-check: %v", err)
			}
			if s.guard == nil {
				return nil, scheme.Errorf("guard-check: the guard is assembled after init.scm has loaded")
			}
			d := s.guard.Check(s.ctx(), req)
			return decisionAlist(d.Verdict.String(), d.Checker, d.Reason), nil
		})

	reg("add-checker!", 1, 2, "(add-checker! proc [name]) adds a project checker: (proc tool args) returns #f to let the call pass, or (refuse reason), (confirm reason) or (security-confirm reason). It can only tighten: a built-in refusal stays.",
		func(args []scheme.Value) (scheme.Value, error) {
			if !scheme.IsProcedure(args[0]) {
				return nil, scheme.WrongType("add-checker!", "a procedure", args[0])
			}
			name := "project"
			if len(args) > 1 {
				name = scheme.DisplayString(args[1])
			}
			c := &schemeChecker{s: s, name: name, proc: args[0]}
			if s.guard != nil {
				s.guard.AddChecker(c)
			} else {
				s.pendingCheckers = append(s.pendingCheckers, c)
			}
			return scheme.Void, nil
		})
	s.bindMCP() // mcp.go
}

// ctx is the context Scheme-called Go code runs under: the context of the
// evaluation that called it (the run's, or New's while the init chain
// loads, with the run's deadline), so cancelling the run reaches it.
func (s *Session) ctx() context.Context {
	if s.interp != nil {
		if c := s.interp.Context(); c != nil {
			return c
		}
	}
	// Not inside an evaluation: nothing of the session is called from Go
	// outside one, so there is no run to stand for.
	return context.Background()
}

// notInChecker is the error of a procedure that acts, called while a
// project checker judges a call.
func (s *Session) notInChecker(name string) error {
	if s.checking > 0 {
		return scheme.Errorf("%s: not allowed inside a guard checker (add-checker!): a checker only judges the call it is given and returns #f, (refuse …) or (confirm …)", name)
	}
	return nil
}

// gitStatus maps each path git status names to its two-letter status,
// asked through prim (the scrubbed environment, the git time limit) under
// the context of the evaluation that asks.
func (s *Session) gitStatus() map[string]string {
	if !s.gitRepo || s.tools == nil {
		return nil
	}
	m, err := s.tools.GitStatus(s.ctx())
	if err != nil {
		return nil
	}
	return m
}

func safeName(s string) string {
	s = filepath.Base(s)
	var b strings.Builder
	for _, r := range s {
		if r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "result"
	}
	return b.String()
}

func decisionAlist(verdict, checker, reason string) scheme.Value {
	return scheme.List(
		scheme.Cons(scheme.Symbol("decision"), scheme.NewString(verdict)),
		scheme.Cons(scheme.Symbol("checker"), scheme.NewString(checker)),
		scheme.Cons(scheme.Symbol("reason"), scheme.NewString(reason)),
	)
}

// projectRel is real's path under <folder>/.nodwyn ("lib/util.scm"), the
// key of Options.ProjectScheme, when it is there.
func (s *Session) projectRel(real string) (string, bool) {
	base := filepath.Join(config.ProjectDir(s.opts.Folder), ".nodwyn") // the project's, found as trust found it
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	rel, err := filepath.Rel(base, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// loadablePath resolves a path for (load …): inside <folder>/.nodwyn or the
// configuration directory, by its physical path.
func (s *Session) loadablePath(p string) (string, error) {
	base := filepath.Join(config.ProjectDir(s.opts.Folder), ".nodwyn") // the project's, found as trust found it
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", scheme.Errorf("load: %v", err)
	}
	for _, root := range []string{base, s.opts.Dirs.Config} {
		if root == "" {
			continue
		}
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		if rel, err := filepath.Rel(root, real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return real, nil
		}
	}
	return "", scheme.Errorf("load: %s is outside %s and %s; a session loads Scheme only from those", p, base, s.opts.Dirs.Config)
}
