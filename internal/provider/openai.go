package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAI is a model behind an OpenAI-compatible Chat Completions endpoint.
type OpenAI struct {
	client   openai.Client
	apiKey   string
	model    string
	official bool // the base URL is OpenAI's own
	retry    retrier
}

func newOpenAI(cfg Config) (*OpenAI, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultOpenAIURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("provider openai: base URL %q is not an http(s) URL; set it like http://127.0.0.1:8080/v1", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("provider openai: no model named; set the model (e.g. gpt-4o)")
	}
	official := u.Host == "api.openai.com"
	if official && cfg.APIKey == "" {
		return nil, fmt.Errorf("provider openai: no API key for %s; set OPENAI_API_KEY or the key variable named in [provider]", base)
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(cfg.httpClient()),
		option.WithMaxRetries(0), // our retrier decides
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &OpenAI{
		client:   openai.NewClient(opts...),
		apiKey:   cfg.APIKey,
		model:    cfg.Model,
		official: official,
		retry:    newRetrier("openai", base+"/chat/completions", cfg),
	}, nil
}

// Name returns "openai:MODEL".
func (m *OpenAI) Name() string { return "openai:" + m.model }

// Stream sends req and streams the reply, retrying as Config says.
func (m *OpenAI) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	params := m.params(req)
	return m.retry.do(ctx, onDelta, func(ctx context.Context, c *capture) (Reply, error) {
		return m.attempt(ctx, params, c, onDelta)
	})
}

func (m *OpenAI) params(req Request) openai.ChatCompletionNewParams {
	model := req.Model
	if model == "" {
		model = m.model
	}
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		// OpenAI's newer models take only max_completion_tokens; many
		// compatible servers know only max_tokens.
		if m.official {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = openai.String(msg.Content)
			}
			for _, tc := range msg.ToolCalls {
				args := tc.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			p.Messages = append(p.Messages, openai.ToolMessage(toolResultText(msg), msg.ToolCallID))
		default:
			p.Messages = append(p.Messages, openai.UserMessage(msg.Content))
		}
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schemaOrEmpty(t.Parameters))}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	return p
}

// toolResultText is a tool message's content for a provider with no error
// flag (and never empty, which some servers refuse).
func toolResultText(msg Message) string {
	s := msg.Content
	if msg.IsError && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "error") {
		s = "Error: " + s
	}
	if strings.TrimSpace(s) == "" {
		s = "(no output)"
	}
	return s
}

func schemaOrEmpty(s map[string]any) map[string]any {
	if s == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return s
}

// ownCredentials sends Config.APIKey and nothing the SDK took from the
// environment (OPENAI_API_KEY, OPENAI_ORG_ID, OPENAI_PROJECT_ID): the key
// goes only where nodwyn's configuration says.
func (m *OpenAI) ownCredentials(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if m.apiKey == "" {
		req.Header.Del("Authorization")
	} else {
		req.Header.Set("Authorization", "Bearer "+m.apiKey)
	}
	req.Header.Del("OpenAI-Organization")
	req.Header.Del("OpenAI-Project")
	return next(req)
}

type openaiCall struct {
	ToolCall
	index int64
}

func (m *OpenAI) attempt(ctx context.Context, params openai.ChatCompletionNewParams, c *capture, onDelta func(Delta)) (Reply, error) {
	stream := m.client.Chat.Completions.NewStreaming(ctx, params, option.WithMiddleware(m.ownCredentials, c.middleware))
	defer stream.Close()
	var (
		text     strings.Builder
		calls    []openaiCall
		reply    Reply
		finished bool
		chunks   int
	)
	for stream.Next() {
		chunks++
		c.data()
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() && chunk.Usage.JSON.PromptTokens.Valid() {
			u := chunk.Usage
			cached := int(u.PromptTokensDetails.CachedTokens)
			written := int(u.PromptTokensDetails.CacheWriteTokens)
			reply.Usage = Usage{
				InputTokens:      max(0, int(u.PromptTokens)-cached-written),
				OutputTokens:     int(u.CompletionTokens),
				CacheReadTokens:  cached,
				CacheWriteTokens: written,
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
	}
	if err := stream.Err(); err != nil {
		return Reply{}, attemptErr(c, err)
	}
	if chunks == 0 {
		return Reply{}, c.notStream()
	}
	if !finished {
		return Reply{}, fmt.Errorf("%w: the stream ended with no finish_reason", errStreamCut)
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

// findCall finds the call a tool-call delta continues: the one with its
// index, unless the delta carries a different id (servers that number
// every call 0).
func findCall(calls []openaiCall, index int64, id string) int {
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

// attemptErr describes the error of an attempt by what the HTTP layer saw.
func attemptErr(c *capture, err error) error {
	if !c.sent || c.status >= 400 {
		return err // a local error, or a status the retrier reports
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if c.status == 0 {
		return fmt.Errorf("connection failed: %w", err)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("malformed event in the stream: %w", err)
	}
	if strings.Contains(err.Error(), "error while streaming") {
		return fmt.Errorf("the server sent an error mid-stream: %w", err)
	}
	return fmt.Errorf("%w: %w", errStreamCut, err)
}
