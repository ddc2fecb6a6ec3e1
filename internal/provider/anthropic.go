package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// Anthropic is a model behind the Anthropic Messages API.
type Anthropic struct {
	client anthropic.Client
	model  string
	retry  retrier
}

func newAnthropic(cfg Config) (*Anthropic, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultAnthropicURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("provider anthropic: base URL %q is not an http(s) URL; set it like https://api.anthropic.com", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("provider anthropic: no model named; set the model (e.g. claude-sonnet-4-5)")
	}
	if cfg.APIKey == "" && u.Host == "api.anthropic.com" {
		return nil, fmt.Errorf("provider anthropic: no API key for %s; set ANTHROPIC_API_KEY or the key variable named in [provider]", base)
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(), // keys and URLs come from Config only
		option.WithBaseURL(base),
		option.WithHTTPClient(cfg.httpClient()),
		option.WithMaxRetries(0), // our retrier decides
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Anthropic{
		client: anthropic.NewClient(opts...),
		model:  cfg.Model,
		retry:  newRetrier("anthropic", base+"/v1/messages", cfg),
	}, nil
}

// Name returns "anthropic:MODEL".
func (m *Anthropic) Name() string { return "anthropic:" + m.model }

// Stream sends req and streams the reply, retrying as Config says.
func (m *Anthropic) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	params := m.params(req)
	return m.retry.do(ctx, onDelta, func(ctx context.Context, c *capture) (Reply, error) {
		return m.attempt(ctx, params, c, onDelta)
	})
}

func (m *Anthropic) params(req Request) anthropic.MessageNewParams {
	model := req.Model
	if model == "" {
		model = m.model
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	p := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: int64(maxTokens)}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	type turn struct {
		assistant bool
		blocks    []anthropic.ContentBlockParamUnion
	}
	var turns []turn
	for _, msg := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		assistant := msg.Role == RoleAssistant
		switch msg.Role {
		case RoleAssistant:
			if strings.TrimSpace(msg.Content) != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Content))
			}
			for _, tc := range msg.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, toolInput(tc.Arguments), tc.Name))
			}
		case RoleTool:
			content := msg.Content
			if strings.TrimSpace(content) == "" {
				content = "(no output)"
			}
			blocks = append(blocks, anthropic.NewToolResultBlock(msg.ToolCallID, content, msg.IsError))
		default:
			if strings.TrimSpace(msg.Content) != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Content))
			}
		}
		if len(blocks) == 0 {
			blocks = append(blocks, anthropic.NewTextBlock("(empty)"))
		}
		// Consecutive messages of one role become one message: tool
		// results, and any user text after them, answer the assistant
		// turn together.
		if n := len(turns); n > 0 && turns[n-1].assistant == assistant {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			continue
		}
		turns = append(turns, turn{assistant: assistant, blocks: blocks})
	}
	// Cache the conversation so far: a breakpoint on its last block.
	if n := len(turns); n > 0 {
		last := turns[n-1].blocks
		if cc := last[len(last)-1].GetCacheControl(); cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
		}
	}
	for _, t := range turns {
		if t.assistant {
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(t.blocks...))
		} else {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(t.blocks...))
		}
	}
	for i, t := range req.Tools {
		tp := anthropic.ToolParam{Name: t.Name, InputSchema: inputSchema(t.Parameters)}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		if i == len(req.Tools)-1 {
			tp.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	return p
}

// toolInput is a tool_use block's input: the model's arguments when they
// are a JSON object, else an object that shows what it sent (the API
// requires an object).
func toolInput(raw string) any {
	s := strings.TrimSpace(raw)
	if s == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) == nil && obj != nil {
		return json.RawMessage(s)
	}
	return map[string]any{"invalid_arguments": raw}
}

// inputSchema turns a JSON schema object into the SDK's input schema.
func inputSchema(s map[string]any) anthropic.ToolInputSchemaParam {
	var in anthropic.ToolInputSchemaParam
	for k, v := range s {
		switch k {
		case "type":
		case "properties":
			in.Properties = v
		case "required":
			switch r := v.(type) {
			case []string:
				in.Required = r
			case []any:
				for _, x := range r {
					if name, ok := x.(string); ok {
						in.Required = append(in.Required, name)
					}
				}
			}
		default:
			if in.ExtraFields == nil {
				in.ExtraFields = map[string]any{}
			}
			in.ExtraFields[k] = v
		}
	}
	if in.Properties == nil {
		in.Properties = map[string]any{}
	}
	return in
}

type anthropicBlock struct {
	tool bool
	call ToolCall
	args strings.Builder
}

func (m *Anthropic) attempt(ctx context.Context, params anthropic.MessageNewParams, c *capture, onDelta func(Delta)) (Reply, error) {
	stream := m.client.Messages.NewStreaming(ctx, params, option.WithMiddleware(c.middleware))
	defer stream.Close()
	var (
		text    strings.Builder
		blocks  = map[int64]*anthropicBlock{}
		order   []*anthropicBlock
		reply   Reply
		stopped bool
		events  int
	)
	for stream.Next() {
		events++
		ev := stream.Current()
		if ev.Type != "ping" { // a ping is not data: a server that sends only pings is stalled
			c.data()
		}
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			reply.Usage = Usage{
				InputTokens:      int(u.InputTokens),
				OutputTokens:     int(u.OutputTokens),
				CacheReadTokens:  int(u.CacheReadInputTokens),
				CacheWriteTokens: int(u.CacheCreationInputTokens),
			}
		case "content_block_start":
			b := &anthropicBlock{}
			blocks[ev.Index] = b
			cb := ev.ContentBlock
			switch cb.Type {
			case "tool_use":
				b.tool = true
				b.call = ToolCall{ID: cb.ID, Name: cb.Name}
				order = append(order, b)
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
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				text.WriteString(ev.Delta.Text)
				if onDelta != nil && ev.Delta.Text != "" {
					onDelta(Delta{Text: ev.Delta.Text})
				}
			case "input_json_delta":
				if b := blocks[ev.Index]; b != nil && b.tool {
					b.args.WriteString(ev.Delta.PartialJSON)
				}
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				reply.StopReason = string(ev.Delta.StopReason)
			}
			u := ev.Usage
			reply.Usage.OutputTokens = int(u.OutputTokens)
			if u.JSON.InputTokens.Valid() && u.InputTokens > 0 {
				reply.Usage.InputTokens = int(u.InputTokens)
			}
			if u.JSON.CacheReadInputTokens.Valid() && u.CacheReadInputTokens > 0 {
				reply.Usage.CacheReadTokens = int(u.CacheReadInputTokens)
			}
			if u.JSON.CacheCreationInputTokens.Valid() && u.CacheCreationInputTokens > 0 {
				reply.Usage.CacheWriteTokens = int(u.CacheCreationInputTokens)
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		var aerr *anthropic.Error
		if c.sent && c.status > 0 && c.status < 400 && errors.As(err, &aerr) {
			err = fmt.Errorf("the server sent an error mid-stream: %s", excerpt(aerr.RawJSON(), 400))
			return Reply{}, err
		}
		return Reply{}, attemptErr(c, err)
	}
	if events == 0 {
		return Reply{}, c.notStream()
	}
	if !stopped {
		return Reply{}, fmt.Errorf("%w: the stream ended with no message_stop", errStreamCut)
	}
	reply.Text = text.String()
	for _, b := range order {
		b.call.Arguments = b.args.String()
		if b.call.Arguments == "" {
			b.call.Arguments = "{}"
		}
		reply.ToolCalls = append(reply.ToolCalls, b.call)
	}
	return reply, nil
}
