package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Anthropic is a model behind the Anthropic Messages API (POST
// {base}/v1/messages, streamed).
type Anthropic struct {
	hc        *http.Client
	apiKey    string
	model     string
	url       string
	reasoning string
	retry     retrier
	schemas   schemaCache
}

// AnthropicVersion is the anthropic-version header every request sends.
const AnthropicVersion = "2023-06-01"

// AnthropicThinkingBudget is the budget_tokens of extended thinking for a
// reasoning effort: low 2048, medium 8192, high 16384 ("" and others 0: no
// thinking). The request's max_tokens becomes the budget plus what it was
// (DefaultMaxTokens when unset), since it must exceed the budget and the
// answer keeps the room it had: 10240, 16384 and 24576 by default, within
// every current model's output limit.
func AnthropicThinkingBudget(effort string) int {
	switch effort {
	case "low":
		return 2048
	case "medium":
		return 8192
	case "high":
		return 16384
	}
	return 0
}

func newAnthropic(cfg Config) (*Anthropic, error) {
	base, u, err := checkBase("anthropic", cfg.BaseURL, DefaultAnthropicURL, "https://api.anthropic.com")
	if err != nil {
		return nil, err
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("provider anthropic: no model named; set the model (e.g. claude-sonnet-4-5)")
	}
	if cfg.APIKey == "" && u.Host == "api.anthropic.com" {
		return nil, fmt.Errorf("provider anthropic: no API key for %s; set ANTHROPIC_API_KEY or the key variable named in [provider]", base)
	}
	return &Anthropic{
		hc:        cfg.httpClient(base),
		apiKey:    cfg.APIKey,
		model:     cfg.Model,
		url:       base + "/v1/messages",
		reasoning: cfg.Reasoning,
		retry:     newRetrier("anthropic", base+"/v1/messages", cfg),
	}, nil
}

// Name returns "anthropic:MODEL".
func (m *Anthropic) Name() string { return "anthropic:" + m.model }

// CloseIdleConnections closes the connection kept between requests.
func (m *Anthropic) CloseIdleConnections() { m.hc.CloseIdleConnections() }

// Stream sends req and streams the reply, retrying as Config says.
func (m *Anthropic) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	p := m.params(req)
	body, err := encodeBody(p)
	return m.retry.do(ctx, onDelta, func(ctx context.Context, c *capture) (Reply, error) {
		if err != nil {
			return Reply{}, err
		}
		return m.attempt(ctx, body, p.MaxTokens, c, onDelta)
	})
}

type anRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    []*anBlock  `json:"system,omitempty"`
	Messages  []anMessage `json:"messages"`
	Tools     []*anTool   `json:"tools,omitempty"`
	Thinking  *anThinking `json:"thinking,omitempty"`
	Stream    bool        `json:"stream"`
	// Temperature is left out with thinking on, which the API requires at 1.
	Temperature *float64 `json:"temperature,omitempty"`
}

type anMessage struct {
	Role    string     `json:"role"`
	Content []*anBlock `json:"content"`
}

type anCache struct {
	Type string `json:"type"`
}

var ephemeral = &anCache{Type: "ephemeral"}

// anBlock is a content block nodwyn writes, or one of the model's passed
// back as it came (raw).
type anBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      []*anBlock      `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl *anCache        `json:"cache_control,omitempty"`

	raw json.RawMessage
}

func (b *anBlock) MarshalJSON() ([]byte, error) {
	if b.raw != nil {
		return b.raw, nil
	}
	type plain anBlock
	return json.Marshal((*plain)(b))
}

type anTool struct {
	Name         string   `json:"name"`
	Description  string   `json:"description,omitempty"`
	InputSchema  any      `json:"input_schema"` // a schema map, or its JSON (schemaCache)
	CacheControl *anCache `json:"cache_control,omitempty"`
}

type anThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

func textBlock(s string) *anBlock { return &anBlock{Type: "text", Text: s} }

// maxCacheBreakpoints is how many cache_control marks a request may carry.
const maxCacheBreakpoints = 4

func (m *Anthropic) params(req Request) anRequest {
	model := req.Model
	if model == "" {
		model = m.model
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	p := anRequest{Model: model, MaxTokens: maxTokens, Stream: true, Temperature: req.Temperature}
	if budget := AnthropicThinkingBudget(m.reasoning); budget > 0 && !thinkingLost(req.Messages) {
		p.Thinking = &anThinking{Type: "enabled", BudgetTokens: budget}
		p.Temperature = nil // with thinking on the API takes only the default
		p.MaxTokens = budget + maxTokens
	}
	if req.System != "" {
		p.System = []*anBlock{textBlock(req.System)}
	}
	for _, msg := range req.Messages {
		var blocks []*anBlock
		assistant := msg.Role == RoleAssistant
		switch msg.Role {
		case RoleAssistant:
			// Thinking blocks first, unchanged, as the API requires.
			for _, item := range reasoningOf(msg, "thinking", "redacted_thinking") {
				blocks = append(blocks, &anBlock{raw: item})
			}
			if strings.TrimSpace(msg.Content) != "" {
				blocks = append(blocks, textBlock(msg.Content))
			}
			for _, tc := range msg.ToolCalls {
				blocks = append(blocks, &anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: toolInput(tc.Arguments)})
			}
		case RoleTool:
			content := msg.Content
			if strings.TrimSpace(content) == "" {
				content = "(no output)"
			}
			blocks = append(blocks, &anBlock{Type: "tool_result", ToolUseID: msg.ToolCallID, Content: []*anBlock{textBlock(content)}, IsError: msg.IsError})
		default:
			if strings.TrimSpace(msg.Content) != "" {
				blocks = append(blocks, textBlock(msg.Content))
			}
		}
		if len(blocks) == 0 {
			blocks = append(blocks, textBlock("(empty)"))
		}
		// Consecutive messages of one role become one message: tool
		// results, and any user text after them, answer the assistant
		// turn together.
		role := "user"
		if assistant {
			role = "assistant"
		}
		if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == role {
			p.Messages[n-1].Content = append(p.Messages[n-1].Content, blocks...)
			continue
		}
		p.Messages = append(p.Messages, anMessage{Role: role, Content: blocks})
	}
	schemas := m.schemas.encode(req.Tools, inputSchema)
	for i, t := range req.Tools {
		p.Tools = append(p.Tools, &anTool{Name: t.Name, Description: t.Description, InputSchema: schemas[i]})
	}
	// Prompt caching: breakpoints on the system prompt (which caches the
	// tools before it too), on the last user turn (the conversation so far,
	// read back by the next request) and the one before it (what the
	// previous request wrote, found again however many blocks this turn
	// added), and on the last tool (still read when the system prompt
	// changes). At most maxCacheBreakpoints, in that order.
	var marks []**anCache
	if len(p.System) > 0 {
		marks = append(marks, &p.System[0].CacheControl)
	}
	users := 0
	for i := len(p.Messages) - 1; i >= 0 && users < 2; i-- {
		if msg := p.Messages[i]; msg.Role == "user" {
			marks = append(marks, &msg.Content[len(msg.Content)-1].CacheControl)
			users++
		}
	}
	if n := len(p.Tools); n > 0 {
		marks = append(marks, &p.Tools[n-1].CacheControl)
	}
	for _, cc := range marks[:min(len(marks), maxCacheBreakpoints)] {
		*cc = ephemeral
	}
	return p
}

// thinkingLost reports whether the last assistant message made tool calls
// and holds no thinking block: with thinking on, the API refuses such a
// tool loop (its last assistant turn must start with its thinking), so the
// request is sent without thinking. This happens when a caller did not keep
// Message.Reasoning, or when thinking was turned on mid-loop.
func thinkingLost(msgs []Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			return len(msgs[i].ToolCalls) > 0 && len(reasoningOf(msgs[i], "thinking", "redacted_thinking")) == 0
		}
	}
	return false
}

// toolInput is a tool_use block's input: the model's arguments when they
// are a JSON object, else an object that shows what it sent (the API
// requires an object).
func toolInput(raw string) json.RawMessage {
	s := strings.TrimSpace(raw)
	if s == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) == nil && obj != nil {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(map[string]string{"invalid_arguments": raw})
	return b
}

// inputSchema is a tool's input_schema: its JSON schema as an object
// schema (type "object", properties never absent, required only names).
func inputSchema(s map[string]any) map[string]any {
	in := map[string]any{}
	for k, v := range s {
		switch k {
		case "type":
		case "required":
			var names []string
			switch r := v.(type) {
			case []string:
				names = r
			case []any:
				for _, x := range r {
					if name, ok := x.(string); ok {
						names = append(names, name)
					}
				}
			}
			if len(names) > 0 {
				in["required"] = names
			}
		default:
			in[k] = v
		}
	}
	in["type"] = "object"
	if in["properties"] == nil {
		in["properties"] = map[string]any{}
	}
	return in
}

func (m *Anthropic) header() http.Header {
	h := http.Header{}
	h.Set("anthropic-version", AnthropicVersion)
	// Config's key and nothing else: no ANTHROPIC_* variable is read.
	if m.apiKey != "" {
		h.Set("x-api-key", m.apiKey)
	}
	return h
}

type anUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             int  `json:"output_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
}

type anEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage anUsage `json:"usage"`
	} `json:"message"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anUsage `json:"usage"`
}

type anContentBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Text      string `json:"text"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type anthropicBlock struct {
	kind      string
	call      ToolCall
	args      strings.Builder
	thinking  strings.Builder
	signature strings.Builder
	raw       json.RawMessage // redacted_thinking, as it came
	stopped   bool
}

func (m *Anthropic) attempt(ctx context.Context, body []byte, maxTokens int, c *capture, onDelta func(Delta)) (Reply, error) {
	sr, closer, err := c.send(ctx, m.hc, m.url, m.header(), body, anWhole)
	if err != nil {
		return Reply{}, err
	}
	defer closer.Close()
	var (
		text    strings.Builder
		blocks  = map[int]*anthropicBlock{}
		order   []*anthropicBlock
		reply   Reply
		stopped bool
	)
	n, _, err := c.readEvents(sr, func(sev sseEvent) (bool, error) {
		var ev anEvent
		if err := decodeEvent(sev, &ev); err != nil {
			return false, err
		}
		if ev.Type == "ping" || sev.Event == "ping" {
			return false, nil // a ping is not data: a server that sends only pings is stalled
		}
		c.data()
		switch ev.Type {
		case "error":
			return false, c.midStream(sev.Data)
		case "message_start":
			u := ev.Message.Usage
			reply.Usage = Usage{
				InputTokens:      deref(u.InputTokens),
				OutputTokens:     u.OutputTokens,
				CacheReadTokens:  deref(u.CacheReadInputTokens),
				CacheWriteTokens: deref(u.CacheCreationInputTokens),
			}
		case "content_block_start":
			var cb anContentBlock
			if err := json.Unmarshal(ev.ContentBlock, &cb); err != nil {
				return false, fmt.Errorf("malformed event in the stream: %w: %s", err, excerpt(sev.Data, 200))
			}
			b := &anthropicBlock{kind: cb.Type}
			blocks[ev.Index] = b
			order = append(order, b)
			switch cb.Type {
			case "tool_use":
				b.call = ToolCall{ID: cb.ID, Name: cb.Name}
				if onDelta != nil {
					onDelta(Delta{ToolName: cb.Name})
				}
			case "text":
				if cb.Text != "" {
					text.WriteString(cb.Text)
					if onDelta != nil {
						onDelta(Delta{Text: cb.Text})
					}
				}
			case "thinking":
				b.thinking.WriteString(cb.Thinking)
				b.signature.WriteString(cb.Signature)
			case "redacted_thinking":
				b.raw = ev.ContentBlock
			}
		case "content_block_delta":
			b := blocks[ev.Index]
			switch ev.Delta.Type {
			case "text_delta":
				text.WriteString(ev.Delta.Text)
				if onDelta != nil && ev.Delta.Text != "" {
					onDelta(Delta{Text: ev.Delta.Text})
				}
			case "input_json_delta":
				if b != nil && b.kind == "tool_use" {
					b.args.WriteString(ev.Delta.PartialJSON)
				}
			case "thinking_delta":
				if b != nil {
					b.thinking.WriteString(ev.Delta.Thinking)
				}
			case "signature_delta":
				if b != nil {
					b.signature.WriteString(ev.Delta.Signature)
				}
			}
		case "content_block_stop":
			if b := blocks[ev.Index]; b != nil {
				b.stopped = true
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				reply.StopReason = ev.Delta.StopReason
			}
			if u := ev.Usage; u != nil {
				reply.Usage.OutputTokens = u.OutputTokens
				if v := deref(u.InputTokens); v > 0 {
					reply.Usage.InputTokens = v
				}
				if v := deref(u.CacheReadInputTokens); v > 0 {
					reply.Usage.CacheReadTokens = v
				}
				if v := deref(u.CacheCreationInputTokens); v > 0 {
					reply.Usage.CacheWriteTokens = v
				}
			}
		case "message_stop":
			stopped = true
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return Reply{}, err
	}
	if err := c.ended(n, stopped, "message_stop"); err != nil {
		return Reply{}, err
	}
	if k := len(order); reply.StopReason == "max_tokens" && k > 0 && order[k-1].kind == "tool_use" {
		if last := order[k-1]; !last.stopped || cutArgs(last.args.String()) {
			return Reply{}, c.outputLimit("max_tokens", maxTokens, last.call.Name)
		}
	}
	reply.Text = text.String()
	for _, b := range order {
		switch b.kind {
		case "tool_use":
			b.call.Arguments = b.args.String()
			if b.call.Arguments == "" {
				b.call.Arguments = "{}"
			}
			reply.ToolCalls = append(reply.ToolCalls, b.call)
		case "thinking":
			item, _ := encodeBody(struct {
				Type      string `json:"type"`
				Thinking  string `json:"thinking"`
				Signature string `json:"signature"`
			}{"thinking", b.thinking.String(), b.signature.String()})
			reply.Reasoning = append(reply.Reasoning, opaque(item))
		case "redacted_thinking":
			reply.Reasoning = append(reply.Reasoning, opaque(b.raw))
		}
	}
	return reply, nil
}

// anMessageWhole is a whole Messages reply (a server that did not stream),
// as far as anWhole reads it.
type anMessageWhole struct {
	Type       string            `json:"type"`
	Content    []json.RawMessage `json:"content"`
	StopReason json.RawMessage   `json:"stop_reason"`
	Usage      json.RawMessage   `json:"usage"`
}

// anWhole makes a whole Messages reply the events a stream would have
// carried it in: message_start (its usage), each content block started
// whole (a tool_use block's input as one input_json_delta) and stopped,
// message_delta (the stop reason, the usage), message_stop. An error
// ("type": "error") is the error it says.
func anWhole(c *capture, raw []byte) ([]sseEvent, error) {
	var msg anMessageWhole
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, c.notReply("message", raw)
	}
	if msg.Type == "error" {
		return nil, c.errorReply(string(raw))
	}
	if msg.Type != "message" {
		return nil, c.notReply("message", raw)
	}
	type event struct {
		Type         string          `json:"type"`
		Index        int             `json:"index"`
		Message      json.RawMessage `json:"message,omitempty"`
		ContentBlock json.RawMessage `json:"content_block,omitempty"`
		Delta        any             `json:"delta,omitempty"`
		Usage        json.RawMessage `json:"usage,omitempty"`
	}
	evs := []sseEvent{jsonEvent(event{Type: "message_start", Message: raw})}
	for i, block := range msg.Content {
		var head struct {
			Type  string          `json:"type"`
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(block, &head); err != nil {
			return nil, c.notReply("message", raw)
		}
		evs = append(evs, jsonEvent(event{Type: "content_block_start", Index: i, ContentBlock: block}))
		if head.Type == "tool_use" && present(head.Input) {
			var args bytes.Buffer
			_ = json.Compact(&args, head.Input) // it decoded
			evs = append(evs, jsonEvent(event{Type: "content_block_delta", Index: i,
				Delta: map[string]string{"type": "input_json_delta", "partial_json": args.String()}}))
		}
		evs = append(evs, jsonEvent(event{Type: "content_block_stop", Index: i}))
	}
	evs = append(evs,
		jsonEvent(event{Type: "message_delta", Delta: map[string]json.RawMessage{"stop_reason": msg.StopReason}, Usage: msg.Usage}),
		jsonEvent(event{Type: "message_stop"}))
	return evs, nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
