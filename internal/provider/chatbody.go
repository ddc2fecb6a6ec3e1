package provider

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"
)

// chatBodies makes Chat Completions request bodies, the bytes encodeBody
// makes of params(req, cc), from the JSON of the parts the last request
// had the same: each message (while it equals, field by field, the one
// encoded), each tool (its name, description and the same schema map) and
// the system message. A conversation's request is the last one and a
// turn's worth more, so encoding it whole each turn, through reflection,
// grew with it. TestChatBodyIsTheParamsJSON holds the two to the same
// bytes.
type chatBodies struct {
	mu     sync.Mutex
	system struct {
		role, text string
		raw        []byte
	}
	msgs  []encodedMsg
	tools []encodedTool
}

type encodedMsg struct {
	m   Message
	raw []byte
}

type encodedTool struct {
	name, desc string
	params     map[string]any // held: its address is not another map's
	raw        []byte
}

// body is params(req, cc) as encodeBody encodes it.
func (m *OpenAI) body(req Request, cc Compat) ([]byte, compatSent, error) {
	p, sent := m.paramsWithout(req, cc)
	c := &m.bodies
	c.mu.Lock()
	defer c.mu.Unlock()

	model, err := encodeBody(p.Model)
	if err != nil {
		return nil, sent, err
	}
	var b bytes.Buffer
	b.Grow(c.size())
	b.WriteString(`{"model":`)
	b.Write(model)
	b.WriteString(`,"messages":[`)
	n := 0
	if req.System != "" {
		if c.system.raw == nil || c.system.role != sent.role || c.system.text != req.System {
			text := req.System
			raw, err := encodeBody(chatMessage{Role: sent.role, Content: &text})
			if err != nil {
				return nil, sent, err
			}
			c.system.role, c.system.text, c.system.raw = sent.role, req.System, raw
		}
		b.Write(c.system.raw)
		n++
	}
	if len(c.msgs) > len(req.Messages) {
		c.msgs = c.msgs[:len(req.Messages)]
	}
	for i := range req.Messages {
		msg := &req.Messages[i]
		if i >= len(c.msgs) || !sameMessage(&c.msgs[i].m, msg) {
			raw, err := encodeBody(chatMessageOf(*msg))
			if err != nil {
				return nil, sent, err
			}
			c.msgs = setAt(c.msgs, i, encodedMsg{m: copyMessage(*msg), raw: raw})
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(c.msgs[i].raw)
		n++
	}
	b.WriteByte(']')
	if len(req.Tools) > 0 {
		b.WriteString(`,"tools":[`)
		if len(c.tools) > len(req.Tools) {
			c.tools = c.tools[:len(req.Tools)]
		}
		for i, t := range req.Tools {
			if i >= len(c.tools) || c.tools[i].name != t.Name || c.tools[i].desc != t.Description ||
				t.Parameters == nil || !sameSchema(c.tools[i].params, t.Parameters) {
				raw, err := encodeBody(chatTool{Type: "function",
					Function: chatFunctionDef{Name: t.Name, Description: t.Description, Parameters: schemaOrEmpty(t.Parameters)}})
				if err != nil {
					return nil, sent, err
				}
				c.tools = setAt(c.tools, i, encodedTool{name: t.Name, desc: t.Description, params: t.Parameters, raw: raw})
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(c.tools[i].raw)
		}
		b.WriteByte(']')
	}
	tail, err := encodeBody(p.chatTail)
	if err != nil {
		return nil, sent, err
	}
	b.WriteByte(',')
	b.Write(tail[1:]) // without its "{"
	return b.Bytes(), sent, nil
}

// setAt is s with v at i, which is at most len(s).
func setAt[T any](s []T, i int, v T) []T {
	if i < len(s) {
		s[i] = v
		return s
	}
	return append(s, v)
}

// size is about what the next body takes.
func (c *chatBodies) size() int {
	n := 256 + len(c.system.raw)
	for _, m := range c.msgs {
		n += len(m.raw) + 1
	}
	for _, t := range c.tools {
		n += len(t.raw) + 1
	}
	return n
}

// sameSchema reports whether a and b are the same map (not equal ones).
func sameSchema(a, b map[string]any) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sameMessage reports whether a and b are equal, field by field (strings
// that share their bytes compare at once), as far as any request or saved
// state shows (a nil and an empty ToolCalls differ: null and []).
func sameMessage(a, b *Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID || a.Name != b.Name ||
		a.IsError != b.IsError || len(a.ToolCalls) != len(b.ToolCalls) || (a.ToolCalls == nil) != (b.ToolCalls == nil) ||
		len(a.Reasoning) != len(b.Reasoning) {
		return false
	}
	for i := range a.ToolCalls {
		if a.ToolCalls[i] != b.ToolCalls[i] {
			return false
		}
	}
	for i := range a.Reasoning {
		if !bytes.Equal(a.Reasoning[i], b.Reasoning[i]) {
			return false
		}
	}
	return true
}

// SameMessage is sameMessage for other packages (the session's saved
// state keeps its messages' JSON the same way).
func SameMessage(a, b *Message) bool { return sameMessage(a, b) }

// copyMessage is m with slices of its own, so that one changed in place
// later is seen as a change.
func copyMessage(m Message) Message {
	if m.ToolCalls != nil {
		m.ToolCalls = append(make([]ToolCall, 0, len(m.ToolCalls)), m.ToolCalls...)
	}
	if m.Reasoning != nil {
		r := make([]json.RawMessage, len(m.Reasoning))
		for i, x := range m.Reasoning {
			r[i] = bytes.Clone(x)
		}
		m.Reasoning = r
	}
	return m
}

// CopyMessage is copyMessage for other packages.
func CopyMessage(m Message) Message { return copyMessage(m) }
