package session

import (
	"encoding/json"

	"github.com/nodwyn/nodwyn/internal/provider"
)

// msgJSON makes the JSON array of a conversation, as json.Marshal makes it,
// encoding only the messages that are not as they were the last time: the
// state is saved twice a turn, and encoding the whole conversation each
// time grew with it. A message is reused only when it equals, field by
// field, the one encoded (a folded result or a compaction changes them).
type msgJSON struct {
	done []encodedMessage // the messages as last encoded, and their JSON
}

type encodedMessage struct {
	m   provider.Message
	raw []byte
}

// encode returns msgs as a JSON array, in a new slice (the state writer
// keeps the last it saved).
func (c *msgJSON) encode(msgs []provider.Message) ([]byte, error) {
	if msgs == nil {
		return []byte("null"), nil
	}
	if len(c.done) > len(msgs) {
		c.done = c.done[:len(msgs)]
	}
	n := 2 + len(msgs)
	for i := range msgs {
		if i < len(c.done) && provider.SameMessage(&c.done[i].m, &msgs[i]) {
			n += len(c.done[i].raw)
			continue
		}
		raw, err := json.Marshal(&msgs[i])
		if err != nil {
			return nil, err
		}
		// The encoded copy keeps the slices as they are now: an element
		// changed in place later is then seen as a change.
		e := encodedMessage{m: provider.CopyMessage(msgs[i]), raw: raw}
		if i < len(c.done) {
			c.done[i] = e
		} else {
			c.done = append(c.done, e)
		}
		n += len(raw)
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i := range msgs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, c.done[i].raw...)
	}
	return append(out, ']'), nil
}
