package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Compat says how an OpenAI-compatible server differs from api.openai.com
// in what Chat Completions (and, for the last two fields, the Responses
// API) requests carry. The zero value is right for api.openai.com and for
// the common servers (vLLM, llama.cpp's server, Ollama, LM Studio, LiteLLM,
// OpenRouter …).
//
// A setting need not be known beforehand: when a request fails with 400
// (or 422) and the body names a parameter that one of these settings
// controls as refused ("Unsupported parameter: 'max_tokens' …",
// "Unrecognized request argument supplied: stream_options", "… role
// 'developer' …", "Extra inputs are not permitted … parallel_tool_calls"),
// the model switches that setting, says so through Config.OnRetry (wait
// 0), asks once more, and keeps the setting for the rest of its life. A
// setting a request succeeded with is never switched afterwards, and each
// is switched at most once. The tools are never dropped: a server that
// refuses them fails the request, with a hint that nodwyn needs them.
type Compat struct {
	// MaxTokensField names the output token limit in Chat Completions
	// requests: "max_completion_tokens" (OpenAI's current name, which its
	// reasoning models require) or "max_tokens" (the older one, which the
	// compatible servers know). "": max_completion_tokens for
	// api.openai.com, max_tokens elsewhere. Nothing is sent when the
	// request sets no limit.
	MaxTokensField string
	// SystemRole is the role of the system prompt's message: "system" or
	// "developer" (what OpenAI's reasoning models take; they accept
	// "system" too). "": "system".
	SystemRole string
	// NoStreamOptions leaves out stream_options: {include_usage: true},
	// for servers that refuse it; such a server's replies may then come
	// without usage.
	NoStreamOptions bool
	// NoParallelToolCalls leaves out parallel_tool_calls: true, which is
	// otherwise sent with the tools so that servers whose default is one
	// call per reply (llama.cpp's) may make several.
	NoParallelToolCalls bool
	// NoReasoningEffort leaves out the reasoning effort (Config.Reasoning:
	// reasoning_effort, or the Responses API's reasoning), for models that
	// refuse it.
	NoReasoningEffort bool
	// NoEncryptedReasoning (Responses API) leaves out include:
	// ["reasoning.encrypted_content"], for models with no reasoning, which
	// refuse it; their replies then carry no reasoning to pass back.
	NoEncryptedReasoning bool
}

func (cc Compat) check(provider string) error {
	switch cc.MaxTokensField {
	case "", "max_tokens", "max_completion_tokens":
	default:
		return fmt.Errorf("provider %s: compat max_tokens_field %q is neither max_completion_tokens nor max_tokens", provider, cc.MaxTokensField)
	}
	switch cc.SystemRole {
	case "", "system", "developer":
	default:
		return fmt.Errorf("provider %s: compat system_role %q is neither system nor developer", provider, cc.SystemRole)
	}
	return nil
}

// compatSent is what a request carried of the parameters Compat controls.
type compatSent struct {
	maxField      string // the output limit's name; "" none sent
	role          string // the system message's role; "" none sent
	streamOptions bool
	parallel      bool
	effort        bool
	encrypted     bool
}

// merge adds what s carried to p (the parameters a request succeeded with).
func (p *compatSent) merge(s compatSent) {
	if s.maxField != "" {
		p.maxField = s.maxField
	}
	if s.role != "" {
		p.role = s.role
	}
	p.streamOptions = p.streamOptions || s.streamOptions
	p.parallel = p.parallel || s.parallel
	p.effort = p.effort || s.effort
	p.encrypted = p.encrypted || s.encrypted
}

// refusalWords are how servers say a parameter is not theirs. "invalid" is
// not among them: every OpenAI error is an invalid_request_error.
var refusalWords = []string{"unsupported", "not supported", "unrecognized", "unrecognised", "unknown", "extra", "not permitted", "not allowed", "does not support", "unexpected"}

// refuses reports whether an error body names name and refuses it.
func refuses(low, name string) bool {
	if !strings.Contains(low, name) {
		return false
	}
	for _, w := range refusalWords {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// learn reads err, the failure of a request that carried sent, for a
// parameter the server refuses that cc can leave out or rename. It returns
// the settings to ask with instead, the key of the setting changed and a
// note that says what changed; ok is false when there is nothing to change.
// proven holds what requests succeeded with and done the settings switched
// before: neither is changed again.
func (cc Compat) learn(err error, sent, proven compatSent, done map[string]bool) (next Compat, key, note string, ok bool) {
	var pe *Error
	if !errors.As(err, &pe) || (pe.Status != http.StatusBadRequest && pe.Status != http.StatusUnprocessableEntity) {
		return cc, "", "", false
	}
	low := strings.ToLower(pe.Body)
	next = cc
	again := ", and so from now on"
	switch {
	case !done["stream_options"] && sent.streamOptions && !proven.streamOptions && refuses(low, "stream_options"):
		next.NoStreamOptions = true
		return next, "stream_options", "the server does not take stream_options; asking again without it" + again, true
	case !done["parallel_tool_calls"] && sent.parallel && !proven.parallel && refuses(low, "parallel_tool_calls"):
		next.NoParallelToolCalls = true
		return next, "parallel_tool_calls", "the server does not take parallel_tool_calls; asking again without it" + again, true
	case !done["encrypted"] && sent.encrypted && !proven.encrypted && strings.Contains(low, "encrypted"):
		next.NoEncryptedReasoning = true
		return next, "encrypted", "the model gives no encrypted reasoning; asking again without include reasoning.encrypted_content" + again, true
	case !done["effort"] && sent.effort && !proven.effort &&
		(refuses(low, "reasoning_effort") || refuses(low, "reasoning.effort") || refuses(low, "'reasoning'")):
		next.NoReasoningEffort = true
		return next, "effort", "the model does not take a reasoning effort; asking again without it" + again, true
	case !done["max_tokens_field"] && sent.maxField != "" && proven.maxField != sent.maxField && refuses(low, sent.maxField):
		other := "max_tokens"
		if sent.maxField == "max_tokens" {
			other = "max_completion_tokens"
		}
		next.MaxTokensField = other
		return next, "max_tokens_field", fmt.Sprintf("the server does not take %s; asking again with %s", sent.maxField, other) + again, true
	case !done["role"] && sent.role == "developer" && proven.role != "developer" && strings.Contains(low, "developer"):
		next.SystemRole = "system"
		return next, "role", "the server does not take the developer role; asking again with the system prompt as a system message" + again, true
	case !done["role"] && sent.role == "system" && proven.role != "system" && strings.Contains(low, "role") && refuses(low, "system"):
		next.SystemRole = "developer"
		return next, "role", "the model does not take a system message; asking again with the system prompt as a developer message" + again, true
	}
	return cc, "", "", false
}

// toolsRefused adds a hint to a 400 whose body says the tools are refused:
// nodwyn does not ask again without them.
func toolsRefused(err error) {
	var pe *Error
	if !errors.As(err, &pe) || pe.Status < 400 || pe.Status >= 500 || pe.Hint != "" {
		return
	}
	low := strings.ToLower(pe.Body)
	if refuses(low, "tools") || refuses(low, "tool use") || refuses(low, "tool calling") || refuses(low, "function calling") {
		pe.Hint = "nodwyn needs a model that takes tools (function calling), and does not ask without them: choose such a model, or turn tool calling on in the server (llama.cpp: --jinja)"
	}
}

// compatState is what a model has learnt of its server, for the rest of
// its life.
type compatState struct {
	mu     sync.Mutex
	cc     Compat
	proven compatSent
	done   map[string]bool
}

func (st *compatState) get() Compat {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cc
}

// stream runs one request: build makes its body from the settings as they
// stand, r.do its attempts; a 400 that learn reads as a refused parameter
// switches that setting and asks once more.
func (st *compatState) stream(ctx context.Context, r retrier, onDelta func(Delta),
	build func(Compat) ([]byte, compatSent, error), attempt func(ctx context.Context, body []byte, c *capture) (Reply, error)) (Reply, error) {
	before := 0 // attempts of the earlier rounds
	for {
		body, sent, berr := build(st.get())
		reply, err := r.do(ctx, onDelta, func(ctx context.Context, c *capture) (Reply, error) {
			if berr != nil {
				return Reply{}, berr
			}
			return attempt(ctx, body, c)
		})
		if err == nil {
			st.mu.Lock()
			st.proven.merge(sent)
			st.mu.Unlock()
			reply.Attempts += before
			return reply, nil
		}
		var pe *Error
		if !errors.As(err, &pe) {
			return Reply{}, err
		}
		pe.Attempts += before
		before = pe.Attempts
		st.mu.Lock()
		next, key, note, ok := st.cc.learn(err, sent, st.proven, st.done)
		if ok && ctx.Err() == nil {
			st.cc = next
			if st.done == nil {
				st.done = map[string]bool{}
			}
			st.done[key] = true
		}
		st.mu.Unlock()
		if !ok || ctx.Err() != nil {
			toolsRefused(err)
			return Reply{}, err
		}
		pe.Note = note
		if r.onRetry != nil {
			r.onRetry(pe.Attempts, 0, pe.asNote(true))
		}
	}
}
