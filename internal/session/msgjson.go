package session

import (
	"encoding/json"

	"github.com/nodwyn/nodwyn/internal/provider"
)

// messagesJSON is msgs as json.Marshal makes the array, from the JSON c
// keeps of the messages that did not change since the last save (the
// state is saved twice a turn). The bytes are new: the state writer keeps
// the last it saved.
func messagesJSON(c *provider.MessageJSON, msgs []provider.Message) ([]byte, error) {
	if msgs == nil {
		return []byte("null"), nil
	}
	raws, err := c.Encode(msgs, func(m *provider.Message) ([]byte, error) { return json.Marshal(m) })
	if err != nil {
		return nil, err
	}
	n := 2 + len(raws)
	for _, r := range raws {
		n += len(r)
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, r := range raws {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, r...)
	}
	return append(out, ']'), nil
}
