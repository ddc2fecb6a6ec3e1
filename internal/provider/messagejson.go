package provider

import (
	"bytes"
	"encoding/json"
)

// MessageJSON keeps the JSON of each message of a conversation and makes
// anew only that of a message not as it was the last time: a request, and
// a saved state, hold the last one's messages and a turn's worth more, so
// encoding them all each time, through reflection, grew with the
// conversation. A message is taken as it was only when it equals, field by
// field, the one encoded (a folded result or a compaction changes them).
// The zero value is ready; it is not safe for concurrent use.
type MessageJSON struct {
	done []encodedMsg
	raws [][]byte
}

type encodedMsg struct {
	m   Message // as it was encoded, with slices of its own
	raw []byte
}

// Encode returns the JSON enc makes of each of msgs. The slice is reused
// by the next call; the bytes in it are not changed.
func (c *MessageJSON) Encode(msgs []Message, enc func(*Message) ([]byte, error)) ([][]byte, error) {
	if len(c.done) > len(msgs) {
		c.done = c.done[:len(msgs)]
	}
	c.raws = c.raws[:0]
	for i := range msgs {
		if i >= len(c.done) || !sameMessage(&c.done[i].m, &msgs[i]) {
			raw, err := enc(&msgs[i])
			if err != nil {
				return nil, err
			}
			e := encodedMsg{m: copyMessage(msgs[i]), raw: raw}
			if i < len(c.done) {
				c.done[i] = e
			} else {
				c.done = append(c.done, e)
			}
		}
		c.raws = append(c.raws, c.done[i].raw)
	}
	return c.raws, nil
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
