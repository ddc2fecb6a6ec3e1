package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// OpenAI is a model behind an OpenAI-compatible Chat Completions endpoint
// (POST {base}/chat/completions, streamed).
type OpenAI struct {
	openaiEndpoint
	bodies chatBodies // the parts of the last request's body (chatbody.go)
}

// openaiEndpoint is what the two OpenAI APIs (Chat Completions, OpenAI;
// Responses) share: where requests go with which key, the model, and the
// retries and compatibility state of the endpoint.
type openaiEndpoint struct {
	hc        *http.Client
	apiKey    string
	model     string
	official  bool // the base URL is OpenAI's own
	url       string
	reasoning string
	retry     retrier
	compat    compatState
}

// init checks cfg for an OpenAI API and makes e its endpoint: path is the
// API's below the base URL, example a model to name in the error when none
// is given.
func (e *openaiEndpoint) init(cfg Config, path, example string) error {
	base, u, err := checkBase("openai", cfg.BaseURL, DefaultOpenAIURL, "http://127.0.0.1:8080/v1")
	if err != nil {
		return err
	}
	if cfg.Model == "" {
		return fmt.Errorf("provider openai: no model named; set the model (e.g. %s)", example)
	}
	official := u.Host == "api.openai.com"
	if official && cfg.APIKey == "" {
		return fmt.Errorf("provider openai: no API key for %s; set OPENAI_API_KEY or the key variable named in [provider]", base)
	}
	if err := cfg.Compat.check("openai"); err != nil {
		return err
	}
	*e = openaiEndpoint{
		hc:        cfg.httpClient(base),
		apiKey:    cfg.APIKey,
		model:     cfg.Model,
		official:  official,
		url:       base + path,
		reasoning: cfg.Reasoning,
		retry:     newRetrier("openai", base+path, cfg),
		compat:    compatState{cc: cfg.Compat},
	}
	return nil
}

func newOpenAI(cfg Config) (*OpenAI, error) {
	m := &OpenAI{}
	if err := m.init(cfg, "/chat/completions", "gpt-4o"); err != nil {
		return nil, err
	}
	return m, nil
}

// CloseIdleConnections closes the connection kept between requests.
func (e *openaiEndpoint) CloseIdleConnections() { e.hc.CloseIdleConnections() }

// Name returns "openai:MODEL".
func (m *OpenAI) Name() string { return "openai:" + m.model }

// Stream sends req and streams the reply, retrying as Config says.
func (m *OpenAI) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	return m.stream(ctx, req, onDelta, func(cc Compat) (any, compatSent) {
		b, sent, err := m.body(req, cc)
		if err != nil {
			p, sent := m.params(req, cc) // for encodeBody to say what failed
			return p, sent
		}
		return encoded(b), sent
	}, m.attempt)
}

// stream sends req, its body params makes under the compatibility the
// endpoint has found, through attempt, retrying as Config says.
func (e *openaiEndpoint) stream(ctx context.Context, req Request, onDelta func(Delta), params func(Compat) (any, compatSent),
	attempt func(ctx context.Context, body []byte, maxTokens int, c *capture, onDelta func(Delta)) (Reply, error)) (Reply, error) {
	build := func(cc Compat) ([]byte, compatSent, error) {
		p, sent := params(cc)
		b, err := encodeBody(p)
		return b, sent, err
	}
	return e.compat.stream(ctx, e.retry, onDelta, build, func(ctx context.Context, body []byte, c *capture) (Reply, error) {
		return attempt(ctx, body, req.MaxTokens, c, onDelta)
	})
}

// header is the requests' header: Config's key and nothing else (no
// OPENAI_* variable is read, so a key goes only where nodwyn's
// configuration says).
func (e *openaiEndpoint) header() http.Header {
	h := http.Header{}
	if e.apiKey != "" {
		h.Set("Authorization", "Bearer "+e.apiKey)
	}
	return h
}

// The request body of Chat Completions, as much of it as nodwyn sends.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Tools    []chatTool    `json:"tools,omitempty"`
	chatTail               // the rest, after the tools (encoding/json puts its fields here)
}

// chatTail is what follows the tools in chatRequest, in its order: what
// chatBodies encodes each time, where the messages and tools it keeps.
type chatTail struct {
	ParallelToolCalls   *bool              `json:"parallel_tool_calls,omitempty"`
	Stream              bool               `json:"stream"`
	StreamOptions       *chatStreamOptions `json:"stream_options,omitempty"`
	MaxTokens           int                `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string             `json:"reasoning_effort,omitempty"`
	Temperature         *float64           `json:"temperature,omitempty"`
}

type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string          `json:"type"`
	Function chatFunctionDef `json:"function"`
}

type chatFunctionDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// maxField is the name the output limit goes by under cc.
func (m *OpenAI) maxField(cc Compat) string {
	if cc.MaxTokensField != "" {
		return cc.MaxTokensField
	}
	// OpenAI's newer models take only max_completion_tokens; many
	// compatible servers know only max_tokens.
	if m.official {
		return "max_completion_tokens"
	}
	return "max_tokens"
}

// params is the request body of req under cc, and what of cc it used.
func (m *OpenAI) params(req Request, cc Compat) (chatRequest, compatSent) {
	p, sent := m.paramsWithout(req, cc)
	p.Messages = make([]chatMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		p.Messages = append(p.Messages, chatMessage{Role: sent.role, Content: &req.System})
	}
	for _, msg := range req.Messages {
		p.Messages = append(p.Messages, chatMessageOf(msg))
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, chatTool{Type: "function",
			Function: chatFunctionDef{Name: t.Name, Description: t.Description, Parameters: schemaOrEmpty(t.Parameters)}})
	}
	return p, sent
}

// paramsWithout is params without the messages and the tools (the rest is
// said as params says it).
func (m *OpenAI) paramsWithout(req Request, cc Compat) (chatRequest, compatSent) {
	var sent compatSent
	model := req.Model
	if model == "" {
		model = m.model
	}
	p := chatRequest{Model: model, chatTail: chatTail{Stream: true, Temperature: req.Temperature}}
	if !cc.NoStreamOptions {
		p.StreamOptions = &chatStreamOptions{IncludeUsage: true}
		sent.streamOptions = true
	}
	if req.MaxTokens > 0 {
		sent.maxField = m.maxField(cc)
		if sent.maxField == "max_completion_tokens" {
			p.MaxCompletionTokens = req.MaxTokens
		} else {
			p.MaxTokens = req.MaxTokens
		}
	}
	if m.reasoning != "" && !cc.NoReasoningEffort {
		p.ReasoningEffort = m.reasoning
		sent.effort = true
	}
	if req.System != "" {
		role := cc.SystemRole
		if role == "" {
			role = "system"
		}
		sent.role = role
	}
	if len(req.Tools) > 0 && !cc.NoParallelToolCalls {
		yes := true
		p.ParallelToolCalls = &yes
		sent.parallel = true
	}
	return p, sent
}

// chatMessageOf is a message of the conversation as Chat Completions has it.
func chatMessageOf(msg Message) chatMessage {
	switch msg.Role {
	case RoleAssistant:
		a := chatMessage{Role: "assistant"}
		if msg.Content != "" || len(msg.ToolCalls) == 0 {
			a.Content = &msg.Content
		}
		for _, tc := range msg.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, chatToolCall{ID: tc.ID, Type: "function",
				Function: chatFunction{Name: tc.Name, Arguments: argsOrEmpty(tc.Arguments)}})
		}
		return a
	case RoleTool:
		text := toolResultText(msg)
		return chatMessage{Role: "tool", Content: &text, ToolCallID: msg.ToolCallID}
	default:
		return chatMessage{Role: "user", Content: &msg.Content}
	}
}

// chatChunk is one event of a Chat Completions stream.
type chatChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string `json:"content"`
			Refusal   string `json:"refusal"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        *int `json:"prompt_tokens"`
		CompletionTokens    int  `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens     int `json:"cached_tokens"`
			CacheWriteTokens int `json:"cache_write_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
	Error  json.RawMessage `json:"error"`
	Object string          `json:"object"` // "error" for servers that send the error itself (vLLM)
}

type openaiCall struct {
	ToolCall
	index int
}

func (m *OpenAI) attempt(ctx context.Context, body []byte, maxTokens int, c *capture, onDelta func(Delta)) (Reply, error) {
	sr, closer, err := c.send(ctx, m.hc, m.url, m.header(), body, chatWhole)
	if err != nil {
		return Reply{}, err
	}
	defer closer.Close()
	var (
		text     strings.Builder
		calls    []openaiCall
		reply    Reply
		finished bool
	)
	n, _, err := c.readEvents(sr, func(ev sseEvent) (bool, error) {
		c.data()
		if ev.Data == "[DONE]" {
			return true, nil
		}
		if ev.Event == "error" {
			return false, c.midStream(ev.Data)
		}
		var chunk chatChunk
		if err := decodeEvent(ev, &chunk); err != nil {
			return false, err
		}
		if (len(chunk.Error) > 0 && string(chunk.Error) != "null") || chunk.Object == "error" {
			return false, c.midStream(ev.Data)
		}
		if u := chunk.Usage; u != nil && u.PromptTokens != nil {
			cached, written := u.PromptTokensDetails.CachedTokens, u.PromptTokensDetails.CacheWriteTokens
			reply.Usage = Usage{
				InputTokens:      max(0, *u.PromptTokens-cached-written),
				OutputTokens:     u.CompletionTokens,
				CacheReadTokens:  cached,
				CacheWriteTokens: written,
				ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
			}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			d := ch.Delta
			if s := d.Content + d.Refusal; s != "" {
				text.WriteString(s)
				if onDelta != nil {
					onDelta(Delta{Text: s})
				}
			}
			for _, tc := range d.ToolCalls {
				i := findCall(calls, tc.Index, tc.ID)
				if i < 0 {
					calls = append(calls, openaiCall{index: tc.Index, ToolCall: ToolCall{ID: tc.ID}})
					i = len(calls) - 1
				}
				call := &calls[i]
				if call.ID == "" {
					call.ID = tc.ID
				}
				if call.Name == "" && tc.Function.Name != "" {
					call.Name = tc.Function.Name
					if onDelta != nil {
						onDelta(Delta{ToolName: call.Name})
					}
				}
				call.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				reply.StopReason = ch.FinishReason
				finished = true
			}
		}
		return false, nil
	})
	if err != nil {
		return Reply{}, err
	}
	if err := c.ended(n, finished, "finish_reason"); err != nil {
		return Reply{}, err
	}
	if reply.StopReason == "length" && len(calls) > 0 && cutArgs(calls[len(calls)-1].Arguments) {
		return Reply{}, c.outputLimit(m.maxField(m.compat.get()), maxTokens, calls[len(calls)-1].Name)
	}
	reply.Text = text.String()
	for n, call := range calls {
		if call.ID == "" {
			call.ID = "call_" + strconv.Itoa(n)
		}
		reply.ToolCalls = append(reply.ToolCalls, call.ToolCall)
	}
	return reply, nil
}

// chatCompletion is a whole Chat Completions reply (a server that did not
// stream): as a chunk, but each choice has its message where a chunk has
// a delta, and its tool calls have no index.
type chatCompletion struct {
	Object  string `json:"object"`
	Choices []struct {
		Index        int             `json:"index"`
		Message      json.RawMessage `json:"message"`
		FinishReason json.RawMessage `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// chatWhole makes a whole Chat Completions reply the chunk a stream would
// have carried it in (each message a delta, its tool calls numbered), then
// [DONE]; an error object (OpenAI's {"error": …}, vLLM's "object":
// "error") is the error it says.
func chatWhole(c *capture, raw []byte) ([]sseEvent, error) {
	var cc chatCompletion
	if err := json.Unmarshal(raw, &cc); err != nil {
		return nil, c.notReply("chat completion", raw)
	}
	if present(cc.Error) || cc.Object == "error" {
		return nil, c.errorReply(string(raw))
	}
	if cc.Choices == nil {
		return nil, c.notReply("chat completion", raw)
	}
	type choice struct {
		Index        int             `json:"index"`
		Delta        json.RawMessage `json:"delta"`
		FinishReason json.RawMessage `json:"finish_reason,omitempty"`
	}
	chunk := struct {
		Choices []choice        `json:"choices"`
		Usage   json.RawMessage `json:"usage,omitempty"`
	}{Choices: []choice{}, Usage: cc.Usage}
	for _, ch := range cc.Choices {
		var msg map[string]json.RawMessage
		if err := json.Unmarshal(ch.Message, &msg); err != nil {
			return nil, c.notReply("chat completion", raw)
		}
		var calls []map[string]json.RawMessage
		if present(msg["tool_calls"]) {
			if err := json.Unmarshal(msg["tool_calls"], &calls); err != nil {
				return nil, c.notReply("chat completion", raw)
			}
			for i, call := range calls {
				call["index"] = json.RawMessage(strconv.Itoa(i))
			}
			msg["tool_calls"], _ = json.Marshal(calls)
		}
		delta, _ := json.Marshal(msg)
		chunk.Choices = append(chunk.Choices, choice{Index: ch.Index, Delta: delta, FinishReason: ch.FinishReason})
	}
	return []sseEvent{jsonEvent(chunk), {Data: "[DONE]"}}, nil
}

// findCall finds the call a tool-call delta continues: the one with its
// index, unless the delta carries a different id (servers that number
// every call 0).
func findCall(calls []openaiCall, index int, id string) int {
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].index == index {
			if id != "" && calls[i].ID != "" && calls[i].ID != id {
				return -1
			}
			return i
		}
	}
	return -1
}
