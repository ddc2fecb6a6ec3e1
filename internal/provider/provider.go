package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Role is the author of a message: "user", "assistant" or "tool".
type Role string

// The roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the raw JSON text as the model sent it. It may be
	// malformed; ParseArgs checks it.
	Arguments string
}

// Message is one entry of the conversation sent to the model.
type Message struct {
	Role       Role
	Content    string
	ToolCalls  []ToolCall // assistant messages
	ToolCallID string     // tool messages: the call this answers
	Name       string     // tool messages: the tool's name
	IsError    bool       // tool messages: the result is an error

	// Reasoning holds, for an assistant message, the provider's own items
	// of that turn that must go back to it unchanged in later requests, as
	// Reply.Reasoning gave them: the Responses API's reasoning items (with
	// their encrypted_content, since nodwyn asks with store: false) and
	// Anthropic's thinking blocks with their signatures (and
	// redacted_thinking blocks). Each is one JSON object, opaque to the
	// caller; a provider sends back only the items of its own kind (type
	// "reasoning" for Responses, "thinking" and "redacted_thinking" for
	// Anthropic) and Chat Completions none, so a conversation can move
	// between providers. It is kept in a saved session's messages: the
	// field survives a JSON round trip as it is.
	Reasoning []json.RawMessage `json:",omitempty"`
}

// Tool is a tool offered to the model.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any // JSON schema object
}

// Request is one request to the model.
type Request struct {
	Model     string // overrides Config.Model when set
	System    string
	Messages  []Message
	Tools     []Tool
	MaxTokens int
	// Temperature is the sampling temperature when set (nil: the
	// provider's default is used and nothing is sent).
	Temperature *float64
}

// Usage counts the tokens of one reply. InputTokens are the input tokens
// neither read from nor written to the prompt cache, as Anthropic counts
// them; for OpenAI they are prompt_tokens (input_tokens) less the cached
// ones. The whole input is TotalInput. ReasoningTokens are the part of
// OutputTokens the model spent reasoning, as OpenAI reports it
// (completion_tokens_details / output_tokens_details); Anthropic does not
// count thinking apart, so it is 0 there (its thinking is in OutputTokens).
type Usage struct {
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens int
	ReasoningTokens                                              int
}

// TotalInput returns all input tokens: uncached, cache reads and cache writes.
func (u Usage) TotalInput() int { return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens }

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		ReasoningTokens:  u.ReasoningTokens + v.ReasoningTokens,
	}
}

// Reply is the model's whole answer to one request.
type Reply struct {
	Text       string
	ToolCalls  []ToolCall
	Usage      Usage
	StopReason string // as the provider says it: "stop", "tool_calls", "end_turn", "tool_use", "max_tokens" …
	// Attempts is how many HTTP requests the reply took (1 without retries).
	Attempts int
	// Reasoning is what Message.Reasoning of this turn's assistant message
	// must hold for the provider to see its own reasoning again (Message
	// returns that message).
	Reasoning []json.RawMessage
}

// Message returns the assistant message that records r in the
// conversation: its text, tool calls and reasoning items.
func (r Reply) Message() Message {
	return Message{Role: RoleAssistant, Content: r.Text, ToolCalls: r.ToolCalls, Reasoning: r.Reasoning}
}

// Delta is streamed while a reply arrives (for progress display); it may be
// ignored.
type Delta struct {
	Text     string
	ToolName string // set when a tool call starts
	// Restart is set when the request is being retried after the stream was
	// cut or failed: what was shown of this reply so far is void.
	Restart bool
}

// Model is a language model that answers requests, streaming.
type Model interface {
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error)
	Name() string // e.g. "openai:gpt-4o" for logs
}

// CloseIdle closes the connection a model keeps between requests, if it
// keeps one: when the session that used it ends (a daemon runs one model
// for each session, and each has a connection of its own). The model may
// still be used; its next request connects again.
func CloseIdle(m Model) {
	if c, ok := m.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Config chooses and configures a model.
type Config struct {
	Provider string // "openai" | "anthropic" | "script" ("openai-responses" is openai with API "responses")
	// API chooses OpenAI's wire format: "" or "chat" for Chat Completions
	// (POST /chat/completions, what compatible servers speak), "responses"
	// for the Responses API (POST /responses). Only for Provider "openai".
	API   string
	Model string
	// Reasoning is the reasoning effort asked for: "" (the model's
	// default; nothing is sent), "low", "medium" or "high". Chat
	// Completions sends reasoning_effort, the Responses API reasoning.effort,
	// Anthropic extended thinking with a budget per level
	// (AnthropicThinkingBudget).
	Reasoning string
	// Compat adapts Chat Completions (and part of the Responses API) to
	// servers that differ from api.openai.com; the zero value works there
	// and on the common servers, and what a server refuses is learnt from
	// its first 400 (see Compat).
	Compat     Compat
	BaseURL    string // empty: the provider's official endpoint
	APIKey     string
	Script     string       // path of a script file, for Provider=="script" (Model is used when empty)
	HTTPClient *http.Client // optional; tests and a CA-fallback transport

	// MaxRetries is how many times a failed request is retried (so at most
	// MaxRetries+1 attempts); 0 means the default, 5; a negative value
	// means no retries.
	MaxRetries int
	// MaxRetryWait is the total time spent waiting between attempts,
	// default 2 min. A Retry-After longer than what is left ends the
	// retries at once.
	MaxRetryWait time.Duration
	// RetryBaseWait is the first backoff, doubled on each retry (with
	// jitter) and capped at 30 s; default 500 ms. Tests make it small.
	RetryBaseWait time.Duration
	// IdleTimeout cuts an attempt that receives no byte for this long (no
	// response headers, then no byte of the body: a reply that comes a byte
	// at a time is not idle), or bytes but nothing of the reply: only SSE
	// comments (": ping") and Anthropic's ping events, with no event of the
	// reply under way. A server that sends only pings is stalled. The
	// attempt is retried with an error that wraps ErrIdleTimeout and says
	// which of the two it was. Default 2 min; negative turns it off.
	IdleTimeout time.Duration
	// RequestTimeout bounds each attempt as a whole, from sending the
	// request to the reply's last event, however much data comes; the
	// attempt is retried with an error that wraps ErrRequestTimeout.
	// Default 10 min; negative turns it off. The retries together are
	// bounded by the caller's context (the run's deadline).
	RequestTimeout time.Duration
	// OnEvent, when set, is called each time an attempt receives a part of
	// the reply (the response headers, each event of the reply but pings),
	// for a display that says how long the model has been silent. It is
	// called from the goroutine that called Stream.
	OnEvent func()
	// OnRetry, when set, is called before each wait between attempts, with
	// the attempt that failed (1-based), the wait and the failure: an
	// *Error whose text is short, for a note — it leaves out the endpoint,
	// which the request's final error names (a request says its URL once,
	// however often it is retried), and says the hint in the first note
	// only.
	OnRetry func(attempt int, wait time.Duration, err error)
}

// Defaults for Config.
const (
	DefaultMaxRetries     = 5
	DefaultMaxRetryWait   = 2 * time.Minute
	DefaultRetryBaseWait  = 500 * time.Millisecond
	DefaultIdleTimeout    = 2 * time.Minute
	DefaultRequestTimeout = 10 * time.Minute
	DefaultMaxTokens      = 8192 // Anthropic requires max_tokens
	DefaultOpenAIURL      = "https://api.openai.com/v1"
	DefaultAnthropicURL   = "https://api.anthropic.com"
)

// New returns the model that cfg names.
func New(cfg Config) (Model, error) {
	switch cfg.Provider {
	case "openai", "openai-responses":
		if cfg.Provider == "openai-responses" {
			if cfg.API != "" && cfg.API != "responses" {
				return nil, fmt.Errorf("provider openai-responses: api %q contradicts it; leave api empty or set it to responses", cfg.API)
			}
			cfg.Provider, cfg.API = "openai", "responses"
		}
		if err := cfg.checkReasoning(); err != nil {
			return nil, err
		}
		switch cfg.API {
		case "", "chat":
			return newOpenAI(cfg)
		case "responses":
			return newResponses(cfg)
		default:
			return nil, fmt.Errorf("provider openai: unknown api %q; use chat (Chat Completions, the default) or responses", cfg.API)
		}
	case "anthropic":
		if cfg.API != "" {
			return nil, fmt.Errorf("provider anthropic: api %q applies to openai only; leave it empty", cfg.API)
		}
		if err := cfg.checkReasoning(); err != nil {
			return nil, err
		}
		return newAnthropic(cfg)
	case "script":
		path := cfg.Script
		if path == "" {
			path = cfg.Model
		}
		if path == "" {
			return nil, fmt.Errorf("provider script: no script file named; give its path as the script (or model) setting")
		}
		return LoadScript(path)
	case "":
		return nil, fmt.Errorf("provider: no provider chosen; use openai, anthropic or script")
	default:
		return nil, fmt.Errorf("provider: unknown provider %q; use openai, anthropic or script", cfg.Provider)
	}
}

func (cfg Config) checkReasoning() error {
	switch cfg.Reasoning {
	case "", "low", "medium", "high":
		return nil
	}
	return fmt.Errorf("provider %s: reasoning %q is not low, medium or high", cfg.Provider, cfg.Reasoning)
}

// httpClient is Config.HTTPClient, or the default client for base: for an
// http:// endpoint the standard one (nothing of TLS is touched), for
// https:// one whose CA roots are settled at the first request (roots.go).
func (cfg Config) httpClient(base string) *http.Client {
	if cfg.HTTPClient != nil {
		return cfg.HTTPClient
	}
	return defaultHTTPClient(base)
}
