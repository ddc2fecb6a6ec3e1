package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Responses is a model behind OpenAI's Responses API (POST
// {base}/responses, streamed), chosen by Config.API "responses".
//
// Nothing is stored on OpenAI's side (store: false): each request carries
// the whole conversation as input items (messages, function_call and
// function_call_output items keyed by call_id), and the model's reasoning
// items come back encrypted (include: ["reasoning.encrypted_content"]), in
// Reply.Reasoning, to be sent again unchanged before the turn's calls, as
// the API requires of a stateless conversation. An item with no
// encrypted_content (a server that did not honour the include) is not
// sent: without it the API would look the id up among stored items and
// fail.
type Responses struct {
	openaiEndpoint
	schemas schemaCache
}

func newResponses(cfg Config) (*Responses, error) {
	m := &Responses{}
	if err := m.init(cfg, "/responses", "gpt-5"); err != nil {
		return nil, err
	}
	return m, nil
}

// Name returns "openai-responses:MODEL".
func (m *Responses) Name() string { return "openai-responses:" + m.model }

// Stream sends req and streams the reply, retrying as Config says.
func (m *Responses) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	return m.stream(ctx, req, onDelta, func(cc Compat) (any, compatSent) { return m.params(req, cc) }, m.attempt)
}

type respRequest struct {
	Model           string         `json:"model"`
	Instructions    string         `json:"instructions,omitempty"`
	Input           []any          `json:"input"`
	Tools           []respTool     `json:"tools,omitempty"`
	Stream          bool           `json:"stream"`
	Store           bool           `json:"store"`
	Include         []string       `json:"include,omitempty"`
	MaxOutputTokens int            `json:"max_output_tokens,omitempty"`
	Temperature     *float64       `json:"temperature,omitempty"`
	Reasoning       *respReasoning `json:"reasoning,omitempty"`
}

type respReasoning struct {
	Effort string `json:"effort"`
}

type respMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

type respFunctionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type respFunctionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type respTool struct {
	Type        string `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  any    `json:"parameters"` // a schema map, or its JSON (schemaCache)
	// Strict is sent false: the Responses API's default, true, demands
	// schemas nodwyn's tools do not follow (every property required, no
	// additional ones).
	Strict bool `json:"strict"`
}

func (m *Responses) params(req Request, cc Compat) (respRequest, compatSent) {
	var sent compatSent
	model := req.Model
	if model == "" {
		model = m.model
	}
	p := respRequest{Model: model, Instructions: req.System, Stream: true, Store: false, MaxOutputTokens: max(0, req.MaxTokens), Input: []any{}, Temperature: req.Temperature}
	if !cc.NoEncryptedReasoning {
		p.Include = []string{"reasoning.encrypted_content"}
		sent.encrypted = true
	}
	if m.reasoning != "" && !cc.NoReasoningEffort {
		// Only the effort: summaries need a verified organization, and
		// nodwyn shows no reasoning.
		p.Reasoning = &respReasoning{Effort: m.reasoning}
		sent.effort = true
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case RoleAssistant:
			for _, item := range reasoningOf(msg, "reasoning") {
				if hasEncrypted(item) {
					p.Input = append(p.Input, item)
				}
			}
			if msg.Content != "" {
				p.Input = append(p.Input, respMessage{Type: "message", Role: "assistant", Content: msg.Content})
			}
			for _, tc := range msg.ToolCalls {
				p.Input = append(p.Input, respFunctionCall{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: argsOrEmpty(tc.Arguments)})
			}
		case RoleTool:
			p.Input = append(p.Input, respFunctionCallOutput{Type: "function_call_output", CallID: msg.ToolCallID, Output: toolResultText(msg)})
		default:
			p.Input = append(p.Input, respMessage{Type: "message", Role: "user", Content: msg.Content})
		}
	}
	schemas := m.schemas.encode(req.Tools, schemaOrEmpty)
	for i, t := range req.Tools {
		p.Tools = append(p.Tools, respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schemas[i]})
	}
	return p, sent
}

// hasEncrypted reports whether a reasoning item carries encrypted_content.
func hasEncrypted(item json.RawMessage) bool {
	var r struct {
		EncryptedContent string `json:"encrypted_content"`
	}
	return json.Unmarshal(item, &r) == nil && r.EncryptedContent != ""
}

type respUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

type respEvent struct {
	Type        string          `json:"type"`
	OutputIndex int             `json:"output_index"`
	ItemID      string          `json:"item_id"`
	Delta       string          `json:"delta"`
	Arguments   *string         `json:"arguments"`
	Item        json.RawMessage `json:"item"`
	Response    *struct {
		Status            string          `json:"status"`
		Error             json.RawMessage `json:"error"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Usage *respUsage `json:"usage"`
	} `json:"response"`
}

type respItem struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	CallID    string  `json:"call_id"`
	Name      string  `json:"name"`
	Arguments *string `json:"arguments"`
}

type respCall struct {
	call   ToolCall
	itemID string
	args   strings.Builder
	done   bool
}

func (m *Responses) attempt(ctx context.Context, body []byte, maxTokens int, c *capture, onDelta func(Delta)) (Reply, error) {
	sr, closer, err := c.send(ctx, m.hc, m.url, m.header(), body, respWhole)
	if err != nil {
		return Reply{}, err
	}
	defer closer.Close()
	var (
		text       strings.Builder
		calls      = map[int]*respCall{}
		order      []*respCall
		reasoning  = map[int]json.RawMessage{}
		rorder     []int
		reply      Reply
		incomplete string
	)
	callFor := func(ev respEvent) *respCall {
		if rc := calls[ev.OutputIndex]; rc != nil {
			return rc
		}
		for _, rc := range order { // a server that numbers no output_index
			if ev.ItemID != "" && rc.itemID == ev.ItemID {
				return rc
			}
		}
		return nil
	}
	n, done, err := c.readEvents(sr, func(sev sseEvent) (bool, error) {
		var ev respEvent
		if err := decodeEvent(sev, &ev); err != nil {
			return false, err
		}
		c.data()
		if ev.Type == "" {
			ev.Type = sev.Event
		}
		switch ev.Type {
		case "error":
			return false, c.midStream(sev.Data)
		case "response.failed":
			raw := sev.Data
			if ev.Response != nil && len(ev.Response.Error) > 0 && string(ev.Response.Error) != "null" {
				raw = string(ev.Response.Error)
			}
			return false, c.midStream(raw)
		case "response.output_text.delta", "response.refusal.delta":
			text.WriteString(ev.Delta)
			if onDelta != nil && ev.Delta != "" {
				onDelta(Delta{Text: ev.Delta})
			}
		case "response.output_item.added", "response.output_item.done":
			var it respItem
			if err := json.Unmarshal(ev.Item, &it); err != nil {
				return false, fmt.Errorf("malformed event in the stream: %w: %s", err, excerpt(sev.Data, 200))
			}
			switch it.Type {
			case "function_call":
				rc := calls[ev.OutputIndex]
				if rc == nil {
					rc = &respCall{call: ToolCall{ID: it.CallID, Name: it.Name}}
					calls[ev.OutputIndex] = rc
					order = append(order, rc)
					if onDelta != nil && it.Name != "" {
						onDelta(Delta{ToolName: it.Name})
					}
				}
				rc.call.ID = firstNonEmpty(it.CallID, rc.call.ID)
				rc.call.Name = firstNonEmpty(rc.call.Name, it.Name)
				rc.itemID = firstNonEmpty(it.ID, rc.itemID)
				if ev.Type == "response.output_item.done" {
					if it.Arguments != nil {
						rc.args.Reset()
						rc.args.WriteString(*it.Arguments)
					}
					rc.done = true
				}
			case "reasoning":
				if ev.Type == "response.output_item.done" {
					if _, seen := reasoning[ev.OutputIndex]; !seen {
						rorder = append(rorder, ev.OutputIndex)
					}
					reasoning[ev.OutputIndex] = opaque(ev.Item)
				}
			}
		case "response.function_call_arguments.delta":
			if rc := callFor(ev); rc != nil {
				rc.args.WriteString(ev.Delta)
			}
		case "response.function_call_arguments.done":
			if rc := callFor(ev); rc != nil && ev.Arguments != nil {
				rc.args.Reset()
				rc.args.WriteString(*ev.Arguments)
			}
		case "response.completed", "response.incomplete":
			if r := ev.Response; r != nil {
				if u := r.Usage; u != nil {
					cached := u.InputTokensDetails.CachedTokens
					reply.Usage = Usage{
						InputTokens:     max(0, u.InputTokens-cached),
						OutputTokens:    u.OutputTokens,
						CacheReadTokens: cached,
						ReasoningTokens: u.OutputTokensDetails.ReasoningTokens,
					}
				}
				reply.StopReason = r.Status
				if ev.Type == "response.incomplete" {
					incomplete = "incomplete"
					if r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "" {
						incomplete = r.IncompleteDetails.Reason
					}
					reply.StopReason = incomplete
				}
			}
			if reply.StopReason == "" {
				reply.StopReason = strings.TrimPrefix(ev.Type, "response.")
			}
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return Reply{}, err
	}
	if err := c.ended(n, done, "response.completed"); err != nil {
		return Reply{}, err
	}
	if k := len(order); incomplete == "max_output_tokens" && k > 0 {
		if last := order[k-1]; !last.done || cutArgs(last.args.String()) {
			return Reply{}, c.outputLimit("max_output_tokens", maxTokens, last.call.Name)
		}
	}
	reply.Text = text.String()
	for i, rc := range order {
		rc.call.Arguments = rc.args.String()
		if rc.call.ID == "" {
			rc.call.ID = "call_" + strconv.Itoa(i)
		}
		reply.ToolCalls = append(reply.ToolCalls, rc.call)
	}
	for _, i := range rorder {
		reply.Reasoning = append(reply.Reasoning, reasoning[i])
	}
	return reply, nil
}

// respResponseWhole is a whole Responses reply (a server that did not
// stream), as far as respWhole reads it.
type respResponseWhole struct {
	Object string            `json:"object"`
	Status string            `json:"status"`
	Output []json.RawMessage `json:"output"`
	Error  json.RawMessage   `json:"error"`
}

// respWhole makes a whole Responses reply the events a stream would have
// carried it in: each message's text (or refusal) as one delta, each
// function call and reasoning item as its output_item.done, then
// response.completed or response.incomplete with the response itself. An
// error (the error envelope, or a failed response) is the error it says.
func respWhole(c *capture, raw []byte) ([]sseEvent, error) {
	var r respResponseWhole
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, c.notReply("response", raw)
	}
	if present(r.Error) {
		return nil, c.errorReply(string(r.Error))
	}
	if r.Object != "response" && r.Output == nil {
		return nil, c.notReply("response", raw)
	}
	var end string
	switch r.Status {
	case "completed", "":
		end = "response.completed"
	case "incomplete":
		end = "response.incomplete"
	case "failed", "cancelled":
		return nil, c.errorReply(string(raw))
	default: // queued, in_progress: a background response, which nodwyn never asks for
		return nil, c.notReply("finished response (status "+strconv.Quote(r.Status)+")", raw)
	}
	type event struct {
		Type        string          `json:"type"`
		OutputIndex int             `json:"output_index"`
		Delta       string          `json:"delta,omitempty"`
		Item        json.RawMessage `json:"item,omitempty"`
		Response    json.RawMessage `json:"response,omitempty"`
	}
	var evs []sseEvent
	for i, item := range r.Output {
		var it struct {
			Type    string `json:"type"`
			Content []struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Refusal string `json:"refusal"`
			} `json:"content"`
		}
		if err := json.Unmarshal(item, &it); err != nil {
			return nil, c.notReply("response", raw)
		}
		switch it.Type {
		case "message":
			for _, part := range it.Content {
				switch part.Type {
				case "output_text":
					evs = append(evs, jsonEvent(event{Type: "response.output_text.delta", OutputIndex: i, Delta: part.Text}))
				case "refusal":
					evs = append(evs, jsonEvent(event{Type: "response.refusal.delta", OutputIndex: i, Delta: part.Refusal}))
				}
			}
		case "function_call", "reasoning":
			evs = append(evs, jsonEvent(event{Type: "response.output_item.done", OutputIndex: i, Item: item}))
		}
	}
	return append(evs, jsonEvent(event{Type: end, Response: raw})), nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
