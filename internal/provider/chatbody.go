package provider

import (
	"bytes"
	"sync"
)

// chatBodies makes Chat Completions request bodies, the bytes encodeBody
// makes of params(req, cc), from the JSON of the parts the last request
// had the same: each message (MessageJSON), each tool (its name,
// description and the same schema map) and the system message.
// TestChatBodyIsTheParamsJSON holds the two to the same bytes.
type chatBodies struct {
	mu     sync.Mutex
	system struct {
		role, text string
		raw        []byte
	}
	msgs  MessageJSON
	tools []encodedTool
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
	b.Grow(c.size(len(req.Messages)))
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
	msgs, err := c.msgs.Encode(req.Messages, func(m *Message) ([]byte, error) { return encodeBody(chatMessageOf(*m)) })
	if err != nil {
		return nil, sent, err
	}
	for _, raw := range msgs {
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(raw)
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
				!sameMap(c.tools[i].params, t.Parameters) {
				raw, err := encodeBody(chatTool{Type: "function",
					Function: chatFunctionDef{Name: t.Name, Description: t.Description, Parameters: schemaOrEmpty(t.Parameters)}})
				if err != nil {
					return nil, sent, err
				}
				e := encodedTool{name: t.Name, desc: t.Description, params: t.Parameters, raw: raw}
				if i < len(c.tools) {
					c.tools[i] = e
				} else {
					c.tools = append(c.tools, e)
				}
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

// size is about what the next body takes, of n messages.
func (c *chatBodies) size(n int) int {
	n += 256 + len(c.system.raw)
	for _, m := range c.msgs.done {
		n += len(m.raw)
	}
	for _, t := range c.tools {
		n += len(t.raw) + 1
	}
	return n
}
